package hostd

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// containersDir is the directory of the state dir that holds a container's env file while it
// is created, and the key its env values are digested with.
const containersDir = "containers"

// envKeyFile holds the node's key for the digests of env values in a container's hq.decl label.
const envKeyFile = "env.key"

// envDigestPrefix marks an env value in a hq.decl label as a digest, not the value.
const envDigestPrefix = "hmac-sha256:"

// defaultNetworkPrefix starts the name of every module's network: hq-<module>.
const defaultNetworkPrefix = "hq-"

// moduleNetwork is the network of module's containers that leave network out.
func (e *Engine) moduleNetwork(module string) string {
	prefix := e.cfg.ContainerNetworkPrefix
	if prefix == "" {
		prefix = defaultNetworkPrefix
	}
	return prefix + module
}

// runArgs are the CLI's arguments for what a container runs with besides its image, volumes,
// ports and user: its network (the module's, where it answers to its resource's name, unless
// it asks for host or none), its env (from the file writeEnvFile made for name), its bounds
// and its restart policy.
func (e *Engine) runArgs(o *op, name string) []string {
	d := o.decl
	var args []string
	if d.Network != "" {
		args = append(args, "--network", d.Network)
	} else {
		args = append(args, "--network", e.moduleNetwork(o.module), "--network-alias", d.Name)
	}
	if len(d.Env) > 0 {
		args = append(args, "--env-file", e.envFile(name))
	}
	if d.Cpus != "" {
		args = append(args, "--cpus", d.Cpus)
	}
	if d.Memory != "" {
		args = append(args, "--memory", d.Memory)
	}
	if d.LogMaxSize != "" {
		args = append(args, "--log-opt", "max-size="+d.LogMaxSize)
	}
	if d.Restart != "" {
		args = append(args, "--restart", d.Restart)
	}
	return args
}

// ensureNetwork makes the network of o's module when o's container joins it and it is not
// known to exist in this reconcile: a reconcile that creates no container asks nothing.
func (e *Engine) ensureNetwork(ctx context.Context, o *op) error {
	if o.decl.Network != "" {
		return nil
	}
	name := e.moduleNetwork(o.module)
	if e.ctrs.networks[name] {
		return nil
	}
	_, err := e.ctrs.cli.run(ctx, time.Minute, "network", "create",
		"--label", labelNode+"="+e.cfg.Node, "--label", labelModule+"="+o.module, name)
	if err != nil && !strings.Contains(strings.ToLower(err.Error()), "already exists") {
		return fmt.Errorf("making the network %s of module %s: %w", name, o.module, err)
	}
	if e.ctrs.networks == nil {
		e.ctrs.networks = map[string]bool{}
	}
	e.ctrs.networks[name] = true
	return nil
}

// removeUnusedNetworks removes the network of every module a container was removed from in
// this reconcile when no container or job the declaration keeps joins it any more. A network
// still in use by something else is left, and tried again at the next removal.
func (rc *reconcileRun) removeUnusedNetworks(ctx context.Context) {
	e := rc.e
	if len(e.ctrs.left) == 0 {
		return
	}
	inUse := map[string]bool{}
	for _, m := range rc.d.Modules {
		for _, r := range m.Resources {
			if (r.Kind == hq.KindContainer || r.Kind == hq.KindJob) && r.Network == "" {
				inUse[m.Name] = true
			}
		}
	}
	for module := range e.ctrs.left {
		if inUse[module] {
			continue
		}
		name := e.moduleNetwork(module)
		_, err := e.ctrs.cli.run(ctx, time.Minute, "network", "rm", name)
		switch {
		case err == nil:
			e.log.Info("removed the network of a module with no containers left", "module", module, "network", name)
		case strings.Contains(strings.ToLower(err.Error()), "not found"), strings.Contains(strings.ToLower(err.Error()), "no such network"):
		default:
			e.log.Warn("removing the network of a module with no containers left; the next removal tries again", "network", name, "err", err)
		}
		delete(e.ctrs.networks, name)
	}
}

// envFile is where the env of the container called name is written while it is created.
func (e *Engine) envFile(name string) string {
	return filepath.Join(e.cfg.StateDir, containersDir, name+".env")
}

// writeEnvFile writes o's env, a variable a line, to envFile(name), readable by hostd alone;
// the CLI reads it when it creates the container, so that no value is on a command line. It
// returns the file's path, or "" when there is no env.
func (e *Engine) writeEnvFile(o *op, name string) (string, error) {
	env := o.decl.Env
	if len(env) == 0 {
		return "", nil
	}
	var b strings.Builder
	for _, k := range sortedKeys(env) {
		// The controller refuses these at upload; a value rendered from a template is checked here.
		if p := hq.EnvValueProblem(env[k]); p != "" {
			return "", fmt.Errorf("env %s: %s", k, p)
		}
		b.WriteString(k + "=" + env[k] + "\n")
	}
	if err := os.MkdirAll(filepath.Join(e.cfg.StateDir, containersDir), 0o700); err != nil {
		return "", err
	}
	path := e.envFile(name)
	return path, writeFileAtomic(path, []byte(b.String()), 0o600)
}

// removeEnvFiles removes what a create that hostd did not see end may have left of the env
// files of the container called name.
func (e *Engine) removeEnvFiles(name string) {
	for _, n := range []string{name, name + ".next"} {
		os.Remove(e.envFile(n))
	}
}

// declLabel is the hq.decl label of d: the resource as declared, each env value replaced by
// its digest, keyed with this node's key, so that a recreate can say the env changed while no
// value is in a label, where podman inspect and ps show it to anyone who may run them.
func (e *Engine) declLabel(d hq.Resource) (string, error) {
	d, err := e.digestEnv(d)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(d)
	return string(b), err
}

// digestEnv returns d with every env value that is not a digest yet replaced by its digest: a
// label written before values were digested is compared with a new one as if it had been.
func (e *Engine) digestEnv(d hq.Resource) (hq.Resource, error) {
	if len(d.Env) == 0 {
		return d, nil
	}
	key, err := e.envKey()
	if err != nil {
		return d, err
	}
	env := make(map[string]string, len(d.Env))
	for k, v := range d.Env {
		if !strings.HasPrefix(v, envDigestPrefix) {
			mac := hmac.New(sha256.New, key)
			mac.Write([]byte(k + "=" + v))
			v = envDigestPrefix + hex.EncodeToString(mac.Sum(nil))
		}
		env[k] = v
	}
	d.Env = env
	return d, nil
}

// envKey returns the node's key for env digests, made at its first use. Keyed, a digest tells
// nothing of a value that could be guessed; a key lost with the state dir only makes the next
// recreate say "env changed" for nothing.
func (e *Engine) envKey() ([]byte, error) {
	if e.ctrs.envKey != nil {
		return e.ctrs.envKey, nil
	}
	path := filepath.Join(e.cfg.StateDir, containersDir, envKeyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(key) != 32 {
		key = make([]byte, 32)
		rand.Read(key)
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			err = writeFileAtomic(path, key, 0o600)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the key of env digests: %w", err)
	}
	e.ctrs.envKey = key
	return key, nil
}
