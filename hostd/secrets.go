package hostd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/client/node"
	"github.com/meshhq/hq/seal"
	"github.com/meshhq/hq/tmpl"
)

// secretsKeyFile is the node's own age key in the state dir, made at the first start: what
// the controller seals this node's secrets to, and what alone opens them.
const secretsKeyFile = "secrets.key"

// holdNoSecretsKey is why a resource that uses a secret is held when its declaration carries
// no value for it: the controller seals to a registered key, and sends nothing in the clear.
const holdNoSecretsKey = "no secrets key registered: the controller has no key of this node to seal its secrets to"

// errNotSealed says the declaration carries no sealed value for a secret a resource pins.
var errNotSealed = errors.New("not sealed")

// loadSecretsKey reads the node's key, making it (mode 0600) at the first start.
func loadSecretsKey(stateDir string) (*seal.Key, error) {
	k, err := seal.LoadOrCreate(filepath.Join(stateDir, secretsKeyFile))
	if err != nil {
		return nil, fmt.Errorf("the node's secrets key: %w", err)
	}
	return k, nil
}

// registerSecretsKey gives the controller the public half of the node's key, trying again
// until it takes it: until then, what uses a secret is held.
func registerSecretsKey(ctx context.Context, c *node.Client, key *seal.Key, every time.Duration, log *slog.Logger) {
	// As every call to the controller: a refusal of TLS is logged once by the client's watch,
	// an overload once an episode, anything else at each attempt.
	retry := newRetrier(min(time.Second, every), max(every, time.Second))
	busy := overload{what: "registering the secrets key"}
	for {
		err := c.PutSecretsKey(ctx, key.Public())
		if err == nil {
			log.Info("secrets key registered", "key", key.Public())
			return
		}
		if ctx.Err() != nil || !retry.backOff(ctx, log, &busy, "registering the secrets key; trying again", err) {
			return
		}
	}
}

// openSecrets opens, with the node's key, each secret r pins from the values sealed to it in
// the declaration: name → value, in memory only. errNotSealed when one is not there.
func (rc *reconcileRun) openSecrets(r hq.Resource) (map[string]string, error) {
	out := make(map[string]string, len(r.SecretPins))
	for _, n := range slices.Sorted(maps.Keys(r.SecretPins)) {
		ref := hq.SecretRef(n, r.SecretPins[n])
		if v, ok := rc.opened[ref]; ok {
			out[n] = v
			continue
		}
		sealed, ok := rc.d.Secrets[ref]
		if !ok || rc.e.secretsKey == nil {
			return nil, errNotSealed
		}
		v, err := rc.e.secretsKey.Open(sealed)
		if err != nil {
			return nil, fmt.Errorf("secret %s v%d does not open with this node's key: %w", n, r.SecretPins[n], err)
		}
		if rc.opened == nil {
			rc.opened = map[string]string{}
		}
		rc.opened[ref] = string(v)
		out[n] = string(v)
	}
	return out, nil
}

// usesSecretContent says the file's content puts secrets in: it is rendered here, and its
// content never shown.
func (o *op) usesSecretContent() bool {
	return o.decl.Kind == hq.KindFile && len(o.decl.SecretPins) > 0 && tmpl.Is(o.decl.Content)
}

// content is what o's file holds: its declared content, with its secrets filled in when it
// uses them. An error names a key, never a value.
func (o *op) content() ([]byte, error) {
	if !o.usesSecretContent() {
		return fileContent(o.decl)
	}
	byKey := make(map[string]string, len(o.secrets))
	for n, v := range o.secrets {
		byKey[hq.SecretKey(n)] = v
	}
	s, err := tmpl.RenderSecrets(o.decl.Content, byKey)
	if err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return []byte(s), nil
}

// podmanSecret is the name in the container engine's secret store of secret name at version,
// for the container called ctr: one per container and version, so a recreate makes its own.
func podmanSecret(ctr, name string, version int64) string {
	return fmt.Sprintf("%s.%s.v%d", strings.TrimSuffix(ctr, ".next"), hq.SecretKey(name), version)
}

