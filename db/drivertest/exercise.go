// Package drivertest holds every engine to the store's behaviour. Exercise is called from each
// engine's own tests (db/sqlite, db/postgres): it runs the store on that engine through each
// area the drivers serve, one parallel subtest an area on a database of its own, and checks
// what the store says against the values it must say. A story told to both engines in one run
// and compared step by step (conformance_test.go) stays beside it as a smoke test of the rest.
package drivertest

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/testclock"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/seal"
)

// Exercise runs every area on engine ("sqlite" or "postgres"); the engine's package must be
// imported by the caller, as the controller imports it.
func Exercise(t *testing.T, engine string) {
	for _, a := range []struct {
		name string
		run  func(*area)
	}{
		{"nodes", nodes},
		{"modules", modules},
		{"assignments", assignments},
		{"reports", reports},
		{"placements", placements},
		{"rollouts", rollouts},
		{"history", history},
		{"sessions", sessions},
		{"secrets", secrets},
		{"operators", operators},
		{"audit", audit},
		{"secrets rekey", secretsRekey},
	} {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			a.run(open(t, engine))
		})
	}
}

// area is one subtest's store, on a database of its own, with a clock the area moves.
type area struct {
	t   *testing.T
	ctx context.Context
	s   *db.Store
	c   *testclock.Clock
	// dsn names the area's database, for a check made in SQL behind the store; secretsKey is
	// the file of the store's key for secrets at rest.
	dsn, secretsKey string
}

func open(t *testing.T, engine string) *area {
	c := testclock.At(time.Date(2030, 11, 30, 3, 0, 0, 0, time.UTC))
	keyFile := filepath.Join(t.TempDir(), "secrets.key")
	keys, err := seal.LoadKeys(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	dsn := testdb.NewOn(t, engine)
	s, err := db.Open(t.Context(), dsn, db.Options{Now: c.Now, StuckAttempts: 3, SecretsKey: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &area{t: t, ctx: t.Context(), s: s, c: c, secretsKey: keyFile, dsn: dsn}
}

// ok fails the area at once on an error where none may be.
func (a *area) ok(what string, err error) {
	a.t.Helper()
	if err != nil {
		a.t.Fatalf("%s: %v", what, err)
	}
}

// is checks a value the store said.
func (a *area) is(what string, got, want any) {
	a.t.Helper()
	if !reflect.DeepEqual(got, want) {
		a.t.Errorf("%s: got %#v, want %#v", what, got, want)
	}
}

// refused checks that an error carries the code it must.
func (a *area) refused(what string, err error, code hq.Code) {
	a.t.Helper()
	if got := hq.ErrorCode(err); err == nil || got != code {
		a.t.Errorf("%s: got %v (%q), want an error coded %q", what, err, got, code)
	}
}

// node reads a node that must be there.
func (a *area) node(name string) hq.NodeView {
	a.t.Helper()
	v, err := a.s.GetNode(a.ctx, name)
	a.ok("get "+name, err)
	return v
}

// register makes nodes with labels, each in a second of its own.
func (a *area) register(labels map[string]string, names ...string) {
	a.t.Helper()
	for _, n := range names {
		_, _, err := a.s.CreateLabelledNode(a.ctx, n, labels)
		a.ok("register "+n, err)
		a.c.Advance(time.Second)
	}
}

// put uploads a module that must be taken, and returns its revision.
func (a *area) put(module string, rs ...hq.Resource) int64 {
	a.t.Helper()
	res, err := a.s.PutModule(a.ctx, module, rs)
	a.ok("put "+module, err)
	return res.Revision
}

// report composes a node's declaration and reports every resource of it with outcome,
// returning the declaration it answered.
func (a *area) report(node string, outcome hq.State) hq.Declaration {
	a.t.Helper()
	d, err := a.s.Compose(a.ctx, node, "test")
	a.ok("compose "+node, err)
	var results []hq.Result
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			res := hq.Result{Module: m.Name, Resource: r.Name, Outcome: outcome, Attempted: true, Changed: outcome == hq.StateApplied}
			if outcome == hq.StateFailed {
				res.Error = "validate: exit status 1"
			}
			results = append(results, res)
		}
	}
	_, err = a.s.Ingest(a.ctx, node, hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: results}, db.IngestOptions{})
	a.ok("report of "+node, err)
	a.c.Advance(time.Second)
	return d
}

// file is a small file resource; the story uses it too.
func file(name, content string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindFile, Path: "/etc/" + name, Content: content}
}

func names(vs []hq.NodeView) []string {
	out := []string{}
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

func gen(n int64) *int64 { return &n }

func label(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func key(module, resource string) string { return fmt.Sprintf("%s/%s", module, resource) }
