package drivertest

import (
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/selector"
)

// nodes: registration, labels and vars, listing by status and selector, deletion.
func nodes(a *area) {
	s := a.s
	a.register(label("role", "web"), "web-1", "web-2")
	a.register(label("role", "db"), "db-1")
	_, _, err := s.CreateNode(a.ctx, "web-1")
	a.refused("register web-1 again", err, hq.CodeConflict)
	v := a.node("web-1")
	a.is("a new node's status", v.Status, hq.StatusNew)
	a.is("a new node's labels", v.Labels, label("role", "web"))
	g0 := v.Generation

	// Vars and labels move the generation only when the declaration changes with them: on a
	// node with no module, never.
	g, err := s.SetVars(a.ctx, "web-1", label("size", "large"), nil)
	a.ok("set vars", err)
	a.is("vars no template uses leave the generation", g, g0)
	_, err = s.SetLabels(a.ctx, "web-1", label("role", "web", "region", "eu"), gen(g0+1))
	a.refused("labels on a stale generation", err, hq.CodeConflict)
	g, err = s.SetLabels(a.ctx, "web-1", label("role", "web", "region", "eu"), gen(g0))
	a.ok("set labels", err)
	a.is("labels no placement or template uses leave the generation", g, g0)
	v = a.node("web-1")
	a.is("labels read back", v.Labels, label("role", "web", "region", "eu"))
	a.is("vars read back", v.Vars, label("size", "large"))
	_, err = s.SetLabels(a.ctx, "nobody", label("a", "b"), nil)
	a.refused("labels of no node", err, hq.CodeNotFound)

	web, err := selector.Parse("role=web")
	a.ok("parse selector", err)
	page, err := s.ListNodes(a.ctx, db.NodeFilter{Selector: &web})
	a.ok("list by selector", err)
	a.is("nodes by selector", names(page.Nodes), []string{"web-1", "web-2"})
	page, err = s.ListNodes(a.ctx, db.NodeFilter{Limit: 2})
	a.ok("list a page", err)
	a.is("the first page", names(page.Nodes), []string{"db-1", "web-1"})
	a.is("its cursor", page.Next, "web-1")
	page, err = s.ListNodes(a.ctx, db.NodeFilter{After: page.Next, Limit: 2})
	a.ok("list the next page", err)
	a.is("the next page", names(page.Nodes), []string{"web-2"})
	a.is("the last page's cursor", page.Next, "")
	page, err = s.ListNodes(a.ctx, db.NodeFilter{Status: hq.StatusNew})
	a.ok("list by status", err)
	a.is("every node is new", names(page.Nodes), []string{"db-1", "web-1", "web-2"})
	named, err := s.NodesNamed(a.ctx, []string{"web-2", "nobody", "db-1"})
	a.ok("nodes named", err)
	a.is("nodes named, those that exist, in name order", names(named), []string{"db-1", "web-2"})

	_, err = s.DeleteNode(a.ctx, "web-2", nil)
	a.ok("delete web-2", err)
	_, err = s.GetNode(a.ctx, "web-2")
	a.refused("a deleted node", err, hq.CodeNotFound)
	_, err = s.DeleteNode(a.ctx, "web-2", nil)
	a.refused("delete it twice", err, hq.CodeNotFound)
	mesh, err := s.MeshStatus(a.ctx)
	a.ok("mesh", err)
	a.is("the mesh's nodes", mesh.Nodes, map[string]int{"total": 2, "new": 2})
}

