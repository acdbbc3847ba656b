package hostd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meshhq/hq"
)

// reconcileRun is the state of one reconcile: one pass over a declaration.
type reconcileRun struct {
	// opened holds the secrets opened in this run, by SecretRef, in memory only.
	opened map[string]string
	e      *Engine
	d      *hq.Declaration
	start  time.Time
	// declared holds every declared ref; refByPath maps every declared path to its ref.
	declared  map[string]bool
	refByPath map[string]string
	// inherited holds paths a no-longer-declared ledger entry owned and a declared resource now
	// names: hostd still owns what is there, so it is neither removed nor held.
	inherited map[string]bool
	// heldDirs maps the path of every held directory to its ref, for the paths under it.
	heldDirs map[string]string
	// changed maps the refs this reconcile changed on the machine to when (a step of seq), for
	// restart_on: a service restarts for a change made after it was applied.
	changed map[string]int
	// seq counts the steps of this reconcile that changed something.
	seq int
	// started maps the services this reconcile started to the step they started at.
	started map[string]int
	// dropped maps a declared group (module/group) to the members the declaration no longer
	// names, in the order to remove them: they go once the group applies.
	dropped map[string][]string
	// scope, when set, names the only modules whose undeclared resources may be removed (see
	// Engine.ReconcileLocal); nil means every module.
	scope map[string]bool
	// results are the reconcile's, in declaration order, once it is done.
	results []hq.Result
	// heldFound counts the bytes of held files' content the results carry, up to
	// hq.MaxHeldFound: the files held first, in declaration order, carry theirs.
	heldFound int
	// removed and notRemoved name the undeclared resources removed, and those whose removal
	// failed.
	removed, notRemoved []string
}

func newReconcileRun(e *Engine, d *hq.Declaration, start time.Time) *reconcileRun {
	rc := &reconcileRun{
		e: e, d: d, start: start,
		declared:  make(map[string]bool, d.ResourceCount()),
		refByPath: make(map[string]string, d.ResourceCount()),
		inherited: map[string]bool{},
		heldDirs:  map[string]string{},
		changed:   map[string]int{},
		started:   map[string]int{},
		dropped:   map[string][]string{},
	}
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			ref := hq.Ref(m.Name, r.Name)
			rc.declared[ref] = true
			if r.Path != "" {
				rc.refByPath[r.Path] = ref
			}
		}
	}
	return rc
}

// module applies one module's resources in order. A gate that does not apply leaves what
// follows it pending; a held gate holds what follows it. A group is applied as one step where
// its last member is declared, once the gates before every member are known.
func (rc *reconcileRun) module(ctx context.Context, m hq.DeclaredModule) []hq.Result {
	mr := &moduleRun{results: make([]hq.Result, len(m.Resources)), held: map[string]bool{}}
	groups := groupsOf(m)
	for i, r := range m.Resources {
		ref := hq.Ref(m.Name, r.Name)
		res := hq.Result{Module: m.Name, Resource: r.Name}
		g := groups[r.Group]
		switch {
		case mr.blockedBy != "":
			res.Outcome, res.BlockedBy = hq.StatePending, mr.blockedBy
		case mr.heldGate != "":
			res.Outcome, res.HoldReason = hq.StateHeld, "depends on held "+mr.heldGate
		default:
			dep := rc.heldDependency(m, r, mr.held)
			f := rc.e.fails.skip(ref, rc.start)
			switch {
			case dep != "":
				res.Outcome, res.HoldReason = hq.StateHeld, "depends on held "+dep
			case g != nil:
				// Decided with its group: an empty outcome tells the group this member may apply.
			case f != nil:
				res.Outcome, res.Error = hq.StateFailed, f.Err
			case batched(r):
				a := rc.prepare(ctx, m, r)
				if a.ready {
					// Committed with the files staged after it (see commitBatch); its result
					// is written then.
					a.index = i
					mr.batch = append(mr.batch, a)
				}
				res = a.res
			default:
				// What this resource does may read the files staged before it.
				rc.commitBatch(ctx, mr)
				var o *op
				res, o = rc.apply(ctx, m, r)
				if r.Kind == hq.KindService && res.Outcome == hq.StateApplied {
					mr.services = append(mr.services, lateService{i, o, rc.seq})
				}
			}
		}
		mr.results[i] = res
		if g == nil {
			waitOnTake(m, r, &mr.results[i])
			rc.track(mr, m, i)
			continue
		}
		if i != g.last() {
			continue
		}
		rc.commitBatch(ctx, mr)
		mr.services = append(mr.services, rc.applyGroup(ctx, m, g, mr.results)...)
		for _, j := range g.members {
			waitOnTake(m, m.Resources[j], &mr.results[j])
			rc.track(mr, m, j)
		}
	}
	rc.commitBatch(ctx, mr)
	rc.lateRestarts(ctx, m, mr.services, mr.results)
	rc.pendingRestarts(m)
	return mr.results
}

