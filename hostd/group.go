package hostd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// group is one group of a module: the indexes of its members, in declaration order.
type group struct {
	name    string
	members []int
}

// last is where the group is applied: by then every gate before any member is known.
func (g *group) last() int { return g.members[len(g.members)-1] }

// groupsOf returns m's groups by name; nil when it has none.
func groupsOf(m hq.DeclaredModule) map[string]*group {
	var gs map[string]*group
	for i, r := range m.Resources {
		if r.Group == "" {
			continue
		}
		if gs == nil {
			gs = map[string]*group{}
		}
		g := gs[r.Group]
		if g == nil {
			g = &group{name: r.Group}
			gs[r.Group] = g
		}
		g.members = append(g.members, i)
	}
	return gs
}

// groupApply carries one group through one reconcile: every member is checked and staged,
// and only when all of them can apply are they committed, after which the group's services
// restart once. Any failure rolls every member back to what it was before.
type groupApply struct {
	rc *reconcileRun
	m  hq.DeclaredModule
	g  *group
	// results are the module's; only the members' are written. An empty outcome marks a
	// member that nothing before it held or blocked.
	results []hq.Result
	// ops has one op per member once planned.
	ops []*op
	// drift says, for each member that something else changed on the machine, what differed;
	// "" for the others.
	drift []seenDrift
	// journaled is set while a journal names this group's changes.
	journaled bool
}

// applyGroup applies group g of module m and writes every member's result. It returns the
// group's services that applied, for restarts that resources later in the module ask for.
func (rc *reconcileRun) applyGroup(ctx context.Context, m hq.DeclaredModule, g *group, results []hq.Result) []lateService {
	began := time.Now()
	ga := &groupApply{rc: rc, m: m, g: g, results: results}
	defer func() {
		for k := range g.members {
			ga.res(k).DurationMS = time.Since(began).Milliseconds()
		}
	}()
	if culprits := ga.waiting(); culprits != nil {
		ga.notApplied(culprits, false)
		return nil
	}
	if kept := rc.e.keptJournal; kept != nil {
		ga.blocked(kept)
		return nil
	}
	if culprits := ga.backedOff(); culprits != nil {
		ga.notApplied(culprits, false)
		return nil
	}
	if culprits, attempted := ga.plan(ctx); culprits != nil {
		ga.notApplied(culprits, attempted)
		return nil
	}
	if ga.onlyUnhealthy() {
		ga.restartUnhealthy(ctx)
		return ga.done(ctx)
	}
	if culprits := ga.stage(ctx); culprits != nil {
		ga.rollBackAndReport(ctx, culprits)
		return nil
	}
	if culprits := ga.commit(ctx); culprits != nil {
		ga.rollBackAndReport(ctx, culprits)
		return nil
	}
	return ga.done(ctx)
}

// rollBackAndReport rolls the group back after culprits kept it from applying. When the
// rollback itself fails, the journal stays (it is the record of how to put the machine back,
// and the next start of hostd rolls back from it), every member is failed with the rollback's
// error, and no group is applied until then: another group's journal would replace this one.
func (ga *groupApply) rollBackAndReport(ctx context.Context, culprits []string) {
	err := ga.rollback(ctx)
	if err == nil {
		ga.notApplied(culprits, true)
		return
	}
	kept := ""
	if ga.journaled {
		err = fmt.Errorf("group %s could not be rolled back (its journal is kept for the next start of hostd): %w", ga.name(), err)
		ga.rc.e.keptJournal = err
		kept = " (journal kept)"
	} else {
		err = fmt.Errorf("group %s could not be rolled back: %w", ga.name(), err)
	}
	ga.rc.e.log.Error("rolling back a group failed"+kept, "group", ga.name(), "err", err)
	why := "after " + strings.Join(culprits, "; ") + ", " + err.Error()
	for k := range ga.g.members {
		r := ga.res(k)
		if r.Outcome == hq.StateFailed {
			// A culprit: its own error first.
			r.Error += "; " + why
			continue
		}
		*r = hq.Result{Module: r.Module, Resource: r.Resource, Outcome: hq.StateFailed, Attempted: true, Error: why}
		ga.rc.e.fails.drop(ga.ref(k))
	}
}

