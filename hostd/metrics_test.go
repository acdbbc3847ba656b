package hostd

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/meshhq/hq"
)

func readTextfile(t *testing.T, path string) map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for name, fam := range fams {
		for _, m := range fam.Metric {
			key := name
			for _, l := range m.Label {
				key += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			if m.Gauge != nil {
				out[key] = m.Gauge.GetValue()
			} else if m.Counter != nil {
				out[key] = m.Counter.GetValue()
			}
		}
	}
	return out
}

func TestTextfileAfterEveryReconcile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hostd.prom")
	tf := newTextfile(path)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rep := &hq.Report{Generation: 7, StartedAt: start, FinishedAt: start.Add(1500 * time.Millisecond), Results: []hq.Result{
		{Module: "app", Resource: "a", Outcome: hq.StateApplied, Drift: true},
		{Module: "app", Resource: "b", Outcome: hq.StateApplied},
		{Module: "app", Resource: "c", Outcome: hq.StateFailed},
	}}
	tf.write(rep, 0, log)
	got := readTextfile(t, path)
	for key, want := range map[string]float64{
		"hostd_resources{outcome=applied}": 2, "hostd_resources{outcome=failed}": 1, "hostd_resources{outcome=held}": 0,
		"hostd_reconcile_duration_seconds": 1.5, "hostd_drift_resources": 1, "hostd_drifts_total": 1,
		"hostd_last_success_timestamp_seconds": 0, "hostd_reconciles_total": 1, "hostd_declaration_generation": 7, "hostd_images_removed_total": 0,
		"hostd_last_reconcile_timestamp_seconds": float64(start.Add(1500*time.Millisecond).Unix()) + 0.5,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	rep2 := &hq.Report{Generation: 7, StartedAt: start.Add(time.Minute), FinishedAt: start.Add(time.Minute + time.Second),
		Results: []hq.Result{{Module: "app", Resource: "a", Outcome: hq.StateApplied, Drift: true}}}
	tf.write(rep2, 3, log)
	got = readTextfile(t, path)
	if got["hostd_last_success_timestamp_seconds"] != float64(start.Add(time.Minute+time.Second).Unix()) || got["hostd_drifts_total"] != 2 || got["hostd_reconciles_total"] != 2 ||
		got["hostd_images_removed_total"] != 3 {
		t.Errorf("after a clean reconcile: %v", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want only the metrics file (the temporary one renamed)", len(entries))
	}
	var none *textfile
	none.write(rep, 0, log) // no HOSTD_METRICS_FILE: nothing, and no panic
}

// TestTextfileAsTheClientLibraryWritesIt: the file hostd writes by hand is, byte for byte, the
// one the Prometheus client library writes for the same metrics.
func TestTextfileAsTheClientLibraryWritesIt(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tf := newTextfile(filepath.Join(dir, "unused"))
	for _, rep := range []*hq.Report{
		{Generation: 7, StartedAt: start, FinishedAt: start.Add(1234567 * time.Microsecond), Results: []hq.Result{
			{Outcome: hq.StateApplied, Drift: true}, {Outcome: hq.StateFailed}, {Outcome: hq.StateHeld},
			{Outcome: hq.StateGroupedPending}, {Outcome: hq.StatePending}, {Outcome: hq.StateApplied}}},
		{Generation: 123456789, StartedAt: start, FinishedAt: start.Add(time.Hour + time.Nanosecond)},
	} {
		ms := tf.record(rep)
		ours, theirs := filepath.Join(dir, "ours.prom"), filepath.Join(dir, "theirs.prom")
		if err := writeTextfile(ours, slices.Clone(ms)); err != nil {
			t.Fatal(err)
		}
		var pms constCollector
		for _, m := range ms {
			var labels, values []string
			if m.label != "" {
				labels, values = []string{m.label}, []string{m.value}
			}
			kind := prometheus.GaugeValue
			if m.kind == "counter" {
				kind = prometheus.CounterValue
			}
			pms = append(pms, prometheus.MustNewConstMetric(prometheus.NewDesc(m.name, m.help, labels, nil), kind, m.v, values...))
		}
		reg := prometheus.NewPedanticRegistry()
		if err := reg.Register(pms); err != nil {
			t.Fatal(err)
		}
		if err := prometheus.WriteToTextfile(theirs, reg); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(ours)
		b, _ := os.ReadFile(theirs)
		if string(a) != string(b) {
			t.Fatalf("hostd writes\n%s\nthe client library\n%s", a, b)
		}
		for _, name := range []string{ours, theirs} {
			fi, err := os.Stat(name)
			if err != nil || fi.Mode().Perm() != 0o644 {
				t.Fatalf("%s: %v %v", name, fi.Mode(), err)
			}
		}
	}
}

// constCollector collects a fixed set of metrics; it is unchecked (describes nothing).
type constCollector []prometheus.Metric

func (c constCollector) Describe(chan<- *prometheus.Desc) {}
func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}
