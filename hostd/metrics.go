package hostd

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshhq/hq"
)

// textfile writes the figures of every reconcile for node_exporter's textfile collector
// (HOSTD_METRICS_FILE): written to a temporary file beside it and renamed into place, so the
// collector never reads half a file. Only Run's goroutine touches it.
type textfile struct {
	path string
	// reconciles and drifts count since hostd started; lastSuccess is the end of the last
	// reconcile in which nothing failed.
	reconciles, drifts int
	lastSuccess        time.Time
}

// newTextfile returns nil when path is empty: no file is written.
func newTextfile(path string) *textfile {
	if path == "" {
		return nil
	}
	return &textfile{path: path}
}

var (
	tfResources = prometheus.NewDesc("hostd_resources", "Resources of the last reconcile by outcome.", []string{"outcome"}, nil)
	tfDuration  = prometheus.NewDesc("hostd_reconcile_duration_seconds", "How long the last reconcile took.", nil, nil)
	tfLast      = prometheus.NewDesc("hostd_last_reconcile_timestamp_seconds", "When the last reconcile ended.", nil, nil)
	tfSuccess   = prometheus.NewDesc("hostd_last_success_timestamp_seconds", "When the last reconcile in which nothing failed ended; 0 if none has since hostd started.", nil, nil)
	tfDrift     = prometheus.NewDesc("hostd_drift_resources", "Resources the last reconcile found changed by something else and put back.", nil, nil)
	tfDrifts    = prometheus.NewDesc("hostd_drifts_total", "Resources put back after drift since hostd started.", nil, nil)
	tfCount     = prometheus.NewDesc("hostd_reconciles_total", "Reconciles since hostd started.", nil, nil)
	tfGen       = prometheus.NewDesc("hostd_declaration_generation", "Generation of the declaration the last reconcile applied.", nil, nil)
)

// hostOutcomes are the outcomes a host reports, each written even when zero.
var hostOutcomes = []hq.State{hq.StateApplied, hq.StateFailed, hq.StateHeld, hq.StateGroupedPending, hq.StatePending}

// write records one reconcile and writes the file; a failure is logged, never fatal.
func (tf *textfile) write(rep *hq.Report, log *slog.Logger) {
	if tf == nil {
		return
	}
	counts := map[hq.State]int{}
	drift := 0
	for _, r := range rep.Results {
		counts[r.Outcome]++
		if r.Drift {
			drift++
		}
	}
	tf.reconciles++
	tf.drifts += drift
	if counts[hq.StateFailed] == 0 && rep.Refused == nil {
		tf.lastSuccess = rep.FinishedAt
	}
	var ms []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ms = append(ms, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	for _, o := range hostOutcomes {
		gauge(tfResources, float64(counts[o]), string(o))
	}
	gauge(tfDuration, rep.FinishedAt.Sub(rep.StartedAt).Seconds())
	gauge(tfLast, unixSeconds(rep.FinishedAt))
	gauge(tfSuccess, unixSeconds(tf.lastSuccess))
	gauge(tfDrift, float64(drift))
	gauge(tfGen, float64(rep.Generation))
	ms = append(ms, prometheus.MustNewConstMetric(tfDrifts, prometheus.CounterValue, float64(tf.drifts)),
		prometheus.MustNewConstMetric(tfCount, prometheus.CounterValue, float64(tf.reconciles)))
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(constCollector(ms)); err != nil {
		log.Error("writing the metrics file", "err", err)
		return
	}
	// WriteToTextfile writes a temporary file in the same directory and renames it.
	if err := prometheus.WriteToTextfile(tf.path, reg); err != nil {
		log.Error("writing the metrics file", "path", tf.path, "err", err)
	}
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// constCollector collects a fixed set of metrics; it is unchecked (describes nothing), as the
// set is made anew for each write.
type constCollector []prometheus.Metric

func (c constCollector) Describe(chan<- *prometheus.Desc) {}
func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}
