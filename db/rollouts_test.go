package db

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/wait"
	"github.com/meshhq/hq/internal/workers"
)

// report composes a node's declaration and reports every resource of it with outcome.
func report(t *testing.T, s *Store, node string, ok bool) {
	t.Helper()
	d, err := s.Compose(context.Background(), node, "test")
	if err != nil {
		t.Fatal(err)
	}
	var rs []hq.Result
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			if ok {
				rs = append(rs, applied(m.Name, r.Name)...)
			} else {
				rs = append(rs, failing(m.Name, r.Name))
			}
		}
	}
	ingest(t, s, node, d, rs...)
}

func step(t *testing.T, s *Store) {
	t.Helper()
	if _, err := s.stepRollouts(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func pinOf(t *testing.T, s *Store, node, module string) int64 {
	t.Helper()
	v, err := s.GetNode(context.Background(), node)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range v.Assignments {
		if a.Module == module {
			return a.Revision
		}
	}
	t.Fatalf("%s has no %s", node, module)
	return 0
}

func pinsOf(t *testing.T, s *Store, module string, nodes ...string) string {
	t.Helper()
	var out []string
	for _, n := range nodes {
		out = append(out, fmt.Sprintf("%s@%d", n, pinOf(t, s, n, module)))
	}
	return strings.Join(out, " ")
}

func TestRolloutInWaves(t *testing.T) {
	t.Parallel()
	s, _ := setupSteppingRollouts(t)
	ctx := context.Background()
	nodes := []string{"web-1", "web-2", "web-3", "web-4"}
	mustModule(t, s, "app", file("conf", "1"))
	for _, n := range nodes {
		mustLabelled(t, s, n, map[string]string{"role": "web"})
	}
	policy := &hq.RolloutPolicy{Canary: 1, MaxUnavailable: hq.Amount{N: 2}, FailureBudget: 0, AutoRevert: true}
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web", Rollout: policy}); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		report(t, s, n, true)
	}

	// A bad revision: the canary alone takes it, fails on its last allowed attempt, is pinned
	// back, and the rollout pauses naming what failed where.
	res := mustModule(t, s, "app", file("conf", "2"))
	if len(res.Generations) != 0 {
		t.Fatalf("the upload moved %v itself", res.Generations)
	}
	step(t, s)
	if got := pinsOf(t, s, "app", nodes...); got != "web-1@2 web-2@1 web-3@1 web-4@1" {
		t.Fatalf("after the first step: %s", got)
	}
	moved, err := s.reader().ModuleListBehind(ctx)
	if err != nil || len(moved) != 0 {
		t.Fatalf("the mover sees work a rollout governs: %v, %v", moved, err)
	}
	report(t, s, "web-1", false) // one failure of three allowed: not yet
	step(t, s)
	rs := mustRollouts(t, s, 10)
	if rs[0].State != hq.RolloutProgressing || rs[0].InFlight != 1 {
		t.Fatalf("after one failure: %+v", rs[0])
	}
	report(t, s, "web-1", false) // the last allowed attempt
	step(t, s)
	r, err := s.GetRollout(ctx, rs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := "rollout app r1→r2: 0 of 4 node(s) done, 0 in flight, 1 failed (budget 0): paused: app/conf failed on web-1"
	if r.State != hq.RolloutPaused || r.Line != want {
		t.Fatalf("rollout %s: %q, want %q", r.State, r.Line, want)
	}
	if got := pinsOf(t, s, "app", nodes...); got != "web-1@1 web-2@1 web-3@1 web-4@1" {
		t.Fatalf("after the canary failed: %s", got)
	}
	if p := r.Progress[0]; p.Node != "web-1" || p.State != hq.RolloutNodeReverted || p.Wave != 1 {
		t.Fatalf("web-1's progress %+v", p)
	}
	st := mustMeshStatus(t, s)
	if len(st.Rollouts) != 1 || !strings.Contains(strings.Join(st.Lines, "\n"), want) {
		t.Fatalf("status lines %q", st.Lines)
	}
	if v := mustGetNode(t, s, "web-2"); len(v.Rollouts) != 1 || v.Rollouts[0].NodeState != hq.RolloutNodePending {
		t.Fatalf("web-2's rollouts %+v", v.Rollouts)
	}
	// A node registered into the placement now joins at the old revision and waits its turn.
	mustLabelled(t, s, "web-5", map[string]string{"role": "web"})
	if got := pinsOf(t, s, "app", "web-5"); got != "web-5@1" {
		t.Fatalf("a node joining mid-rollout: %s", got)
	}
	if v := mustGetNode(t, s, "web-5"); len(v.Rollouts) != 1 || v.Rollouts[0].NodeState != hq.RolloutNodePending {
		t.Fatalf("web-5's rollouts %+v", v.Rollouts)
	}
	if _, err := s.DeleteNode(ctx, "web-5", nil); err != nil {
		t.Fatal(err)
	}
	step(t, s) // paused: no new wave
	if got := pinsOf(t, s, "app", nodes...); got != "web-1@1 web-2@1 web-3@1 web-4@1" {
		t.Fatalf("a paused rollout moved pins: %s", got)
	}

	// Resume: the next wave is two nodes; abort pins them back.
	if _, err := s.ResumeRollout(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	step(t, s)
	if got := pinsOf(t, s, "app", nodes...); got != "web-1@1 web-2@2 web-3@2 web-4@1" {
		t.Fatalf("after resume: %s", got)
	}
	if r, err = s.AbortRollout(ctx, r.ID); err != nil || r.State != hq.RolloutAborted {
		t.Fatalf("abort: %+v, %v", r, err)
	}
	if got := pinsOf(t, s, "app", nodes...); got != "web-1@1 web-2@1 web-3@1 web-4@1" {
		t.Fatalf("after abort: %s", got)
	}
	_, err = s.ResumeRollout(ctx, r.ID)
	wantCode(t, err, hq.CodeConflict)
	_, err = s.AbortRollout(ctx, r.ID)
	wantCode(t, err, hq.CodeConflict)
	_, err = s.ResumeRollout(ctx, 999)
	wantCode(t, err, hq.CodeNotFound)
	for _, n := range nodes {
		report(t, s, n, true)
	}

	// A good revision: wave by wave, never more than two in flight, then complete.
	mustModule(t, s, "app", file("conf", "3"))
	waves := []string{
		"web-1@3 web-2@1 web-3@1 web-4@1",
		"web-1@3 web-2@3 web-3@3 web-4@1",
		"web-1@3 web-2@3 web-3@3 web-4@3",
	}
	for i, w := range waves {
		step(t, s)
		if got := pinsOf(t, s, "app", nodes...); got != w {
			t.Fatalf("wave %d: %s, want %s", i+1, got, w)
		}
		for _, n := range nodes {
			report(t, s, n, true)
		}
	}
	step(t, s)
	rs = mustRollouts(t, s, 10)
	if rs[0].State != hq.RolloutComplete || rs[0].Done != 4 || rs[0].ToRevision != 3 {
		t.Fatalf("the good rollout: %+v", rs[0])
	}
	_, err = s.ResumeRollout(ctx, rs[0].ID)
	wantCode(t, err, hq.CodeConflict)

	// The lifecycle table decides, also for changes by hand.
	if _, err := s.write.Exec(testdb.Rebind(`UPDATE rollouts SET state = 'progressing' WHERE id = ?`), rs[0].ID); err == nil ||
		!strings.Contains(err.Error(), "rollout_lifecycle") {
		t.Fatalf("complete → progressing by hand: %v", err)
	}
	var transitions int
	if err := s.read.QueryRow(testdb.Rebind(`SELECT COUNT(*) FROM rollout_transitions WHERE rollout = ?`), rs[0].ID).Scan(&transitions); err != nil {
		t.Fatal(err)
	}
	if transitions != 2 {
		t.Fatalf("%d transitions of the good rollout, want 2 (started, complete)", transitions)
	}
}

// A new revision supersedes an unfinished rollout: it ends aborted, and the new one starts
// from the pins the nodes have.
func TestRolloutSuperseded(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "app", file("conf", "1"))
	mustLabelled(t, s, "web-1", map[string]string{"role": "web"})
	mustLabelled(t, s, "web-2", map[string]string{"role": "web"})
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
		Rollout: &hq.RolloutPolicy{Canary: 1}}); err != nil {
		t.Fatal(err)
	}
	mustModule(t, s, "app", file("conf", "2"))
	step(t, s)
	mustModule(t, s, "app", file("conf", "3"))
	rs := mustRollouts(t, s, 10)
	if len(rs) != 2 || rs[1].State != hq.RolloutAborted || rs[1].Reason != "superseded by revision 3" || rs[0].State != hq.RolloutProgressing {
		t.Fatalf("rollouts %+v", rs)
	}
	r := mustGetRollout(t, s, rs[0].ID)
	if r.Nodes != 0 && len(r.Progress) != 2 || r.Progress[0].FromRevision+r.Progress[1].FromRevision != 3 {
		t.Fatalf("the new rollout starts from %+v", r.Progress)
	}
}

