// Package drivertest holds the engines to one behaviour: the same story of a small fleet is
// told to the store on SQLite and on PostgreSQL, in one test run, and everything the store says
// along the way (views, pages, histories, errors) must be the same on both, and right.
//
// It always runs on SQLite, where it checks what it can alone; with HQ_TEST_POSTGRES naming a
// server it runs on both and compares them, step by step.
package drivertest

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/meshhq/hq/internal/testclock"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	_ "github.com/meshhq/hq/db/postgres"
	_ "github.com/meshhq/hq/db/sqlite"
	"github.com/meshhq/hq/internal/testdb"
)

// databaseTime is a time the database stamped rather than the store's clock (a row a trigger
// writes as another is deleted): the story's clock runs years ahead, so any earlier time is the
// database's, and differs from run to run.
var databaseTime = regexp.MustCompile(`"20[0-2][0-9]-[0-9-]+T[0-9:.]+Z"`)

// step is what the store said at one point of the story, as JSON.
type step struct {
	name, said string
}

func TestEnginesBehaveAlike(t *testing.T) {
	lite := tell(t, "sqlite")
	checkStory(t, lite)
	if testdb.Server() == "" {
		testdb.NeedServer(t) // fails in CI, where a server always runs; skips elsewhere
		return
	}
	pg := tell(t, "postgres")
	if len(pg) != len(lite) {
		t.Fatalf("PostgreSQL told %d steps, SQLite %d", len(pg), len(lite))
	}
	for i := range lite {
		if lite[i].said != pg[i].said {
			t.Errorf("%s differs:\n  SQLite:     %s\n  PostgreSQL: %s", lite[i].name, lite[i].said, pg[i].said)
		}
	}
}

// checkStory checks a few facts of the story on one engine, so that two engines agreeing on
// something wrong do not pass.
func checkStory(t *testing.T, story []step) {
	t.Helper()
	said := map[string]string{}
	for _, s := range story {
		said[s.name] = s.said
	}
	for name, want := range map[string]string{
		"web-1 after three failures":     `"state":"stuck"`,
		"mesh after reports":             `"total":4`,
		"plan of revision 4":             `"revision":4`,
		"unassign db from web-3 twice":   `not_found`,
		"rollout started by revision 3":  `"state":"progressing"`,
		"rollout aborted":                `"state":"aborted"`,
		"session valid":                  `true`,
		"session after delete":           `false`,
		"web-2 after delete":             `not_found`,
		"drifts of web-2":                `"found":"bye\n"`,
		"report of an older generation":  `"generation":2`,
		"placement eu":                   `"matched":2`,
		"web-1 transitions":              `"to":"stuck"`,
		"nodes not converged":            `web-1`,
		"declaration of web-1":           `/etc/app-web-1.conf`,
		"module app at revision 2 pages": `"Revision":2`,
	} {
		got, ok := said[name]
		if !ok {
			t.Errorf("the story has no step %q", name)
			continue
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s: %s\n  does not say %s", name, got, want)
		}
	}
}

// clock is the story's time, the same on every engine.
type clock = testclock.Clock

// teller records what the store says.
type teller struct {
	t     *testing.T
	s     *db.Store
	c     *clock
	story []step
}

// say records v, or err's code and message, under name.
func (r *teller) say(name string, v any, err error) {
	r.t.Helper()
	if err != nil {
		v = map[string]string{"error": string(hq.ErrorCode(err)), "message": err.Error()}
	}
	b, merr := json.Marshal(v)
	if merr != nil {
		r.t.Fatalf("%s: %v", name, merr)
	}
	b = databaseTime.ReplaceAll(b, []byte(`"the database's clock"`))
	r.story = append(r.story, step{name, string(b)})
	if testing.Verbose() {
		r.t.Logf("%s: %s", name, b)
	}
}

// as is say for a read's two results.
func (r *teller) as(name string) func(v any, err error) {
	return func(v any, err error) { r.t.Helper(); r.say(name, v, err) }
}

