package db

import (
	"context"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
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
