package hostd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/seal"
)

// EngineConfig is what the apply engine needs; zero durations take the defaults.
type EngineConfig struct {
	Root     string
	StateDir string
	// Interval is the reconcile interval; back-off waits are multiples of it.
	Interval time.Duration
	Logger   *slog.Logger
	// Now is the clock; tests fix it to drive back-off.
	Now func() time.Time
	// CommandTimeout bounds a validate command or an action (default 10m).
	CommandTimeout time.Duration
	// HealthTimeout bounds the wait for a (re)started service's health URL (default 10s).
	HealthTimeout time.Duration
	// StopTimeout is how long a service has between SIGTERM and SIGKILL (default 5s).
	StopTimeout time.Duration
	// StartGrace is how long a service without a health URL must stay up after a start to
	// count as started (default 100ms), so a command that exits at once fails where it starts.
	StartGrace time.Duration

	// StopServicesOnExit makes Close stop every service. By default they keep running, and
	// the next engine on the same state dir re-adopts them.
	StopServicesOnExit bool

	// FailpointGroupCommitPause and FailpointAt are for tests only: see failpoint.
	FailpointGroupCommitPause time.Duration
	FailpointAt               string

	// Node names this node on the containers hostd creates (their hq.node label).
	Node string
	// ContainerCLI is the container engine's command line: podman, or a Docker-compatible one.
	// Empty: podman when it is on the PATH.
	ContainerCLI string
	// ContainerNetworkPrefix starts the name of the network hostd makes for a module's
	// containers (default "hq-": hq-<module>).
	ContainerNetworkPrefix string

	// ImageGCAfter is how long an image hostd brought may go unused by every declared
	// container and job before it is removed (see collectImages); 0 removes none.
	ImageGCAfter time.Duration

	// Masterless is set for hostd apply, which reconciles once from the operator's own file:
	// see ReconcileLocal. Back-off is neither read nor kept, so every resource is attempted and
	// the daemon's back-off is left as it was.
	Masterless bool
}

// Engine applies declarations to the machine under Root and keeps the ledger of what it
// manages. It is not safe for concurrent use: one goroutine reconciles.
type Engine struct {
	// secretsKey is the node's own key, which opens the secrets sealed to it.
	secretsKey *seal.Key
	cfg        EngineConfig
	log        *slog.Logger
	ledger     *Ledger
	// ledgerDirty is set when the ledger in memory differs from the one on disk.
	ledgerDirty bool
	fails       *backoff
	sup         *supervisor
	// confiner keeps the current reconcile inside the root.
	confiner *confiner
	// stateDirs is the state dir as configured (made absolute) and resolved: no declared path
	// may be it, inside it, or (for what removes) above it.
	stateDirs []string
	// keptJournal is set when a group could not be rolled back and its journal is kept: no
	// group applies until a new start has rolled it back (NewEngine does not start until then).
	keptJournal error
	// rolledBack is the group this engine's start rolled back from its journal, until the
	// first reconcile's report has said so.
	rolledBack *recovered
	// pkgs is what dpkg's database says of the declared packages, for the current reconcile.
	pkgs packages
	// pkgQueries counts the runs of dpkg-query, for tests.
	pkgQueries int
	// ctrs is the container CLI, and what it listed in the current reconcile.
	ctrs *containers
	// unsynced holds the directories changed under the root and not yet made durable, and
	// syncFailed the first failure to make them so in the current reconcile: see durable.
	unsynced   map[string]bool
	syncFailed error
	// watch holds a directory open on each filesystem the current reconcile staged files on.
	watch fsWatch
	// images are the images hostd created containers and jobs from, by pinned reference, as
	// images.json keeps them; lastImageGC is when collectImages last looked, and
	// imagesRemoved counts what it removed since the engine started.
	images        map[string]*imageUse
	lastImageGC   time.Time
	imagesRemoved int
}