// modules: revisions, identical uploads, refusals, plans and reading revisions back.
func modules(a *area) {
	s := a.s
	res, err := s.PutModule(a.ctx, "app", []hq.Resource{file("a.conf", "one\n")})
	a.ok("put app", err)
	a.is("the first revision", res, db.PutModuleResult{Revision: 1, Created: true, Generations: map[string]int64{}})
	res, err = s.PutModule(a.ctx, "app", []hq.Resource{file("a.conf", "one\n")})
	a.ok("put app unchanged", err)
	a.is("an identical upload", []any{res.Revision, res.Created}, []any{int64(1), false})
	a.is("a second revision", a.put("app", file("a.conf", "two\n"), file("b.conf", "b\n")), int64(2))
	_, err = s.PutModule(a.ctx, "bad", []hq.Resource{file("a", "x"), {Name: "a", Kind: hq.KindFile, Path: "/etc/b"}})
	a.refused("a module naming a resource twice", err, hq.CodeInvalid)
	_, err = s.GetModule(a.ctx, "bad")
	a.refused("the refused module", err, hq.CodeNotFound)

	plan, err := s.PlanModule(a.ctx, "app", []hq.Resource{file("a.conf", "three\n"), file("c.conf", "c\n")})
	a.ok("plan", err)
	a.is("a plan's revision", plan.Revision, int64(3))
	a.is("a plan's changes", [][]string{plan.Added, plan.Changed, plan.Removed}, [][]string{{"c.conf"}, {"a.conf"}, {"b.conf"}})
	plan, err = s.PlanModule(a.ctx, "app", []hq.Resource{file("a.conf", "two\n"), file("b.conf", "b\n")})
	a.ok("plan unchanged", err)
	a.is("a plan of the newest", []any{plan.Revision, plan.Unchanged}, []any{int64(2), true})
	a.is("a plan writes nothing", a.put("app", file("a.conf", "four\n")), int64(3))

	rev, err := s.GetRevision(a.ctx, "app", 2)
	a.ok("revision 2", err)
	a.is("revision 2's resources", len(rev.Resources), 2)
	_, err = s.GetRevision(a.ctx, "app", 9)
	a.refused("a revision never made", err, hq.CodeNotFound)
	revs, err := s.PageRevisions(a.ctx, "app", 0, 2)
	a.ok("page revisions", err)
	a.is("revisions, newest first", []int64{revs.Revisions[0].Revision, revs.Revisions[1].Revision}, []int64{3, 2})
	a.put("db", file("db.conf", "port=5432\n"))
	ms, err := s.ListModules(a.ctx)
	a.ok("list modules", err)
	var got []string
	for _, m := range ms {
		got = append(got, m.Name)
	}
	a.is("modules by name", got, []string{"app", "db"})
}

// assignments: assign, compare-and-swap, take, unassign; each change moves the generation,
// and the assignment says who made it, when, and who took it.
func assignments(a *area) {
	s := a.s
	a.register(nil, "web-1")
	a.put("app", file("app.conf", "x\n"))
	g0 := a.node("web-1").Generation
	dan := hq.WithIdentity(a.ctx, hq.Identity{Operator: "dan", Role: hq.RoleDeployer})
	alice := hq.WithIdentity(a.ctx, hq.Identity{Operator: "alice", Role: hq.RoleAdmin})
	at := hq.ParseTime(hq.FormatTime(a.c.Now()))
	g, err := s.Assign(dan, "web-1", "app", nil, nil)
	a.ok("assign", err)
	a.is("assign moves the generation", g, g0+1)
	a.is("an assignment not taken", a.node("web-1").Assignments, []hq.AssignmentView{{Module: "app", Revision: 1,
		Source: "operator", AssignedAt: at, AssignedBy: "dan"}})
	a.c.Advance(time.Minute)
	_, err = s.Take(alice, "web-1", "app", gen(g0))
	a.refused("take on a stale generation", err, hq.CodeConflict)
	g, err = s.Take(alice, "web-1", "app", gen(g0+1))
	a.ok("take", err)
	a.is("take moves the generation", g, g0+2)
	v := a.node("web-1")
	a.is("the assignment", v.Assignments, []hq.AssignmentView{{Module: "app", Revision: 1, Taken: true, Source: "operator",
		AssignedAt: at, AssignedBy: "dan", TakenBy: "alice"}})
	page, err := s.ListNodes(a.ctx, db.NodeFilter{})
	a.ok("list nodes", err)
	a.is("the listing's assignment", page.Nodes[0].Assignments, v.Assignments)
	nodes, err := s.AssignedNodes(a.ctx, "app")
	a.ok("assigned nodes", err)
	a.is("nodes of app", nodes, []string{"web-1"})
	_, err = s.Assign(a.ctx, "web-1", "nothing", nil, nil)
	a.refused("assign a module never uploaded", err, hq.CodeNotFound)
	_, err = s.Unassign(a.ctx, "web-1", "app", nil)
	a.ok("unassign", err)
	_, err = s.Unassign(a.ctx, "web-1", "app", nil)
	a.refused("unassign twice", err, hq.CodeNotFound)
	a.is("no assignment left", a.node("web-1").Assignments, []hq.AssignmentView{})
}

