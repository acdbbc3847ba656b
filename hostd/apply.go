package hostd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/paths"
)

// ApplyConfig is what hostd apply needs: the root and state dir of the daemon, and the file.
type ApplyConfig struct {
	Root     string
	StateDir string
	// File holds a declaration (hq.Declaration, as the controller sends it) or a module
	// ({"resources":[…]}, as PUT /modules takes it).
	File string
	// Module names the module of a bare module file; empty: the file's name without its
	// extension (web.json is module web).
	Module string
	// Take declares a bare module file's module taken: it may change what it finds on the
	// machine. A declaration's modules say for themselves.
	Take   bool
	Logger *slog.Logger
	// Node names the node on the containers it creates, as hostd run does (HOSTD_NODE); empty:
	// the host's name.
	Node string
	// ContainerCLI and ContainerNetworkPrefix are as in EngineConfig.
	ContainerCLI, ContainerNetworkPrefix string
}

// Applied is what one hostd apply did.
type Applied struct {
	LocalOutcome
	// Line is the report line, as the daemon logs it.
	Line string
}

// Changed reports whether the apply changed the machine: a resource changed, or one that is
// no longer declared was removed.
func (a Applied) Changed() bool {
	if len(a.Removed) > 0 {
		return true
	}
	for _, r := range a.Results {
		if r.Changed {
			return true
		}
	}
	return false
}

// Failed reports whether anything failed: a resource, or the removal of one no longer declared.
func (a Applied) Failed() bool {
	if len(a.NotRemoved) > 0 {
		return true
	}
	for _, r := range a.Results {
		if r.Outcome == hq.StateFailed {
			return true
		}
	}
	return false
}

// ExitCode is Puppet's detailed exit code: 0 nothing changed, 2 changed, 4 failed, 6 both.
func (a Applied) ExitCode() int {
	code := 0
	if a.Changed() {
		code |= 2
	}
	if a.Failed() {
		code |= 4
	}
	return code
}

// Apply reconciles the machine once, without a controller, from the operator's own file: the
// same engine, ledger, journal and services as hostd run, under the state dir's lock, so it
// refuses to run beside a hostd run on the same state dir. The file is trusted (no signature,
// no fence), and the applied generation is not moved: see Engine.ReconcileLocal.
func Apply(ctx context.Context, cfg ApplyConfig) (Applied, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.Root == "" || !filepath.IsAbs(cfg.Root):
		return Applied{}, fmt.Errorf("HOSTD_ROOT must be an absolute path, not %q", cfg.Root)
	case cfg.StateDir == "" || !filepath.IsAbs(cfg.StateDir):
		return Applied{}, fmt.Errorf("HOSTD_STATE_DIR must be an absolute path, not %q", cfg.StateDir)
	}
	lock, err := lockStateDir(cfg.StateDir)
	if err != nil {
		return Applied{}, err
	}
	defer lock.release()
	// The file is read and checked while the engine opens (the ledger's decode is the larger
	// part of a one-shot no-op): two cores halve the wait. The goroutine is this call's and
	// ends before it returns; nothing of the machine is changed until both are done.
	type loaded struct {
		d   *hq.Declaration
		err error
	}
	file := make(chan loaded, 1)
	go func() {
		d, err := LoadApplyFile(cfg.File, cfg.Module, cfg.Take)
		file <- loaded{d, err}
	}()
	if cfg.Node == "" {
		cfg.Node, _ = os.Hostname()
	}
	eng, err := NewEngine(EngineConfig{Root: cfg.Root, StateDir: cfg.StateDir, Logger: cfg.Logger, Masterless: true,
		Node: cfg.Node, ContainerCLI: cfg.ContainerCLI, ContainerNetworkPrefix: cfg.ContainerNetworkPrefix})
	f := <-file
	if err != nil {
		return Applied{}, err
	}
	defer eng.Close()
	if f.err != nil {
		return Applied{}, f.err
	}
	d := f.d
	out := eng.ReconcileLocal(ctx, d)
	line := hq.TallyResults(out.Results, d.ResourceCount(), func(string) bool { return false }).Line()
	return Applied{LocalOutcome: out, Line: line}, nil
}