// blocked fails, without an attempt, every member of a group that may not apply because the
// journal of a group that could not be rolled back is kept.
func (ga *groupApply) blocked(kept error) {
	why := "no group is applied until hostd restarts: " + kept.Error()
	for k := range ga.g.members {
		r := ga.res(k)
		*r = hq.Result{Module: r.Module, Resource: r.Resource, Outcome: hq.StateFailed, Error: why}
	}
}

func (ga *groupApply) ref(k int) string {
	return hq.Ref(ga.m.Name, ga.m.Resources[ga.g.members[k]].Name)
}

func (ga *groupApply) res(k int) *hq.Result { return &ga.results[ga.g.members[k]] }

// waiting names the members a held resource or a gate keeps from applying.
func (ga *groupApply) waiting() []string {
	var culprits []string
	for k := range ga.g.members {
		switch r := ga.res(k); r.Outcome {
		case hq.StateHeld:
			culprits = append(culprits, ga.ref(k)+" held")
		case hq.StatePending:
			culprits = append(culprits, ga.ref(k)+" blocked by "+r.BlockedBy)
		}
	}
	return culprits
}

// backedOff fails, without an attempt, the members whose back-off says not yet: the group is
// attempted when every member may be. A member the controller declared stuck waits for good:
// every attempt of a group takes its old state down and puts it back, so a group that cannot
// apply is not tried again until its spec changes or an operator retries it.
func (ga *groupApply) backedOff() []string {
	var culprits []string
	for k := range ga.g.members {
		ref := ga.ref(k)
		if f := ga.rc.e.fails.fails[ref]; f != nil && f.Stuck {
			*ga.res(k) = hq.Result{Module: ga.m.Name, Resource: ga.res(k).Resource, Outcome: hq.StateFailed,
				Error: f.Err + "; " + stuckGroupWait}
			culprits = append(culprits, ref+" stuck: "+stuckGroupWait)
			continue
		}
		if f := ga.rc.e.fails.skip(ref, ga.rc.start); f != nil {
			*ga.res(k) = hq.Result{Module: ga.m.Name, Resource: ga.res(k).Resource, Outcome: hq.StateFailed, Error: f.Err}
			culprits = append(culprits, ref+" failed")
		}
	}
	return culprits
}

// stuckGroupWait says why a group with a stuck member is not attempted.
const stuckGroupWait = "the group is not attempted again until its declaration changes or an operator retries"

// fail makes member k's result a failed attempt and counts it for back-off.
func (ga *groupApply) fail(k int, err error) string {
	ga.rc.failed(ga.res(k), ga.ref(k), ga.m.Resources[ga.g.members[k]].Digest(), err)
	return ga.ref(k) + " failed"
}

// plan checks every member. A member that would overwrite what hostd found for an untaken
// module is held, and holds its group; attempted says whether a member failed its check.
func (ga *groupApply) plan(ctx context.Context) (culprits []string, attempted bool) {
	ga.ops = make([]*op, len(ga.g.members))
	ga.drift = make([]seenDrift, len(ga.g.members))
	for k, i := range ga.g.members {
		r := ga.m.Resources[i]
		o, err := ga.rc.newOp(ctx, ga.m, r)
		if err == nil && len(r.SecretPins) > 0 {
			o.secrets, err = ga.rc.openSecrets(r)
			if errors.Is(err, errNotSealed) {
				res := ga.res(k)
				res.Outcome, res.HoldReason = hq.StateHeld, holdNoSecretsKey
				culprits = append(culprits, ga.ref(k)+" held")
				continue
			}
		}
		if err == nil {
			err = steps[r.Kind].check(ctx, o)
		}
		if err != nil {
			culprits, attempted = append(culprits, ga.fail(k, err)), true
			continue
		}
		ga.ops[k] = o
		if o.equal {
			continue
		}
		if reason := holdReason(ga.m, o); reason != "" {
			ga.rc.hold(o, ga.res(k), reason)
			culprits = append(culprits, ga.ref(k)+" held")
			continue
		}
		ga.drift[k] = o.drift()
	}
	if culprits != nil {
		return culprits, attempted
	}
	// The group's services restart when anything else in it changes, so that they start on
	// the new state of every member at once.
	changes := false
	for _, o := range ga.ops {
		changes = changes || !o.equal && o.decl.Kind != hq.KindService
	}
	for _, o := range ga.ops {
		if changes && o.equal && o.decl.Kind == hq.KindService {
			o.equal, o.restart = false, true
		}
	}
	return nil, false
}