// A wave wider than a chunk is moved a chunk per transaction, like the mover's.
func TestRolloutWaveInChunks(t *testing.T) {
	t.Parallel()
	s, _ := setupSteppingRollouts(t)
	ctx := context.Background()
	const nodes, resources = 120, 50
	rs := func(content string) []hq.Resource {
		out := make([]hq.Resource, resources)
		for i := range out {
			out[i] = file(fmt.Sprintf("f%02d", i), content)
		}
		return out
	}
	mustModule(t, s, "app", rs("1")...)
	for i := range nodes {
		mustLabelled(t, s, fmt.Sprintf("n%03d", i), map[string]string{"role": "web"})
	}
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
		Rollout: &hq.RolloutPolicy{MaxUnavailable: hq.Amount{N: 100, Percent: true}}}); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 20*time.Second, "the placement on every node", func() bool {
		p, err := s.GetPlacement(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		if p.Assigned >= nodes {
			return true
		}
		if _, err := s.placeSome(ctx); err != nil { // the placement's other chunks
			t.Fatal(err)
		}
		return false
	})
	mustModule(t, s, "app", rs("2")...)
	r, err := s.inTxRollout(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.InFlight != moveChunkRows/resources {
		t.Fatalf("one step moved %d node(s), want a chunk of %d", r.InFlight, moveChunkRows/resources)
	}
	for range nodes / (moveChunkRows / resources) {
		step(t, s)
	}
	rsList := mustRollouts(t, s, 1)
	if rsList[0].InFlight != nodes {
		t.Fatalf("%d in flight, want all %d", rsList[0].InFlight, nodes)
	}
}

