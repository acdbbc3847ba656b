package hq

import (
	"fmt"
	"strings"
)

// Tally counts the outcomes of one report: the numbers behind the report line.
type Tally struct {
	Applied, Failed, Stuck, GroupedPending, Pending int
	// Held counts held resources per module.
	Held HeldCounts
	// Drift names, in report order, the resources found changed by something else and put back.
	Drift []string
	// Notes are the results' notes, in report order.
	Notes []string
	// Sent is how many resources the declaration named; Accounted how many of them have a result.
	Sent, Accounted int
	// Transport is the refusal of TLS the report carries, said last.
	Transport *TransportRefusal
}

// TallyReport counts a report's results as TallyResults does, with the refusal of TLS it
// carries: the line host and controller both write for it.
func TallyReport(rep *Report, sent int, stuck func(ref string) bool) Tally {
	t := TallyResults(rep.Results, sent, stuck)
	t.Transport = rep.Transport
	return t
}

// TallyResults counts results against a declaration of sent resources. A failed result whose
// ref stuck reports true is counted as stuck, since only the controller decides that.
func TallyResults(results []Result, sent int, stuck func(ref string) bool) Tally {
	t := Tally{Held: HeldCounts{}, Sent: sent}
	// Keyed by the two names, as ValidateReport's, and from the same pool: a report's results
	// are tallied on every report that is not a repeat.
	seen := seenResults.Get().(map[[2]string]struct{})
	defer putSeenResults(seen)
	for _, r := range results {
		key := [2]string{r.Module, r.Resource}
		if _, ok := seen[key]; ok {
			continue
		}
		seen[key] = struct{}{}
		t.Accounted++
		if r.Drift {
			t.Drift = append(t.Drift, Ref(r.Module, r.Resource))
		}
		if r.Note != "" {
			t.Notes = append(t.Notes, r.Note)
		}
		switch r.Outcome {
		case StateApplied:
			t.Applied++
		case StateFailed, StateStuck:
			if r.Outcome == StateStuck || stuck != nil && stuck(Ref(r.Module, r.Resource)) {
				t.Stuck++
			} else {
				t.Failed++
			}
		case StateHeld:
			t.Held[r.Module]++
		case StateGroupedPending:
			t.GroupedPending++
		default:
			t.Pending++
		}
	}
	return t
}

// Line is the one-line summary that hostd logs and the controller stores for a report:
//
//	applied 330 resource(s) (2 drift put back: app/conf, app/unit), 16 held for untaken modules (route-proxy: 13, mailu: 3), 2 failed
//
// Every part but the first appears only when it is not zero. Results' notes follow, each after
// "; " ("app/db recreated: image changed"), up to three. A report that carries a refusal of
// TLS ends with it: "; transport refused from 2026-11-30T03:12:00Z to …: tls: …".
func (t Tally) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "applied %d resource(s)", t.Applied)
	if len(t.Drift) > 0 {
		fmt.Fprintf(&b, " (%d drift put back: %s)", len(t.Drift), driftRefs(t.Drift))
	}
	if held := t.Held.Total(); held > 0 {
		fmt.Fprintf(&b, ", %d held for untaken modules (%s)", held, t.Held)
	}
	for _, p := range []struct {
		n    int
		word string
	}{{t.Failed, "failed"}, {t.Stuck, "stuck"}, {t.GroupedPending, "grouped-pending"}, {t.Pending, "pending"}} {
		if p.n > 0 {
			fmt.Fprintf(&b, ", %d %s", p.n, p.word)
		}
	}
	for i, n := range t.Notes {
		if i == maxNotes {
			fmt.Fprintf(&b, "; %d more note(s)", len(t.Notes)-maxNotes)
			break
		}
		fmt.Fprintf(&b, "; %s", n)
	}
	if t.Accounted < t.Sent {
		fmt.Fprintf(&b, "; %d of %d sent resource(s) unaccounted for", t.Sent-t.Accounted, t.Sent)
	}
	if tr := t.Transport; tr != nil {
		fmt.Fprintf(&b, "; transport refused from %s to %s: %s", FormatTime(tr.From), FormatTime(tr.To), tr.Reason)
	}
	return b.String()
}

// maxNotes bounds the notes a report line carries; the results keep every one.
const maxNotes = 3

// driftRefs names up to three drifted resources, then "…".
func driftRefs(refs []string) string {
	const most = 3
	if len(refs) <= most {
		return strings.Join(refs, ", ")
	}
	return strings.Join(refs[:most], ", ") + ", …"
}
