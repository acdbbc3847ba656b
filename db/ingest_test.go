package db

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

func applied(module string, names ...string) []hq.Result {
	out := make([]hq.Result, len(names))
	for i, n := range names {
		out[i] = hq.Result{Module: module, Resource: n, Outcome: hq.StateApplied, Attempted: true}
	}
	return out
}

func failing(module, name string) hq.Result {
	return hq.Result{Module: module, Resource: name, Outcome: hq.StateFailed, Attempted: true, Error: "validate: exit status 1"}
}

func ingest(t *testing.T, s *Store, node string, d hq.Declaration, results ...hq.Result) hq.ReportResponse {
	t.Helper()
	resp, err := s.Ingest(context.Background(), node, hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: results}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func resource(t *testing.T, s *Store, node, module, name string) hq.ResourceView {
	t.Helper()
	v, err := s.GetNode(context.Background(), node)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range v.Resources {
		if r.Module == module && r.Resource == name {
			return r
		}
	}
	t.Fatalf("no %s/%s on %s", module, name, node)
	return hq.ResourceView{}
}

func TestFailedBecomesStuckNeverApplied(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("conf", "x"), file("ok", "y"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	for i := range 3 {
		resp := ingest(t, s, "web-1", d, failing("app", "conf"), applied("app", "ok")[0])
		c.Advance(time.Minute)
		want := hq.StateFailed
		if i == 2 {
			want = hq.StateStuck
			if len(resp.Stuck) != 1 || resp.Stuck[0] != "app/conf" {
				t.Fatalf("report response stuck = %v, want [app/conf]", resp.Stuck)
			}
			if resp.Summary != "applied 1 resource(s), 1 stuck" {
				t.Fatalf("summary %q: the report that made it stuck must say so", resp.Summary)
			}
		}
		if r := resource(t, s, "web-1", "app", "conf"); r.State != want || r.ConsecutiveFailures != int64(i+1) || !r.NeverApplied {
			t.Fatalf("after %d failures: %+v, want %s never applied", i+1, r, want)
		}
	}
	// The next report, identical from the host, says stuck too.
	if resp := ingest(t, s, "web-1", d, failing("app", "conf"), applied("app", "ok")[0]); resp.Summary != "applied 1 resource(s), 1 stuck" {
		t.Fatalf("summary after stuck: %q", resp.Summary)
	}
	v := mustGetNode(t, s, "web-1")
	if v.LastReport.Summary != "applied 1 resource(s), 1 stuck" {
		t.Fatalf("last report line %q", v.LastReport.Summary)
	}
	if v.Status != hq.StatusStuck || !strings.HasPrefix(v.Lines[0], "stuck: app/conf (never applied, 4 attempts since 2026-11-30T03:00:00Z)") {
		t.Fatalf("status %s, lines %q", v.Status, v.Lines)
	}
	// Skipped by back-off: not an attempt.
	ingest(t, s, "web-1", d, hq.Result{Module: "app", Resource: "conf", Outcome: hq.StateFailed, Error: "validate: exit status 1"}, applied("app", "ok")[0])
	if r := resource(t, s, "web-1", "app", "conf"); r.ConsecutiveFailures != 4 {
		t.Fatalf("an unattempted result counted: %d failures", r.ConsecutiveFailures)
	}
	// A fix: new revision, pending with counts reset; then applied.
	mustModule(t, s, "app", file("conf", "fixed"), file("ok", "y"))
	if r := resource(t, s, "web-1", "app", "conf"); r.State != hq.StatePending || r.ConsecutiveFailures != 0 {
		t.Fatalf("after a new revision: %+v, want pending with counts reset", r)
	}
	d = mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, applied("app", "conf", "ok")...)
	if v := mustGetNode(t, s, "web-1"); v.Status != hq.StatusConverged {
		t.Fatalf("status %s %q, want converged", v.Status, v.Lines)
	}
	tr, err := s.Transitions(ctx, "web-1", 100)
	if err != nil {
		t.Fatal(err)
	}
	var story []string
	for i := len(tr) - 1; i >= 0; i-- {
		if tr[i].Resource == "conf" {
			story = append(story, tr[i].To)
		}
	}
	if got := strings.Join(story, " "); got != "pending failed stuck pending applied" {
		t.Fatalf("transitions of conf: %s", got)
	}
}

func TestRegressedAndStuckAfterDuration(t *testing.T) {
	t.Parallel()
	s, c := setupWith(t, Options{StuckAttempts: 100, StuckAfter: 30 * time.Minute})
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("conf", "x"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, applied("app", "conf")...)
	ingest(t, s, "web-1", d, failing("app", "conf"))
	c.Advance(31 * time.Minute)
	ingest(t, s, "web-1", d, failing("app", "conf"))
	if r := resource(t, s, "web-1", "app", "conf"); r.State != hq.StateStuck || r.NeverApplied {
		t.Fatalf("%+v, want stuck, regressed (applied once)", r)
	}
}

// never_applied is per node: a resource that applied at revisions 1 to 3 and is stuck at
// revision 4 regressed; one that never applied on the node at any revision never applied.
func TestNeverAppliedIsPerNodeNotPerSpec(t *testing.T) {
	t.Parallel()
	s, _ := setupWith(t, Options{StuckAttempts: 2})
	mustNode(t, s, "web-1")
	mustNode(t, s, "web-2")
	for rev := range 3 {
		mustModule(t, s, "app", file("conf", fmt.Sprint("v", rev+1)))
		if rev == 0 {
			mustAssign(t, s, "web-1", "app")
		}
		ingest(t, s, "web-1", mustCompose(t, s, "web-1", "test"), applied("app", "conf")...)
	}
	mustModule(t, s, "app", file("conf", "v4"))
	if r := resource(t, s, "web-1", "app", "conf"); r.State != hq.StatePending || r.NeverApplied {
		t.Fatalf("a changed spec of a resource that applied before: %+v, want pending, not never applied", r)
	}
	mustAssign(t, s, "web-2", "app")
	for _, node := range []string{"web-1", "web-2"} {
		d := mustCompose(t, s, node, "test")
		ingest(t, s, node, d, failing("app", "conf"))
		ingest(t, s, node, d, failing("app", "conf"))
	}
	if r := resource(t, s, "web-1", "app", "conf"); r.State != hq.StateStuck || r.NeverApplied {
		t.Fatalf("web-1: %+v, want stuck and regressed (it applied at revisions 1 to 3)", r)
	}
	if r := resource(t, s, "web-2", "app", "conf"); r.State != hq.StateStuck || !r.NeverApplied {
		t.Fatalf("web-2: %+v, want stuck and never applied", r)
	}
	if v := mustGetNode(t, s, "web-1"); !strings.HasPrefix(v.Lines[0], "stuck: app/conf (regressed,") {
		t.Fatalf("web-1's line %q calls a regression never applied", v.Lines[0])
	}
}

func TestStuckScope(t *testing.T) {
	t.Parallel()
	s, _ := setupWith(t, Options{StuckAttempts: 1})
	for _, n := range []string{"n1", "n2", "n3"} {
		mustNode(t, s, n)
	}
	mustModule(t, s, "app", file("conf", "x"))
	stick := func(nodes ...string) {
		for _, n := range nodes {
			mustAssign(t, s, n, "app")
			d := mustCompose(t, s, n, "test")
			ingest(t, s, n, d, failing("app", "conf"))
			ingest(t, s, n, d, failing("app", "conf"))
		}
	}
	stick("n1")
	mustAssign(t, s, "n2", "app")
	mustAssign(t, s, "n3", "app")
	st := mustMeshStatus(t, s)
	if len(st.Stuck) != 1 || st.Stuck[0].Scope != hq.ScopeNodeLocal {
		t.Fatalf("one of three: %+v, want node-local", st.Stuck)
	}
	stick("n2")
	st = mustMeshStatus(t, s)
	if len(st.Stuck) != 1 || st.Stuck[0].Scope != hq.ScopeMeshWide || len(st.Stuck[0].Nodes) != 2 {
		t.Fatalf("two of three: %+v, want one mesh-wide entry on 2 nodes", st.Stuck)
	}
	if st.Nodes["stuck"] != 2 || st.Nodes["total"] != 3 {
		t.Fatalf("nodes by status %v", st.Nodes)
	}
}

func TestIdenticalReportsAddNoRows(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	first := ingest(t, s, "web-1", d, applied("app", "a")...)
	for range 3 {
		c.Advance(time.Minute)
		if again := ingest(t, s, "web-1", d, applied("app", "a")...); again.ReportID != first.ReportID {
			t.Fatalf("identical report made row %d, want repeat of %d", again.ReportID, first.ReportID)
		}
	}
	reps, err := s.Reports(ctx, "web-1", 10)
	if err != nil || len(reps) != 1 || reps[0].Repeats != 3 || !reps[0].LastAt.Equal(c.Now()) {
		t.Fatalf("reports %+v, %v; want one row repeated 3 times, last at %s", reps, err, c.Now())
	}
	sends, err := s.Sends(ctx, "web-1", 10)
	if err != nil || len(sends) == 0 || sends[0].Outcome != "applied" {
		t.Fatalf("sends %+v, %v; want the last applied", sends, err)
	}
}

func TestOlderGenerationReportMovesNothing(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	mustModule(t, s, "app", file("a", "2"))
	ingest(t, s, "web-1", d, applied("app", "a")...)
	if r := resource(t, s, "web-1", "app", "a"); r.State != hq.StatePending {
		t.Fatalf("a report of the old spec moved the new one to %s", r.State)
	}
	if v := mustGetNode(t, s, "web-1"); v.Status != hq.StatusMidChange {
		t.Fatalf("status %s, want mid-change", v.Status)
	}
}

func TestRefusedSendIsRecordedAndShown(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	old := mustCompose(t, s, "web-1", "ctl-a")
	ingest(t, s, "web-1", old, applied("app", "a")...)
	mustModule(t, s, "app", file("a", "2"))
	cur := mustCompose(t, s, "web-1", "ctl-b")
	replayed := hq.Report{SendID: cur.SendID, Generation: cur.Generation, Digest: cur.Digest, Results: applied("app", "a"),
		Refused: &hq.Refusal{Generation: old.Generation, Digest: old.Digest, SendID: old.SendID, ComposedBy: "ctl-a", Reason: "generation 1 is older than applied 2"}}
	for range 2 { // the second is the same report posted again after a lost answer
		if _, err := s.Ingest(ctx, "web-1", replayed, IngestOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sends, err := s.Sends(ctx, "web-1", 10)
	if err != nil {
		t.Fatal(err)
	}
	// The replayed send keeps its history (applied once); the refusal of its replay is a row.
	if len(sends) != 3 || sends[0].Outcome != "refused" || sends[0].Generation != 1 || sends[0].ComposedBy != "ctl-a" ||
		!strings.HasPrefix(sends[0].Reason, fmt.Sprintf("replay of send %d: ", old.SendID)) ||
		sends[1].Outcome != "applied" || sends[2].ID != old.SendID || sends[2].Outcome != "applied" {
		t.Fatalf("sends %+v", sends)
	}
	// The refusal row says how many resources the replayed declaration held and when it was refused.
	if sends[0].Resources != 1 || !sends[0].SentAt.Equal(clockOf(s)) {
		t.Fatalf("refused row %+v, want 1 resource refused at %s", sends[0], clockOf(s))
	}
	v := mustGetNode(t, s, "web-1")
	if len(v.RefusedSends) != 1 || !strings.Contains(strings.Join(v.Lines, "\n"), "refused declaration generation 1 (applied 2) composed by ctl-a") {
		t.Fatalf("lines %q", v.Lines)
	}
}

func TestComposeRecordsOnlyCurrentGeneration(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	d, err := s.Compose(ctx, "web-1", "test")
	if err != nil || d.Generation != 1 || d.Digest != d.ComputeDigest() || d.SendID == 0 || len(d.Modules) != 1 {
		t.Fatalf("compose: %+v, %v", d, err)
	}
	sends, err := s.Sends(ctx, "web-1", 10)
	if err != nil || len(sends) != 1 || sends[0].Generation != 1 || sends[0].Resources != 1 || sends[0].ComposedBy != "test" {
		t.Fatalf("sends %+v, %v", sends, err)
	}
}

// A host that applied generations this database never handed out (the node was registered
// again, or the database restored) moves the node's generation past them.
func TestReportFromTheFutureRaisesTheGeneration(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	if _, err := s.Ingest(ctx, "web-1", hq.Report{SendID: 7, Generation: 42, Digest: "sha256:old", Results: applied("app", "a")}, signedByUs); err != nil {
		t.Fatal(err)
	}
	if g := mustGeneration(t, s, "web-1"); g != 43 {
		t.Fatalf("generation %d, want 43", g)
	}
	if r := resource(t, s, "web-1", "app", "a"); r.State != hq.StatePending {
		t.Fatalf("a report of another database's generation moved %s", r.State)
	}
	d := mustCompose(t, s, "web-1", "test")
	if d.Generation != 43 {
		t.Fatalf("composed generation %d, want 43", d.Generation)
	}
}

// A failing resource alternately attempted and skipped by back-off says the same thing each
// time: one report row, repeated.
func TestBackoffSkipsDoNotAddReportRows(t *testing.T) {
	t.Parallel()
	s, _ := setupWith(t, Options{StuckAttempts: 100})
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	skipped := failing("app", "a")
	skipped.Attempted = false
	for range 3 {
		ingest(t, s, "web-1", d, failing("app", "a"))
		ingest(t, s, "web-1", d, skipped)
	}
	reps, err := s.Reports(ctx, "web-1", 10)
	if err != nil || len(reps) != 1 || reps[0].Repeats != 5 {
		t.Fatalf("reports %+v, %v; want one row repeated 5 times", reps, err)
	}
	if r := resource(t, s, "web-1", "app", "a"); r.ConsecutiveFailures != 3 {
		t.Fatalf("%d failures counted, want 3 attempts", r.ConsecutiveFailures)
	}
}

func clockOf(s *Store) time.Time { return s.clock().UTC().Truncate(time.Millisecond) }

// A refused declaration this database never sent keeps the line's format: the composer it
// claims, and the reason saying no such send was recorded.
func TestRefusalOfAnUnknownDeclaration(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	if _, err := s.Ingest(ctx, "web-1", hq.Report{Refused: &hq.Refusal{Generation: 9, Digest: "sha256:x", SendID: 77,
		ComposedBy: "ctl-z", Reason: "signature does not verify"}}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	v := mustGetNode(t, s, "web-1")
	want := "refused declaration generation 9 (applied 0) composed by ctl-z at "
	if len(v.RefusedSends) != 1 || !strings.HasPrefix(v.RefusedSends[0].Reason, "no such send recorded: ") ||
		!strings.Contains(strings.Join(v.Lines, "\n"), want) {
		t.Fatalf("refused %+v, lines %q", v.RefusedSends, v.Lines)
	}
}

// A report that applies as many resources as there are pending rows, but not those rows,
// moves exactly what it names: an unreported pending row stays pending, and an applied row
// changed again counts its attempt.
func TestApplyingAsManyAsArePendingMovesOnlyThoseNamed(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"), file("b", "1"), file("c", "1"), file("d", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, applied("app", "c", "d")...)
	// a and b pending, c and d applied; the host reports a and c changed.
	results := []hq.Result{
		{Module: "app", Resource: "a", Outcome: hq.StateApplied, Attempted: true, Changed: true},
		{Module: "app", Resource: "c", Outcome: hq.StateApplied, Attempted: true, Changed: true},
	}
	ingest(t, s, "web-1", d, results...)
	if r := resource(t, s, "web-1", "app", "b"); r.State != hq.StatePending {
		t.Fatalf("b, never reported, is %s", r.State)
	}
	if r := resource(t, s, "web-1", "app", "a"); r.State != hq.StateApplied {
		t.Fatalf("a is %s", r.State)
	}
	// c was found in place the first time (no attempt) and changed the second (one).
	if r := resource(t, s, "web-1", "app", "c"); r.Attempts != 1 {
		t.Fatalf("c counts %d attempts, want 1", r.Attempts)
	}
}

// A report that carries a refusal of TLS is news: its line says when and why, and the next
// report, identical otherwise, gets a row of its own rather than repeating that one.
func TestTransportRefusalIsInTheLineOfItsReportAlone(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	first := ingest(t, s, "web-1", d, applied("app", "a")...)
	from := time.Date(2026, 11, 30, 3, 12, 0, 0, time.UTC)
	rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: applied("app", "a"),
		Transport: &hq.TransportRefusal{From: from, To: from.Add(90 * time.Second), Reason: "tls: failed to verify the controller's certificate: x509: certificate signed by unknown authority"}}
	c.Advance(time.Minute)
	carried, err := s.Ingest(ctx, "web-1", rep, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "applied 1 resource(s); transport refused from 2026-11-30T03:12:00.000Z to 2026-11-30T03:13:30.000Z: " +
		"tls: failed to verify the controller's certificate: x509: certificate signed by unknown authority"
	if carried.ReportID == first.ReportID || carried.Summary != want {
		t.Fatalf("report %d %q, want a new row with %q", carried.ReportID, carried.Summary, want)
	}
	c.Advance(time.Minute)
	after := ingest(t, s, "web-1", d, applied("app", "a")...)
	if after.ReportID == carried.ReportID || after.Summary != "applied 1 resource(s)" {
		t.Fatalf("the next report: %d %q, want a row of its own without the refusal", after.ReportID, after.Summary)
	}
	rep.Transport.To = from.Add(-time.Second)
	_, err = s.Ingest(ctx, "web-1", rep, IngestOptions{})
	wantCode(t, err, hq.CodeInvalid)
}

// A report that changed a few resources of a node with many finds their rows by key, and one
// that changed many reads the node's rows: both move exactly the rows their results name.
func TestFewAndManyChangedResultsMoveTheirRows(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	rs := make([]hq.Resource, 20)
	for i := range rs {
		rs[i] = file(fmt.Sprintf("f%02d", i), "1")
	}
	mustModule(t, s, "app", rs...)
	mustNode(t, s, "web-1")
	mustAssign(t, s, "web-1", "app")
	report := func(changed func(name string) bool) {
		t.Helper()
		d, err := s.Compose(ctx, "web-1", "test")
		if err != nil {
			t.Fatal(err)
		}
		rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest}
		for _, r := range d.Modules[0].Resources {
			rep.Results = append(rep.Results, hq.Result{Module: "app", Resource: r.Name, Outcome: hq.StateApplied, Attempted: true, Changed: changed(r.Name)})
		}
		if _, err := s.Ingest(ctx, "web-1", rep, IngestOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	attempts := func() map[string]int64 {
		out := map[string]int64{}
		for _, r := range rs {
			v := resource(t, s, "web-1", "app", r.Name)
			if v.State != hq.StateApplied {
				t.Fatalf("%s is %s", r.Name, v.State)
			}
			out[r.Name] = v.Attempts
		}
		return out
	}
	report(func(string) bool { return true }) // the first apply: every row pending → applied
	for _, tc := range []struct {
		what    string
		changed func(string) bool
	}{
		{"one of twenty (by key)", func(n string) bool { return n == "f07" }},
		{"twelve of twenty (reading the node's rows)", func(n string) bool { return n < "f12" }},
	} {
		before := attempts()
		report(tc.changed)
		after := attempts()
		for _, r := range rs {
			if want := before[r.Name] + driver.Flag(tc.changed(r.Name)); after[r.Name] != want {
				t.Errorf("%s: %s has %d attempts, want %d", tc.what, r.Name, after[r.Name], want)
			}
		}
	}
	// A new revision of one file: its row is pending again, and a report that changed only it
	// applies it by key; the other rows are left as they are.
	rs[3] = file("f03", "2")
	mustModule(t, s, "app", rs...)
	if v := resource(t, s, "web-1", "app", "f03"); v.State != hq.StatePending {
		t.Fatalf("f03 after a new revision of it: %s, want pending", v.State)
	}
	report(func(n string) bool { return n == "f03" })
	if v := resource(t, s, "web-1", "app", "f03"); v.State != hq.StateApplied {
		t.Fatalf("f03 after its new revision was reported applied: %s", v.State)
	}
}

// An error is shown only beside the state it explains: a resource that failed and is now held
// or blocked shows its hold or its gate, not the error of the earlier attempt, on every
// surface (they all read the node's resources through the store), and the row drops it too.
func TestStaleLastErrorIsNotShown(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("held", "x"), file("blocked", "y"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, failing("app", "held"), failing("app", "blocked"))
	if r := resource(t, s, "web-1", "app", "held"); r.LastError != "validate: exit status 1" {
		t.Fatalf("a failed resource: %+v, want its error", r)
	}
	ingest(t, s, "web-1", d,
		hq.Result{Module: "app", Resource: "held", Outcome: hq.StateHeld, HoldReason: "would overwrite /etc/held"},
		hq.Result{Module: "app", Resource: "blocked", Outcome: hq.StatePending, BlockedBy: "app/gate"})
	for name, why := range map[string]string{"held": "would overwrite /etc/held", "blocked": ""} {
		r := resource(t, s, "web-1", "app", name)
		if r.LastError != "" || r.HoldReason != why {
			t.Fatalf("%s now %s: last error %q, hold reason %q", name, r.State, r.LastError, r.HoldReason)
		}
	}
	var stored int
	if err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM resource_states WHERE last_error <> ''`).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("%d rows keep an error (%v), want none", stored, err)
	}
	// A row that keeps one (written before held cleared it, or by hand) does not show it either.
	if _, err := s.write.ExecContext(ctx, `UPDATE resource_states SET last_error = 'old' WHERE resource = 'held'`); err != nil {
		t.Fatal(err)
	}
	if r := resource(t, s, "web-1", "app", "held"); r.LastError != "" {
		t.Fatalf("a held row's stored error shows: %+v", r)
	}
	// Failing again, the error is current and shows.
	ingest(t, s, "web-1", d, failing("app", "held"), failing("app", "blocked"))
	if r := resource(t, s, "web-1", "app", "held"); r.State != hq.StateFailed || r.LastError != "validate: exit status 1" {
		t.Fatalf("failed again: %+v", r)
	}
}
