package db

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/internal/testclock"
	"github.com/meshhq/hq/internal/testdb"
	pgmigrations "github.com/meshhq/hq/migrations/postgres"
	"github.com/pressly/goose/v3"
)

// TestSteadyReportsInOneStatement: on PostgreSQL a steady report is taken by one statement
// (hq_report_steady), as are a first apply and the report after it (hq_report_settled), each
// answering and writing what the statement-by-statement path does for it, and every other
// report goes the general way. On SQLite the same story runs without them (its steady reports
// taken by takeSteady), and both must answer and read alike.
func TestSteadyReportsInOneStatement(t *testing.T) {
	testdb.NeedServer(t)
	t.Parallel()
	story := func(engine string) []storyStep { return steadyStory(t, engine, false) }
	pg, lite := story("postgres"), story("sqlite")
	for i := range pg {
		p, l := pg[i], lite[i]
		p.quick, l.quick, p.here, l.here = 0, 0, 0, 0
		if !reflect.DeepEqual(p, l) {
			t.Errorf("step %d: PostgreSQL %+v, SQLite %+v", i, p, l)
		}
	}
	// Taken in one statement: the first three reports, the eighth and the thirteenth.
	var quick []int64
	for _, st := range pg {
		quick = append(quick, st.quick)
	}
	if want := []int64{1, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5}; !reflect.DeepEqual(quick, want) {
		t.Errorf("reports taken in one statement after each step: %v, want %v", quick, want)
	}
	if got := lite[len(lite)-1].quick; got != 0 {
		t.Errorf("SQLite took %d report(s) in one statement; it has no such statement", got)
	}
	if r := pg[2].node.LastReport; r.Repeats != 1 || pg[2].resp.ReportID != pg[1].resp.ReportID || pg[1].resp.ReportID == pg[0].resp.ReportID {
		t.Errorf("the first apply was report %d, the one after it %d, and the steady report counted %d repeat(s) of report %d",
			pg[0].resp.ReportID, pg[1].resp.ReportID, r.Repeats, pg[2].resp.ReportID)
	}
	if v := pg[0].node; v.AppliedGeneration == 0 || v.Counts[hq.StateApplied] != 2 || v.Resources[0].Attempts != 1 {
		t.Errorf("after the first apply: applied generation %d, counts %v, resources %+v", v.AppliedGeneration, v.Counts, v.Resources)
	}
	if pg[3].err == "" || pg[8].err == "" || pg[9].err == "" {
		t.Errorf("a stale If-Match, a wrong signature and an undeclared resource were taken: %q, %q, %q", pg[3].err, pg[8].err, pg[9].err)
	}
	if pg[11].err != ErrTokenRefused.Error() || pg[13].err != ErrTokenRefused.Error() {
		t.Errorf("reports with another token: %q, %q", pg[11].err, pg[13].err)
	}
}

