package db

import (
	"context"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/wait"
)

// placedWeb makes nodes labelled role=web, module app at revision 1 on them through placement
// web under policy, every node converged.
func placedWeb(t *testing.T, s *Store, policy *hq.RolloutPolicy, nodes ...string) {
	t.Helper()
	mustModule(t, s, "app", file("conf", "1"))
	for _, n := range nodes {
		mustLabelled(t, s, n, map[string]string{"role": "web"})
	}
	if _, err := s.PutPlacement(context.Background(), hq.Placement{Name: "web", Module: "app", Selector: "role=web", Rollout: policy}); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		report(t, s, n, true)
	}
}

// An operator's pause starts no new wave until resume; promote lets the batches go while the
// canary is still in flight; each refuses a rollout in a state it does not start from.
func TestPauseResumePromote(t *testing.T) {
	t.Parallel()
	s, _ := setupSteppingRollouts(t)
	ctx := context.Background()
	nodes := []string{"web-1", "web-2", "web-3", "web-4"}
	placedWeb(t, s, &hq.RolloutPolicy{Canary: 1, MaxUnavailable: hq.Amount{N: 2}}, nodes...)
	mustModule(t, s, "app", file("conf", "2"))
	step(t, s)
	id := mustRollouts(t, s, 1)[0].ID
	step(t, s) // the canary in flight: nothing more
	if got := pinsOf(t, s, "app", nodes...); got != "web-1@2 web-2@1 web-3@1 web-4@1" {
		t.Fatalf("the canary alone: %s", got)
	}

	r, err := s.PromoteRollout(ctx, id)
	if err != nil || !r.Promoted || r.State != hq.RolloutProgressing || r.Reason != "promoted by an operator: the canaries count as proven" {
		t.Fatalf("promote: %+v, %v", r, err)
	}
	step(t, s) // the canary still in flight, one more node fills max_unavailable
	if got := pinsOf(t, s, "app", nodes...); got != "web-1@2 web-2@2 web-3@1 web-4@1" {
		t.Fatalf("after promote: %s", got)
	}

	if r, err = s.PauseRollout(ctx, id); err != nil || r.State != hq.RolloutPaused || r.Reason != "paused by an operator" {
		t.Fatalf("pause: %+v, %v", r, err)
	}
	_, err = s.PauseRollout(ctx, id)
	wantCode(t, err, hq.CodeConflict)
	_, err = s.PromoteRollout(ctx, id)
	wantCode(t, err, hq.CodeConflict)
	for _, n := range nodes {
		report(t, s, n, true)
	}
	step(t, s) // the nodes in flight are marked done; no new wave
	if got := pinsOf(t, s, "app", nodes...); got != "web-1@2 web-2@2 web-3@1 web-4@1" {
		t.Fatalf("a paused rollout moved pins: %s", got)
	}
	if r = mustGetRollout(t, s, id); r.Done != 2 || r.State != hq.RolloutPaused || r.Reason != "paused by an operator" {
		t.Fatalf("paused: %+v", r)
	}

	if r, err = s.ResumeRollout(ctx, id); err != nil || r.State != hq.RolloutProgressing {
		t.Fatalf("resume: %+v, %v", r, err)
	}
	for range 3 {
		step(t, s)
		for _, n := range nodes {
			report(t, s, n, true)
		}
	}
	if r = mustGetRollout(t, s, id); r.State != hq.RolloutComplete {
		t.Fatalf("after resume: %+v", r)
	}
	for _, act := range []func(context.Context, int64) (hq.Rollout, error){s.PauseRollout, s.ResumeRollout, s.PromoteRollout, s.AbortRollout} {
		_, err := act(ctx, id)
		wantCode(t, err, hq.CodeConflict)
		_, err = act(ctx, 999)
		wantCode(t, err, hq.CodeNotFound)
	}
	var transitions int
	if err := s.read.QueryRow(testdb.Rebind(`SELECT COUNT(*) FROM rollout_transitions WHERE rollout = ?`), id).Scan(&transitions); err != nil || transitions != 4 {
		t.Fatalf("%d transitions (%v), want 4: started, paused, progressing, complete", transitions, err)
	}
}

