package hostd

import (
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/meshhq/hq"
)

// litterName matches the names tempName gives a staged file or link (new) and a kept original
// (undo), and nothing else: a crash can leave them beside their targets when no journal names
// them, before a group's journal is written or after it is removed, or outside a group.
// Compiled at its first use, not at every start of hostd: a name that could be litter is rare.
var litterName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\.hostd-(new|undo)-[0-9a-f]{12}-.+$`)
})

// removeLitter removes what a crash left of hostd's staging beside the paths it manages (the
// ledger's) or was about to (the kept declaration's). It looks only in their directories, and
// only at names litterName matches; it runs after the journal is recovered, which needs the
// kept originals it names. Nothing here is worth refusing to start for: errors are logged.
func removeLitter(root, stateDir string, l *Ledger, log *slog.Logger) {
	var paths []string
	for _, en := range l.Resources {
		if en.Path != "" {
			paths = append(paths, en.Path)
		}
	}
	var d hq.Declaration
	if _, err := readJSON(filepath.Join(stateDir, declarationFile), &d); err != nil {
		log.Warn("reading the kept declaration for staging litter", "err", err)
	}
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			if r.Path != "" {
				paths = append(paths, r.Path)
			}
		}
	}
	// Per directory, not per path: a converged node has far fewer of them, and every one is
	// resolved and listed at every start.
	specDirs := map[string]bool{}
	for _, p := range paths {
		specDirs[path.Dir(p)] = true
	}
	removeLitterInDirs(root, specDirs, log)
}

// removeNewLitter removes the staging litter beside the paths of d that the ledger does not
// name (removeLitter looked beside the others), for hostd apply: a crash before an apply saved
// its ledger can leave a batch of staged files (see commitBatch) beside paths that only the
// operator's file names, and the next apply stages under new names.
func (e *Engine) removeNewLitter(d *hq.Declaration) {
	var specDirs map[string]bool
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			if r.Path == "" {
				continue
			}
			if en := e.ledger.Resources[hq.Ref(m.Name, r.Name)]; en != nil && en.Path == r.Path {
				continue
			}
			if specDirs == nil {
				specDirs = map[string]bool{}
			}
			specDirs[path.Dir(r.Path)] = true
		}
	}
	removeLitterInDirs(e.cfg.Root, specDirs, e.log)
}

// removeLitterInDirs removes the staging litter in the directories specDirs names (spec paths),
// those that resolve inside the root.
func removeLitterInDirs(root string, specDirs map[string]bool, log *slog.Logger) {
	if len(specDirs) == 0 {
		return
	}
	conf := newConfiner(root)
	for _, dir := range slices.Sorted(maps.Keys(specDirs)) {
		abs := filepath.Clean(root)
		if dir != "/" {
			var err error
			if abs, err = under(root, dir); err != nil {
				continue // never applied either: nothing of it was staged
			}
		}
		if conf.check(filepath.Join(abs, "x"), true) != nil {
			continue
		}
		removeLitterIn(abs, log)
	}
}

func removeLitterIn(dir string, log *slog.Logger) {
	es, err := readDirNames(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("looking for staging litter", "dir", dir, "err", err)
		}
		return
	}
	for _, n := range es {
		if !strings.HasPrefix(n, ".hostd-") || !litterName().MatchString(n) {
			continue
		}
		name := filepath.Join(dir, n)
		if fi, err := os.Lstat(name); err != nil || fi.IsDir() {
			continue
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Warn("removing staging litter", "path", name, "err", err)
			continue
		}
		log.Info("removed a file left by an interrupted change", "path", name)
	}
}

// readDirNames lists dir's names, unsorted: cheaper than os.ReadDir for a directory of many
// files, of which at most a few are litter.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
