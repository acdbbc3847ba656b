package hostd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/meshhq/hq"
)

// journalFile is the group journal's name in the state dir. Groups are applied one at a time,
// so there is at most one.
const journalFile = "group-journal.json"

// journal says how to put back every member of a group that is being committed. It is on disk
// (fsync'd, renamed into place) before the first commit and removed after the last, so a hostd
// that finds one at start knows the machine may hold part of a group and rolls it back.
type journal struct {
	// Group is module/group.
	Group      string          `json:"group"`
	Generation int64           `json:"generation"`
	At         time.Time       `json:"at"`
	Members    []journalMember `json:"members"`
}

// journalMember is how to undo one member's commit, whether or not the commit happened.
type journalMember struct {
	Ref  string `json:"ref"`
	Kind string `json:"kind"`
	// Path is the target, joined under the root.
	Path string `json:"path"`
	// Staged is the new content waiting beside the target, if any; it is removed.
	Staged string `json:"staged,omitempty"`
	// Existed is false when nothing was at Path: undo removes what commit created there.
	Existed bool `json:"existed"`
	// Aside is where commit keeps the original (a hard link, or the renamed original of an
	// absent path). Undo renames it back when it exists; when it does not, commit never got
	// as far as replacing the original.
	Aside string `json:"aside,omitempty"`
	// WasDir and Mode describe a directory that was at Path: its mode is put back, or, when a
	// file replaced it (only an empty one can be), it is made again.
	WasDir bool   `json:"was_dir,omitempty"`
	Mode   uint32 `json:"mode,omitempty"`
	// MadeDirs are the parent directories stage or commit create, outermost first; undo
	// removes those that are empty.
	MadeDirs []string `json:"made_dirs,omitempty"`

	// A container member is named by ids, which stay while commit renames: Container is the
	// declared name, OldID the container it replaces ("" for the first) and OldRunning whether
	// that one ran, NewID the container stage created ("" when the spec is the same and commit
	// only starts the old one again). Undo removes the new one and gives the old one back its
	// name and its running.
	Container  string `json:"container,omitempty"`
	OldID      string `json:"old_id,omitempty"`
	OldRunning bool   `json:"old_running,omitempty"`
	NewID      string `json:"new_id,omitempty"`
}

// writeJournal plans where each change keeps its original and records it all before the
// first commit.
func (ga *groupApply) writeJournal(changes []int) error {
	j := journal{Group: ga.name(), Generation: ga.rc.d.Generation, At: time.Now().UTC()}
	for _, k := range changes {
		o := ga.ops[k]
		if o.decl.Kind == hq.KindContainer && o.ctr != nil {
			j.Members = append(j.Members, containerMember(o))
			continue
		}
		if o.abs == "" {
			continue // an action or a job: nothing to put back
		}
		m := journalMember{Ref: o.ref, Kind: o.decl.Kind, Path: o.abs, Staged: o.staged, Existed: o.present,
			MadeDirs: slices.Concat(o.madeDirs, missingDirs(filepath.Dir(o.abs)))}
		if o.present {
			m.WasDir, m.Mode = o.info.IsDir(), modeBits(o.info.Mode())
			switch {
			case o.decl.Kind == hq.KindAbsent:
				o.aside = tempName(o.abs, "gone")
			case !m.WasDir:
				o.aside = tempName(o.abs, "undo")
			}
			m.Aside = o.aside
		}
		j.Members = append(j.Members, m)
	}
	if err := writeJSONAtomic(filepath.Join(ga.rc.e.cfg.StateDir, journalFile), j); err != nil {
		return err
	}
	ga.journaled = true
	return nil
}

// containerMember is how to put back container o, staged and not yet committed.
func containerMember(o *op) journalMember {
	m := journalMember{Ref: o.ref, Kind: o.decl.Kind, Container: containerName(o.module, o.decl.Name), NewID: o.ctr.nextID}
	if f := o.ctr.found; f != nil {
		m.Existed, m.OldID, m.OldRunning = true, f.ID, f.running()
	}
	return m
}

// removeJournalFile removes the journal durably; tests replace it to make the removal fail.
var removeJournalFile = removeDurably

// removeJournal drops the journal once the group is whole again, committed or rolled back, and
// that is durable: a crash must not find the group half done and no journal. It returns false
// when the journal is still there.
func (ga *groupApply) removeJournal() bool {
	if !ga.journaled {
		return true
	}
	if err := ga.rc.e.durable(); err != nil {
		ga.rc.e.log.Error("making the group's changes durable", "group", ga.name(), "err", err)
		return false
	}
	if err := removeJournalFile(filepath.Join(ga.rc.e.cfg.StateDir, journalFile)); err != nil {
		ga.rc.e.log.Error("removing the group journal", "group", ga.name(), "err", err)
		return false
	}
	ga.journaled = false
	return true
}

func removeDurably(name string) error {
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fsyncPath(filepath.Dir(name))
}

// missingDirs lists the directories from dir up that do not exist, outermost first: those a
// commit may create.
func missingDirs(dir string) []string {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append([]string{d}, missing...)
	}
	return missing
}

// recovered says which group a start of hostd rolled back, for the first report after it.
type recovered struct {
	Group string
	Refs  []string
}

// note is the report's words for it.
func (r *recovered) note() string {
	return "group " + r.Group + " rolled back after an interrupted switch: " + strings.Join(r.Refs, ", ")
}