// NewEngine loads the ledger and back-off state from the state dir, removes the staged files a
// crash left beside the paths hostd manages, and re-adopts the services a previous run left
// running (see supervisor.adopt): the next reconcile keeps those whose spec is unchanged,
// restarts the others and starts those that died.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	cfg.CommandTimeout = cmpOr(cfg.CommandTimeout, 10*time.Minute)
	cfg.HealthTimeout = cmpOr(cfg.HealthTimeout, 10*time.Second)
	cfg.StopTimeout = cmpOr(cfg.StopTimeout, 5*time.Second)
	cfg.StartGrace = cmpOr(cfg.StartGrace, 100*time.Millisecond)
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	ctrs := &containers{cli: containerCLI{path: containerCLIPath(cfg.ContainerCLI), calls: &atomic.Int64{}}, node: cfg.Node,
		stopTimeout: cfg.StopTimeout}
	// A group cut off between two commits is rolled back before anything else looks at the
	// machine: before the ledger is trusted, services are started or anything is reconciled.
	rolledBack, err := recoverJournal(cfg.StateDir, ctrs, cfg.Logger)
	if err != nil {
		return nil, err
	}
	l, err := loadLedger(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	removeLitter(cfg.Root, cfg.StateDir, l, cfg.Logger)
	b := newBackoff(cfg.Interval)
	if cfg.Masterless {
		// Never saved either (see Reconcile): an empty back-off skips nothing.
	} else if err := b.load(cfg.StateDir); err != nil {
		// Back-off is an optimisation; a damaged file only means earlier retries.
		cfg.Logger.Warn("back-off state unreadable, starting without it", "err", err)
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, ledger: l, fails: b, confiner: newConfiner(cfg.Root),
		stateDirs: stateDirs(cfg.StateDir), ctrs: ctrs, rolledBack: rolledBack}
	e.loadImages()
	e.sup = newSupervisor(cfg.StateDir, cfg.Root, cfg.StopTimeout, cfg.Logger)
	e.sup.adopt()
	e.sup.watch(watchInterval)
	return e, nil
}

// stateDirs returns dir made absolute, and resolved when that differs.
func stateDirs(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	dirs := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		dirs = append(dirs, real)
	}
	return dirs
}

// guardState refuses abs (a path under the root; real is it with its parent resolved) when it
// is the state dir or inside it, where the ledger, the journal and the kept declaration live,
// or, when removes is set, when it holds the state dir.
func (e *Engine) guardState(spec, abs, real string, removes bool) error {
	for _, s := range e.stateDirs {
		if within(s, abs) || within(s, real) {
			return fmt.Errorf("%s is hostd's own state (HOSTD_STATE_DIR %s): refused", spec, e.cfg.StateDir)
		}
		if removes && (within(abs, s) || within(real, s)) {
			return fmt.Errorf("%s holds hostd's own state (HOSTD_STATE_DIR %s): refused", spec, e.cfg.StateDir)
		}
	}
	return nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Applied returns the generation and digest of the declaration last applied.
func (e *Engine) Applied() (int64, string) { return e.ledger.Generation, e.ledger.Digest }

// Admit fences d against what this engine last applied; see Fence.
func (e *Engine) Admit(d *hq.Declaration) error {
	return Fence(d, e.ledger.Generation, e.ledger.Digest)
}

// DropBackoff lets the named resources (module/name) be attempted at the next reconcile.
func (e *Engine) DropBackoff(refs ...string) {
	if len(refs) > 0 {
		e.fails.drop(refs...)
	}
}

// MarkStuck takes in the controller's stuck list: a group with a member on it is not
// attempted again until that member's spec changes or DropBackoff names it. Only a resource
// whose failures hostd still keeps is marked: one retried or applied since is not stuck here.
func (e *Engine) MarkStuck(refs ...string) {
	if e.cfg.Masterless || len(refs) == 0 {
		return
	}
	if marked := e.fails.stuck(refs); len(marked) > 0 {
		if err := e.fails.save(e.cfg.StateDir); err != nil {
			e.log.Warn("saving back-off state", "err", err)
		}
	}
}

// Close stops watching the services, and stops them too with StopServicesOnExit; otherwise
// they keep running for the next engine to re-adopt.
func (e *Engine) Close() {
	e.sup.close(e.cfg.StopServicesOnExit)
}

// Reconcile applies d (which the caller verified and admitted) and returns one result per
// declared resource, in declaration order. Failures are results, not errors: a reconcile
// always reports.
func (e *Engine) Reconcile(ctx context.Context, d *hq.Declaration) []hq.Result {
	start := e.cfg.Now()
	if d.Generation != e.ledger.Generation || d.Digest != e.ledger.Digest {
		// The fencing token must be durable before anything of d touches the machine: a restart
		// would otherwise admit an older declaration over what d changed. If it cannot be
		// saved, nothing of d applies this round, and the next reconcile tries again.
		prevGen, prevDigest := e.ledger.Generation, e.ledger.Digest
		e.ledger.Generation, e.ledger.Digest = d.Generation, d.Digest
		e.ledgerDirty = true
		if err := e.saveLedger(); err != nil {
			e.ledger.Generation, e.ledger.Digest = prevGen, prevDigest
			e.log.Error("not applying a new declaration: its generation could not be saved",
				"generation", d.Generation, "digest", d.Digest, "err", err)
			return notApplied(d, fmt.Errorf("not applied: the ledger could not be saved: %w", err))
		}
		// A resource the new declaration changes deserves a fresh attempt; one it does not
		// change keeps its back-off.
		e.fails.declared(d)
	}
	results := e.reconcile(ctx, d, start, nil).results
	e.collectImages(ctx, d)
	return results
}

// LocalOutcome is what one masterless reconcile did.
type LocalOutcome struct {
	// Results has one result per declared resource, in declaration order.
	Results []hq.Result
	// Removed names the resources (module/name) of the declared modules that the ledger named
	// and the declaration no longer does, removed (or forgotten, when hostd only found them).
	Removed []string
	// NotRemoved names those whose removal failed; they stay in the ledger.
	NotRemoved []string
}

// ReconcileLocal applies d, the operator's own declaration, once, for hostd apply. It shares
// the ledger, the journal and the services with the daemon, with three differences:
//
//   - the fencing token (the ledger's generation and digest) is neither checked nor moved, so a
//     later hostd run fences the controller's declarations exactly as before;
//   - only the modules d names are reconciled: what the ledger holds of other modules (the
//     controller's, or another file's) is left alone, while what a named module no longer
//     declares is removed;
//   - back-off is not applied (with EngineConfig.Masterless): every resource is attempted.
func (e *Engine) ReconcileLocal(ctx context.Context, d *hq.Declaration) LocalOutcome {
	scope := make(map[string]bool, len(d.Modules))
	for _, m := range d.Modules {
		scope[m.Name] = true
	}
	e.removeNewLitter(d)
	rc := e.reconcile(ctx, d, e.cfg.Now(), scope)
	return LocalOutcome{Results: rc.results, Removed: rc.removed, NotRemoved: rc.notRemoved}
}

// reconcile is one pass over d. With scope set, only the ledger's resources of the modules it
// names may be removed.
func (e *Engine) reconcile(ctx context.Context, d *hq.Declaration, start time.Time, scope map[string]bool) *reconcileRun {
	// The root is resolved again each time: it may be a link that was moved.
	e.confiner = newConfiner(e.cfg.Root)
	e.pkgs = packages{}
	e.ctrs.byName, e.ctrs.networks, e.ctrs.left, e.ctrs.healthy = nil, nil, nil, nil
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			if r.Kind == hq.KindPackage {
				e.pkgs.names = append(e.pkgs.names, r.Package)
			}
		}
	}
	rc := newReconcileRun(e, d, start)
	rc.scope = scope
	rc.removeUndeclared(ctx)
	rc.results = make([]hq.Result, 0, d.ResourceCount())
	for _, m := range d.Modules {
		rc.results = append(rc.results, rc.module(ctx, m)...)
	}
	rc.removeStrayContainers(ctx)
	rc.containerStatuses()
	e.sayRolledBack(rc.results)
	// What the results (and the ledger) say was done is durable before they are returned.
	e.durable()
	e.watch.close()
	if err := e.syncFailed; err != nil {
		e.syncFailed = nil
		rc.notDurable(err)
	}
	e.saveLedger()
	if !e.cfg.Masterless {
		if err := e.fails.save(e.cfg.StateDir); err != nil {
			e.log.Warn("saving back-off state", "err", err)
		}
	}
	return rc
}