// inTxRollout steps the newest rollout once, in one transaction, and returns it.
func (s *Store) inTxRollout(ctx context.Context) (hq.Rollout, error) {
	rs, err := s.ListRollouts(ctx, 1)
	if err != nil {
		return hq.Rollout{}, err
	}
	err = s.inTx(ctx, func(q driver.Queries) error {
		r, err := q.RolloutGet(ctx, rs[0].ID)
		if err != nil {
			return err
		}
		_, _, err = s.stepRollout(ctx, q, r)
		return err
	})
	if err != nil {
		return hq.Rollout{}, err
	}
	return s.GetRollout(ctx, rs[0].ID)
}

// A node that has not converged within progress_deadline fails the rollout; a held resource
// fails it at once.
func TestRolloutDeadlineAndHeld(t *testing.T) {
	t.Parallel()
	s, c := setupSteppingRollouts(t)
	ctx := context.Background()
	mustModule(t, s, "app", file("conf", "1"))
	for _, n := range []string{"web-1", "web-2", "web-3"} {
		mustLabelled(t, s, n, map[string]string{"role": "web"})
	}
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
		Rollout: &hq.RolloutPolicy{MaxUnavailable: hq.Amount{N: 2}, FailureBudget: 5, ProgressDeadline: "1m"}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"web-1", "web-2", "web-3"} {
		report(t, s, n, true)
	}
	mustModule(t, s, "app", file("conf", "2"))
	step(t, s) // web-1 and web-2 in flight
	d := mustCompose(t, s, "web-2", "test")
	ingest(t, s, "web-2", d, hq.Result{Module: "app", Resource: "conf", Outcome: hq.StateHeld, HoldReason: "exists, not taken"})
	step(t, s)
	c.Advance(2 * time.Minute) // web-1 never reports
	step(t, s)
	r := mustRollouts(t, s, 1)
	got := mustGetRollout(t, s, r[0].ID)
	why := map[string]string{}
	for _, p := range got.Progress {
		why[p.Node] = p.State + ": " + p.Reason
	}
	if why["web-2"] != "failed: app/conf held" || why["web-1"] != "failed: not converged within 1m" || why["web-3"] != "failed: not converged within 1m" {
		t.Fatalf("progress %v", why)
	}
}

// Two controllers on one database: b opened before any rollout existed, a starts one and
// dies. b moves it on: the work a controller began is any controller's to finish.
func TestARolloutOutlivesTheControllerThatStartedIt(t *testing.T) {
	t.Parallel()
	b, _ := setupWith(t, Options{RolloutEvery: 20 * time.Millisecond})
	start(t, b.Workers()...)
	ctx := context.Background()
	a := open(t, b.path, Options{RolloutEvery: time.Hour})
	aWorkers := workers.Start(ctx, nil, a.Workers()...)
	nodes := []string{"web-1", "web-2", "web-3", "web-4"}
	mustModule(t, a, "app", file("conf", "1"))
	for _, n := range nodes {
		mustLabelled(t, a, n, map[string]string{"role": "web"})
	}
	policy := &hq.RolloutPolicy{Canary: 1, MaxUnavailable: hq.Amount{N: 2}, AutoRevert: true}
	if _, err := a.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web", Rollout: policy}); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		report(t, a, n, true)
	}
	mustModule(t, a, "app", file("conf", "2"))
	aWorkers.Stop()
	a.Close()
	// Whatever a did before it died (its loop may have advanced the canary), the rest of the
	// waves are b's to move: the hosts report to b, and every node reaches revision 2.
	want := "web-1@2 web-2@2 web-3@2 web-4@2"
	wait.For(t, 10*time.Second, "the rollout the dead controller started to reach "+want, func() bool {
		if pinsOf(t, b, "app", nodes...) == want {
			return true
		}
		for _, n := range nodes {
			report(t, b, n, true)
		}
		return false
	})
}

