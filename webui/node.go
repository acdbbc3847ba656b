package webui

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

// How much history the node page shows; the API pages through the rest.
const (
	recentReports     = 20
	recentSends       = 20
	recentTransitions = 50
	recentDrifts      = 20
)

// nodePage is everything /nodes/{node} shows.
type nodePage struct {
	Title             string
	Refresh           int
	Now               when
	Name              string
	Status            badge
	Lines             []string
	Generation        int64
	AppliedGeneration int64
	Behind            bool
	LastReport        when
	Summary           string
	Counts            []stateCount
	Assignments       []hq.AssignmentView
	Resources         []resourceRow
	Holds             []hq.Hold
	Reports           []reportRow
	Sends             []sendRow
	Transitions       []transitionRow
	Drifts            []driftRow
}

type driftRow struct {
	At       when
	Ref      string
	Detail   string
	ReportID int64
}

type stateCount struct {
	State badge
	Count int
}

type resourceRow struct {
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
}

type reportRow struct {
	ID         int64
	Generation int64
	Summary    string
	At         when
	Repeats    int64
	LastAt     when
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
	reports, err := u.store.Reports(ctx, name, recentReports)
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
	for _, d := range drifts {
		row := driftRow{At: at(d.At, u.Now()), Ref: hq.Ref(d.Module, d.Resource), Detail: d.Detail}
		if d.ReportID != nil {
			row.ReportID = *d.ReportID
		}
		page.Drifts = append(page.Drifts, row)
	}
	u.render(w, r, http.StatusOK, "node", page)
}

func buildNode(v hq.NodeView, reports []hq.ReportView, sends []hq.SendView, trs []hq.TransitionView, now time.Time) nodePage {
	p := nodePage{
		Title: v.Name, Refresh: refreshSeconds, Now: at(now, now), Name: v.Name,
		Status: badge{string(v.Status), statusTone(v.Status)}, Lines: v.Lines,
		Generation: v.Generation, AppliedGeneration: v.AppliedGeneration,
		Behind:     v.LastReportAt != nil && v.Generation != v.AppliedGeneration,
		LastReport: atPtr(v.LastReportAt, now), Assignments: v.Assignments, Holds: v.Holds,
	}
	if v.LastReport != nil {
		p.Summary = v.LastReport.Summary
	}
	for _, s := range hq.States {
		p.Counts = append(p.Counts, stateCount{State: badge{string(s), stateTone(s)}, Count: v.Counts[s]})
	}
	for _, r := range v.Resources {
		p.Resources = append(p.Resources, resourceRow{
			Ref: hq.Ref(r.Module, r.Resource), Kind: r.Kind, State: badge{string(r.State), stateTone(r.State)},
			Since: at(r.Since, now), Attempts: r.Attempts, ConsecutiveFailures: r.ConsecutiveFailures,
			NeverApplied: r.NeverApplied, LastError: r.LastError, HoldReason: r.HoldReason,
			BlockedBy: r.BlockedBy, Group: r.Group,
		})
	}
	for _, r := range reports {
		p.Reports = append(p.Reports, reportRow{ID: r.ID, Generation: r.Generation, Summary: r.Summary,
			At: at(r.At, now), Repeats: r.Repeats, LastAt: at(r.LastAt, now)})
	}
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