// reports: converge, fail to stuck, retry, drift, and a report of an older generation.
func reports(a *area) {
	s := a.s
	a.register(nil, "web-1", "web-2")
	a.put("app", file("app.conf", "x\n"), file("motd", "hello\n"))
	a.put("extra", file("extra", "x\n"))
	for _, n := range []string{"web-1", "web-2"} {
		_, err := s.Assign(a.ctx, n, "app", nil, nil)
		a.ok("assign", err)
	}
	d := a.report("web-2", hq.StateApplied)
	v := a.node("web-2")
	a.is("a node that applied everything", []any{v.Status, v.AppliedGeneration}, []any{hq.StatusConverged, d.Generation})
	a.is("its counts", v.Counts[hq.StateApplied], 2)

	for range 3 {
		a.report("web-1", hq.StateFailed)
		a.c.Advance(time.Minute)
	}
	v = a.node("web-1")
	a.is("three failures", v.Status, hq.StatusStuck)
	var stuck []string
	for _, st := range v.Stuck {
		stuck = append(stuck, key(st.Module, st.Resource))
	}
	a.is("what is stuck", stuck, []string{"app/app.conf", "app/motd"})
	g, err := s.Retry(a.ctx, "web-1", "app", "motd", nil)
	a.ok("retry", err)
	a.is("a retry leaves the generation: the host hears of it with its next answer", g, v.Generation)
	v = a.node("web-1")
	a.is("after the retry", []any{v.Status, v.Counts[hq.StatePending], v.Counts[hq.StateStuck]}, []any{hq.StatusStuck, 1, 1})
	_, err = s.Retry(a.ctx, "web-1", "app", "nothing", nil)
	a.refused("retry a resource not there", err, hq.CodeNotFound)
	_, err = s.Retry(a.ctx, "web-2", "app", "motd", nil)
	a.refused("retry an applied resource", err, hq.CodeConflict)

	results := []hq.Result{
		{Module: "app", Resource: "app.conf", Outcome: hq.StateApplied},
		{Module: "app", Resource: "motd", Outcome: hq.StateApplied, Changed: true, Drift: true, DriftDetail: "content sha256:ab (want sha256:cd)", DriftFound: "bye\n"},
	}
	_, err = s.Ingest(a.ctx, "web-2", hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: results}, db.IngestOptions{})
	a.ok("a report of a drift", err)
	drifts, err := s.Drifts(a.ctx, "web-2", 10)
	a.ok("drifts", err)
	if len(drifts) != 1 || drifts[0].Found == nil {
		a.t.Fatalf("drifts of web-2: %+v", drifts)
	}
	a.is("the drift", []string{drifts[0].Module, drifts[0].Resource, *drifts[0].Found}, []string{"app", "motd", "bye\n"})

	g, err = s.Assign(a.ctx, "web-2", "extra", nil, nil)
	a.ok("assign another module", err)
	resp, err := s.Ingest(a.ctx, "web-2", hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: results}, db.IngestOptions{})
	a.ok("a report of an older generation", err)
	a.is("its answer names the generation now", resp.Generation, g)
	a.is("the node waits on the new one", a.node("web-2").Status, hq.StatusMidChange)
	mesh, err := s.MeshStatus(a.ctx)
	a.ok("mesh", err)
	a.is("the mesh", mesh.Nodes, map[string]int{"total": 2, "stuck": 1, "mid-change": 1})
}

// placements: a selector's nodes, labels moving a node in and out, deletion.
func placements(a *area) {
	s := a.s
	a.register(label("region", "eu"), "web-1", "web-2")
	a.register(label("region", "us"), "web-3")
	a.put("app", file("app.conf", "x\n"))
	p, err := s.PutPlacement(a.ctx, hq.Placement{Name: "eu", Module: "app", Selector: "region=eu"})
	a.ok("placement", err)
	a.is("matched and assigned", []int{p.Matched, p.Assigned}, []int{2, 2})
	_, err = s.PutPlacement(a.ctx, hq.Placement{Name: "bad", Module: "app", Selector: "region in eu"})
	a.refused("a bad selector", err, hq.CodeInvalid)
	_, err = s.PutPlacement(a.ctx, hq.Placement{Name: "none", Module: "nothing", Selector: "region=eu"})
	a.refused("a placement of no module", err, hq.CodeNotFound)
	nodes, err := s.AssignedNodes(a.ctx, "app")
	a.ok("assigned", err)
	a.is("the placement's nodes", nodes, []string{"web-1", "web-2"})

	moved := hq.ParseTime(hq.FormatTime(a.c.Now()))
	_, err = s.SetLabels(a.ctx, "web-3", label("region", "eu"), nil)
	a.ok("move web-3 in", err)
	_, err = s.SetLabels(a.ctx, "web-1", label("region", "us"), nil)
	a.ok("move web-1 out", err)
	nodes, err = s.AssignedNodes(a.ctx, "app")
	a.ok("assigned", err)
	a.is("the placement follows the labels", nodes, []string{"web-2", "web-3"})
	a.is("web-3's assignment", a.node("web-3").Assignments, []hq.AssignmentView{{Module: "app", Revision: 1, Source: "eu", AssignedAt: moved}})
	p, err = s.GetPlacement(a.ctx, "eu")
	a.ok("get placement", err)
	a.is("matched and assigned after the moves", []int{p.Matched, p.Assigned}, []int{2, 2})

	a.ok("delete placement", s.DeletePlacement(a.ctx, "eu"))
	nodes, err = s.AssignedNodes(a.ctx, "app")
	a.ok("assigned", err)
	a.is("a deleted placement's nodes", nodes, []string{})
	a.refused("delete it twice", s.DeletePlacement(a.ctx, "eu"), hq.CodeNotFound)
}

