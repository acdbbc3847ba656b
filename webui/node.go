package webui

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// How much history the node page shows; the API pages through the rest.
const (
	recentReports     = 20
	recentSends       = 20
	recentTransitions = 50
	recentDrifts      = 20
	// stripReports is how many distinct reports the strip of outcomes shows.
	stripReports = 60
)

// nodePage is everything /nodes/{node} shows.
type nodePage struct {
	chrome
	Now               when
	Name              string
	Status            badge
	Lines             []string
	Rollouts          []nodeRolloutRow
	Labels            []pair
	Vars              []pair
	Generation        int64
	AppliedGeneration int64
	Behind            bool
	LastReport        when
	Summary           string
	// Host is what the node's hostd said of the host; nil until it has.
	Host        *hostRow
	Counts      []stateCount
	Assignments []assignmentRow
	Resources   []resourceRow
	Containers  []containerRow
	Holds       []holdRow
	Strip       []stripCell
	Reports     []reportRow
	Sends       []sendRow
	Transitions []transitionRow
	Drifts      []driftRow
	// VolumeMoves are the volumes a recreate moved, with nothing copied, said by a report of the
	// last day: the data the container used is where it was.
	VolumeMoves []volumeMove
}

// volumeMove is one report's line of a moved volume, and when it was reported.
type volumeMove struct {
	Line string
	At   when
}

// pair is a label or a var; Link, for a label, is the mesh filtered by it.
type pair struct {
	Key, Value, Link string
}

type hostRow struct {
	Version, Platform string
	Booted            when
}

type nodeRolloutRow struct {
	ID   int64
	Line string
}

type assignmentRow struct {
	Module   string
	Revision int64
	Taken    bool
	// Placement is the placement the module came from; empty for an operator's assignment.
	Placement string
	// AssignedBy and TakenBy are the operators who assigned and took it; "" when unknown (a
	// placement's assignment, or one from before operators had names) or not taken.
	AssignedBy, TakenBy string
	Assigned            when
	// Held is how many of its resources the host holds, waiting on the take.
	Held int
}

// holdRow is a resource the host holds, with, for a held file, what Take would change: the
// file as found against the file as declared, when hostd said what it found (in its report of
// the hold, or in a drift of the file put back before), else the file as declared alone.
type holdRow struct {
	Ref, Reason string
	Preview     *fileDiff
	// FoundUnknown says the preview has the declared side only: hostd did not say what is in
	// the file (a hostd from before it did, or a file held because something it depends on is).
	FoundUnknown bool
	// FoundOmitted says the preview has the declared side only because hostd left what it found
	// out, and why: a binary file, one too large, or past what one report carries.
	FoundOmitted string
}

type driftRow struct {
	At       when
	Ref      string
	Detail   string
	ReportID int64
	// Diff is the file as declared against what hostd found, when it said what it found.
	Diff *fileDiff
}

// fileDiff is a unified diff of two texts, From and To naming each side.
type fileDiff struct {
	From, To string
	Diff     textDiff
}

type stateCount struct {
	State badge
	Count int
}

type resourceRow struct {
	Module              string
	Resource            string
	Ref                 string
	Kind                string
	State               badge
	Since               when
	Attempts            int64
	ConsecutiveFailures int64
	NeverApplied        bool
	LastError           string
	HoldReason          string
	BlockedBy           string
	Group               string
	// Retry offers the retry button: the resource is failed or stuck.
	Retry bool
}

// containerRow is what runs for one container resource, as its hostd last reported it.
type containerRow struct {
	Ref         string
	ID          string
	ImageDigest string
	Started     when
	Restarts    int64
	Health      badge
	// Earlier says it runs an earlier spec than declared: a group rolled back, or the change
	// has not applied yet.
	Earlier bool
}

// reportRow is one report of the history, or a run of consecutive reports that say the same
// line at the same generation (Rows of them, FirstID the oldest): a node failing the same way
// every interval is one row, not a screen of them.
type reportRow struct {
	ID         int64
	FirstID    int64
	Rows       int
	Generation int64
	Summary    string
	At         when
	Repeats    int64
	LastAt     when
}

// stripCell is one distinct report in the strip, oldest on the left; Tone is the colour of
// its worst outcome, the word the status of a node with that outcome would be.
type stripCell struct {
	Tone  tone
	Word  string
	Title string
}

