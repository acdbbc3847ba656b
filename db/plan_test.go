package db

import (
	"context"
	"slices"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// everyTableCount counts the rows of every table of the database, whatever the migrations made.
func everyTableCount(t *testing.T, s *Store) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	rows, err := s.read.QueryContext(ctx, testdb.Pick("SELECT name FROM sqlite_master WHERE type = 'table'",
		"SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"))
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	counts := map[string]int64{}
	for _, tb := range tables {
		var n int64
		if err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+tb+`"`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[tb] = n
	}
	if len(counts) < 10 {
		t.Fatalf("only %d tables: %v", len(counts), counts)
	}
	return counts
}

func generationsOf(t *testing.T, s *Store, nodes ...string) []int64 {
	t.Helper()
	var out []int64
	for _, n := range nodes {
		g, err := s.NodeGeneration(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

func TestPlanModuleChangesNothing(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	for _, n := range []string{"n1", "n2", "n3"} {
		mustNode(t, s, n)
	}
	mustModule(t, s, "app", file("keep", "k"), file("change", "v1"), file("drop", "d"))
	mustModule(t, s, "other", hq.Resource{Name: "f", Kind: hq.KindFile, Path: "/etc/taken", Content: "x"})
	mustAssign(t, s, "n1", "app")
	mustAssign(t, s, "n2", "app")
	mustAssign(t, s, "n3", "other")
	d := mustCompose(t, s, "n1", "test")
	ingest(t, s, "n1", d, applied("app", "keep", "change", "drop")...)
	before, gens := everyTableCount(t, s), generationsOf(t, s, "n1", "n2", "n3")

	next := []hq.Resource{file("keep", "k"), file("change", "v2"), file("add", "a")}
	plan, err := s.PlanModule(ctx, "app", next)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Revision != 2 || plan.Unchanged || !slices.Equal(plan.Added, []string{"add"}) ||
		!slices.Equal(plan.Changed, []string{"change"}) || !slices.Equal(plan.Removed, []string{"drop"}) || len(plan.Conflicts) != 0 {
		t.Fatalf("plan %+v", plan)
	}
	want := []hq.PlanNode{{Node: "n1", Generation: gens[0], ToGeneration: gens[0] + 1}, {Node: "n2", Generation: gens[1], ToGeneration: gens[1] + 1}}
	if !slices.Equal(plan.Nodes, want) {
		t.Fatalf("plan nodes %+v, want %+v", plan.Nodes, want)
	}
	if after := everyTableCount(t, s); !mapsEqual(before, after) {
		t.Fatalf("a plan changed row counts:\nbefore %v\nafter  %v", before, after)
	}
	if g := generationsOf(t, s, "n1", "n2", "n3"); !slices.Equal(g, gens) {
		t.Fatalf("a plan moved generations: %v, were %v", g, gens)
	}

	// An unchanged upload plans nothing; a conflict is a line of the plan, and changes nothing.
	if p, err := s.PlanModule(ctx, "app", []hq.Resource{file("keep", "k"), file("change", "v1"), file("drop", "d")}); err != nil || !p.Unchanged || p.Revision != 1 || len(p.Nodes) != 0 {
		t.Fatalf("plan of the same module: %+v %v", p, err)
	}
	mustAssign(t, s, "n3", "app")
	before = everyTableCount(t, s)
	clash := append(slices.Clone(next), hq.Resource{Name: "clash", Kind: hq.KindFile, Path: "/etc/taken", Content: "y"})
	p, err := s.PlanModule(ctx, "app", clash)
	if err != nil || len(p.Conflicts) != 1 || len(p.Nodes) != 0 {
		t.Fatalf("plan of a clashing module: %+v %v", p, err)
	}
	if after := everyTableCount(t, s); !mapsEqual(before, after) {
		t.Fatalf("a refused plan changed row counts:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := s.PlanModule(ctx, "app", []hq.Resource{{Name: "bad", Kind: "nonsense"}}); hq.ErrorCode(err) != hq.CodeInvalid {
		t.Fatalf("plan of an invalid module: %v, want invalid", err)
	}

	// The revision the plan made up is not remembered: the real upload of other content at
	// the same revision number declares that content.
	real := []hq.Resource{file("keep", "k"), file("change", "v3")}
	res := mustModule(t, s, "app", real...)
	if res.Revision != plan.Revision {
		t.Fatalf("upload made revision %d, the plan said %d", res.Revision, plan.Revision)
	}
	decl, err := s.Declaration(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range decl.Modules {
		if m.Name != "app" {
			continue
		}
		if len(m.Resources) != 2 || m.Resources[1].Content != "v3" {
			t.Fatalf("n1 declares app as %+v, want the uploaded revision, not the planned one", m.Resources)
		}
	}
}

// A plan warns of a container whose volume would move to another host path: the container is
// recreated, and its data stays where it was.
func TestPlanWarnsOfAMovedVolume(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	const image = "localhost/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	web := func(vols ...string) hq.Resource {
		return hq.Resource{Name: "web", Kind: hq.KindContainer, Image: image, Volumes: vols}
	}
	mustModule(t, s, "app", web("/srv/a:/data", "/etc/app:/etc/app:ro"))
	plan, err := s.PlanModule(ctx, "app", []hq.Resource{web("/srv/b:/data", "/etc/app:/etc/app:ro")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"volume /data of app/web would be at /srv/b (was /srv/a): the container is recreated and nothing is copied"}
	if !slices.Equal(plan.Warnings, want) {
		t.Fatalf("warnings %q, want %q", plan.Warnings, want)
	}
	if plan, err = s.PlanModule(ctx, "app", []hq.Resource{web("/srv/a:/data")}); err != nil || len(plan.Warnings) != 0 {
		t.Fatalf("a volume dropped, none moved: warnings %q (%v)", plan.Warnings, err)
	}
}