// applyFile is either shape hostd apply takes: a declaration's fields, or a module's resources.
type applyFile struct {
	hq.Declaration
	Resources []hq.Resource `json:"resources"`
}

// LoadApplyFile reads and checks the file of hostd apply, and returns it as a declaration: a
// bare module file becomes a declaration of that one module, named module (or after the file)
// and taken when take is set. Every module is checked as PUT /modules checks it, and the
// modules' paths together as an assignment checks them.
func LoadApplyFile(name, module string, take bool) (*hq.Declaration, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	// Decoded as PUT /modules decodes a module: unknown fields, duplicate names and trailing
	// data are refused.
	var f applyFile
	if err := jsonv2.Unmarshal(b, &f, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d := &f.Declaration
	switch {
	case f.Resources != nil && d.Modules != nil:
		return nil, fmt.Errorf("%s: has both modules (a declaration) and resources (a module file)", name)
	case f.Resources != nil:
		if d.Node != "" || d.Generation != 0 || d.Digest != "" || d.Signature != "" || d.SendID != 0 || d.ComposedBy != "" || !d.ComposedAt.IsZero() || d.Retry != nil {
			return nil, fmt.Errorf("%s: a module file has only resources", name)
		}
		if module == "" {
			module = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
			if !hq.ValidName(module) {
				return nil, fmt.Errorf("%s: the file's name %q is not a module name: name the module with --module", name, module)
			}
		}
		if !hq.ValidName(module) {
			return nil, fmt.Errorf("invalid module name %q: use letters, digits, '.', '_' or '-', at most %d, starting with a letter or digit", module, hq.MaxNameLen)
		}
		d.Modules = []hq.DeclaredModule{{Name: module, Revision: 1, Taken: take, Resources: f.Resources}}
	case d.Modules != nil:
		if module != "" || take {
			return nil, fmt.Errorf("%s: a declaration names its modules and says which are taken: --module and --take are for a module file", name)
		}
	default:
		return nil, fmt.Errorf("%s: neither a declaration (modules) nor a module file (resources)", name)
	}
	if err := checkModules(d.Modules); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

// checkModules checks every module as an upload is checked, and their paths together.
func checkModules(mods []hq.DeclaredModule) error {
	var problems []string
	seen := map[string]bool{}
	type at struct{ module, resource string }
	var claims []paths.Claim
	var owners []at
	for i, m := range mods {
		switch {
		case !hq.ValidName(m.Name):
			problems = append(problems, fmt.Sprintf("modules[%d].name: %q is not a valid name", i, m.Name))
			continue
		case seen[m.Name]:
			problems = append(problems, fmt.Sprintf("modules[%d].name: module %s is declared twice", i, m.Name))
			continue
		}
		seen[m.Name] = true
		if err := hq.ValidateModule(m.Resources); err != nil {
			var e *hq.Error
			if !errors.As(err, &e) || len(e.Details) == 0 {
				problems = append(problems, fmt.Sprintf("module %s: %v", m.Name, err))
				continue
			}
			for _, fe := range e.Details {
				problems = append(problems, fmt.Sprintf("module %s: %s: %s", m.Name, fe.Field, fe.Message))
			}
			continue
		}
		for _, r := range m.Resources {
			if r.Path != "" {
				claims = append(claims, r.PathClaim(len(owners), true))
				owners = append(owners, at{m.Name, r.Name})
			}
		}
	}
	for _, o := range paths.Overlaps(claims) {
		ref := func(c paths.Claim) string { return hq.Ref(owners[c.ID].module, owners[c.ID].resource) }
		problems = append(problems, o.Describe(ref(o.Outer), ref(o.Inner)))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s):\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}
