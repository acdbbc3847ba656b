package hq

import (
	"fmt"
	"strings"
	"time"
)

// NodeFacts is what a node's status is computed from.
type NodeFacts struct {
	Generation, AppliedGeneration int64
	LastReportAt                  *time.Time
	Counts                        map[State]int
	Stuck                         []StuckView
	// Held counts held resources per module.
	Held HeldCounts
	// WaitingGroups names the groups (module/group) with grouped-pending members.
	WaitingGroups []string
	// Failed names the failed (not stuck) resources, module/name.
	Failed  []string
	Refused []RefusedSend
	// Drifting are the resources put back at least the threshold's times within DriftWindow:
	// something else on the machine is fighting over them.
	Drifting []DriftCount
}

// StatusOf returns the node's status — the first condition that applies, in the order of
// Statuses — from its counts alone when that is all there is: the status of a fleet is read
// from one row per node. ComputeStatus gives the same status with the lines that explain it.
func StatusOf(f NodeFacts, now time.Time, silentAfter time.Duration) Status {
	switch {
	case f.LastReportAt == nil:
		return StatusNew
	case now.Sub(*f.LastReportAt) > silentAfter:
		return StatusSilent
	case len(f.Stuck) > 0 || f.Counts[StateStuck] > 0:
		return StatusStuck
	case len(f.Held) > 0 || f.Counts[StateHeld] > 0:
		return StatusWaitingOnTake
	case f.AppliedGeneration != f.Generation || f.Counts[StatePending]+f.Counts[StateGroupedPending] > 0:
		return StatusMidChange
	case len(f.Failed) > 0 || f.Counts[StateFailed] > 0:
		return StatusDegraded
	}
	return StatusConverged
}

// ComputeStatus returns the node's status, as StatusOf, and one line for every condition that
// applies.
func ComputeStatus(f NodeFacts, now time.Time, silentAfter time.Duration) (Status, []string) {
	return StatusOf(f, now, silentAfter), statusLines(f, now, silentAfter)
}

func statusLines(f NodeFacts, now time.Time, silentAfter time.Duration) []string {
	var lines []string
	add := func(_ Status, line string) { lines = append(lines, line) }
	switch {
	case f.LastReportAt == nil:
		add(StatusNew, "new: never reported")
	case now.Sub(*f.LastReportAt) > silentAfter:
		add(StatusSilent, fmt.Sprintf("silent: no report since %s (%s ago)", lineTime(*f.LastReportAt), now.Sub(*f.LastReportAt).Round(time.Second)))
	}
	for _, s := range f.Stuck {
		add(StatusStuck, StuckLine(s))
	}
	for _, m := range f.Held.Modules() {
		add(StatusWaitingOnTake, fmt.Sprintf("waiting on take: %s (%d held)", m, f.Held[m]))
	}
	if f.LastReportAt != nil && f.AppliedGeneration != f.Generation {
		add(StatusMidChange, fmt.Sprintf("mid-change: generation %d declared, %d applied", f.Generation, f.AppliedGeneration))
	}
	if p, g := f.Counts[StatePending], f.Counts[StateGroupedPending]; p+g > 0 {
		var parts []string
		if p > 0 {
			parts = append(parts, fmt.Sprintf("%d pending", p))
		}
		if g > 0 {
			parts = append(parts, fmt.Sprintf("%d grouped-pending", g))
		}
		line := "mid-change: " + strings.Join(parts, ", ")
		if len(f.WaitingGroups) > 0 {
			line += fmt.Sprintf(", waiting group(s): %s", strings.Join(f.WaitingGroups, ", "))
		}
		add(StatusMidChange, line)
	}
	if len(f.Failed) > 0 {
		add(StatusDegraded, fmt.Sprintf("degraded: %d failed: %s", len(f.Failed), strings.Join(f.Failed, ", ")))
	}
	for _, r := range f.Refused {
		lines = append(lines, RefusedLine(r))
	}
	// A node that keeps drifting is converged only until the next put-back; it says so.
	for _, d := range f.Drifting {
		lines = append(lines, d.Line())
	}
	return lines
}

// StuckLine is the status line of one stuck resource.
func StuckLine(s StuckView) string {
	how := "regressed"
	if s.NeverApplied {
		how = "never applied"
	}
	line := fmt.Sprintf("stuck: %s (%s, %d attempts since %s)", Ref(s.Module, s.Resource), how, s.Attempts, lineTime(s.Since))
	if s.Blocks > 0 {
		line += fmt.Sprintf(", blocks %d resource(s)", s.Blocks)
	}
	return line
}

// RefusedLine is the status line of a refused send.
func RefusedLine(r RefusedSend) string {
	return fmt.Sprintf("refused declaration generation %d (applied %d) composed by %s at %s",
		r.Generation, r.AppliedGeneration, r.ComposedBy, lineTime(r.At))
}

// lineTime renders t in status lines: UTC to the second.
func lineTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
