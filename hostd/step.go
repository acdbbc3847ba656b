package hostd

import (
	"context"
	"io/fs"

	"github.com/meshhq/hq"
)

// step is how one kind of resource is applied, split so that several resources can be staged
// first and committed (or undone) together:
//
//	check  inspects the machine and sets o.present and o.equal; it changes nothing.
//	stage  prepares the change without touching the target (a validated temp file).
//	commit puts the staged change in place and records in o what undo needs.
//	undo   reverses stage and, when it happened, commit.
//	finish drops what undo would have needed, once the change stays.
//
// After commit (or a check that found the machine as declared), o.record is the ledger entry.
type step interface {
	check(ctx context.Context, o *op) error
	stage(ctx context.Context, o *op) error
	commit(ctx context.Context, o *op) error
	undo(ctx context.Context, o *op) error
	finish(o *op)
}

var steps = map[string]step{
	hq.KindFile:      fileStep{},
	hq.KindDirectory: dirStep{},
	hq.KindSymlink:   linkStep{},
	hq.KindAbsent:    absentStep{},
	hq.KindAction:    actionStep{},
	hq.KindService:   serviceStep{},
	hq.KindPackage:   packageStep{},
	hq.KindContainer: containerStep{},
	hq.KindJob:       jobStep{},
}

// op carries one resource through its steps.
type op struct {
	e      *Engine
	module string
	taken  bool
	// decl is the resource as declared, spec the digest of it.
	decl hq.Resource
	ref  string
	spec string
	// secrets are the values of the secrets decl pins, by name, opened for this reconcile.
	secrets map[string]string
	// abs is the resource's path under the root; empty for actions and services.
	abs string
	// entry is the ledger entry for ref, nil when hostd does not manage it yet.
	entry *Entry
	// managed is true when hostd owns what is at abs (or the service or action).
	managed bool

	// Set by check. present says something is at abs, or, for a service, that its process runs.
	present bool
	equal   bool
	info    fs.FileInfo
	// unhealthy is why a running service, healthy after its start, failed its health check:
	// commit restarts it, and names this when it is still not healthy.
	unhealthy error
	// pkg is what dpkg's database says of a package.
	pkg pkgState
	// ctr is what a container's (or a job's) steps found and did.
	ctr *containerOp

	// Set by stage and commit, for commit, undo and finish.
	staged string
	// stagedUnsynced says the staged file's data is not durable yet: it must be (syncStaged,
	// or commit itself) before the file is renamed to its name.
	stagedUnsynced bool
	committed      bool
	// backup holds what commit replaced at abs (a hard link or the renamed original).
	backup string
	// aside, when set, is the name commit keeps the original under: a group plans it so that
	// its journal can name the original before anything is committed.
	aside string
	// madeDirs lists parent directories stage created, outermost first.
	madeDirs []string
	// prevMode is a directory's mode before commit changed it.
	prevMode fs.FileMode
	// restart asks a service to restart because something in its restart_on changed.
	restart bool
	// prevService is the spec of the service process commit replaced, and prevSecretEnv the
	// secret values it was started with (in memory only), which undo starts it with again.
	prevService   *hq.Resource
	prevSecretEnv map[string]string
	// started is set when commit started a service process (even one not healthy yet).
	started bool

	record *Entry
	// old is the ledger entry of what ref was before its path (or a service's kind) changed:
	// what it names is removed only once the new state stays, so a change that does not apply
	// (a group that does not) leaves it in place.
	old *Entry
}

// confine refuses o's path if its parent directory resolves outside the root, resolving it
// afresh: it comes before anything is created, written, renamed or removed there.
func (o *op) confine() error { return o.e.confiner.check(o.abs, false) }

// wrote says what commit did to the path, for the ledger.
func (o *op) wrote() string {
	if o.present {
		return "replaced"
	}
	return "created"
}