// TestSettledReportsOfADeclarationComposedElsewhere: a controller checks a settled report's
// results against the declaration it composed; one it did not compose (another controller's,
// or its own before a restart) is taken the general way, and writes the same.
func TestSettledReportsOfADeclarationComposedElsewhere(t *testing.T) {
	testdb.NeedServer(t)
	t.Parallel()
	ctx := context.Background()
	url := testdb.NewOn(t, "postgres")
	a := open(t, url, Options{})
	mustModule(t, a, "app", file("conf", "x"), file("ok", "y"))
	mustNode(t, a, "web-1")
	mustAssign(t, a, "web-1", "app")
	d := mustCompose(t, a, "web-1", "ctl-a")
	b := open(t, url, Options{})
	start(t, b.Workers()...)
	made := applied("app", "conf", "ok")
	for i := range made {
		made[i].Changed = true
	}
	report := func(results []hq.Result) hq.Report {
		return hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: results}
	}
	if _, err := b.Ingest(ctx, "web-1", report(made), IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := b.steadyTaken.Load(); got != 0 {
		t.Errorf("%d report(s) of a declaration composed elsewhere taken in one statement", got)
	}
	if v := mustGetNode(t, b, "web-1"); v.Counts[hq.StateApplied] != 2 || v.Resources[0].Attempts != 1 || v.AppliedGeneration != d.Generation {
		t.Errorf("after the first apply: counts %v, applied generation %d, resources %+v", v.Counts, v.AppliedGeneration, v.Resources)
	}
	// Once b has composed the same declaration, the report after the apply is settled.
	if again := mustCompose(t, b, "web-1", "ctl-b"); again.Digest != d.Digest {
		t.Fatalf("composed again with digest %s, first %s", again.Digest, d.Digest)
	}
	resp, err := b.Ingest(ctx, "web-1", report(applied("app", "conf", "ok")), IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.steadyTaken.Load(); got != 1 {
		t.Errorf("%d report(s) taken in one statement after composing, want 1", got)
	}
	if v := mustGetNode(t, b, "web-1"); v.LastReport == nil || v.LastReport.ID != resp.ReportID || v.Resources[0].Attempts != 1 {
		t.Errorf("after the settled report %d: last report %+v, resources %+v", resp.ReportID, v.LastReport, v.Resources)
	}
}

// TestSteadyReportsAfterMigratingFromTheSchemaBefore: a PostgreSQL database at the schema
// before hq_report_steady keeps its mesh through the migration, and its nodes' steady reports
// are then taken in one statement.
func TestSteadyReportsAfterMigratingFromTheSchemaBefore(t *testing.T) {
	testdb.NeedServer(t)
	t.Parallel()
	ctx := context.Background()
	hqDB := testdb.NewOn(t, "postgres")
	c := testclock.At(time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC))
	s := open(t, hqDB, Options{Now: c.Now})
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("conf", "x"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	first := ingest(t, s, "web-1", d, applied("app", "conf")...)
	s.Close()

	// Back to the schema before: its down migration drops the function.
	db, err := sql.Open("pgx", hqDB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, pgmigrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 6); err != nil {
		t.Fatal(err)
	}
	var fns int
	if err := db.QueryRow("SELECT COUNT(*) FROM pg_proc WHERE proname = 'hq_report_steady' AND pronamespace = current_schema()::regnamespace").Scan(&fns); err != nil || fns != 0 {
		t.Fatalf("at schema 6: %d hq_report_steady, %v", fns, err)
	}

	s = open(t, hqDB, Options{Now: c.Now})
	c.Advance(time.Minute)
	again := ingest(t, s, "web-1", d, applied("app", "conf")...)
	if again.ReportID != first.ReportID || again.Summary != first.Summary || s.steadyTaken.Load() != 1 {
		t.Fatalf("after migrating: %+v (taken in one statement: %d), want a repeat of %+v in one statement", again, s.steadyTaken.Load(), first)
	}
	if v := mustGetNode(t, s, "web-1"); v.LastReport.Repeats != 1 || v.AppliedGeneration != d.Generation {
		t.Fatalf("after migrating: last report %+v, applied generation %d", v.LastReport, v.AppliedGeneration)
	}
	// And the rows every report writes again have room to be written in place.
	for table, want := range map[string]string{"nodes": "{fillfactor=50}", "reports": "{fillfactor=70}"} {
		var got sql.NullString
		if err := db.QueryRow("SELECT reloptions::text FROM pg_class WHERE oid = $1::regclass", table).Scan(&got); err != nil || got.String != want {
			t.Errorf("after migrating: %s's options %q (%v), want %s", table, got.String, err, want)
		}
	}
}

// TestSteadyReportsSharingCommits: steady reports from many nodes at once, taken in one
// statement each whether they commit alone or share a commit, each counted once.
func TestSteadyReportsSharingCommits(t *testing.T) {
	testdb.NeedServer(t)
	t.Parallel()
	s := open(t, testdb.NewOn(t, "postgres"), Options{})
	start(t, s.Workers()...)
	mustModule(t, s, "app", file("conf", "x"))
	const nodes, each = 8, 6
	decls := make([]hq.Declaration, nodes)
	for i := range decls {
		node := fmt.Sprintf("web-%d", i)
		mustNode(t, s, node)
		mustAssign(t, s, node, "app")
		decls[i] = mustCompose(t, s, node, "test")
		ingest(t, s, node, decls[i], applied("app", "conf")...)
	}
	firsts := s.steadyTaken.Load() // the first applies, settled
	var wg sync.WaitGroup
	errs := make(chan error, nodes*each)
	for i, d := range decls {
		wg.Go(func() {
			for range each {
				rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: applied("app", "conf")}
				if _, err := s.Ingest(context.Background(), fmt.Sprintf("web-%d", i), rep, IngestOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := s.steadyTaken.Load() - firsts; got != nodes*each {
		t.Errorf("%d report(s) taken in one statement, want %d", got, nodes*each)
	}
	for i := range nodes {
		if v := mustGetNode(t, s, fmt.Sprintf("web-%d", i)); v.LastReport.Repeats != each {
			t.Errorf("web-%d: %d repeat(s), want %d", i, v.LastReport.Repeats, each)
		}
	}
	t.Logf("at most %d report(s) shared a commit; %d taken together in one statement", s.batched.Load(), s.togetherTaken.Load())
}

// TestReportsOfABatchTakenTogether: the steady reports of a batch are taken in one statement,
// and its first applies in another, but for a node's second report, which waits for the batch
// to take it after its first; one that is not steady in the database's eyes is left to the
// batch's general way.
func TestReportsOfABatchTakenTogether(t *testing.T) {
	testdb.NeedServer(t)
	t.Parallel()
	ctx := context.Background()
	s := open(t, testdb.NewOn(t, "postgres"), Options{})
	mustModule(t, s, "app", file("conf", "x"))
	steady := map[string]*driver.ReportSteadyParams{}
	for _, node := range []string{"web-0", "web-1", "web-2"} {
		mustNode(t, s, node)
		mustAssign(t, s, node, "app")
		d := mustCompose(t, s, node, "test")
		rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: applied("app", "conf")}
		ingest(t, s, node, d, rep.Results...)
		steady[node] = &driver.ReportSteadyParams{Node: node, SendID: d.SendID, Generation: d.Generation, Digest: d.Digest,
			Outcome: OutcomeDigest(rep), Results: 1, At: "2026-12-03T10:00:00.000Z"}
	}
	changed := *steady["web-2"]
	changed.Outcome = "sha256:another"
	firsts := map[string]*driver.ReportSettledParams{}
	for _, node := range []string{"web-3", "web-4"} {
		mustNode(t, s, node)
		mustAssign(t, s, node, "app")
		d := mustCompose(t, s, node, "test")
		rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: applied("app", "conf")}
		p, ok := settledReport(rep)
		if !ok {
			t.Fatalf("%s's first apply is not a settled report", node)
		}
		p.Node, p.Outcome, p.At = node, OutcomeDigest(rep), "2026-12-03T10:00:00.000Z"
		firsts[node] = &p
	}
	var took []string
	request := func(node string, steady *driver.ReportSteadyParams, settled *driver.ReportSettledParams) *batchRequest {
		r := &batchRequest{ctx: ctx, node: node, steady: steady, settled: settled, done: make(chan error, 1),
			fn: func(context.Context, driver.Queries) error { return nil }}
		r.took = func(row driver.ReportSteadyRow) { took = append(took, fmt.Sprintf("%s:%d", node, row.ReportID)) }
		r.quick = func(context.Context, driver.Queries) (bool, error) { return false, nil }
		return r
	}
	other := &batchRequest{ctx: ctx, done: make(chan error, 1)}
	batch := []*batchRequest{request("web-0", steady["web-0"], nil), other, request("web-3", nil, firsts["web-3"]),
		request("web-1", steady["web-1"], nil), request("web-0", steady["web-0"], nil), request("web-2", &changed, nil),
		request("web-4", nil, firsts["web-4"])}
	rest := s.takeTogether(ctx, batch)

	var nodes []string
	for _, call := range took {
		nodes = append(nodes, strings.Split(call, ":")[0])
	}
	if got := strings.Join(nodes, " "); got != "web-0 web-1 web-3 web-4" {
		t.Fatalf("took %v, want web-0's first report and web-1's, then web-3's and web-4's first applies", took)
	}
	if len(rest) != 3 || rest[0] != other || rest[1] != batch[4] || rest[2] != batch[5] {
		t.Fatalf("left %d request(s) to the batch, want the other write, web-0's second report and web-2's", len(rest))
	}
	if rest[1].quick == nil || rest[2].quick != nil {
		t.Error("web-0's second report should still be asked alone, and web-2's not again")
	}
	for _, i := range []int{0, 2, 3, 6} {
		if err := <-batch[i].done; err != nil {
			t.Error(err)
		}
	}
	if got := s.togetherTaken.Load(); got != 4 {
		t.Errorf("%d taken together, want 4", got)
	}
	for _, node := range []string{"web-3", "web-4"} {
		if r := resource(t, s, node, "app", "conf"); r.State != hq.StateApplied {
			t.Errorf("%s: app/conf %s after its first apply, want applied", node, r.State)
		}
	}
	for node, want := range map[string]int64{"web-0": 1, "web-1": 1, "web-2": 0} {
		if v := mustGetNode(t, s, node); v.LastReport.Repeats != want {
			t.Errorf("%s: %d repeat(s), want %d", node, v.LastReport.Repeats, want)
		}
	}
}

// storyStep is what one report of steadyStory was answered, and what it left.
type storyStep struct {
	resp hq.ReportResponse
	err  string
	node hq.NodeView
	// quick and here count the reports taken so far in one statement (PostgreSQL) and by
	// takeSteady (SQLite).
	quick, here int64
}

// steadyStory tells one node's reports on engine: settled, steady, refused and failing ones in
// turn. general keeps SQLite's reports on the general path.
func steadyStory(t *testing.T, engine string, general bool) []storyStep {
	t.Helper()
	c := testclock.At(time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC))
	s := open(t, testdb.NewOn(t, engine), Options{Now: c.Now, StuckAttempts: 3})
	s.generalOnly = general
	start(t, s.Workers()...)
	ctx := context.Background()
	token, _, err := s.CreateNode(ctx, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	mustModule(t, s, "app", file("conf", "x"), file("ok", "y"))
	mustAssign(t, s, "web-1", "app")
	// Signed, so that a report is believed only with the signature it was sent with.
	d, err := s.ComposeSigned(ctx, "web-1", "test", func(d *hq.Declaration) { d.Signature = "sig-" + d.Digest })
	if err != nil {
		t.Fatal(err)
	}
	report := func(results ...hq.Result) hq.Report {
		return hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Signature: d.Signature, Results: results}
	}
	var steps []storyStep
	send := func(rep hq.Report, opts IngestOptions) {
		c.Advance(time.Minute)
		resp, err := s.Ingest(ctx, "web-1", rep, opts)
		st := storyStep{resp: resp, quick: s.steadyTaken.Load(), here: s.steadyHere.Load()}
		if err != nil {
			st.err = err.Error()
		}
		st.node = mustGetNode(t, s, "web-1")
		steps = append(steps, st)
	}
	ok := applied("app", "conf", "ok")
	made := applied("app", "conf", "ok")
	for i := range made {
		made[i].Changed = true
	}
	send(report(made...), IngestOptions{Token: token}) // a first apply: settled
	send(report(ok...), IngestOptions{Token: token})   // the report after it, nothing changed: settled
	send(report(ok...), IngestOptions{Token: token})   // steady
	stale := d.Generation - 1
	send(report(ok...), IngestOptions{IfMatch: &stale})          // a conflict, whichever way
	send(report(failing("app", "conf"), ok[1]), IngestOptions{}) // not clean
	send(report(failing("app", "conf"), ok[1]), IngestOptions{}) // a failure repeated
	send(report(ok...), IngestOptions{})                         // another outcome than the last
	send(report(ok...), IngestOptions{})                         // steady once more
	wrong := report(ok...)
	wrong.Signature = "not-it"
	send(wrong, IngestOptions{})                                     // a send believed only with its signature
	send(report(ok[0], applied("app", "other")[0]), IngestOptions{}) // a resource not declared
	send(report(made[0], ok[1]), IngestOptions{})                    // some changed, some not
	send(report(ok...), IngestOptions{Token: "not-its-token"})       // another token
	send(report(ok...), IngestOptions{})                             // settled again
	// Another token on a repeat sent without its results, steady otherwise.
	send(report(), IngestOptions{Token: "not-its-token", Repeat: true, Outcome: OutcomeDigest(report(ok...))})
	return steps
}

// TestSteadyReportsTakenHere: on SQLite a steady report is taken by takeSteady, in one read
// and two writes, and every step of the story answers and leaves what the general path does.
func TestSteadyReportsTakenHere(t *testing.T) {
	t.Parallel()
	here, general := steadyStory(t, "sqlite", false), steadyStory(t, "sqlite", true)
	var taken []int64
	for i := range here {
		h, g := here[i], general[i]
		taken = append(taken, h.here)
		h.here, g.here = 0, 0
		if !reflect.DeepEqual(h, g) {
			t.Errorf("step %d: taken here %+v, the general way %+v", i, h, g)
		}
	}
	// The third report and the eighth are steady.
	if want := []int64{0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2}; !reflect.DeepEqual(taken, want) {
		t.Errorf("reports taken here after each step: %v, want %v", taken, want)
	}
	if got := general[len(general)-1].here; got != 0 {
		t.Errorf("the general way took %d report(s) here", got)
	}

	// A steady report of a node with a stuck resource lists it, and one after a retry is asked
	// hands the retry out, once.
	flags := func(general bool) []storyStep {
		c := testclock.At(time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC))
		s := open(t, testdb.NewOn(t, "sqlite"), Options{Now: c.Now, StuckAttempts: 2})
		s.generalOnly = general
		start(t, s.Workers()...)
		ctx := context.Background()
		mustNode(t, s, "web-1")
		mustModule(t, s, "app", file("conf", "x"), file("ok", "y"), file("motd", "z"))
		mustAssign(t, s, "web-1", "app")
		d := mustCompose(t, s, "web-1", "test")
		var steps []storyStep
		send := func(results ...hq.Result) {
			c.Advance(time.Minute)
			resp, err := s.Ingest(ctx, "web-1", hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: results}, IngestOptions{})
			st := storyStep{resp: resp, here: s.steadyHere.Load(), node: mustGetNode(t, s, "web-1")}
			if err != nil {
				st.err = err.Error()
			}
			steps = append(steps, st)
		}
		send(failing("app", "conf"), applied("app", "ok")[0], applied("app", "motd")[0])
		send(failing("app", "conf"), applied("app", "ok")[0], applied("app", "motd")[0]) // stuck
		send(applied("app", "ok", "motd")...)                                            // conf left out
		send(applied("app", "ok", "motd")...)                                            // steady: conf stuck
		if _, err := s.Retry(ctx, "web-1", "app", "conf", nil); err != nil {
			t.Fatal(err)
		}
		send(applied("app", "ok", "motd")...) // steady: conf to retry
		send(applied("app", "ok", "motd")...) // steady: the retry handed out already
		return steps
	}
	here, general = flags(false), flags(true)
	for i := range here {
		h, g := here[i], general[i]
		if i == len(here)-1 && h.here != 3 {
			t.Errorf("%d report(s) taken here, want the last three", h.here)
		}
		h.here, g.here = 0, 0
		if !reflect.DeepEqual(h, g) {
			t.Errorf("stuck and retried, step %d: taken here %+v, the general way %+v", i, h, g)
		}
	}
	if r := here[3].resp; !reflect.DeepEqual(r.Stuck, []string{"app/conf"}) || len(r.Retry) != 0 {
		t.Errorf("a steady report with conf stuck was answered stuck %q, retry %q", r.Stuck, r.Retry)
	}
	if r := here[4].resp; len(r.Stuck) != 0 || !reflect.DeepEqual(r.Retry, []string{"app/conf"}) {
		t.Errorf("the one after conf's retry was asked was answered stuck %q, retry %q", r.Stuck, r.Retry)
	}
	if r := here[5].resp; len(r.Stuck) != 0 || len(r.Retry) != 0 {
		t.Errorf("the next was answered stuck %q, retry %q", r.Stuck, r.Retry)
	}
}
