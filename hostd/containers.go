package hostd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/meshhq/hq"
)

// containerCLI runs the container engine's command line: podman by default, or another CLI
// that speaks Docker's commands (HOSTD_CONTAINER_CLI). hostd talks to it only through its
// commands and their JSON, so it needs no library of the engine's, and the containers it
// starts are the engine's children, not hostd's: they outlive hostd and are found again by
// their labels. The CLI inherits hostd's environment (CONTAINERS_CONF and the like).
type containerCLI struct {
	path string
	// calls counts the CLI's runs, for tests.
	calls *atomic.Int64
}

// Labels hostd puts on every container it creates; it touches no container without them.
const (
	labelNode     = "hq.node"
	labelModule   = "hq.module"
	labelResource = "hq.resource"
	labelSpec     = "hq.spec"
	// labelDecl holds the resource as declared, so a recreate can say what changed.
	labelDecl = "hq.decl"
)

// container is one container as the CLI lists it.
type container struct {
	ID       string
	Name     string
	State    string // created, running, exited, paused, …
	ExitCode int
	// PID is its main process, when it runs and the CLI says (podman does, Docker's ps not).
	PID int
	// Image is the image it was created from, as it was named; ImageID is that image's id,
	// when the CLI lists it (podman does, Docker's ps not).
	Image   string
	ImageID string
	Labels  map[string]string
	// StartedAt is when its process last started, in unix seconds; 0 when it never started or
	// the CLI does not say (podman does, Docker's ps not).
	StartedAt int64
	// Restarts is the engine's count of its restarts by its restart policy, when the CLI
	// lists it (later podmans do).
	Restarts int64
}

func (c container) running() bool { return c.State == "running" }

// run runs the CLI with args and returns its standard output; a failure carries the end of
// what it wrote to standard error.
func (c containerCLI) run(ctx context.Context, timeout time.Duration, args ...string) ([]byte, error) {
	var out bytes.Buffer
	errOut := &tailBuffer{max: maxCaptured}
	err := c.exec(ctx, timeout, &out, errOut, args)
	return out.Bytes(), err
}

// runCombined runs the CLI with args for what it prints, not what it answers (a job's run):
// a failure carries the end of its standard output and error together, in the order written.
func (c containerCLI) runCombined(ctx context.Context, timeout time.Duration, args ...string) error {
	out := &tailBuffer{max: maxCaptured}
	return c.exec(ctx, timeout, out, out, args)
}

func (c containerCLI) exec(ctx context.Context, timeout time.Duration, stdout io.Writer, stderr *tailBuffer, args []string) error {
	c.calls.Add(1)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return cliError(c.path, args, err, stderr.b)
	}
	return nil
}

// cliError names the command (its verb and first operand) and keeps the end of what it said.
func cliError(path string, args []string, err error, said []byte) error {
	what := path
	if len(args) > 0 {
		what += " " + args[0]
	}
	return fmt.Errorf("%s: %w", what, withOutput(err, said))
}

// list returns the containers labelled for node, in every state: one call, whatever their
// number, is all a reconcile that changes nothing asks of the engine.
func (c containerCLI) list(ctx context.Context, node string) (map[string]container, error) {
	out, err := c.run(ctx, time.Minute, "ps", "-a", "--filter", "label="+labelNode+"="+node, "--format", "json")
	if err != nil {
		return nil, err
	}
	cs, err := parseContainers(out)
	if err != nil {
		return nil, fmt.Errorf("%s ps: %w", c.path, err)
	}
	byName := make(map[string]container, len(cs))
	for _, ct := range cs {
		byName[ct.Name] = ct
	}
	return byName, nil
}

// all returns every container the engine has, whoever made it: what any of them was created
// from is an image in use.
func (c containerCLI) all(ctx context.Context) ([]container, error) {
	out, err := c.run(ctx, time.Minute, "ps", "-a", "--format", "json")
	if err != nil {
		return nil, err
	}
	cs, err := parseContainers(out)
	if err != nil {
		return nil, fmt.Errorf("%s ps: %w", c.path, err)
	}
	return cs, nil
}