// batched reports whether r is a file whose commit may wait for the files staged after it, so
// that their data is made durable together: nothing reads it before the next resource of
// another kind (which commits the batch first), no validate command runs beside it (one may read
// the files before it), and no resource waits on its outcome as a gate.
func batched(r hq.Resource) bool {
	return r.Kind == hq.KindFile && len(r.Validate) == 0 && !r.IsGate()
}

// commitBatch makes the data of the files staged in mr's batch durable together, then puts each
// in place and writes its result. A file whose data cannot be made durable is not put in place.
func (rc *reconcileRun) commitBatch(ctx context.Context, mr *moduleRun) {
	if len(mr.batch) == 0 {
		return
	}
	batch := mr.batch
	mr.batch = nil
	ops := make([]*op, len(batch))
	for k := range batch {
		ops[k] = batch[k].o
	}
	began := time.Now()
	err := rc.e.syncStaged(ops)
	spent := time.Since(began) / time.Duration(len(batch))
	for k := range batch {
		a := &batch[k]
		a.spent += spent
		if err != nil {
			rc.undo(ctx, steps[a.o.decl.Kind], a.o)
			a.ready = false
			rc.end(a, fmt.Errorf("making the staged file durable: %w", err))
		} else {
			rc.commit(ctx, a)
		}
		mr.results[a.index] = a.res
	}
}

// pendingRestarts marks in the ledger every service of m that was not started after something
// in its restart_on changed in this reconcile (it was pending, held, backed off, or failed to
// start), so that it restarts when it next applies, even reconciles later.
func (rc *reconcileRun) pendingRestarts(m hq.DeclaredModule) {
	for _, r := range m.Resources {
		if r.Kind != hq.KindService || len(r.RestartOn) == 0 {
			continue
		}
		ref := hq.Ref(m.Name, r.Name)
		en := rc.e.ledger.Resources[ref]
		if en == nil || en.Kind != hq.KindService || en.Restart || !rc.changedSince(m, r, rc.started[ref]) {
			continue
		}
		marked := *en
		marked.Restart = true
		rc.e.setEntry(ref, &marked)
		rc.e.log.Info("a service will restart when it next applies: something it restarts on changed", "resource", ref)
	}
}

// noteStart records that o's commit started a service process, at step at.
func (rc *reconcileRun) noteStart(o *op, at int) {
	if o.decl.Kind == hq.KindService && o.started {
		rc.started[o.ref] = at
	}
}

// moduleRun is what module keeps while it walks a module's resources.
type moduleRun struct {
	results []hq.Result
	// held holds the names of held resources, for what depends on them.
	held map[string]bool
	// blockedBy and heldGate name the first gate that did not apply, or was held.
	blockedBy, heldGate string
	// services remembers each applied service, for restarts its restart_on asks for later.
	services []lateService
	// batch holds the files staged and not yet committed, in declaration order.
	batch []applying
}

// track notes what result i holds or gates for the resources after it.
func (rc *reconcileRun) track(mr *moduleRun, m hq.DeclaredModule, i int) {
	r, res := m.Resources[i], mr.results[i]
	ref := hq.Ref(m.Name, r.Name)
	if res.Outcome == hq.StateHeld {
		mr.held[r.Name] = true
		if r.Kind == hq.KindDirectory {
			rc.heldDirs[r.Path] = ref
		}
	}
	if r.IsGate() && res.Outcome != hq.StateApplied && mr.blockedBy == "" && mr.heldGate == "" {
		if res.Outcome == hq.StateHeld {
			mr.heldGate = ref
		} else {
			mr.blockedBy = ref
		}
	}
}