// onlyUnhealthy reports whether the group's only change is restarting services that failed
// their health check while running (see serviceStep.check).
func (ga *groupApply) onlyUnhealthy() bool {
	some := false
	for _, o := range ga.ops {
		switch {
		case o.equal:
		case o.unhealthy != nil:
			some = true
		default:
			return false
		}
	}
	return some
}

// restartUnhealthy restarts each service that failed its health check while nothing else in
// the group changed. Nothing of the group is rolled back for it: a service that is still not
// healthy fails alone, and keeps running like any service that fails its health check.
func (ga *groupApply) restartUnhealthy(ctx context.Context) {
	for k, o := range ga.ops {
		if o.equal {
			continue
		}
		if err := steps[hq.KindService].commit(ctx, o); err != nil {
			ga.rc.serviceFailed(o, ga.res(k), err)
		}
	}
}

// stage prepares every member's change beside its target (validating staged files), touching
// no target. Every member is staged, so that one attempt reports every member that cannot apply.
func (ga *groupApply) stage(ctx context.Context) []string {
	var culprits []string
	for k, o := range ga.ops {
		if o.equal {
			continue
		}
		if err := steps[o.decl.Kind].stage(ctx, o); err != nil {
			culprits = append(culprits, ga.fail(k, err))
		}
	}
	return culprits
}

// commit makes the staged files durable, writes the journal, puts every staged change in place,
// then restarts the group's services once, on the new state of every member. It stops at the
// first failure.
func (ga *groupApply) commit(ctx context.Context) []string {
	var changes, services []int
	for k, o := range ga.ops {
		switch {
		case o.equal:
		case o.decl.Kind == hq.KindService:
			services = append(services, k)
		default:
			changes = append(changes, k)
		}
	}
	if len(changes) > 0 {
		if err := ga.rc.e.syncStaged(ga.ops); err != nil {
			return []string{ga.fail(changes[0], fmt.Errorf("making the staged files durable: %w", err))}
		}
		if err := ga.writeJournal(changes); err != nil {
			return []string{ga.fail(changes[0], fmt.Errorf("writing the group journal: %w", err))}
		}
		if err := ga.rc.e.failpoint(ctx, failpointJournaled, ga.name()); err != nil {
			return []string{ga.fail(changes[0], err)}
		}
	}
	for n, k := range changes {
		if n == 1 {
			if err := ga.rc.e.failpoint(ctx, failpointBetweenCommits, ga.name()); err != nil {
				return []string{ga.fail(k, err)}
			}
		}
		o := ga.ops[k]
		if err := steps[o.decl.Kind].commit(ctx, o); err != nil {
			return []string{ga.fail(k, err)}
		}
	}
	for _, k := range services {
		o := ga.ops[k]
		if err := steps[hq.KindService].commit(ctx, o); err != nil {
			return []string{ga.fail(k, err)}
		}
	}
	return nil
}

// name is the group as its module knows it, for logs and the journal.
func (ga *groupApply) name() string { return hq.Ref(ga.m.Name, ga.g.name) }

