package hostd

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/meshhq/hq"
)

// removeUndeclared takes away what the ledger names and the declaration no longer does:
// services first (they may hold the files), then paths deepest first so a directory is
// emptied before hostd tries to remove it. A member dropped from a group its module still
// declares is left until that group applies (see groupApply.done): a group that does not apply
// leaves every member as it was.
func (rc *reconcileRun) removeUndeclared(ctx context.Context) {
	// A process hostd supervises is hostd's even if the ledger missed it.
	for _, ref := range rc.e.sup.refs() {
		if !rc.declared[ref] && rc.e.ledger.Resources[ref] == nil && rc.inScope(ref) {
			rc.e.sup.stop(ref)
			rc.e.log.Info("stopped a service no longer declared", "resource", ref)
		}
	}
	var gone []string
	for ref := range rc.e.ledger.Resources {
		if !rc.declared[ref] && rc.inScope(ref) {
			gone = append(gone, ref)
		}
	}
	if len(gone) == 0 {
		return
	}
	groups := rc.declaredGroups()
	res := rc.e.ledger.Resources
	slices.SortFunc(gone, func(a, b string) int {
		sa, sb := res[a].Kind == hq.KindService, res[b].Kind == hq.KindService
		if sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		return cmp.Or(
			cmp.Compare(strings.Count(res[b].Path, "/"), strings.Count(res[a].Path, "/")),
			cmp.Compare(a, b))
	})
	for _, ref := range gone {
		en := res[ref]
		if en.Path != "" && rc.refByPath[en.Path] != "" {
			// Another declared resource names this path now: it takes over what is there, if it
			// was hostd's (see Entry.Found).
			rc.inherited[en.Path] = !en.Found
			rc.e.deleteEntry(ref)
			continue
		}
		if en.Group != "" {
			module, _, _ := strings.Cut(ref, "/")
			if g := hq.Ref(module, en.Group); groups[g] {
				rc.dropped[g] = append(rc.dropped[g], ref)
				continue
			}
		}
		rc.removeGone(ctx, ref)
	}
}

// inScope reports whether ref belongs to a module this reconcile may remove resources of.
func (rc *reconcileRun) inScope(ref string) bool {
	if rc.scope == nil {
		return true
	}
	module, _, _ := strings.Cut(ref, "/")
	return rc.scope[module]
}

// declaredGroups returns every group the declaration names, as module/group.
func (rc *reconcileRun) declaredGroups() map[string]bool {
	gs := map[string]bool{}
	for _, m := range rc.d.Modules {
		for _, r := range m.Resources {
			if r.Group != "" {
				gs[hq.Ref(m.Name, r.Group)] = true
			}
		}
	}
	return gs
}

// removeGone removes ref, which the declaration no longer names, and forgets it; on failure it
// stays in the ledger and is tried again at the next reconcile.
func (rc *reconcileRun) removeGone(ctx context.Context, ref string) {
	en := rc.e.ledger.Resources[ref]
	if en == nil {
		return
	}
	if err := rc.e.removeEntry(ctx, ref, en); err != nil {
		rc.e.log.Error("removing a resource no longer declared; will retry", "resource", ref, "path", en.Path, "err", err)
		rc.notRemoved = append(rc.notRemoved, ref)
		return
	}
	rc.removed = append(rc.removed, ref)
	if en.Found {
		rc.e.log.Info("forgot a resource no longer declared, leaving what hostd found there", "resource", ref, "kind", en.Kind, "path", en.Path)
	} else {
		rc.e.log.Info("removed a resource no longer declared", "resource", ref, "kind", en.Kind, "path", en.Path)
	}
	rc.e.deleteEntry(ref)
}

// removeEntry undoes what a ledger entry says hostd made. A directory is removed only when
// empty: what else is in it is not hostd's to delete. What hostd only found is left.
func (e *Engine) removeEntry(ctx context.Context, ref string, en *Entry) error {
	if en.Found {
		return nil
	}
	switch en.Kind {
	case hq.KindService:
		e.sup.stop(ref)
		return nil
	case hq.KindPackage:
		return e.removePackage(ctx, en.Package)
	case hq.KindContainer, hq.KindJob:
		return e.removeContainer(ctx, ref)
	case hq.KindFile, hq.KindSymlink, hq.KindDirectory:
		abs, err := under(e.cfg.Root, en.Path)
		if err != nil {
			return err
		}
		if err := e.confiner.check(abs, false); err != nil {
			return err
		}
		if err := e.guardState(en.Path, abs, e.confiner.resolved(abs), true); err != nil {
			return err
		}
		err = os.Remove(abs)
		switch {
		case err == nil:
			e.touched(filepath.Dir(abs))
			return nil
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case en.Kind == hq.KindDirectory && (errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)):
			e.log.Info("leaving a no longer declared directory that is not empty", "resource", ref, "path", en.Path)
			return nil
		}
		return err
	}
	// Actions and absent paths leave nothing behind to remove.
	return nil
}
