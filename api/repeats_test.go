package api

import (
	"encoding/json"
	"testing"

	"github.com/meshhq/hq"
)

// A report whose results are, byte for byte, the node's last ones is taken in without reading
// them, and counts as a repeat; one that is not a repeat after all (a failing report came in
// between) is read whole and recorded as a report of its own; and with the general decoder
// every report is read whole.
func TestRepeatedResultsAreTakenUnread(t *testing.T) {
	for _, general := range []bool{false, true} {
		f := setup(t)
		f.server.GeneralDecoder = general
		tok := f.node("web-1")
		f.want(f.do("PUT", "/api/v1/modules/app", admin, `{"resources":[
			{"name":"a","kind":"file","path":"/etc/a","content":"a\n"},
			{"name":"b","kind":"file","path":"/etc/b","content":"b\n"}]}`), 201)
		f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
		var d hq.Declaration
		f.want(f.do("GET", "/api/v1/nodes/web-1/declaration?after=0", tok, nil), 200).json(t, &d)
		body := func(b hq.State) []byte {
			rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Signature: d.Signature,
				Results: []hq.Result{{Module: "app", Resource: "a", Outcome: hq.StateApplied}, {Module: "app", Resource: "b", Outcome: b}}}
			j, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			return j
		}
		post := func(b []byte) hq.ReportResponse {
			var resp hq.ReportResponse
			f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, b), 200).json(t, &resp)
			return resp
		}
		ok, failing := body(hq.StateApplied), body(hq.StateFailed)
		first := post(ok)
		if again := post(ok); again.ReportID != first.ReportID {
			t.Fatalf("general %v: the same results again were report %d, not a repeat of %d", general, again.ReportID, first.ReportID)
		}
		unread := f.server.repeatsTaken.Load()
		if want := map[bool]int64{false: 1, true: 0}[general]; unread != want {
			t.Fatalf("general %v: %d report(s) taken unread, want %d", general, unread, want)
		}
		failed := post(failing)
		back := post(ok) // the remembered results, but no longer a repeat of the last report
		if failed.ReportID == first.ReportID || back.ReportID == failed.ReportID || back.ReportID == first.ReportID {
			t.Fatalf("general %v: reports %d, %d, %d: want three of their own", general, first.ReportID, failed.ReportID, back.ReportID)
		}
		if f.server.repeatsTaken.Load() != unread {
			t.Fatalf("general %v: a report that repeats nothing was taken unread", general)
		}
		var h struct{ Reports []hq.ReportView }
		f.want(f.do("GET", "/api/v1/nodes/web-1/reports", admin, nil), 200).json(t, &h)
		if reps := h.Reports; len(reps) != 3 || reps[2].Repeats != 1 || reps[0].Repeats != 0 {
			t.Fatalf("general %v: reports %+v: want three, the first repeated once", general, reps)
		}
	}
}