type sendRow struct {
	ID         int64
	Generation int64
	Digest     string
	Resources  int64
	ComposedBy string
	SentAt     when
	Outcome    badge
	Reason     string
}

type transitionRow struct {
	Ref      string
	From, To badge
	At       when
	Reason   string
	ReportID int64
}

func (u *UI) node(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "node")
	ctx := r.Context()
	v, err := u.store.GetNode(ctx, name)
	if hqNotFound(err) {
		// A deleted node has no state, but its history stays readable here.
		if deleted, derr := u.store.DeletedAt(ctx, name); derr == nil {
			v, err = hq.NodeView{Name: name, Status: "deleted", Counts: map[hq.State]int{},
				Lines: []string{"deleted at " + hq.FormatTime(deleted) + "; its history is kept until retention prunes it"}}, nil
		}
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	reports, err := u.store.ReportOutcomes(ctx, name, stripReports)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	sends, err := u.store.Sends(ctx, name, recentSends)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	transitions, err := u.store.Transitions(ctx, name, recentTransitions)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	drifts, err := u.store.Drifts(ctx, name, recentDrifts)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	page := buildNode(v, reports, sends, transitions, u.Now())
	// The drifts' diffs and the holds' previews share one page's budget of diff lines.
	budget := newDiffBudget(hq.MaxDriftFound)
	if page.Drifts, err = u.driftRows(ctx, name, drifts, budget); err != nil {
		u.fail(w, r, err)
		return
	}
	if page.Holds, err = u.holdRows(ctx, name, v.Holds, drifts, budget); err != nil {
		u.fail(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "node", &page)
}

// driftRows are a node's drifts as the page shows them: a drifted small text file with what
// hostd found there as a diff against the file as declared now.
func (u *UI) driftRows(ctx context.Context, node string, drifts []hq.DriftView, budget *diffBudget) ([]driftRow, error) {
	var refs []string
	for _, d := range drifts {
		if d.Found != nil {
			refs = append(refs, hq.Ref(d.Module, d.Resource))
		}
	}
	declared, err := u.store.DeclaredTexts(ctx, node, refs)
	if err != nil {
		return nil, err
	}
	var rows []driftRow
	// hostd sends what it found of a file only when both are small text: a declared file
	// larger than that (the budget's bound) is summarised.
	for _, d := range drifts {
		ref := hq.Ref(d.Module, d.Resource)
		row := driftRow{At: at(d.At, u.Now()), Ref: ref, Detail: d.Detail}
		if d.ReportID != nil {
			row.ReportID = *d.ReportID
		}
		if want, ok := declared[ref]; ok && d.Found != nil {
			row.Diff = &fileDiff{From: ref + " as declared", To: ref + " as found", Diff: budget.diff(want, *d.Found)}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// holdRows are the node's holds with, for each held file, a preview of what Take would do:
// the declared content against what hostd last said it found there (its report of the hold,
// else the newest drift of the file that carried its content), or the declared content alone
// when it never said.
func (u *UI) holdRows(ctx context.Context, node string, holds []hq.Hold, drifts []hq.DriftView, budget *diffBudget) ([]holdRow, error) {
	if len(holds) == 0 {
		return nil, nil
	}
	refs := make([]string, len(holds))
	for i, h := range holds {
		refs[i] = hq.Ref(h.Module, h.Resource)
	}
	declared, err := u.store.DeclaredTexts(ctx, node, refs)
	if err != nil {
		return nil, err
	}
	drifted := map[string]string{}
	for _, d := range drifts { // newest first: the first found is the latest
		if ref := hq.Ref(d.Module, d.Resource); d.Found != nil && drifted[ref] == "" {
			drifted[ref] = *d.Found
		}
	}
	rows := make([]holdRow, len(holds))
	for i, h := range holds {
		ref := refs[i]
		rows[i] = holdRow{Ref: ref, Reason: h.Reason}
		want, ok := declared[ref]
		if !ok {
			continue
		}
		got, known := drifted[ref]
		if f := h.Found; f != nil {
			got, known, rows[i].FoundOmitted = f.Text, f.Omitted == "", foundOmitted(f.Omitted)
		}
		rows[i].Preview = &fileDiff{From: ref + " as found", To: ref + " as declared, which Take writes", Diff: budget.diff(got, want)}
		switch {
		case rows[i].FoundOmitted != "":
			rows[i].Preview.From = ref + " (what is there was left out: " + rows[i].FoundOmitted + ")"
		case !known:
			rows[i].Preview.From, rows[i].FoundUnknown = ref+" (what is there was not reported)", true
		}
	}
	return rows, nil
}

// foundOmitted says in words why hostd left a held file's content out.
func foundOmitted(why string) string {
	switch why {
	case "":
		return ""
	case hq.FoundBinary:
		return "a binary file"
	case hq.FoundTooLarge:
		return fmt.Sprintf("larger than %d KiB", hq.MaxDriftFound>>10)
	case hq.FoundTooMany:
		return fmt.Sprintf("past the %d KiB of held files one report carries", hq.MaxHeldFound>>10)
	}
	return why
}

func buildNode(v hq.NodeView, reports []db.ReportOutcome, sends []hq.SendView, trs []hq.TransitionView, now time.Time) nodePage {
	p := nodePage{
		chrome: chrome{Title: v.Name, Refresh: refreshSeconds, Section: "mesh"}, Now: at(now, now), Name: v.Name,
		Status: badge{string(v.Status), statusTone(v.Status)}, Lines: v.Lines,
		Generation: v.Generation, AppliedGeneration: v.AppliedGeneration,
		Behind:     v.LastReportAt != nil && v.Generation != v.AppliedGeneration,
		LastReport: atPtr(v.LastReportAt, now),
	}
	if v.LastReport != nil {
		p.Summary = v.LastReport.Summary
	}
	if h := v.Host; h != nil {
		p.Host = &hostRow{Version: h.HostdVersion, Platform: h.OS + "/" + h.Arch, Booted: at(h.BootedAt, now)}
	}
	for _, k := range slices.Sorted(maps.Keys(v.Labels)) {
		p.Labels = append(p.Labels, pair{Key: k, Value: v.Labels[k], Link: selectorLink(k + "=" + v.Labels[k])})
	}
	for _, k := range slices.Sorted(maps.Keys(v.Vars)) {
		p.Vars = append(p.Vars, pair{Key: k, Value: v.Vars[k]})
	}
	for _, ro := range v.Rollouts {
		p.Rollouts = append(p.Rollouts, nodeRolloutRow{ID: ro.ID, Line: ro.Line()})
	}
	held := hq.CountHolds(v.Holds)
	for _, a := range v.Assignments {
		row := assignmentRow{Module: a.Module, Revision: a.Revision, Taken: a.Taken, Held: held[a.Module],
			AssignedBy: a.AssignedBy, TakenBy: a.TakenBy, Assigned: at(a.AssignedAt, now)}
		if a.Source != "" && a.Source != hq.SourceOperator {
			row.Placement = a.Source
		}
		p.Assignments = append(p.Assignments, row)
	}
	for _, s := range hq.States {
		p.Counts = append(p.Counts, stateCount{State: badge{string(s), stateTone(s)}, Count: v.Counts[s]})
	}
	for _, r := range v.Resources {
		p.Resources = append(p.Resources, resourceRow{
			Module: r.Module, Resource: r.Resource,
			Ref: hq.Ref(r.Module, r.Resource), Kind: r.Kind, State: badge{string(r.State), stateTone(r.State)},
			Since: at(r.Since, now), Attempts: r.Attempts, ConsecutiveFailures: r.ConsecutiveFailures,
			NeverApplied: r.NeverApplied, LastError: r.LastError, HoldReason: r.HoldReason,
			BlockedBy: r.BlockedBy, Group: r.Group, Retry: r.State == hq.StateFailed || r.State == hq.StateStuck,
		})
		if c := r.Container; c != nil {
			p.Containers = append(p.Containers, containerRow{Ref: hq.Ref(r.Module, r.Resource), ID: short(c.ID),
				ImageDigest: short(c.ImageDigest), Started: at(c.StartedAt, now), Restarts: c.Restarts,
				Health: badge{c.Health, healthTone(c.Health)}, Earlier: c.EarlierSpec})
		}
	}
	p.Reports = reportRows(reports, recentReports, now)
	for i := len(reports) - 1; i >= 0; i-- {
		p.Strip = append(p.Strip, stripOf(reports[i]))
	}
	p.VolumeMoves = volumeMoves(reports, now)
	for _, s := range sends {
		p.Sends = append(p.Sends, sendRow{ID: s.ID, Generation: s.Generation, Digest: short(s.Digest),
			Resources: s.Resources, ComposedBy: s.ComposedBy, SentAt: at(s.SentAt, now),
			Outcome: badge{s.Outcome, outcomeTone(s.Outcome)}, Reason: s.Reason})
	}
	for _, t := range trs {
		row := transitionRow{Ref: hq.Ref(t.Module, t.Resource), At: at(t.At, now), Reason: t.Reason,
			From: transitionBadge(t.From), To: transitionBadge(t.To)}
		if t.ReportID != nil {
			row.ReportID = *t.ReportID
		}
		p.Transitions = append(p.Transitions, row)
	}
	return p
}

// healthTone colours a container's health: good when its check passed, bad when it did not,
// quiet when it declares none.
func healthTone(h string) tone {
	switch h {
	case hq.HealthHealthy:
		return toneGood
	case hq.HealthUnhealthy:
		return toneBad
	}
	return toneNeutral
}

// stripOf colours a report by its worst outcome, in the order a node's status is chosen:
// stuck, held (waiting on take), pending or grouped-pending (mid-change), failed (degraded),
// else every resource applied (converged).
func stripOf(r db.ReportOutcome) stripCell {
	st := hq.StatusConverged
	switch {
	case r.Stuck > 0:
		st = hq.StatusStuck
	case r.Held > 0:
		st = hq.StatusWaitingOnTake
	case r.Pending+r.GroupedPending > 0:
		st = hq.StatusMidChange
	case r.Failed > 0:
		st = hq.StatusDegraded
	}
	title := fmt.Sprintf("%s, generation %d: %s", hq.FormatTime(r.At), r.Generation, r.Summary)
	if r.Repeats > 0 {
		title += fmt.Sprintf(" (reported %d more time(s) until %s)", r.Repeats, hq.FormatTime(r.LastAt))
	}
	return stripCell{Tone: statusTone(st), Word: string(st), Title: title}
}

// transitionBadge names a state in the history, where "" is a resource first declared and
// "removed" one no longer declared.
func transitionBadge(s string) badge {
	switch s {
	case "":
		return badge{"(new)", toneNeutral}
	case "removed":
		return badge{"removed", toneNeutral}
	}
	return badge{s, stateTone(hq.State(s))}
}

// volumeMoveFor is how long the node page keeps saying a volume moved.
const volumeMoveFor = 24 * time.Hour

// volumeMoves finds, in the reports the page read, the volumes moved in the last day: a report
// line carries each as a note of its own ("volume /data of app/web now at /srv/b (was /srv/a):
// nothing was copied"), and it would otherwise scroll away with its report.
func volumeMoves(reports []db.ReportOutcome, now time.Time) []volumeMove {
	var out []volumeMove
	for _, r := range reports {
		if now.Sub(r.At) > volumeMoveFor {
			continue
		}
		for part := range strings.SplitSeq(r.Summary, "; ") {
			if strings.HasPrefix(part, "volume ") && strings.HasSuffix(part, "nothing was copied") {
				out = append(out, volumeMove{Line: part, At: at(r.At, now)})
			}
		}
	}
	return out
}

// reportRows is the history of reports, newest first, with each run of consecutive reports of
// one line and generation in one row: at most limit rows.
func reportRows(reports []db.ReportOutcome, limit int, now time.Time) []reportRow {
	var rows []reportRow
	for i := 0; i < len(reports); {
		r := reports[i]
		row := reportRow{ID: r.ID, FirstID: r.ID, Rows: 1, Generation: r.Generation, Summary: r.Summary,
			Repeats: r.Repeats, LastAt: at(r.LastAt, now)}
		first := r
		for i++; i < len(reports) && reports[i].Summary == r.Summary && reports[i].Generation == r.Generation; i++ {
			first = reports[i]
			row.FirstID, row.Rows, row.Repeats = first.ID, row.Rows+1, row.Repeats+first.Repeats
		}
		row.At = at(first.At, now)
		if rows = append(rows, row); len(rows) == limit {
			break
		}
	}
	return rows
}
