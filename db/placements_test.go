package db

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/wait"
	"github.com/meshhq/hq/selector"
)

func mustLabelled(t *testing.T, s *Store, name string, labels map[string]string) {
	t.Helper()
	if _, _, err := s.CreateLabelledNode(context.Background(), name, labels); err != nil {
		t.Fatal(err)
	}
}

// placedOn lists the nodes that have module, and from which source.
func placedOn(t *testing.T, s *Store, module string) map[string]string {
	t.Helper()
	page, err := s.ListNodes(context.Background(), NodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, v := range page.Nodes {
		for _, a := range v.Assignments {
			if a.Module == module {
				out[v.Name] = a.Source
			}
		}
	}
	return out
}

func TestPlacementFollowsLabels(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "app", file("app.conf", "1"))
	mustLabelled(t, s, "web-1", map[string]string{"role": "web", "region": "eu"})
	mustLabelled(t, s, "web-2", map[string]string{"role": "web"})
	mustLabelled(t, s, "db-1", map[string]string{"role": "db"})

	p, err := s.PutPlacement(ctx, hq.Placement{Name: "web-app", Module: "app", Selector: "role=web"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Matched != 2 || p.Assigned != 2 {
		t.Fatalf("placement %+v, want 2 matched and assigned", p)
	}
	if got := placedOn(t, s, "app"); len(got) != 2 || got["web-1"] != "web-app" || got["web-2"] != "web-app" {
		t.Fatalf("app is on %v", got)
	}
	g1 := mustGeneration(t, s, "web-1")

	// Labels that change no membership move no generation.
	if g, err := s.SetLabels(ctx, "web-1", map[string]string{"role": "web"}, &g1); err != nil || g != g1 {
		t.Fatalf("relabel within the selector: generation %d (was %d), %v", g, g1, err)
	}
	// Out of the selector: the module goes, and the generation moves in that transaction.
	g, err := s.SetLabels(ctx, "web-1", map[string]string{"role": "db"}, nil)
	if err != nil || g != g1+1 {
		t.Fatalf("relabel out: generation %d (was %d), %v", g, g1, err)
	}
	if got := placedOn(t, s, "app"); len(got) != 1 || got["web-2"] == "" {
		t.Fatalf("app is on %v after relabelling web-1", got)
	}
	if v := mustGetNode(t, s, "web-1"); len(v.Resources) != 0 || v.Labels["role"] != "db" {
		t.Fatalf("web-1 after leaving: %+v", v)
	}
	// A node registered into the selector gains it at once.
	mustLabelled(t, s, "web-3", map[string]string{"role": "web"})
	if v := mustGetNode(t, s, "web-3"); v.Generation != 1 || len(v.Resources) != 1 || v.Assignments[0].Source != "web-app" {
		t.Fatalf("web-3: %+v", v)
	}
	// The selector filters the node list.
	sel, err := selector.Parse("role=web")
	if err != nil {
		t.Fatal(err)
	}
	page, err := s.ListNodes(ctx, NodeFilter{Selector: &sel})
	if err != nil || len(page.Nodes) != 2 {
		t.Fatalf("role=web lists %d node(s), %v", len(page.Nodes), err)
	}
	// Deleting the placement takes the module off its nodes.
	if err := s.DeletePlacement(ctx, "web-app"); err != nil {
		t.Fatal(err)
	}
	if got := placedOn(t, s, "app"); len(got) != 0 {
		t.Fatalf("app is still on %v", got)
	}
	wantCode(t, s.DeletePlacement(ctx, "web-app"), hq.CodeNotFound)
}

func TestPlacementConflictsChangeNothing(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "app", file("app.conf", "1"))
	mustModule(t, s, "other", file("app.conf", "other")) // the same path
	mustLabelled(t, s, "web-1", map[string]string{"role": "web", "region": "eu"})
	mustLabelled(t, s, "web-2", map[string]string{"role": "web"})
	mustLabelled(t, s, "web-3", map[string]string{"role": "web"})
	mustAssign(t, s, "web-3", "app")
	gens := func() []int64 {
		var out []int64
		for _, n := range []string{"web-1", "web-2", "web-3"} {
			g := mustGeneration(t, s, n)
			out = append(out, g)
		}
		return out
	}
	before := gens()

	// Over an operator's assignment of the same module.
	_, err := s.PutPlacement(ctx, hq.Placement{Name: "web-app", Module: "app", Selector: "role=web"})
	wantCode(t, err, hq.CodeConflict)
	if got := gens(); !slices.Equal(got, before) {
		t.Fatalf("a refused placement moved generations %v to %v", before, got)
	}
	if _, err := s.GetPlacement(ctx, "web-app"); hq.ErrorCode(err) != hq.CodeNotFound {
		t.Fatalf("the refused placement was stored: %v", err)
	}
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "eu-app", Module: "app", Selector: "region=eu"}); err != nil {
		t.Fatal(err)
	}
	before = gens()
	// Two placements of one module on one node.
	_, err = s.PutPlacement(ctx, hq.Placement{Name: "web-app", Module: "app", Selector: "role=web,!x"})
	wantCode(t, err, hq.CodeConflict)
	// One path twice on a node.
	_, err = s.PutPlacement(ctx, hq.Placement{Name: "eu-other", Module: "other", Selector: "region=eu"})
	wantCode(t, err, hq.CodeConflict)
	// A relabel into a placement whose module the node has from an operator.
	_, err = s.SetLabels(ctx, "web-3", map[string]string{"region": "eu"}, nil)
	wantCode(t, err, hq.CodeConflict)
	if v := mustGetNode(t, s, "web-3"); v.Labels["region"] != "" {
		t.Fatalf("the refused labels were stored: %v", v.Labels)
	}
	if got := gens(); !slices.Equal(got, before) {
		t.Fatalf("generations %v, were %v", got, before)
	}
	_, err = s.PutPlacement(ctx, hq.Placement{Name: "bad", Module: "app", Selector: "role in web"})
	wantCode(t, err, hq.CodeInvalid)
	_, err = s.SetLabels(ctx, "web-1", map[string]string{"bad key": "x"}, nil)
	wantCode(t, err, hq.CodeInvalid)
}