func applied(d hq.Declaration) []hq.Result {
	var out []hq.Result
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			out = append(out, hq.Result{Module: m.Name, Resource: r.Name, Outcome: hq.StateApplied, Attempted: true, Changed: true})
		}
	}
	return out
}

func report(d hq.Declaration, results []hq.Result) hq.Report {
	return hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: results}
}

// tell tells the story to a store on engine and returns what it said.
func tell(t *testing.T, engine string) []step {
	ctx := context.Background()
	c := testclock.At(time.Date(2030, 11, 30, 3, 0, 0, 0, time.UTC))
	s, err := db.Open(ctx, testdb.NewOn(t, engine), db.Options{Now: c.Now, StuckAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r := &teller{t: t, s: s, c: c}
	r.fleet(ctx)
	r.reports(ctx)
	r.operator(ctx)
	r.rollout(ctx)
	r.history(ctx)
	r.endings(ctx)
	return r.story
}

// fleet registers four nodes, two modules, a placement and a direct assignment.
func (r *teller) fleet(ctx context.Context) {
	s := r.s
	for i, region := range []string{"eu", "eu", "us", "us"} {
		_, gen, err := s.CreateLabelledNode(ctx, fmt.Sprintf("web-%d", i+1), map[string]string{"region": region, "role": "web"})
		r.say(fmt.Sprintf("register web-%d", i+1), gen, err)
		r.c.Advance(time.Second)
	}
	_, _, err := s.CreateNode(ctx, "web-1")
	r.say("register web-1 again", nil, err)
	res, err := s.PutModule(ctx, "app", []hq.Resource{
		{Name: "conf", Kind: hq.KindFile, Path: "/etc/app-{{.Node}}.conf", Content: "region={{.Labels.region}} size={{.Vars.size}}\n"},
		file("motd", "hello\n"),
	})
	r.say("put app", res, err)
	res, err = s.PutModule(ctx, "db", []hq.Resource{file("db.conf", "port=5432\n")})
	r.say("put db", res, err)
	_, err = s.PutModule(ctx, "bad", []hq.Resource{file("a", "x"), {Name: "a", Kind: hq.KindFile, Path: "/etc/b"}})
	r.say("put a module naming a resource twice", nil, err)
	for i, size := range []string{"large", "small", "small", "small"} {
		gen, err := s.SetVars(ctx, fmt.Sprintf("web-%d", i+1), map[string]string{"size": size}, nil)
		r.say(fmt.Sprintf("set vars of web-%d", i+1), gen, err)
	}
	p, err := s.PutPlacement(ctx, hq.Placement{Name: "eu", Module: "app", Selector: "region=eu"})
	r.say("placement eu", p, err)
	gen, err := s.Assign(ctx, "web-3", "db", nil, nil)
	r.say("assign db to web-3", gen, err)
	stale := int64(1)
	_, err = s.Assign(ctx, "web-4", "db", nil, &stale)
	r.say("assign db to web-4 on a stale generation", nil, err)
	gen, err = s.SetLabels(ctx, "web-4", map[string]string{"region": "eu", "role": "web"}, nil)
	r.say("move web-4 to eu", gen, err)
	r.as("placements")(s.ListPlacements(ctx))
	r.as("nodes of app")(s.AssignedNodes(ctx, "app"))
	gen, err = s.SetLabels(ctx, "web-4", map[string]string{"region": "us", "role": "web"}, nil)
	r.say("move web-4 back to us", gen, err)
	r.as("placement eu")(s.GetPlacement(ctx, "eu"))
}

// reports has hosts fetch and report: converged, failing to stuck, drifted, and one too late.
func (r *teller) reports(ctx context.Context) {
	s := r.s
	decls := map[string]hq.Declaration{}
	for _, n := range []string{"web-1", "web-2", "web-3", "web-4"} {
		d, err := s.Compose(ctx, n, "test")
		r.say("declaration of "+n, d, err)
		decls[n] = d
	}
	for _, n := range []string{"web-2", "web-3", "web-4"} {
		resp, err := s.Ingest(ctx, n, report(decls[n], applied(decls[n])), db.IngestOptions{})
		r.say("report of "+n, resp, err)
		r.c.Advance(time.Second)
	}
	for i := range 3 {
		res := applied(decls["web-1"])
		res[0].Outcome, res[0].Changed, res[0].Error = hq.StateFailed, false, "validate: exit status 1"
		resp, err := s.Ingest(ctx, "web-1", report(decls["web-1"], res), db.IngestOptions{})
		r.say(fmt.Sprintf("report %d of web-1", i+1), resp, err)
		r.c.Advance(time.Minute)
	}
	r.as("web-1 after three failures")(s.GetNode(ctx, "web-1"))
	drifted := applied(decls["web-2"])
	for i := range drifted {
		drifted[i].Changed = false
	}
	if len(drifted) < 2 {
		r.t.Fatalf("web-2 declares %d resources", len(drifted))
	}
	drifted[1].Drift, drifted[1].DriftDetail, drifted[1].DriftFound = true, "content sha256:ab (want sha256:cd)", "bye\n"
	resp, err := s.Ingest(ctx, "web-2", report(decls["web-2"], drifted), db.IngestOptions{})
	r.say("drift on web-2", resp, err)
	r.as("drifts of web-2")(s.Drifts(ctx, "web-2", 10))
	r.as("declared texts of web-2")(s.DeclaredTexts(ctx, "web-2", []string{"app/motd", "app/conf"}))
	_, err = s.Assign(ctx, "web-2", "db", nil, nil)
	r.say("assign db to web-2", nil, err)
	resp, err = s.Ingest(ctx, "web-2", report(decls["web-2"], applied(decls["web-2"])), db.IngestOptions{})
	r.say("report of an older generation", resp, err)
	r.as("mesh after reports")(s.MeshStatus(ctx))
	r.as("nodes not converged")(s.ListNodes(ctx, db.NodeFilter{NotConverged: true}))
	r.as("nodes stuck")(s.ListNodes(ctx, db.NodeFilter{Status: hq.StatusStuck}))
	r.as("nodes named")(s.NodesNamed(ctx, []string{"web-3", "web-2", "nobody"}))
}

// operator retries, takes and unassigns, as an operator does.
func (r *teller) operator(ctx context.Context) {
	s := r.s
	gen, err := s.Retry(ctx, "web-1", "app", "conf", nil)
	r.say("retry web-1's conf", gen, err)
	r.as("web-1 after retry")(s.GetNode(ctx, "web-1"))
	_, err = s.Retry(ctx, "web-1", "app", "nothing", nil)
	r.say("retry a resource that is not there", nil, err)
	gen, err = s.Take(ctx, "web-3", "db", nil)
	r.say("take db on web-3", gen, err)
	gen, err = s.Unassign(ctx, "web-3", "db", nil)
	r.say("unassign db from web-3", gen, err)
	_, err = s.Unassign(ctx, "web-3", "db", nil)
	r.say("unassign db from web-3 twice", nil, err)
	r.as("web-3 after unassign")(s.GetNode(ctx, "web-3"))
	r.as("modules")(s.ListModules(ctx))
}

// rollout puts a placement under a rollout policy, starts one with a new revision, reads it
// every way the pages do, and aborts it.
func (r *teller) rollout(ctx context.Context) {
	t, s := r.t, r.s
	gen, err := s.PutModule(ctx, "app", []hq.Resource{file("motd", "hello again\n")})
	r.say("put app revision 2", gen, err)
	r.as("module app at revision 2 pages")(s.PageRevisions(ctx, "app", 0, 10))
	p, err := s.PutPlacement(ctx, hq.Placement{Name: "eu", Module: "app", Selector: "region=eu",
		Rollout: &hq.RolloutPolicy{Canary: 1, FailureBudget: 0, ProgressDeadline: "5m"}})
	r.say("placement eu under a rollout policy", p, err)
	res, err := s.PutModule(ctx, "app", []hq.Resource{file("motd", "hello, rolled out\n"), file("issue", "web\n")})
	r.say("put app revision 3", res, err)
	all, err := s.ListRollouts(ctx, 10)
	r.say("rollout started by revision 3", all, err)
	if len(all) != 1 {
		t.Fatalf("%d rollouts after revision 3 on a placement under a policy, want 1", len(all))
	}
	id := all[0].ID
	r.as("rollout waves")(s.RolloutWaves(ctx, id))
	r.as("rollout nodes")(s.PageRolloutNodes(ctx, id, "", 10))
	r.as("rollouts of eu")(s.LatestRollouts(ctx, []string{"eu", "none"}))
	r.as("rollout page")(s.PageRollouts(ctx, db.RolloutFilter{Module: "app", Limit: 10}))
	_, err = s.ResumeRollout(ctx, id)
	r.say("resume a progressing rollout", nil, err)
	ro, err := s.AbortRollout(ctx, id)
	r.say("rollout aborted", ro, err)
	r.as("rollout transitions")(s.RolloutTransitions(ctx, id))
	// Planned after the rollout: a plan is a write rolled back, and on PostgreSQL the ids it
	// drew from sequences stay drawn (ids may have gaps; nothing reads meaning into them).
	r.as("plan of revision 4")(s.PlanModule(ctx, "app", []hq.Resource{file("motd", "hello, planned\n")}))
	r.as("module summary")(s.GetModuleSummary(ctx, "app"))
	r.as("revision 3")(s.GetRevision(ctx, "app", 3))
	r.as("module page")(s.PageModules(ctx, "", 10))
	r.as("placement page")(s.PagePlacements(ctx, "", 10))
}

// history reads what the store kept of the story.
func (r *teller) history(ctx context.Context) {
	t, s := r.t, r.s
	r.as("web-1 reports")(s.Reports(ctx, "web-1", 10))
	r.as("web-1 report outcomes")(s.ReportOutcomes(ctx, "web-1", 10))
	r.as("web-1 sends")(s.Sends(ctx, "web-1", 10))
	r.as("web-1 transitions")(s.Transitions(ctx, "web-1", 20))
	first := time.Date(2030, 11, 30, 2, 0, 0, 0, time.UTC)
	r.as("converged history")(s.ConvergedHistory(ctx, first, 30*time.Minute, 6))
	f, err := s.Figures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.DatabaseBytes, f.WALBytes = 0, 0 // the engines' files differ
	r.say("figures", f, nil)
}

// endings deletes and prunes, and keeps an operator's session.
func (r *teller) endings(ctx context.Context) {
	s := r.s
	expires := r.c.Now().Add(time.Hour)
	r.say("create session", nil, s.CreateSession(ctx, "secret-1", expires, hq.Identity{Operator: hq.BootstrapAdmin, Role: hq.RoleAdmin}))
	r.as("session valid")(s.SessionValid(ctx, "secret-1"))
	r.say("delete session", nil, s.DeleteSession(ctx, "secret-1"))
	r.as("session after delete")(s.SessionValid(ctx, "secret-1"))
	gen, err := s.DeleteNode(ctx, "web-2", nil)
	r.say("delete web-2", gen, err)
	_, err = s.GetNode(ctx, "web-2")
	r.say("web-2 after delete", nil, err)
	r.say("delete placement eu", nil, s.DeletePlacement(ctx, "eu"))
	r.as("nodes of app after the placement went")(s.AssignedNodes(ctx, "app"))
	r.c.Advance(40 * 24 * time.Hour)
	r.as("prune")(s.Prune(ctx, db.Retention{For: 24 * time.Hour, KeepPerNode: 1, Window: 2}))
	r.as("web-1 reports after prune")(s.Reports(ctx, "web-1", 10))
	r.as("mesh at the end")(s.MeshStatus(ctx))
}