// A rollout without canaries has nothing to promote.
func TestPromoteWithoutCanaries(t *testing.T) {
	t.Parallel()
	s, _ := setupSteppingRollouts(t)
	placedWeb(t, s, &hq.RolloutPolicy{MaxUnavailable: hq.Amount{N: 1}}, "web-1", "web-2")
	mustModule(t, s, "app", file("conf", "2"))
	id := mustRollouts(t, s, 1)[0].ID
	_, err := s.PromoteRollout(context.Background(), id)
	wantCode(t, err, hq.CodeConflict)
	if r := mustGetRollout(t, s, id); r.Promoted || r.Reason != "" {
		t.Fatalf("a refused promote changed %+v", r)
	}
}

// After a superseded rollout, the next says where its nodes really move from.
func TestRolloutFromWhatTheNodesHave(t *testing.T) {
	t.Parallel()
	s, _ := setupSteppingRollouts(t)
	placedWeb(t, s, &hq.RolloutPolicy{Canary: 1}, "web-1", "web-2", "web-3")
	mustModule(t, s, "app", file("conf", "2"))
	mustModule(t, s, "app", file("conf", "3")) // before any node moved to 2
	r := mustRollouts(t, s, 1)[0]
	if r.FromRevision != 1 || r.Line[:len("rollout app r1→r3:")] != "rollout app r1→r3:" {
		t.Fatalf("superseded before a node moved: from %d, %q", r.FromRevision, r.Line)
	}
	step(t, s) // the canary, web-1, moves to 3
	mustModule(t, s, "app", file("conf", "4"))
	r = mustRollouts(t, s, 1)[0]
	if r.FromRevision != 1 || len(r.FromRevisions) != 2 || r.Revisions() != "r1,r3→r4" {
		t.Fatalf("nodes from two revisions: from %d %v, %q", r.FromRevision, r.FromRevisions, r.Line)
	}
}

// A pause past the budget names every node that failed, also those in flight at the pause
// that failed after it.
func TestPauseNamesEveryFailedNode(t *testing.T) {
	t.Parallel()
	s, _ := setupSteppingRollouts(t)
	nodes := []string{"w1", "w2", "w3"}
	placedWeb(t, s, &hq.RolloutPolicy{MaxUnavailable: hq.Amount{N: 3}}, nodes...)
	mustModule(t, s, "app", file("conf", "2"))
	step(t, s)
	for range 2 {
		report(t, s, "w1", false)
		report(t, s, "w3", false)
	}
	step(t, s)
	id := mustRollouts(t, s, 1)[0].ID
	if r := mustGetRollout(t, s, id); r.State != hq.RolloutPaused || r.Reason != "app/conf failed on w1, w3" {
		t.Fatalf("paused: %s %q", r.State, r.Reason)
	}
	for range 2 {
		report(t, s, "w2", false)
	}
	step(t, s)
	if r := mustGetRollout(t, s, id); r.Failed != 3 || r.Reason != "app/conf failed on w1, w2, w3" {
		t.Fatalf("after w2 failed too: %d failed, %q", r.Failed, r.Reason)
	}
}

