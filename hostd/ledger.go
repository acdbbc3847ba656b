package hostd

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	jsonv2 "github.com/go-json-experiment/json"
)

// ledgerFile is the ledger's name in the state dir.
const ledgerFile = "ledger.json"

// Ledger is what hostd manages on this machine. Only what it names is ever changed or removed
// without a take, so it is written atomically and kept across restarts.
type Ledger struct {
	// Generation and Digest are those of the declaration last applied: the fencing token.
	Generation int64  `json:"generation"`
	Digest     string `json:"digest"`
	// Resources are the managed resources by ref (module/name).
	Resources map[string]*Entry `json:"resources"`
	// Actions holds "ref@spec digest" for every action that succeeded, so each runs once per spec.
	Actions map[string]bool `json:"actions"`
}

// Entry is one managed resource and what hostd made of it.
type Entry struct {
	Kind string `json:"kind"`
	// Path is the spec path (not joined under the root).
	Path string `json:"path,omitempty"`
	// Spec is the digest of the spec last applied.
	Spec string `json:"spec"`
	// Wrote says what hostd did: "created", "replaced" or "adopted".
	Wrote string `json:"wrote"`
	// Found is set when hostd found the path already as declared for a module that was not
	// taken, and has not written it since. What is there is still not hostd's: removing the
	// resource forgets it instead of deleting it, and a change to it is held until the module
	// is taken, not put back. Taking the module (or hostd writing the path) clears it.
	Found bool `json:"found,omitempty"`
	// Group is the group the resource was last applied in: a member dropped from a group that
	// is still declared is removed only once that group applies.
	Group string `json:"group,omitempty"`
	// Restart is set on a service when something in its restart_on changed while it could not
	// be restarted (it was pending, held, backed off or failed): it restarts when it next
	// applies, in whichever reconcile that is, and the flag is cleared only then.
	Restart bool `json:"restart,omitempty"`
	// Content is the sha256 of a file's content as written.
	Content string `json:"content,omitempty"`
	// Target is the link target written for a symlink, joined under the root.
	Target string `json:"target,omitempty"`
	// Package is the package a present package resource installed (or adopted), to remove
	// once it is no longer declared.
	Package string `json:"package,omitempty"`
	// Stat fingerprints a file as last written or checked, so an unchanged file is not re-read.
	Stat *fingerprint `json:"stat,omitempty"`
	// Proc is the process of a running container as last listed, so a reconcile that finds it
	// still alive need not ask the container CLI (see containerStep.check).
	Proc *procID `json:"proc,omitempty"`
	// Ran is set on a container hostd started, or found running as declared: one found
	// stopped then, with a code of its own, crashed (see op.crashOf).
	Ran bool `json:"ran,omitempty"`
	// CrashedAtMS is when hostd last found a container failed on its own and put it back (unix
	// milliseconds): until it has run for a while since, it is not called applied, so a crash
	// loop reads failed from one look to the next (see op.settling).
	CrashedAtMS int64 `json:"crashed_at_ms,omitempty"`
	// ContainerID, ImageDigest and StartedAt say what runs for a container: the engine's id
	// of it, the digest of its image and when its process started (unix seconds), as hostd
	// created, started or last listed it. A reconcile that finds it still as recorded reports
	// them without asking the CLI.
	ContainerID string `json:"container_id,omitempty"`
	ImageDigest string `json:"image_digest,omitempty"`
	StartedAt   int64  `json:"started_at,omitempty"`
	// Restarts counts the restarts of the container hostd saw since it created it: crashes
	// it put back, restarts behind its back (see op.markCrash).
	Restarts int64 `json:"restarts,omitempty"`
	// EngineRestarts is the engine's own count of the container's restarts as last listed,
	// when its CLI lists one: what it grew by is what the engine restarted it since.
	EngineRestarts int64 `json:"engine_restarts,omitempty"`
}

func newLedger() *Ledger {
	return &Ledger{Resources: map[string]*Entry{}, Actions: map[string]bool{}}
}

func loadLedger(stateDir string) (*Ledger, error) {
	l := newLedger()
	name := filepath.Join(stateDir, ledgerFile)
	b, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	// Decoded with the v2 prototype, as the API decodes requests: the ledger is read at every
	// start, and its decode was the largest part of a one-shot hostd apply that changes
	// nothing. encoding/json writes it; what it writes, v2 reads the same.
	if err == nil {
		if err := jsonv2.Unmarshal(b, l); err != nil {
			return nil, &os.PathError{Op: "decode", Path: name, Err: err}
		}
	}
	if l.Resources == nil {
		l.Resources = map[string]*Entry{}
	}
	if l.Actions == nil {
		l.Actions = map[string]bool{}
	}
	return l, nil
}

func (l *Ledger) save(stateDir string) error {
	return writeJSONAtomic(filepath.Join(stateDir, ledgerFile), l)
}

func actionKey(ref, spec string) string { return ref + "@" + spec }