// rollouts: a revision under a policy starts one; state changes that do not apply are refused.
func rollouts(a *area) {
	s := a.s
	a.register(label("role", "web"), "web-1", "web-2", "web-3")
	a.put("app", file("motd", "one\n"))
	_, err := s.PutPlacement(a.ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
		Rollout: &hq.RolloutPolicy{Canary: 1, ProgressDeadline: "5m"}})
	a.ok("placement under a policy", err)
	for _, n := range []string{"web-1", "web-2", "web-3"} {
		a.report(n, hq.StateApplied)
	}
	a.put("app", file("motd", "two\n"))
	all, err := s.ListRollouts(a.ctx, 10)
	a.ok("list rollouts", err)
	if len(all) != 1 {
		a.t.Fatalf("%d rollouts after a revision on a placement under a policy, want 1", len(all))
	}
	ro := all[0]
	a.is("the rollout", []any{ro.Module, ro.Placement, ro.FromRevision, ro.ToRevision, ro.State, ro.Nodes},
		[]any{"app", "web", int64(1), int64(2), hq.RolloutProgressing, 3})
	waves, err := s.RolloutWaves(a.ctx, ro.ID)
	a.ok("waves", err)
	total := 0
	for _, w := range waves {
		total += w.Nodes
	}
	a.is("the waves hold every node", total, 3)
	_, err = s.ResumeRollout(a.ctx, ro.ID)
	a.refused("resume a progressing rollout", err, hq.CodeConflict)
	ro, err = s.AbortRollout(a.ctx, ro.ID)
	a.ok("abort", err)
	a.is("aborted", ro.State, hq.RolloutAborted)
	_, err = s.AbortRollout(a.ctx, ro.ID)
	a.refused("abort twice", err, hq.CodeConflict)
	_, err = s.GetRollout(a.ctx, ro.ID+100)
	a.refused("a rollout never made", err, hq.CodeNotFound)
	trs, err := s.RolloutTransitions(a.ctx, ro.ID)
	a.ok("rollout transitions", err)
	if len(trs) == 0 {
		a.t.Error("an aborted rollout has no transitions")
	}
}

// history: reports, transitions and sends newest first, and pruning keeps each node's newest.
func history(a *area) {
	s := a.s
	a.register(nil, "web-1")
	a.put("app", file("app.conf", "x\n"))
	_, err := s.Assign(a.ctx, "web-1", "app", nil, nil)
	a.ok("assign", err)
	a.report("web-1", hq.StateFailed)
	a.report("web-1", hq.StateApplied)
	reps, err := s.Reports(a.ctx, "web-1", 10)
	a.ok("reports", err)
	a.is("reports kept", len(reps), 2)
	trs, err := s.Transitions(a.ctx, "web-1", 10)
	a.ok("transitions", err)
	var moves []string
	for _, tr := range trs {
		moves = append(moves, tr.From+">"+tr.To)
	}
	a.is("transitions, newest first", moves, []string{"failed>applied", "pending>failed", ">pending"})
	sends, err := s.Sends(a.ctx, "web-1", 10)
	a.ok("sends", err)
	a.is("sends recorded", len(sends) >= 1, true)

	a.c.Advance(40 * 24 * time.Hour)
	_, err = s.Prune(a.ctx, db.Retention{For: 24 * time.Hour, KeepPerNode: 1, Window: 2})
	a.ok("prune", err)
	reps, err = s.Reports(a.ctx, "web-1", 10)
	a.ok("reports after prune", err)
	a.is("the newest report is kept", len(reps), 1)
	trs, err = s.Transitions(a.ctx, "web-1", 10)
	a.ok("transitions after prune", err)
	a.is("the newest transition is kept", len(trs), 1)
}

// sessions: a sign-in is valid until deleted or expired.
func sessions(a *area) {
	s := a.s
	admin := hq.Identity{Operator: hq.BootstrapAdmin, Role: hq.RoleAdmin}
	a.ok("create", s.CreateSession(a.ctx, "secret-1", a.c.Now().Add(time.Hour), admin))
	a.ok("create another", s.CreateSession(a.ctx, "secret-2", a.c.Now().Add(time.Minute), admin))
	valid, err := s.SessionValid(a.ctx, "secret-1")
	a.ok("valid", err)
	a.is("a new session", valid, true)
	valid, err = s.SessionValid(a.ctx, "nobody's")
	a.ok("valid", err)
	a.is("a session never made", valid, false)
	a.ok("delete", s.DeleteSession(a.ctx, "secret-1"))
	valid, err = s.SessionValid(a.ctx, "secret-1")
	a.ok("valid", err)
	a.is("a deleted session", valid, false)
	a.c.Advance(2 * time.Minute)
	valid, err = s.SessionValid(a.ctx, "secret-2")
	a.ok("valid", err)
	a.is("an expired session", valid, false)
}
