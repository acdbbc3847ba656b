package workers

import (
	"context"
	"sync/atomic"
	"testing"
)

type worker struct {
	name    string
	started *[]string
	running *atomic.Int32
	noReady bool
}

func (w worker) Name() string { return w.name }

func (w worker) Run(ctx context.Context, ready func()) {
	*w.started = append(*w.started, w.name)
	w.running.Add(1)
	defer w.running.Add(-1)
	if w.noReady {
		return // returning counts as ready
	}
	ready()
	<-ctx.Done()
}

func TestStartsInOrderAndStopWaits(t *testing.T) {
	var started []string
	var running atomic.Int32
	g := Start(context.Background(), nil,
		worker{name: "a", started: &started, running: &running},
		worker{name: "b", started: &started, running: &running, noReady: true},
		worker{name: "c", started: &started, running: &running})
	// Each was ready before the next started, so the order is the order given, and reading
	// started here races with nothing.
	if got := len(started); got != 3 || started[0] != "a" || started[1] != "b" || started[2] != "c" {
		t.Fatalf("started %v, want [a b c]", started)
	}
	if n := running.Load(); n != 2 {
		t.Fatalf("%d workers running, want 2 (b returned)", n)
	}
	g.Stop()
	if n := running.Load(); n != 0 {
		t.Fatalf("%d workers still running after Stop", n)
	}
	g.Stop() // a second Stop is harmless
}
