package hostd

import (
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

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
	// imagesRemoved is the engine's count of the images it removed since hostd started.
	imagesRemoved int
}

// newTextfile returns nil when path is empty: no file is written.
func newTextfile(path string) *textfile {
	if path == "" {
		return nil
	}
	return &textfile{path: path}
}

// metric is one line of the file, under its family's HELP and TYPE.
type metric struct {
	name, help, kind string
	// label is the one label's name and value, if any.
	label, value string
	v            float64
}

// hostOutcomes are the outcomes a host reports, each written even when zero.
var hostOutcomes = []hq.State{hq.StateApplied, hq.StateFailed, hq.StateHeld, hq.StateGroupedPending, hq.StatePending}

// write records one reconcile, and the count of images removed since hostd started, and
// writes the file; a failure is logged, never fatal.
func (tf *textfile) write(rep *hq.Report, imagesRemoved int, log *slog.Logger) {
	if tf == nil {
		return
	}
	tf.imagesRemoved = imagesRemoved
	if err := writeTextfile(tf.path, tf.record(rep)); err != nil {
		log.Error("writing the metrics file", "path", tf.path, "err", err)
	}
}

// record counts one reconcile and returns the file's metrics.
func (tf *textfile) record(rep *hq.Report) []metric {
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
	var ms []metric
	for _, o := range hostOutcomes {
		ms = append(ms, metric{"hostd_resources", "Resources of the last reconcile by outcome.", "gauge", "outcome", string(o), float64(counts[o])})
	}
	ms = append(ms,
		metric{"hostd_reconcile_duration_seconds", "How long the last reconcile took.", "gauge", "", "", rep.FinishedAt.Sub(rep.StartedAt).Seconds()},
		metric{"hostd_last_reconcile_timestamp_seconds", "When the last reconcile ended.", "gauge", "", "", unixSeconds(rep.FinishedAt)},
		metric{"hostd_last_success_timestamp_seconds", "When the last reconcile in which nothing failed ended; 0 if none has since hostd started.", "gauge", "", "", unixSeconds(tf.lastSuccess)},
		metric{"hostd_drift_resources", "Resources the last reconcile found changed by something else and put back.", "gauge", "", "", float64(drift)},
		metric{"hostd_declaration_generation", "Generation of the declaration the last reconcile applied.", "gauge", "", "", float64(rep.Generation)},
		metric{"hostd_drifts_total", "Resources put back after drift since hostd started.", "counter", "", "", float64(tf.drifts)},
		metric{"hostd_reconciles_total", "Reconciles since hostd started.", "counter", "", "", float64(tf.reconciles)},
		metric{"hostd_images_removed_total", "Images no declared container or job had used for HOSTD_IMAGE_GC_AFTER, removed since hostd started.", "counter", "", "", float64(tf.imagesRemoved)},
	)
	return ms
}

// writeTextfile writes ms in the Prometheus text format, sorted as a registry gathers them, to
// a temporary file beside path renamed into place. It is written by hand because importing the
// client library costs every hostd process (a one-shot hostd apply too) most of a millisecond
// of start-up, for a few lines that need no escaping: the help texts and label values are the
// constants above.
func writeTextfile(path string, ms []metric) error {
	slices.SortFunc(ms, func(a, b metric) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.value, b.value))
	})
	var b strings.Builder
	for i, m := range ms {
		if i == 0 || ms[i-1].name != m.name {
			fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", m.name, m.help, m.name, m.kind)
		}
		b.WriteString(m.name)
		if m.label != "" {
			fmt.Fprintf(&b, "{%s=%q}", m.label, m.value)
		}
		b.WriteByte(' ')
		b.WriteString(strconv.FormatFloat(m.v, 'g', -1, 64))
		b.WriteByte('\n')
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.WriteString(b.String())
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