// rollback undoes every member, newest first, then starts the services that commit restarted
// again on the old state and checks their health once more. The journal goes last, and only
// when every undo worked: until the machine is as it was, a crash (or the next start) must
// still find it. It returns the undo errors.
func (ga *groupApply) rollback(ctx context.Context) error {
	touched := ga.journaled
	var errs []error
	var restarted []*op
	for k := len(ga.ops) - 1; k >= 0; k-- {
		o := ga.ops[k]
		if o == nil || o.decl.Kind == hq.KindService {
			continue
		}
		if err := steps[o.decl.Kind].undo(ctx, o); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.ref, err))
		}
	}
	for _, o := range ga.ops {
		if o == nil || o.decl.Kind != hq.KindService || !o.committed {
			continue
		}
		touched = true
		if err := steps[hq.KindService].undo(ctx, o); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.ref, err))
		}
		if o.prevService != nil {
			restarted = append(restarted, o)
		}
	}
	for _, o := range restarted {
		p := ga.rc.e.sup.get(o.ref)
		if p == nil || ctx.Err() != nil {
			continue
		}
		if err := ga.rc.e.sup.waitHealthy(ctx, p, ga.rc.e.cfg.HealthTimeout, ga.rc.e.cfg.StartGrace); err != nil {
			ga.rc.e.log.Error("a service restarted on the state before its group is not healthy either",
				"group", ga.name(), "resource", o.ref, "err", err)
		}
	}
	if len(errs) > 0 {
		return undoErrors(errs)
	}
	ga.removeJournal()
	if touched {
		ga.rc.e.log.Warn("rolled back a group", "group", ga.name())
	}
	return nil
}

// notApplied reports the members that are neither failed nor held nor blocked as
// grouped-pending, naming what kept the group from applying.
func (ga *groupApply) notApplied(culprits []string, attempted bool) {
	why := "group " + ga.g.name + ": " + strings.Join(culprits, "; ")
	for k := range ga.g.members {
		r := ga.res(k)
		if r.Outcome != "" {
			continue
		}
		*r = hq.Result{Module: r.Module, Resource: r.Resource, Outcome: hq.StateGroupedPending,
			Attempted: attempted, Error: why}
		// The failure is the culprit's, and its back-off alone decides when the group is tried again.
		ga.rc.e.fails.drop(ga.ref(k))
	}
}

// done makes the group's change stay: the journal goes first, then what undo would have
// needed, then what members made before they moved and the members the declaration no longer
// names. When the journal cannot be removed, all of that is kept: the next start of hostd
// rolls the group back from the journal, and needs every original to do it whole. It returns
// the group's services, for later restarts in the module.
func (ga *groupApply) done(ctx context.Context) []lateService {
	whole := ga.removeJournal()
	var services []lateService
	at := ga.rc.next()
	for k, o := range ga.ops {
		r := ga.res(k)
		if r.Outcome == hq.StateFailed {
			continue // a service restartUnhealthy could not make healthy
		}
		r.Outcome, r.Attempted = hq.StateApplied, true
		crash := o.crashed()
		if crash != nil {
			o.markCrash(ga.rc.start)
		}
		if o.equal {
			o.adopt()
		} else {
			if whole {
				steps[o.decl.Kind].finish(o)
			}
			ga.rc.changed[o.ref] = at
			ga.rc.noteStart(o, at)
			r.Changed, r.Drift, r.DriftDetail, r.DriftFound = true, ga.drift[k].detail != "", ga.drift[k].detail, ga.drift[k].found
			r.Note = o.containerNote()
		}
		settling := ""
		if o.equal && crash == nil {
			settling = o.settling(ga.rc.start)
		}
		ga.rc.keep(o)
		switch {
		case crash != nil:
			ga.fail(k, crash)
			continue
		case settling != "":
			r.Outcome, r.Attempted, r.Error = hq.StateFailed, false, settling
			continue
		}
		ga.rc.e.fails.drop(o.ref)
		if o.decl.Kind == hq.KindService {
			services = append(services, lateService{ga.g.members[k], o, at})
		}
	}
	if !whole {
		ga.rc.e.log.Error("the group journal could not be removed: keeping the originals, the next start of hostd rolls the group back",
			"group", ga.name())
		return services
	}
	for _, o := range ga.ops {
		// The group is applied either way: an old path left behind is logged by dropOld.
		ga.rc.dropOld(ctx, o)
	}
	for _, ref := range ga.rc.dropped[ga.name()] {
		ga.rc.removeGone(ctx, ref)
	}
	return services
}

// undoErrors are the members that could not be undone, on one line for a result's error.
type undoErrors []error

func (u undoErrors) Error() string {
	msgs := make([]string, len(u))
	for i, err := range u {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (u undoErrors) Unwrap() []error { return u }