// secretArgs puts o's secrets in the engine's secret store, each value written to the
// engine's stdin, and returns the arguments that give them to the container: a mounted file,
// or a variable. No value is on a command line, in a label or in hostd's state dir.
func (e *Engine) secretArgs(ctx context.Context, o *op, ctr string) ([]string, error) {
	var args []string
	made := map[string]bool{}
	make1 := func(name string) (string, error) {
		v, ok := o.secrets[name]
		if !ok {
			return "", fmt.Errorf("secret %s is not pinned by the resource", name)
		}
		ps := podmanSecret(ctr, name, o.decl.SecretPins[name])
		if made[ps] {
			return ps, nil
		}
		made[ps] = true
		return ps, e.ctrs.cli.putSecret(ctx, ps, v, e.cfg.CommandTimeout)
	}
	for _, f := range o.decl.Secrets {
		ps, err := make1(f.Name)
		if err != nil {
			return nil, err
		}
		mode := f.Mode
		if mode == "" {
			mode = "0400"
		}
		args = append(args, "--secret", ps+",type=mount,target="+f.Target+",mode="+mode)
	}
	for _, k := range sortedKeys(o.decl.SecretEnv) {
		ps, err := make1(o.decl.SecretEnv[k])
		if err != nil {
			return nil, err
		}
		args = append(args, "--secret", ps+",type=env,target="+k)
	}
	return args, nil
}

// putSecret stores value under name in the engine's secret store, replacing what a create
// that did not end left there. The value goes through stdin.
func (c containerCLI) putSecret(ctx context.Context, name, value string, timeout time.Duration) error {
	c.exec(ctx, timeout, &bytes.Buffer{}, &tailBuffer{max: maxCaptured}, []string{"secret", "rm", name})
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path, "secret", "create", name, "-")
	cmd.Stdin = strings.NewReader(value)
	errOut := &tailBuffer{max: maxCaptured}
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, errOut
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return cliError(c.path, []string{"secret", "create", name}, err, errOut.b)
	}
	return nil
}

// secretsUsed are the names in the engine's secret store that the container ctr of resource r
// uses.
func secretsUsed(ctr string, r *hq.Resource) map[string]bool {
	keep := map[string]bool{}
	if r == nil {
		return keep
	}
	for _, f := range r.Secrets {
		keep[podmanSecret(ctr, f.Name, r.SecretPins[f.Name])] = true
	}
	for _, n := range r.SecretEnv {
		keep[podmanSecret(ctr, n, r.SecretPins[n])] = true
	}
	return keep
}

// ofContainer says whether name in the engine's secret store is one podmanSecret made for
// the container ctr: ctr, a secret's key (no dot in it), and a version.
func ofContainer(name, ctr string) bool {
	rest, ok := strings.CutPrefix(name, ctr+".")
	if !ok {
		return false
	}
	key, v, ok := strings.Cut(rest, ".v")
	if !ok || key == "" || strings.Contains(key, ".") || v == "" {
		return false
	}
	return strings.Trim(v, "0123456789") == ""
}

// pruneSecrets removes from the engine's secret store what hostd made for the container ctr
// and keep does not name: the versions a recreate or an undo left behind, or all of them once
// the container is gone. What it cannot remove now is logged, and the next change tries again.
func (e *Engine) pruneSecrets(ctx context.Context, ctr string, keep map[string]bool) {
	out, err := e.ctrs.cli.run(ctx, e.cfg.CommandTimeout, "secret", "ls", "--format", "{{.Name}}")
	if err != nil {
		e.log.Warn("listing the container engine's secrets", "container", ctr, "err", err)
		return
	}
	for name := range strings.FieldsSeq(string(out)) {
		if !ofContainer(name, ctr) || keep[name] {
			continue
		}
		if _, err := e.ctrs.cli.run(ctx, e.cfg.CommandTimeout, "secret", "rm", name); err != nil {
			e.log.Warn("removing a secret no container uses", "secret", name, "err", err)
		}
	}
}