// named returns the container called name, labelled or not: a name is the engine's to give
// once, and one hostd did not create holds the resource that would use it.
func (c containerCLI) named(ctx context.Context, name string) (container, bool, error) {
	return c.psOne(ctx, "name=^"+name+"$", func(ct container) bool { return ct.Name == name })
}

// byID returns the container whose id is id, whatever its name now.
func (c containerCLI) byID(ctx context.Context, id string) (container, bool, error) {
	return c.psOne(ctx, "id="+id, func(ct container) bool {
		return strings.HasPrefix(ct.ID, id) || strings.HasPrefix(id, ct.ID)
	})
}

// psOne lists the containers filter selects, in every state, and returns the first that is.
func (c containerCLI) psOne(ctx context.Context, filter string, is func(container) bool) (container, bool, error) {
	out, err := c.run(ctx, time.Minute, "ps", "-a", "--filter", filter, "--format", "json")
	if err != nil {
		return container{}, false, err
	}
	cs, err := parseContainers(out)
	if err != nil {
		return container{}, false, fmt.Errorf("%s ps: %w", c.path, err)
	}
	for _, ct := range cs {
		if is(ct) {
			return ct, true, nil
		}
	}
	return container{}, false, nil
}

// parseContainers reads the ps output of podman (one JSON array) or of Docker's CLI (one JSON
// object a line, with names and labels as comma-separated text).
func parseContainers(out []byte) ([]container, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, nil
	}
	if out[0] == '[' {
		var rows []struct {
			ID       string `json:"Id"`
			Names    []string
			State    string
			ExitCode int
			Pid      int
			Image    string
			ImageID  string
			Labels   map[string]string
			// StartedAt is unix seconds, and negative (Go's zero time) before a first start.
			StartedAt int64
			Restarts  int64
		}
		if err := json.Unmarshal(out, &rows); err != nil {
			return nil, err
		}
		cs := make([]container, 0, len(rows))
		for _, r := range rows {
			ct := container{ID: r.ID, State: r.State, ExitCode: r.ExitCode, PID: r.Pid, Image: r.Image, ImageID: r.ImageID, Labels: r.Labels,
				StartedAt: max(r.StartedAt, 0), Restarts: max(r.Restarts, 0)}
			if len(r.Names) > 0 {
				ct.Name = r.Names[0]
			}
			cs = append(cs, ct)
		}
		return cs, nil
	}
	var cs []container
	for line := range bytes.SplitSeq(out, []byte("\n")) {
		var r struct {
			ID, Names, State, Labels, Status, Image string
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, err
		}
		ct := container{ID: r.ID, Name: strings.Split(r.Names, ",")[0], State: r.State, Image: r.Image, Labels: map[string]string{}}
		for kv := range strings.SplitSeq(r.Labels, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				ct.Labels[k] = v
			}
		}
		fmt.Sscanf(r.Status, "Exited (%d)", &ct.ExitCode)
		cs = append(cs, ct)
	}
	return cs, nil
}

// ensureImage makes sure image (name@sha256:…) is in the engine's store, pulling it when it is
// not, and that the store holds it by that digest, and returns the image's id. A pull by digest
// is verified by the engine; the look after it makes sure that what the name found is that
// image, and not, say, one a transport of the CLI's read from a file.
func (c containerCLI) ensureImage(ctx context.Context, image string, timeout time.Duration) (string, error) {
	id, digests, err := c.imageDigests(ctx, image)
	if err != nil {
		if err := c.pull(ctx, image, timeout); err != nil {
			return "", err
		}
		if id, digests, err = c.imageDigests(ctx, image); err != nil {
			return "", err
		}
	}
	_, want, _ := strings.Cut(image, "@")
	if !slices.Contains(digests, want) {
		return "", fmt.Errorf("image %s: the engine holds it by digest %s, not the one pinned: refused", image, strings.Join(digests, ", "))
	}
	return id, nil
}