// sayRolledBack notes, on the first result of the group this engine's start rolled back, that
// it did, once: that report tells the controller the node went back, not only the log.
func (e *Engine) sayRolledBack(results []hq.Result) {
	rb := e.rolledBack
	if rb == nil || len(rb.Refs) == 0 {
		return
	}
	if len(results) == 0 {
		return
	}
	// Its first member's, or the first result when the declaration no longer names it.
	at := &results[0]
	for i := range results {
		if hq.Ref(results[i].Module, results[i].Resource) == rb.Refs[0] {
			at = &results[i]
			break
		}
	}
	if at.Note != "" {
		at.Note += "; "
	}
	at.Note += rb.note()
	e.rolledBack = nil
}

// notApplied reports every resource of d failed, without an attempt, for err.
func notApplied(d *hq.Declaration, err error) []hq.Result {
	results := make([]hq.Result, 0, d.ResourceCount())
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			results = append(results, hq.Result{Module: m.Name, Resource: r.Name, Outcome: hq.StateFailed, Error: err.Error()})
		}
	}
	return results
}

// saveLedger writes the ledger if it changed, once what it names is durable. After a change to
// the machine a failure is only logged and retried at the next save (the machine is already as
// the ledger in memory says); Reconcile does not apply a new declaration until its generation
// is saved.
func (e *Engine) saveLedger() error {
	if !e.ledgerDirty {
		return nil
	}
	if err := e.durable(); err != nil {
		e.log.Error("not saving the ledger: what it names could not be made durable", "err", err)
		return err
	}
	if err := e.ledger.save(e.cfg.StateDir); err != nil {
		e.log.Error("saving ledger", "err", err)
		return err
	}
	e.ledgerDirty = false
	return nil
}

func (e *Engine) setEntry(ref string, en *Entry) {
	e.ledger.Resources[ref] = en
	e.ledgerDirty = true
}

func (e *Engine) deleteEntry(ref string) {
	delete(e.ledger.Resources, ref)
	e.ledgerDirty = true
}