// heldDependency names the held resource r depends on: one its restart_on names, or a held
// directory its path is under; "" when there is none.
func (rc *reconcileRun) heldDependency(m hq.DeclaredModule, r hq.Resource, held map[string]bool) string {
	for _, dep := range r.RestartOn {
		if held[dep] {
			return hq.Ref(m.Name, dep)
		}
	}
	// The nearest held directory above the path, so the reason does not depend on map order.
	best, dep := "", ""
	for dir, ref := range rc.heldDirs {
		if isUnder(r.Path, dir) && len(dir) > len(best) {
			best, dep = dir, ref
		}
	}
	return dep
}

// applying is one resource on its way through its steps.
type applying struct {
	o   *op
	res hq.Result
	// ref and spec name the resource and its spec's digest, for back-off.
	ref, spec string
	// drift is what check found changed behind hostd's back, for the result.
	drift seenDrift
	// ready says the change is staged: commit comes next.
	ready bool
	// spent is the time spent on the resource so far, for the result.
	spent time.Duration
	// index is the resource's in its module, while it waits in a batch.
	index int
}

// apply runs one resource through its steps and turns what happened into a result.
func (rc *reconcileRun) apply(ctx context.Context, m hq.DeclaredModule, r hq.Resource) (hq.Result, *op) {
	a := rc.prepare(ctx, m, r)
	if a.ready {
		rc.commit(ctx, &a)
	}
	return a.res, a.o
}

// prepare checks the machine and, unless it is already as declared or the change must be held,
// stages the change: a.ready says commit is next. Otherwise a.res is final.
func (rc *reconcileRun) prepare(ctx context.Context, m hq.DeclaredModule, r hq.Resource) applying {
	began := time.Now()
	a := applying{ref: hq.Ref(m.Name, r.Name), res: hq.Result{Module: m.Name, Resource: r.Name, Attempted: true}}
	o, err := rc.newOp(ctx, m, r)
	if err == nil && len(r.SecretPins) > 0 {
		o.secrets, err = rc.openSecrets(r)
		if errors.Is(err, errNotSealed) {
			a.spec = o.spec
			a.res.Outcome, a.res.Attempted, a.res.HoldReason = hq.StateHeld, false, holdNoSecretsKey
			rc.end(&a, nil)
			return a
		}
		if err != nil {
			a.spec = o.spec
			rc.end(&a, err)
			return a
		}
	}
	if err == nil {
		a.o, a.spec = o, o.spec
		err = rc.checkAndStage(ctx, m, &a)
	} else {
		a.spec = r.Digest()
	}
	a.spent = time.Since(began)
	if err != nil || !a.ready {
		rc.end(&a, err)
	}
	return a
}

// commit puts a's staged change in place and makes a.res final.
func (rc *reconcileRun) commit(ctx context.Context, a *applying) {
	began := time.Now()
	err := rc.commitOp(ctx, a)
	a.ready = false
	a.spent += time.Since(began)
	rc.end(a, err)
}

// end makes a.res final: a failure counts for back-off, and an applied resource leaves it.
func (rc *reconcileRun) end(a *applying, err error) {
	if err != nil {
		rc.failed(&a.res, a.ref, a.spec, err)
	} else if a.res.Outcome == hq.StateApplied {
		rc.e.fails.drop(a.ref)
	}
	a.res.DurationMS = a.spent.Milliseconds()
}

// failed makes res a failed attempt of ref, whose spec has digest spec, and counts it for
// back-off.
func (rc *reconcileRun) failed(res *hq.Result, ref, spec string, err error) {
	res.Outcome, res.Attempted, res.Changed, res.Error = hq.StateFailed, true, false, err.Error()
	rc.e.fails.failed(ref, rc.start, res.Error, spec)
}

// serviceFailed makes res say that the commit of service o (a start or a restart) failed with
// err. A process that started keeps running on its own: it is what is declared, and a slow
// start is not helped by stopping it; only a group rolls a service back. The ledger names it,
// so that it is stopped when it is no longer declared, and its start counts for restart_on.
func (rc *reconcileRun) serviceFailed(o *op, res *hq.Result, err error) {
	if o.started {
		rc.keep(o)
	}
	rc.noteStart(o, rc.next())
	rc.failed(res, o.ref, o.spec, err)
}