// imageDigests returns the engine's id of image and the digests it knows image by: its own
// and its repositories'.
func (c containerCLI) imageDigests(ctx context.Context, image string) (string, []string, error) {
	out, err := c.run(ctx, time.Minute, "image", "inspect", image)
	if err != nil {
		return "", nil, err
	}
	var rows []struct {
		ID          string `json:"Id"`
		Digest      string
		RepoDigests []string
	}
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) != 1 {
		return "", nil, fmt.Errorf("%s image inspect %s: not one image (%d): %v", c.path, image, len(rows), err)
	}
	ds := []string{}
	if rows[0].Digest != "" {
		ds = append(ds, rows[0].Digest)
	}
	for _, rd := range rows[0].RepoDigests {
		if _, d, ok := strings.Cut(rd, "@"); ok {
			ds = append(ds, d)
		}
	}
	return rows[0].ID, ds, nil
}

// pull fetches image by its digest, which the engine verifies.
func (c containerCLI) pull(ctx context.Context, image string, timeout time.Duration) error {
	_, err := c.run(ctx, timeout, "pull", "-q", image)
	return err
}

// bindSources are the host paths the container called name mounts.
func (c containerCLI) bindSources(ctx context.Context, name string) ([]string, error) {
	out, err := c.run(ctx, time.Minute, "container", "inspect", name)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Mounts []struct{ Type, Source string }
	}
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) != 1 {
		return nil, fmt.Errorf("%s container inspect %s: not one container (%d): %v", c.path, name, len(rows), err)
	}
	var sources []string
	for _, m := range rows[0].Mounts {
		if m.Type == "bind" {
			sources = append(sources, m.Source)
		}
	}
	return sources, nil
}

// lastLogs is "; it wrote: " and the last lines container name wrote, or "" when it wrote none.
func (c *containers) lastLogs(ctx context.Context, name string) string {
	if logs := c.cli.logs(ctx, name); logs != "" {
		return "; it wrote: " + logs
	}
	return ""
}

// logs returns the last lines a container wrote, for a failure's error.
func (c containerCLI) logs(ctx context.Context, name string) string {
	c.calls.Add(1)
	cmd := exec.CommandContext(ctx, c.path, "logs", "--tail", "20", name)
	out := &tailBuffer{max: maxCaptured}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	if cmd.Run() != nil {
		return ""
	}
	return hq.OutputTail(out.b)
}

// state reads one container's state now, for the wait after a start.
func (c containerCLI) state(ctx context.Context, name string) (container, error) {
	ct, ok, err := c.named(ctx, name)
	if err == nil && !ok {
		err = errors.New("the container is gone")
	}
	return ct, err
}

// containers is the engine's view of the container CLI for one reconcile: the node's labelled
// containers are listed once, the first time a container resource asks.
type containers struct {
	cli  containerCLI
	node string
	// stopTimeout is what a container has between SIGTERM and SIGKILL when it is stopped.
	stopTimeout time.Duration
	// byName is the list of this reconcile; nil until it is read.
	byName map[string]container
	// networks holds the module networks known to exist in this reconcile; left, the modules
	// a container was removed from in it.
	networks, left map[string]bool
	// envKey is the node's key of env digests, once read.
	envKey []byte
	// healthy holds, by ref, whether each container whose health was checked in this
	// reconcile passed, for its status.
	healthy map[string]bool
}

// containerList returns the node's labelled containers as listed at the start of this
// reconcile's first look.
func (e *Engine) containerList(ctx context.Context) (map[string]container, error) {
	if e.ctrs.cli.path == "" {
		return nil, errNoContainerCLI
	}
	if e.ctrs.byName == nil {
		m, err := e.ctrs.cli.list(ctx, e.ctrs.node)
		if err != nil {
			return nil, err
		}
		e.ctrs.byName = m
	}
	return e.ctrs.byName, nil
}

