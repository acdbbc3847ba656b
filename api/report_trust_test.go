package api

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/meshhq/hq"
)

// appliedReport returns a report that d was applied, every resource of it.
func appliedReport(d hq.Declaration) hq.Report {
	rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Signature: d.Signature, Results: []hq.Result{}}
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			rep.Results = append(rep.Results, hq.Result{Module: m.Name, Resource: r.Name, Outcome: hq.StateApplied, Attempted: true})
		}
	}
	return rep
}

// declared assigns the app module to a new node and fetches its declaration as its host would.
func (f *fixture) declared(node string) (string, hq.Declaration) {
	f.t.Helper()
	tok := f.node(node)
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	f.want(f.do("PUT", "/api/v1/nodes/"+node+"/assignments/app", admin, `{"taken":true}`), 200)
	var d hq.Declaration
	f.want(f.do("GET", "/api/v1/nodes/"+node+"/declaration", tok, nil), 200).json(f.t, &d)
	return tok, d
}

// A report that names a send the controller never recorded, even with a signature the
// controller made, or a known send with a signature that is not the controller's, is refused
// and stores nothing: not its results, not its report line.
func TestReportOfNoRecordedSendIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok, d := f.declared("web-1")
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, appliedReport(d)), 200)
	var before hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &before)

	ghost := appliedReport(d)
	ghost.SendID = 99999
	ghost.Results = append(ghost.Results, hq.Result{Module: "svc", Resource: "ghost", Outcome: hq.StateFailed, Attempted: true, Error: "lies"},
		hq.Result{Module: "other", Resource: "x", Outcome: hq.StateFailed, Attempted: true})
	if code := f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, ghost), 422).errCode(t); code != hq.CodeInvalid {
		t.Fatalf("code %s", code)
	}
	forged := appliedReport(d)
	forged.Signature = "AAAA"
	forged.Results[0].Outcome, forged.Results[0].Error = hq.StateFailed, "forged"
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, forged), 422)

	var after hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &after)
	if after.LastReport == nil || before.LastReport == nil {
		t.Fatal("no last report")
	}
	if after.LastReport.ID != before.LastReport.ID || after.LastReport.Summary != before.LastReport.Summary || after.Status != hq.StatusConverged {
		t.Fatalf("refused reports changed the node: last report %+v, was %+v; status %s", after.LastReport, before.LastReport, after.Status)
	}
}

// A refusal's digest is a text like any other a node sends: stored clean and cut at 2 KiB,
// whatever the host put in it.
func TestRefusedDigestIsBounded(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok, d := f.declared("web-1")
	huge := "sha256:\x00\xff" + strings.Repeat("a", 7<<20)
	// A send the controller does not know: a replay, a forgery, or one from a lost database.
	rep := hq.Report{Refused: &hq.Refusal{Generation: d.Generation + 5, Digest: huge, SendID: 99999, ComposedBy: d.ComposedBy,
		ComposedAt: d.ComposedAt, Reason: "the signature does not verify"}}
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, rep), 200)
	var sends struct{ Sends []hq.SendView }
	f.want(f.do("GET", "/api/v1/nodes/web-1/sends?limit=10", admin, nil), 200).json(t, &sends)
	found := false
	for _, s := range sends.Sends {
		if len(s.Digest) > hq.MaxText || !utf8.ValidString(s.Digest) || strings.ContainsRune(s.Digest, 0) {
			t.Fatalf("send %d stored a digest of %d bytes (valid UTF-8 %v)", s.ID, len(s.Digest), utf8.ValidString(s.Digest))
		}
		found = found || s.Outcome == "refused" && strings.HasPrefix(s.Digest, "sha256:\uFFFD\uFFFDaaa")
	}
	if !found {
		t.Fatalf("no refused send recorded: %+v", sends)
	}
}

// A NUL in a text a node sends is stored as U+FFFD: what sqlite3 shows and what the API
// answers are the same text.
func TestNULInAReportIsReplaced(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok, d := f.declared("web-1")
	rep := appliedReport(d)
	rep.Results[0].Outcome, rep.Results[0].Error = hq.StateFailed, "exit\x00status 1"
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, rep), 200)
	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	seen := false
	for _, r := range v.Resources {
		if r.Resource == rep.Results[0].Resource {
			seen = true
			if r.LastError != "exit\uFFFDstatus 1" {
				t.Fatalf("stored error %q", r.LastError)
			}
		}
	}
	if !seen {
		t.Fatalf("the failed resource is not on the node's page: %+v", v.Resources)
	}
}

// A template that is a program is refused at upload, naming the resource and the field, and
// the controller goes on serving: nothing of it is ever rendered.
func TestTemplateBombIsRefusedAtUpload(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, bomb := range []string{
		"{{range 100000}}{{range 100000}}x{{end}}{{end}}",
		`{{define "a"}}{{template "a"}}{{end}}{{template "a"}}`,
	} {
		body := fmt.Sprintf(`{"resources":[{"name":"motd","kind":"file","path":"/etc/motd","content":%q}]}`, bomb)
		r := f.want(f.do("PUT", "/api/v1/modules/bomb", admin, body), 422)
		var e struct{ Error hq.Error }
		r.json(t, &e)
		if len(e.Error.Details) != 1 || e.Error.Details[0].Field != "resources[0].content" {
			t.Fatalf("%s: details %+v", bomb, e.Error.Details)
		}
	}
	f.want(f.do("GET", "/healthz", "", nil), 200)
	f.want(f.do("GET", "/api/v1/modules/bomb", admin, nil), 404)
}

// A report that comes with the token its node's last report was taken with is not checked
// before its write, and the write checks it: once the node is deleted and registered again
// (here through the same controller, which does not forget the token, as another controller
// would not know), the old token's reports are refused as any unknown token is, and change
// nothing.
func TestAProvenTokenIsCheckedInTheWrite(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok, d := f.declared("web-1")
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, appliedReport(d)), 200)
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, appliedReport(d)), 200)
	if !f.server.proven.has("web-1", tok) {
		t.Fatal("the token of a report taken in is not remembered")
	}

	f.want(f.do("DELETE", "/api/v1/nodes/web-1", admin, nil), 204)
	again := f.node("web-1")
	for i, rep := range []hq.Report{appliedReport(d), appliedReport(d)} {
		if code := f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, rep), 401).errCode(t); code != hq.CodeUnauthorized {
			t.Fatalf("report %d with the old token: code %s", i, code)
		}
		if i == 0 && f.server.proven.has("web-1", tok) {
			t.Fatal("a token the write refused is still remembered")
		}
	}
	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	if v.LastReport != nil || v.AppliedGeneration != 0 {
		t.Fatalf("the old token's reports changed the new node: last report %+v, applied generation %d", v.LastReport, v.AppliedGeneration)
	}
	// The new token is checked first, like any token no report of the node proved yet.
	if f.server.proven.has("web-1", again) {
		t.Fatal("a token no report proved is remembered")
	}
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", again, `{"generation":0,"digest":"","results":[]}`), 200)
	if !f.server.proven.has("web-1", again) {
		t.Fatal("the new token, proved by a report, is not remembered")
	}
}
