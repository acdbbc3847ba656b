package hostd

import (
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/meshhq/hq"
)

// litterName matches the names tempName gives a staged file or link (new) and a kept original
// (undo), and nothing else: a crash can leave them beside their targets when no journal names
// them, before a group's journal is written or after it is removed, or outside a group.
var litterName = regexp.MustCompile(`^\.hostd-(new|undo)-[0-9a-f]{12}-.+$`)

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
	dirs := map[string]bool{}
	conf := newConfiner(root)
	for _, p := range paths {
		abs, err := under(root, p)
		if err != nil || conf.check(abs, true) != nil {
			continue // never applied either: nothing of it was staged
		}
		dirs[filepath.Dir(abs)] = true
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		removeLitterIn(dir, log)
	}
}

func removeLitterIn(dir string, log *slog.Logger) {
	es, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("looking for staging litter", "dir", dir, "err", err)
		}
		return
	}
	for _, e := range es {
		if e.IsDir() || !litterName.MatchString(e.Name()) {
			continue
		}
		name := filepath.Join(dir, e.Name())
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Warn("removing staging litter", "path", name, "err", err)
			continue
		}
		log.Info("removed a file left by an interrupted change", "path", name)
	}
}