// checkAndStage checks the machine and, unless it is already as declared or the change must be
// held, stages the change and sets a.ready.
func (rc *reconcileRun) checkAndStage(ctx context.Context, m hq.DeclaredModule, a *applying) error {
	o := a.o
	s := steps[o.decl.Kind]
	if err := s.check(ctx, o); err != nil {
		return err
	}
	if o.equal {
		o.adopt()
		crash := o.crashed()
		if crash != nil {
			o.markCrash(rc.start)
		}
		settling := o.settling(rc.start)
		rc.keep(o)
		a.res.Outcome = hq.StateApplied
		switch {
		case crash != nil:
			return crash // running as declared again, but not without a failure since the last look
		case settling != "":
			a.res.Outcome, a.res.Error = hq.StateFailed, settling
			return nil
		}
		return rc.dropOld(ctx, o)
	}
	if reason := holdReason(m, o); reason != "" {
		rc.hold(o, &a.res, reason)
		a.res.Attempted = false
		return nil
	}
	a.drift = o.drift()
	if err := s.stage(ctx, o); err != nil {
		rc.undo(ctx, s, o)
		return err
	}
	a.ready = true
	return nil
}

// commitOp puts a's staged change in place and makes it stay.
func (rc *reconcileRun) commitOp(ctx context.Context, a *applying) error {
	o := a.o
	s := steps[o.decl.Kind]
	if err := s.commit(ctx, o); err != nil {
		if o.committed && o.decl.Kind == hq.KindService {
			rc.serviceFailed(o, &a.res, err)
			return nil
		}
		rc.undo(ctx, s, o)
		return err
	}
	s.finish(o)
	crash := o.crashed()
	if crash != nil {
		o.markCrash(rc.start)
	}
	rc.keep(o)
	rc.changed[o.ref] = rc.next()
	rc.noteStart(o, rc.seq)
	a.res.Outcome, a.res.Changed, a.res.Drift, a.res.DriftDetail, a.res.DriftFound = hq.StateApplied, true, a.drift.detail != "", a.drift.detail, a.drift.found
	a.res.Note = o.containerNote()
	if crash != nil {
		return fmt.Errorf("%w; started again", crash)
	}
	return rc.dropOld(ctx, o)
}

// notDurable fails every resource this reconcile changed, once what it changed could not be
// made durable: a report must not call applied what a crash could take back. Their ledger
// entries lose their fingerprint, so that the next check reads what is on disk.
func (rc *reconcileRun) notDurable(err error) {
	rc.e.log.Error("what this reconcile changed could not be made durable", "err", err)
	i := 0
	for _, m := range rc.d.Modules {
		for _, r := range m.Resources {
			res := &rc.results[i]
			i++
			if !res.Changed {
				continue
			}
			ref := hq.Ref(m.Name, r.Name)
			if en := rc.e.ledger.Resources[ref]; en != nil && en.Stat != nil {
				unsure := *en
				unsure.Stat = nil
				rc.e.setEntry(ref, &unsure)
			}
			rc.failed(res, ref, r.Digest(), fmt.Errorf("applied, but not made durable: %w", err))
		}
	}
}

// containerStatuses says, on the result of every container resource, what runs for it as its
// ledger entry says once this reconcile is done: the container applied, or the one that stayed
// when a change did not apply (a group rolled back, a create that failed).
func (rc *reconcileRun) containerStatuses() {
	i := 0
	for _, m := range rc.d.Modules {
		for _, r := range m.Resources {
			if r.Kind == hq.KindContainer && i < len(rc.results) {
				ref := hq.Ref(m.Name, r.Name)
				healthy, seen := rc.e.ctrs.healthy[ref]
				rc.results[i].Container = containerStatus(r, rc.e.ledger.Resources[ref], healthy, seen)
			}
			i++
		}
	}
}

// dropOld removes what o's resource made before its path (or a service's kind) changed, now
// that the new state stays.
func (rc *reconcileRun) dropOld(ctx context.Context, o *op) error {
	if o.old == nil {
		return nil
	}
	old := o.old
	o.old = nil
	if err := rc.e.removeEntry(ctx, o.ref, old); err != nil {
		rc.e.log.Error("removing what a changed resource made before", "resource", o.ref, "path", old.Path, "err", err)
		if old.Path != "" {
			return fmt.Errorf("applied, but removing %s from its old path: %w", old.Path, err)
		}
		return fmt.Errorf("applied, but removing the previous %s: %w", old.Kind, err)
	}
	return nil
}