// start starts the container called name. The engine refuses to start one that is paused, or
// "stopping" after a stop that was cut off (hostd killed while the CLI stopped it): a paused
// one is unpaused, and the other is stopped again, then started.
func (c *containers) start(ctx context.Context, name string) error {
	_, err := c.cli.run(ctx, time.Minute, "start", name)
	if err == nil || !strings.Contains(err.Error(), "state improper") {
		return err
	}
	if ct, ok, lerr := c.cli.named(ctx, name); lerr == nil && ok && ct.State == "paused" {
		_, err = c.cli.run(ctx, time.Minute, "unpause", name)
		return err
	}
	c.stop(ctx, name, c.stopTimeout)
	_, err = c.cli.run(ctx, time.Minute, "start", name)
	return err
}

func (c *containers) stop(ctx context.Context, name string, timeout time.Duration) error {
	secs := max(int(timeout/time.Second), 1)
	_, err := c.cli.run(ctx, timeout+time.Minute, "stop", "-t", fmt.Sprint(secs), name)
	return err
}

func (c *containers) rename(ctx context.Context, from, to string) error {
	_, err := c.cli.run(ctx, time.Minute, "rename", from, to)
	return err
}

// removeOwned removes the container called name, listed at this reconcile's start, when its
// labels say it is module's resource's: a container of another's, or of no one's, is left.
func (c *containers) removeOwned(ctx context.Context, name, module, resource string) {
	if ct, ok := c.byName[name]; ok && ownedBy(ct, module, resource) && c.remove(ctx, name) == nil {
		delete(c.byName, name)
	}
}

// remove stops the container called name, giving it stopTimeout as a stop does, and removes
// it; one that is not there is not an error.
func (c *containers) remove(ctx context.Context, name string) error {
	// rm -f alone would kill at once (Docker) or wait the engine's own timeout (podman).
	c.stop(ctx, name, c.stopTimeout)
	_, err := c.cli.run(ctx, time.Minute, "rm", "-f", name)
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "no such container") {
		return nil
	}
	return err
}

// checkHealth runs a running container's health check once, as every reconcile does for a
// running service: its URL is asked, or its command is run in it. A command costs a process of
// the CLI's, so only a container that declares one pays it, once a reconcile; a container that
// is paused, or hangs, fails it.
func (c *containers) checkHealth(ctx context.Context, name string, d hq.Resource, timeout time.Duration) error {
	switch {
	case d.Health == nil:
		return nil
	case d.Health.HTTP != "":
		if err := probe(ctx, d.Health.HTTP); err != nil {
			return fmt.Errorf("unhealthy: GET %s: %w", d.Health.HTTP, err)
		}
	case len(d.Health.Command) > 0:
		if _, err := c.cli.run(ctx, timeout, append([]string{"exec", name}, d.Health.Command...)...); err != nil {
			return fmt.Errorf("unhealthy: %w", err)
		}
	}
	return nil
}

// waitReady waits for a started container to be up: its health check passes within timeout,
// or, without one, it still runs after grace. One that exits fails at once, with its last
// lines. It returns the container as last seen running, whose process the ledger keeps.
func (c *containers) waitReady(ctx context.Context, name string, d hq.Resource, timeout, grace time.Duration) (container, error) {
	h := d.Health
	if h == nil {
		select {
		case <-time.After(grace):
		case <-ctx.Done():
			return container{}, ctx.Err()
		}
		return c.stillRunning(ctx, name)
	}
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ct, err := c.stillRunning(ctx, name)
		if err != nil {
			return ct, err
		}
		if h.HTTP != "" {
			last = probe(ctx, h.HTTP)
		} else {
			_, last = c.cli.run(ctx, timeout, append([]string{"exec", name}, h.Command...)...)
		}
		if last == nil {
			return ct, nil
		}
		if time.Now().After(deadline) {
			if h.HTTP != "" {
				return ct, fmt.Errorf("not healthy within %s: GET %s: %w", timeout, h.HTTP, last)
			}
			return ct, fmt.Errorf("not healthy within %s: %w", timeout, last)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ct, ctx.Err()
		}
	}
}

