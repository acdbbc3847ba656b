package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// A terminal sees a bar a wave, in wave order, the nodes not started yet counted apart.
func TestWaveBars(t *testing.T) {
	t.Parallel()
	at := time.Now()
	node := func(wave int, state string, started bool) hq.RolloutNode {
		n := hq.RolloutNode{Wave: wave, State: state}
		if started {
			n.StartedAt = &at
		}
		return n
	}
	r := hq.Rollout{Line: "rollout 3 of app r1→r2: progressing", Progress: []hq.RolloutNode{
		node(2, hq.RolloutNodeInFlight, true), node(1, hq.RolloutNodeDone, true), node(2, hq.RolloutNodeDone, true),
		node(2, hq.RolloutNodeFailed, true), node(3, hq.RolloutNodePending, false), node(3, hq.RolloutNodePending, false),
	}}
	want := []string{
		"rollout 3 of app r1→r2: progressing",
		"wave 1   [" + strings.Repeat("#", 30) + "] 1/1 done",
		"wave 2   [" + strings.Repeat("#", 20) + strings.Repeat(".", 10) + "] 1/3 done, 1 in flight, 1 failed",
		"waiting  2 node(s)",
	}
	if got := waveBars(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Only a character device is a terminal: a pipe, a file or a buffer gets a line per change.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Fatal("a pipe or a buffer taken for a terminal")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !isTerminal(tty) {
			t.Fatal("/dev/tty not taken for a terminal")
		}
	}
}
