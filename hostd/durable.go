package hostd

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Durability. What hostd writes under the root is made durable in two batches instead of two
// fsyncs a file, with the same guarantees:
//
//  1. A staged file's data is durable before it is renamed to its name, so a crash never
//     leaves a name pointing at a file that is empty or half written. Consecutive files are
//     staged together and made durable together (syncStaged), then renamed one after another.
//  2. A rename, link, removal or new directory is durable before anything claims it: before
//     the ledger is saved (it must name nothing a crash could take back), before a group's
//     journal is removed, and before a reconcile's results are returned to be reported. Each
//     such change notes its directory (Engine.touched); Engine.durable syncs them all.

// syncEachMax is the most files (or directories) made durable by one fsync each; more are made
// durable by one syncfs(2) for each filesystem that holds them. An fsync waits for what hostd
// wrote; a syncfs also writes back, and waits for, whatever every other process left dirty on
// the filesystem (a database's pages, a copy in progress): a cost hostd would impose on the
// workload at every change, with no bound hostd controls. So a change of a few files keeps its
// fsyncs, where a syncfs saves little, and a large one (a first apply, a rollout of many files)
// pays one syncfs where it would pay an fsync a file.
const syncEachMax = 16

// syncPaths makes the named files or directories durable; tests replace it to make it fail.
var syncPaths = syncPathsOS

// syncPathsOS fsyncs each of names when there are at most syncEachMax of them, else syncs each
// filesystem that holds them, found through their directories (a file is on its directory's
// filesystem), through w's directory of that filesystem when it has one. A path that is gone is
// skipped: a directory hostd made and removed again in an undo leaves nothing to sync but its
// parent's entry, noted with it; a staged file that is gone fails its rename.
func syncPathsOS(names []string, w *fsWatch) error {
	if len(names) <= syncEachMax {
		var errs []error
		for _, n := range names {
			if err := fsyncPath(n); !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	devs := map[uint64]string{}
	seen := map[string]bool{}
	for _, n := range names {
		dir := filepath.Dir(n)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		var st syscall.Stat_t
		if err := syscall.Stat(dir, &st); errors.Is(err, syscall.ENOENT) {
			continue
		} else if err != nil {
			return &os.PathError{Op: "stat", Path: dir, Err: err}
		}
		if _, ok := devs[st.Dev]; !ok {
			devs[st.Dev] = dir
		}
	}
	var errs []error
	for dev, dir := range devs {
		if f := w.dir(dev); f != nil {
			errs = append(errs, syncfsOf(f))
			continue
		}
		f, err := os.Open(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, syncfsOf(f))
		f.Close()
	}
	return errors.Join(errs...)
}

// fsyncPath fsyncs a file or directory by name (never through a symlink's target: hostd stages
// and syncs only regular files and directories).
func fsyncPath(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncfsOf syncs the filesystem that holds f. It reports a writeback error on that filesystem
// since f was opened (from Linux 5.8; before, syncfs cannot fail).
func syncfsOf(f *os.File) error {
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return &os.PathError{Op: "syncfs", Path: f.Name(), Err: err}
	}
	return nil
}

// fsWatch holds, for each filesystem files were staged on, a directory opened before the first
// of them was written. syncfs reports a writeback error only to a descriptor opened before the
// error; one opened at the sync could miss a failed write of a staged file (fsync, which reopens
// a file by name, does not: an error no one has been told of is reported to a new descriptor).
type fsWatch struct {
	devOf map[string]uint64
	dirs  map[uint64]*os.File
}

// watch opens dir, unless a directory of its filesystem is open already.
func (w *fsWatch) watch(dir string) error {
	if _, ok := w.devOf[dir]; ok {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	dev := fi.Sys().(*syscall.Stat_t).Dev
	if w.devOf == nil {
		w.devOf, w.dirs = map[string]uint64{}, map[uint64]*os.File{}
	}
	w.devOf[dir] = dev
	if w.dirs[dev] != nil {
		f.Close()
		return nil
	}
	w.dirs[dev] = f
	return nil
}

// dir is the directory open on filesystem dev, or nil.
func (w *fsWatch) dir(dev uint64) *os.File {
	if w == nil {
		return nil
	}
	return w.dirs[dev]
}

// close closes every directory open; the next file staged opens its own.
func (w *fsWatch) close() {
	for _, f := range w.dirs {
		f.Close()
	}
	w.devOf, w.dirs = nil, nil
}

// syncStaged makes the data of every file staged by ops durable, together, before any of them
// is renamed into place.
func (e *Engine) syncStaged(ops []*op) error {
	var names []string
	for _, o := range ops {
		if o != nil && o.stagedUnsynced {
			names = append(names, o.staged)
		}
	}
	if len(names) == 0 {
		return nil
	}
	if err := syncPaths(names, &e.watch); err != nil {
		return err
	}
	for _, o := range ops {
		if o != nil {
			o.stagedUnsynced = false
		}
	}
	return nil
}

// touched notes directories whose entries (a rename, a link, a removal, a new directory) or
// own mode changed, for durable.
func (e *Engine) touched(dirs ...string) {
	if e.unsynced == nil {
		e.unsynced = map[string]bool{}
	}
	for _, d := range dirs {
		e.unsynced[d] = true
	}
}

// touchedPath notes the change of abs, in its directory, and the directories made for it
// (made, outermost first, as mkdirs returns them), each in its parent.
func (e *Engine) touchedPath(abs string, made []string) {
	e.touched(filepath.Dir(abs))
	for _, d := range made {
		e.touched(filepath.Dir(d))
	}
}

// durable makes every change noted by touched durable. A failure is kept for the reconcile's
// end (see reconcileRun.notDurable) and the noted directories are dropped: a second sync
// after a writeback error cannot tell whether the data reached the disk.
func (e *Engine) durable() error {
	if len(e.unsynced) == 0 {
		return nil
	}
	dirs := make([]string, 0, len(e.unsynced))
	for d := range e.unsynced {
		dirs = append(dirs, d)
	}
	clear(e.unsynced)
	err := syncPaths(dirs, &e.watch)
	if err != nil && e.syncFailed == nil {
		e.syncFailed = err
	}
	return err
}