// A placement over more nodes than a chunk: the first chunk in the request's transaction, the
// mover the rest, each node once with its generation bumped.
func TestPlacementReachesAFleetInChunks(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	const nodes = moveChunkNodes + 120
	mustModule(t, s, "app", file("app.conf", "1"))
	for i := range nodes {
		mustLabelled(t, s, fmt.Sprintf("n%04d", i), map[string]string{"role": "web"})
	}
	p, err := s.PutPlacement(ctx, hq.Placement{Name: "all", Module: "app", Selector: "role=web"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Matched != nodes || p.Assigned != moveChunkNodes {
		t.Fatalf("placement %+v: want %d matched, the first chunk of %d assigned", p, nodes, moveChunkNodes)
	}
	wait.For(t, 20*time.Second, fmt.Sprintf("the mover to place all %d nodes", nodes), func() bool {
		if p, err = s.GetPlacement(ctx, "all"); err != nil {
			t.Fatal(err)
		}
		return p.Assigned >= nodes
	})
	page, err := s.ListNodes(ctx, NodeFilter{})
	if err != nil || len(page.Nodes) != nodes {
		t.Fatalf("%d node(s) listed, %v; want %d", len(page.Nodes), err, nodes)
	}
	for _, v := range page.Nodes {
		if v.Generation != 1 || len(v.Assignments) != 1 {
			t.Fatalf("%s: generation %d, %d assignment(s)", v.Name, v.Generation, len(v.Assignments))
		}
	}
}

func TestVarsAreStoredAndMoveNothing(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	g, err := s.SetVars(ctx, "web-1", map[string]string{"motd": "hello {{ there }}"}, nil)
	if err != nil || g != 0 {
		t.Fatalf("generation %d, %v", g, err)
	}
	if v := mustGetNode(t, s, "web-1"); v.Vars["motd"] != "hello {{ there }}" {
		t.Fatalf("vars %v", v.Vars)
	}
	_, err = s.SetVars(ctx, "web-1", map[string]string{"-bad": "x"}, nil)
	wantCode(t, err, hq.CodeInvalid)
}

// Changing a placement's taken flag changes it on every node it placed, each with its
// generation; a node that leaves a placement mid-rollout leaves the rollout.
func TestPlacementTakenAndLeavingMidRollout(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "app", file("app.conf", "1"))
	mustLabelled(t, s, "web-1", map[string]string{"role": "web"})
	mustLabelled(t, s, "web-2", map[string]string{"role": "web"})
	p := hq.Placement{Name: "web", Module: "app", Selector: "role=web", Rollout: &hq.RolloutPolicy{Canary: 1}}
	if _, err := s.PutPlacement(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Taken = true
	if _, err := s.PutPlacement(ctx, p); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"web-1", "web-2"} {
		if v := mustGetNode(t, s, n); v.Generation != 2 || !v.Assignments[0].Taken {
			t.Fatalf("%s after taken: generation %d, %+v", n, v.Generation, v.Assignments)
		}
	}
	mustModule(t, s, "app", file("app.conf", "2"))
	if _, err := s.SetLabels(ctx, "web-2", nil, nil); err != nil {
		t.Fatal(err)
	}
	step(t, s)
	rs := mustRollouts(t, s, 1)
	if r := mustGetRollout(t, s, rs[0].ID); len(r.Progress) != 1 || r.Progress[0].Node != "web-1" {
		t.Fatalf("progress %+v", r.Progress)
	}
}

// A deleted name registered again starts with its new labels and no vars, and the placements
// its new labels match.
func TestRegisteredAgainStartsWithItsNewLabels(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "app", file("app.conf", "1"))
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web"}); err != nil {
		t.Fatal(err)
	}
	mustLabelled(t, s, "n1", map[string]string{"role": "web"})
	if _, err := s.SetVars(ctx, "n1", map[string]string{"k": "v"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteNode(ctx, "n1", nil); err != nil {
		t.Fatal(err)
	}
	mustLabelled(t, s, "n1", map[string]string{"role": "db"})
	v := mustGetNode(t, s, "n1")
	if v.Labels["role"] != "db" || len(v.Vars) != 0 || len(v.Assignments) != 0 {
		t.Fatalf("n1 registered again: %+v", v)
	}
}

// An operator may take a placed module on one node, and the take stays; unassigning a placed
// module is refused, since the placement would put it back.
func TestOperatorOnAPlacedModule(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "app", file("app.conf", "1"))
	mustLabelled(t, s, "n1", map[string]string{"role": "web"})
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Unassign(ctx, "n1", "app", nil)
	wantCode(t, err, hq.CodeConflict)
	if _, err := s.Take(ctx, "n1", "app", nil); err != nil {
		t.Fatal(err)
	}
	if more, err := s.placeSome(ctx); err != nil || more {
		t.Fatalf("placement work after a take: %v, %v", more, err)
	}
	if v := mustGetNode(t, s, "n1"); !v.Assignments[0].Taken {
		t.Fatalf("the take did not stay: %+v", v.Assignments)
	}
}