// A plan's dry run of an upload that starts a rollout draws no rollout id: the next real
// rollout's id is the next number (a rolled-back insert would still use up a PostgreSQL
// sequence's value).
func TestPlanDrawsNoRolloutID(t *testing.T) {
	t.Parallel()
	s, _ := setupSteppingRollouts(t)
	placedWeb(t, s, &hq.RolloutPolicy{Canary: 1}, "web-1", "web-2")
	mustModule(t, s, "app", file("conf", "2"))
	first := mustRollouts(t, s, 1)[0].ID
	plan, err := s.PlanModule(context.Background(), "app", []hq.Resource{file("conf", "3")})
	if err != nil || len(plan.Rollouts) != 1 || len(plan.Rollouts[0].Waves) != 2 {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	mustModule(t, s, "app", file("conf", "3"))
	if rs := mustRollouts(t, s, 10); len(rs) != 2 || rs[0].ID != first+1 {
		t.Fatalf("after a plan, the next rollout is %d, want %d", rs[0].ID, first+1)
	}
}

// A rollback of a placement is a rollout to the earlier revision under its policy; the mover
// leaves its pins there and a joining node gets that revision, until a newer revision comes.
func TestRollbackPlacement(t *testing.T) {
	t.Parallel()
	s, _ := setupSteppingRollouts(t)
	ctx := context.Background()
	nodes := []string{"web-1", "web-2"}
	placedWeb(t, s, &hq.RolloutPolicy{Canary: 1}, nodes...)
	mustModule(t, s, "app", file("conf", "2"))
	for range 3 {
		step(t, s)
		for _, n := range nodes {
			report(t, s, n, true)
		}
	}
	before := mustRollouts(t, s, 10)
	if got := pinsOf(t, s, "app", nodes...); got != "web-1@2 web-2@2" || before[0].State != hq.RolloutComplete {
		t.Fatalf("before the rollback: %s, %+v", got, before[0])
	}

	_, err := s.RollbackPlacement(ctx, "web", 7)
	wantCode(t, err, hq.CodeNotFound)
	_, err = s.RollbackPlacement(ctx, "nowhere", 1)
	wantCode(t, err, hq.CodeNotFound)
	if rs := mustRollouts(t, s, 10); len(rs) != len(before) {
		t.Fatalf("a refused rollback started %+v", rs[0])
	}

	r, err := s.RollbackPlacement(ctx, "web", 1)
	if err != nil || r.FromRevision != 2 || r.ToRevision != 1 || r.RollbackOf != 2 || r.Nodes != 2 || r.State != hq.RolloutProgressing {
		t.Fatalf("rollback: %+v, %v", r, err)
	}
	if r.Reason != "rollback of placement web to revision 1 by an operator" || r.Revisions() != "r2→r1" {
		t.Fatalf("rollback reads %q, %q", r.Reason, r.Revisions())
	}
	for range 3 {
		step(t, s)
		for _, n := range nodes {
			report(t, s, n, true)
		}
	}
	if r = mustGetRollout(t, s, r.ID); r.State != hq.RolloutComplete || pinsOf(t, s, "app", nodes...) != "web-1@1 web-2@1" {
		t.Fatalf("after the rollback: %+v, %s", r, pinsOf(t, s, "app", nodes...))
	}
	if behind, err := s.reader().ModuleListBehind(ctx); err != nil || len(behind) != 0 {
		t.Fatalf("the mover would undo the rollback: %v, %v", behind, err)
	}
	mustLabelled(t, s, "web-3", map[string]string{"role": "web"})
	if got := pinsOf(t, s, "app", "web-3"); got != "web-3@1" {
		t.Fatalf("a node joining after the rollback: %s", got)
	}
	_, err = s.RollbackPlacement(ctx, "web", 1)
	wantCode(t, err, hq.CodeConflict)

	// A newer revision rolls out from the revision the rollback left.
	mustModule(t, s, "app", file("conf", "3"))
	if r = mustRollouts(t, s, 1)[0]; r.FromRevision != 1 || r.ToRevision != 3 || r.RollbackOf != 0 || r.Nodes != 3 {
		t.Fatalf("the next revision's rollout: %+v", r)
	}
}

// A placement without a rollout policy moves every node at once, and so does its rollback;
// the mover leaves the rolled-back pins alone.
func TestRollbackPlacementWithoutPolicy(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	nodes := []string{"web-1", "web-2", "web-3"}
	placedWeb(t, s, nil, nodes...)
	mustModule(t, s, "app", file("conf", "2"))
	waitPins(t, s, "web-1@2 web-2@2 web-3@2", nodes...)
	r, err := s.RollbackPlacement(ctx, "web", 1)
	if err != nil || r.Policy.MaxUnavailable != (hq.Amount{N: 100, Percent: true}) {
		t.Fatalf("rollback: %+v, %v", r, err)
	}
	waitPins(t, s, "web-1@1 web-2@1 web-3@1", nodes...)
	if behind, err := s.reader().ModuleListBehind(ctx); err != nil || len(behind) != 0 {
		t.Fatalf("the mover would undo the rollback: %v, %v", behind, err)
	}
}

func waitPins(t *testing.T, s *Store, want string, nodes ...string) {
	t.Helper()
	wait.For(t, 10*time.Second, want, func() bool { return pinsOf(t, s, "app", nodes...) == want })
}