// waitOnTake holds a container or a job of a module that is not taken once it is as such a
// module asks (a container created, not started; a job not run): it waits on the take.
func waitOnTake(m hq.DeclaredModule, r hq.Resource, res *hq.Result) {
	if m.Taken || res.Outcome != hq.StateApplied || r.Kind != hq.KindContainer && r.Kind != hq.KindJob {
		return
	}
	what := "created, not started"
	if r.Kind == hq.KindJob {
		what = "not run"
	}
	res.Outcome, res.HoldReason = hq.StateHeld, fmt.Sprintf("%s until %s is taken", what, m.Name)
}

// holdReason says why o, checked and found not as declared, must not be changed: it would
// overwrite what hostd found on the machine for a module that is not taken. "" when it may.
func holdReason(m hq.DeclaredModule, o *op) string {
	if o.abs == "" && o.decl.Kind != hq.KindPackage || !o.present || o.managed || m.Taken {
		return ""
	}
	if o.decl.Kind == hq.KindPackage {
		return packageHoldReason(m, o)
	}
	return fmt.Sprintf("would overwrite %s, found on this node; not applied until %s is taken", o.decl.Path, m.Name)
}

// drifted reports whether o, found not as declared, is a managed resource whose spec did not
// change: something else changed the machine, and putting it back is drift. What hostd only
// found, and never wrote, cannot drift from what hostd wrote.
func (o *op) drifted() bool {
	return o.managed && o.entry != nil && !o.entry.Found && o.entry.Spec == o.spec && !o.restart && o.driftable()
}

// adopt makes the ledger entry of o, checked and found as declared, say how hostd came by it.
// Found for a module that is not taken, it is adopted but stays Found: it is not hostd's. A
// taken module owns what it adopts.
func (o *op) adopt() {
	if o.record == nil {
		return
	}
	switch {
	case !o.managed:
		r := *o.record
		// A package hostd found installed is no more hostd's than a file it found.
		r.Wrote, r.Found = "adopted", !o.taken && (o.abs != "" || o.decl.Kind == hq.KindPackage && o.present)
		o.record = &r
	case o.record.Found && o.taken:
		r := *o.record
		r.Found = false
		o.record = &r
	}
}

// forgetFound drops the ledger entry of o, held because it would overwrite what hostd found: an
// entry there can only be one hostd found as declared before (see Entry.Found), and it no
// longer is.
func (rc *reconcileRun) forgetFound(o *op) {
	if o.entry != nil && !o.managed {
		rc.e.deleteEntry(o.ref)
		o.entry = nil
	}
}

// hold makes res the hold of o, found on the machine and not as declared, for reason: with
// what hostd found in a held file, for the preview of what Take would overwrite.
func (rc *reconcileRun) hold(o *op, res *hq.Result, reason string) {
	rc.forgetFound(o)
	res.Outcome, res.HoldReason = hq.StateHeld, reason
	if res.HeldFound = o.heldFound(hq.MaxHeldFound - rc.heldFound); res.HeldFound != nil {
		rc.heldFound += len(res.HeldFound.Text)
	}
}

// driftable says whether a service found not as declared was changed by something else: it
// ran under hostd (one stopped with hostd, by --stop-services-on-exit, is started again, which
// is not something else changing the machine) and is no longer running, or no longer healthy.
// One that runs another spec than the ledger's is hostd's own doing, not drift.
//
// A container is drift when someone stopped, removed or replaced it; one that crashed is a
// failure, and one hostd created and never started (for a module not taken then) is not drift
// when a take starts it.
func (o *op) driftable() bool {
	switch o.decl.Kind {
	case hq.KindService:
		return o.e.sup.ran(o.ref) && (!o.present || o.unhealthy != nil)
	case hq.KindContainer:
		return o.ctr == nil || o.ctr.crash == "" && !o.ctr.leftByHostd
	}
	return true
}

func (rc *reconcileRun) undo(ctx context.Context, s step, o *op) {
	if err := s.undo(ctx, o); err != nil {
		rc.e.log.Error("undoing a failed change", "resource", o.ref, "err", err)
	}
}