// recoverJournal rolls back the group a previous hostd was committing when it stopped, before
// anything else happens, and then removes the journal. Every step can be repeated, so a crash
// during recovery is recovered by the next start; the journal stays until it has worked. It
// returns the group it rolled back, nil when there was none.
func recoverJournal(stateDir string, ctrs *containers, log *slog.Logger) (*recovered, error) {
	name := filepath.Join(stateDir, journalFile)
	var j journal
	ok, err := readJSON(name, &j)
	if err != nil || !ok {
		return nil, err
	}
	// Newest first; directories last and deepest first, so that what the group put in a
	// directory is gone before the directory is.
	members := slices.Clone(j.Members)
	slices.Reverse(members)
	slices.SortStableFunc(members, func(a, b journalMember) int {
		da, db := a.Kind == hq.KindDirectory, b.Kind == hq.KindDirectory
		switch {
		case da && db:
			return cmp.Compare(strings.Count(b.Path, "/"), strings.Count(a.Path, "/"))
		case da:
			return 1
		case db:
			return -1
		}
		return 0
	})
	var errs []error
	for _, m := range members {
		undo := m.undo
		if m.Container != "" {
			undo = func() error { return m.undoContainer(ctrs) }
		}
		if err := undo(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Ref, err))
		}
	}
	for _, m := range members {
		removeDirs(m.MadeDirs)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("rolling back group %s from %s: %w", j.Group, name, err)
	}
	// The rollback is durable before the journal that makes it repeatable goes.
	dirs := map[string]bool{}
	for _, m := range members {
		if m.Path == "" {
			continue // a container's is the engine's to keep
		}
		dirs[filepath.Dir(m.Path)] = true
		if m.Kind == hq.KindDirectory {
			dirs[m.Path] = true // its mode
		}
		for _, d := range m.MadeDirs {
			dirs[filepath.Dir(d)] = true
		}
	}
	if err := syncPaths(slices.Collect(maps.Keys(dirs)), nil); err != nil {
		return nil, fmt.Errorf("rolling back group %s from %s: %w", j.Group, name, err)
	}
	if err := removeDurably(name); err != nil {
		return nil, err
	}
	r := &recovered{Group: j.Group}
	for _, m := range j.Members {
		r.Refs = append(r.Refs, m.Ref)
	}
	log.Warn("rolled back a group interrupted before its last commit", "group", j.Group,
		"generation", j.Generation, "members", len(j.Members), "resources", strings.Join(r.Refs, ", "))
	return r, nil
}

// undoContainer puts a container member back: the container stage made goes, and the one it
// replaced has its name and, when it ran, runs again. Each step looks before it acts, so
// repeating it after a crash in the middle does no harm.
func (m journalMember) undoContainer(ctrs *containers) error {
	if ctrs == nil || ctrs.cli.path == "" {
		return errNoContainerCLI
	}
	ctx := context.Background()
	if m.NewID != "" {
		if _, ok, err := ctrs.cli.byID(ctx, m.NewID); err != nil {
			return err
		} else if ok {
			if err := ctrs.remove(ctx, m.NewID); err != nil {
				return err
			}
		}
	}
	if m.OldID == "" {
		return nil
	}
	old, ok, err := ctrs.cli.byID(ctx, m.OldID)
	if err != nil {
		return err
	}
	if !ok {
		// Removed by someone since: there is nothing to give back, and the next reconcile
		// creates the declared container as it would any missing one. hostd starts.
		return nil
	}
	if old.Name != m.Container {
		if err := ctrs.rename(ctx, m.OldID, m.Container); err != nil {
			return err
		}
	}
	if m.OldRunning && !old.running() {
		return ctrs.start(ctx, m.OldID)
	}
	return nil
}

// undo puts one member back as it was before its group began to commit.
func (m journalMember) undo() error {
	err := removeIfExists(m.Staged)
	switch {
	case m.Aside != "" && exists(m.Aside):
		if m.Kind == hq.KindDirectory {
			// The directory commit made in place of what was there must go first.
			err = errors.Join(err, removeIfExists(m.Path))
		}
		err = errors.Join(err, os.Rename(m.Aside, m.Path))
		// Renaming a hard link over the same file does nothing; the link must still go.
		err = errors.Join(err, removeIfExists(m.Aside))
	case !m.Existed:
		rerr := removeIfExists(m.Path)
		if m.Kind == hq.KindDirectory && (errors.Is(rerr, syscall.ENOTEMPTY) || errors.Is(rerr, syscall.EEXIST)) {
			// Something else put files in it since; they are not hostd's to delete.
			rerr = nil
		}
		err = errors.Join(err, rerr)
	case m.WasDir && m.Kind == hq.KindDirectory:
		err = errors.Join(err, os.Chmod(m.Path, fileMode(m.Mode)))
	case m.WasDir:
		// A file or link replaced an empty directory: make the directory again.
		if fi, lerr := os.Lstat(m.Path); lerr == nil && !fi.IsDir() {
			err = errors.Join(err, os.Remove(m.Path))
		}
		if merr := os.Mkdir(m.Path, 0o700); merr != nil && !errors.Is(merr, fs.ErrExist) {
			err = errors.Join(err, merr)
		} else {
			err = errors.Join(err, os.Chmod(m.Path, fileMode(m.Mode)))
		}
	}
	return err
}

func removeIfExists(name string) error {
	if name == "" {
		return nil
	}
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}
