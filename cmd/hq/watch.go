package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// watchRollout follows a rollout until it ends or pauses, reading it every o.every: on a
// terminal, a progress bar per wave redrawn in place; to a pipe, its line each time it changes
// (with -o json, the rollout as the API gives it, an object a line). It exits 0 when the
// rollout completes and 1 when it pauses or is aborted, so a script can wait on it.
func watchRollout(ctx context.Context, o *cliRun, id int64) error {
	tty := isTerminal(o.out)
	drawn, last := 0, ""
	for {
		r, err := o.c.Rollout(ctx, id, "")
		if err != nil {
			return err
		}
		switch {
		case o.json:
			if b, _ := json.Marshal(r); string(b) != last {
				last = string(b)
				fmt.Fprintln(o.out, last)
			}
		case tty:
			lines := waveBars(r)
			if drawn > 0 {
				fmt.Fprintf(o.out, "\x1b[%dA\x1b[J", drawn) // up to the first line drawn, and clear below
			}
			fmt.Fprint(o.out, strings.Join(lines, "\n")+"\n")
			drawn = len(lines)
		case r.Line != last:
			last = r.Line
			fmt.Fprintln(o.out, r.Line)
		}
		switch r.State {
		case hq.RolloutComplete:
			return nil
		case hq.RolloutPaused, hq.RolloutAborted:
			return exitCode(1)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.every):
		}
	}
}

// isTerminal says whether w is a terminal, from its file mode, as no pipe or file is a
// character device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// barWidth is the width of a wave's progress bar, in characters.
const barWidth = 30

// waveBars are the rollout's line and a progress bar a wave, the nodes not started yet last:
//
//	wave 1   [##############################] 1/1 done
//	wave 2   [###############...............] 1/2 done, 1 in flight
//	waiting  3 node(s)
func waveBars(r hq.Rollout) []string {
	type wave struct{ nodes, done, inFlight, failed int }
	waves := map[int]*wave{}
	waiting := 0
	for _, n := range r.Progress {
		if n.StartedAt == nil {
			waiting++
			continue
		}
		w := waves[n.Wave]
		if w == nil {
			w = &wave{}
			waves[n.Wave] = w
		}
		w.nodes++
		switch n.State {
		case hq.RolloutNodeDone:
			w.done++
		case hq.RolloutNodeInFlight:
			w.inFlight++
		case hq.RolloutNodeFailed, hq.RolloutNodeReverted:
			w.failed++
		}
	}
	lines := []string{r.Line}
	nums := make([]int, 0, len(waves))
	for n := range waves {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, n := range nums {
		w := waves[n]
		filled := barWidth * (w.done + w.failed) / w.nodes
		line := fmt.Sprintf("wave %-3d [%s%s] %d/%d done", n, strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), w.done, w.nodes)
		if w.inFlight > 0 {
			line += fmt.Sprintf(", %d in flight", w.inFlight)
		}
		if w.failed > 0 {
			line += fmt.Sprintf(", %d failed", w.failed)
		}
		lines = append(lines, line)
	}
	if waiting > 0 {
		lines = append(lines, fmt.Sprintf("waiting  %d node(s)", waiting))
	}
	return lines
}