// stillRunning returns the container, and fails with its last lines when it is not running.
func (c *containers) stillRunning(ctx context.Context, name string) (container, error) {
	ct, err := c.cli.state(ctx, name)
	if err != nil {
		return ct, err
	}
	if ct.running() {
		return ct, nil
	}
	msg := fmt.Sprintf("the container %s", stoppedDrift(ct))
	if logs := c.cli.logs(ctx, name); logs != "" {
		msg += ": " + logs
	}
	return ct, errors.New(msg)
}

// containerCLIPath is the CLI named, or podman when it is on the PATH; "" when there is none.
func containerCLIPath(named string) string {
	if named != "" {
		return named
	}
	if p, err := exec.LookPath("podman"); err == nil {
		return p
	}
	return ""
}

// removeContainer removes the containers of ref (the one of its name, and any it kept aside),
// stopping them first: those labelled as ref's, and no other.
func (e *Engine) removeContainer(ctx context.Context, ref string) error {
	list, err := e.containerList(ctx)
	if err != nil {
		return err
	}
	module, resource, _ := strings.Cut(ref, "/")
	name := containerName(module, resource)
	usedSecrets := false
	for _, n := range []string{name + hq.ContainerNext, name + hq.ContainerPrev, name} {
		if ct, ok := list[n]; ok && ownedBy(ct, module, resource) {
			if err := e.ctrs.remove(ctx, n); err != nil {
				return err
			}
			e.ctrs.removedFrom(module)
			usedSecrets = usedSecrets || strings.Contains(ct.Labels[labelDecl], `"secret_pins"`)
		}
	}
	e.removeEnvFiles(name)
	if usedSecrets {
		e.pruneSecrets(ctx, name, nil)
	}
	return nil
}

// removedFrom notes that a container of module was removed, for removeUnusedNetworks.
func (c *containers) removedFrom(module string) {
	if c.left == nil {
		c.left = map[string]bool{}
	}
	c.left[module] = true
}

// removeStrayContainers removes the containers labelled for this node whose resource is not
// declared and that the ledger does not name (it names the rest, removed with it): hostd made
// them, and a lost ledger must not leave them running. It looks at the list this reconcile
// read, if it read one: a ledger that lost its entries has no processes to check either, so
// that reconcile lists.
func (rc *reconcileRun) removeStrayContainers(ctx context.Context) {
	e := rc.e
	list := e.ctrs.byName
	for name, ct := range list {
		m, r := ct.Labels[labelModule], ct.Labels[labelResource]
		ref := hq.Ref(m, r)
		if m == "" || r == "" || rc.declared[ref] || e.ledger.Resources[ref] != nil || !rc.inScope(ref) {
			continue
		}
		if err := e.ctrs.remove(ctx, name); err != nil {
			e.log.Error("removing a container no longer declared; will retry", "resource", ref, "container", name, "err", err)
			continue
		}
		e.ctrs.removedFrom(m)
		e.log.Info("removed a container no longer declared", "resource", ref, "container", name)
	}
	rc.removeUnusedNetworks(ctx)
}

// procID names a process across PID reuse: its PID and its start time, in clock ticks since boot.
type procID struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// alive reports whether the process p names still runs.
func (p *procID) alive() bool {
	if p == nil || p.PID <= 0 {
		return false
	}
	start, err := procStart(p.PID)
	return err == nil && start == p.Start
}

// procOf is the process of a running container as listed, or nil when it is not known.
func procOf(ct container) *procID {
	if !ct.running() || ct.PID <= 0 {
		return nil
	}
	start, err := procStart(ct.PID)
	if err != nil {
		return nil
	}
	return &procID{PID: ct.PID, Start: start}
}