// keep records o's ledger entry when it differs from the one there.
func (rc *reconcileRun) keep(o *op) {
	if o.record == nil {
		return
	}
	if o.record.Group != o.decl.Group {
		r := *o.record
		r.Group = o.decl.Group
		o.record = &r
	}
	if o.record == o.entry {
		return
	}
	if o.entry != nil && *o.entry == *o.record {
		return
	}
	rc.e.setEntry(o.ref, o.record)
}

// newOp resolves r's path and ledger entry. A managed resource whose path moved (or a service
// that became another kind) is new where it is now; what it made before is removed once the
// new state stays (see dropOld), unless another declared resource names the old path. Nothing
// is changed here: the op may never apply (a group that does not, a hold).
func (rc *reconcileRun) newOp(_ context.Context, m hq.DeclaredModule, r hq.Resource) (*op, error) {
	o := &op{e: rc.e, module: m.Name, taken: m.Taken, decl: r, ref: hq.Ref(m.Name, r.Name), spec: r.Digest()}
	if _, ok := steps[r.Kind]; !ok {
		return nil, fmt.Errorf("unknown kind %q", r.Kind)
	}
	if r.Path != "" {
		abs, err := under(rc.e.cfg.Root, r.Path)
		if err != nil {
			return nil, err
		}
		if err := rc.e.confiner.check(abs, true); err != nil {
			return nil, err
		}
		if err := rc.e.guardState(r.Path, abs, rc.e.confiner.resolved(abs), r.Kind == hq.KindAbsent); err != nil {
			return nil, err
		}
		o.abs = abs
	}
	o.entry = rc.e.ledger.Resources[o.ref]
	switch en := o.entry; {
	case en == nil:
	case en.Kind == hq.KindPackage && (r.Kind != hq.KindPackage || en.Package != "" && en.Package != r.Package):
		// Another package (or kind) now: the one installed is removed once this one applies.
		o.old, o.entry = en, nil
	case en.Kind == hq.KindService && r.Kind != hq.KindService,
		en.Kind == hq.KindContainer && r.Kind != hq.KindContainer:
		// The process (or container) is stopped once what replaces it applies.
		o.old, o.entry = en, nil
	case en.Path != r.Path:
		if en.Path != "" && rc.refByPath[en.Path] == "" {
			o.old = en
		}
		o.entry = nil
	}
	// What hostd only found for a module that is not taken is not hostd's (see Entry.Found).
	o.managed = o.entry != nil && !(o.entry.Found && !m.Taken) || rc.inherited[r.Path]
	// A restart a change asked for in an earlier reconcile is still owed (see pendingRestarts).
	o.restart = rc.changedSince(m, r, 0) || r.Kind == hq.KindService && o.entry != nil && o.entry.Restart
	return o, nil
}

// next is the step of a change made now.
func (rc *reconcileRun) next() int {
	rc.seq++
	return rc.seq
}

// changedSince reports whether something r's restart_on names changed after step at.
func (rc *reconcileRun) changedSince(m hq.DeclaredModule, r hq.Resource, at int) bool {
	for _, dep := range r.RestartOn {
		if rc.changed[hq.Ref(m.Name, dep)] > at {
			return true
		}
	}
	return false
}

// lateService is a service applied at index of its module's results, at step at of the
// reconcile (its start, or its check when it was in place).
type lateService struct {
	index int
	op    *op
	at    int
}

// lateRestarts restarts the services whose restart_on names a resource that changed after the
// service itself was applied (or started) in this reconcile.
func (rc *reconcileRun) lateRestarts(ctx context.Context, m hq.DeclaredModule, services []lateService, results []hq.Result) {
	for _, ls := range services {
		i, o := ls.index, ls.op
		if !rc.changedSince(m, o.decl, ls.at) {
			continue
		}
		began := time.Now()
		o.restart, o.equal = true, false
		s := steps[hq.KindService]
		if err := s.commit(ctx, o); err != nil {
			rc.serviceFailed(o, &results[i], err)
		} else {
			rc.noteStart(o, rc.next())
			s.finish(o)
			rc.keep(o)
			results[i].Changed = true
		}
		results[i].DurationMS += time.Since(began).Milliseconds()
	}
}