// A stored policy that does not read is an error naming its rollout or its placement wherever
// it is read, never the default policy in its place, and not the request's fault.
func TestACorruptStoredPolicyIsAnError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, policy, want string }{
		{"not JSON", `{"canary":`, "does not decode"},
		{"not a policy", `{"canary":-1}`, "does not hold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := setupSteppingRollouts(t)
			ctx := context.Background()
			mustModule(t, s, "app", file("conf", "1"))
			mustLabelled(t, s, "web-1", map[string]string{"role": "web"})
			if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
				Rollout: &hq.RolloutPolicy{MaxUnavailable: hq.Amount{N: 1}}}); err != nil {
				t.Fatal(err)
			}
			report(t, s, "web-1", true)
			mustModule(t, s, "app", file("conf", "2"))
			id := mustRollouts(t, s, 1)[0].ID
			if _, err := s.write.Exec(testdb.Rebind(`UPDATE rollouts SET policy = ? WHERE id = ?`), c.policy, id); err != nil {
				t.Fatal(err)
			}
			if _, err := s.write.Exec(testdb.Rebind(`UPDATE placements SET rollout = ? WHERE name = 'web'`), c.policy); err != nil {
				t.Fatal(err)
			}
			wantCorrupt := func(what string, err error, name string) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), c.want) || hq.ErrorCode(err) != hq.CodeInternal {
					t.Errorf("%s: %v (code %s); want an internal error naming %s that says %q", what, err, hq.ErrorCode(err), name, c.want)
				}
			}
			rollout := fmt.Sprintf("rollout %d", id)
			_, err := s.GetRollout(ctx, id)
			wantCorrupt("GetRollout", err, rollout)
			_, err = s.ListRollouts(ctx, 10)
			wantCorrupt("ListRollouts", err, rollout)
			_, err = s.MeshStatus(ctx)
			wantCorrupt("MeshStatus", err, rollout)
			_, err = s.stepRollouts(ctx)
			wantCorrupt("a step", err, rollout)
			_, err = s.GetPlacement(ctx, "web")
			wantCorrupt("GetPlacement", err, "placement web")
			_, err = s.PlanModule(ctx, "app", []hq.Resource{file("conf", "3")})
			wantCorrupt("a plan", err, "placement web")
			if pin := pinOf(t, s, "web-1", "app"); pin != 1 {
				t.Errorf("web-1 moved to revision %d under a policy that does not read", pin)
			}
		})
	}
}

// A rollout whose stored policy no longer reads does not hold up the others: each is stepped.
func TestACorruptRolloutDoesNotHoldUpTheOthers(t *testing.T) {
	t.Parallel()
	s, _ := setupSteppingRollouts(t)
	ctx := context.Background()
	for _, m := range []string{"a", "b"} {
		mustModule(t, s, m, file("conf-"+m, "1"))
		mustLabelled(t, s, "node-"+m, map[string]string{"role": m})
		if _, err := s.PutPlacement(ctx, hq.Placement{Name: m, Module: m, Selector: "role=" + m,
			Rollout: &hq.RolloutPolicy{MaxUnavailable: hq.Amount{N: 1}}}); err != nil {
			t.Fatal(err)
		}
		report(t, s, "node-"+m, true)
	}
	mustModule(t, s, "a", file("conf-a", "2"))
	mustModule(t, s, "b", file("conf-b", "2"))
	if _, err := s.write.Exec(`UPDATE rollouts SET policy = '{' WHERE module = 'a'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.stepRollouts(ctx); err == nil || !strings.Contains(err.Error(), "does not decode") {
		t.Fatalf("step: %v, want the corrupt rollout's error", err)
	}
	if pinOf(t, s, "node-a", "a") != 1 || pinOf(t, s, "node-b", "b") != 2 {
		t.Fatalf("pins a %d, b %d; want a held at 1 and b moved on to 2", pinOf(t, s, "node-a", "a"), pinOf(t, s, "node-b", "b"))
	}
}
