package hostd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// containerStep keeps a container running with its declared spec, through the container CLI.
// The container is named hq-<module>-<resource> and labelled with the node, the module, the
// resource and the digest of its spec; any change of the spec recreates it: the new one is
// created beside the old (pulled and created before anything stops), then the old is stopped
// and kept aside, renamed, until the change stays (a group that does not apply brings it back).
// In a module that is not taken it is created and not started, and held.
type containerStep struct{}

// containerOp is what a container's steps find and do.
type containerOp struct {
	// found is the container of the resource's name, when it is hostd's.
	found *container
	// drift says what someone else changed: "missing", "exited with code 1", "stopped".
	drift string
	// crash says how a container hostd had running failed on its own (exited with a code of
	// its own, paused, restarted behind hostd), with its last lines: the result is failed,
	// even when commit puts it back, so a crash loop counts towards stuck.
	crash string
	// leftByHostd is set on a container hostd created and never started: starting it is not
	// putting back drift.
	leftByHostd bool
	// next is the container stage created to replace found (or to be the first), and nextID
	// its id, which a group's journal names so that a start after a crash can remove it.
	next, nextID string
	// aside is found's name while commit keeps it for undo; wasRunning says it ran.
	aside      string
	wasRunning bool
	// started is set once commit started the declared container.
	started bool
	// prev is the resource found was made from, to say what a recreate changes.
	prev *hq.Resource
	// note, for a job, says it ran again from the start after a restart of hostd.
	note string
}

// containerName is the name hostd gives the container of a resource.
func containerName(module, resource string) string { return hq.ContainerName(module, resource) }

func (containerStep) check(ctx context.Context, o *op) error {
	c := &containerOp{}
	o.ctr = c
	if o.stillAsRecorded(ctx) {
		return nil
	}
	list, err := o.e.containerList(ctx)
	if err != nil {
		return err
	}
	name := containerName(o.module, o.decl.Name)
	ct, ok := list[name]
	// foreign says why a container of the name is not the resource's.
	var foreign string
	switch {
	case ok && !ownedBy(ct, o.module, o.decl.Name):
		foreign = fmt.Sprintf("a container named %s on this node belongs to %s, not to %s", name, owner(ct), o.ref)
	case ok:
		c.found = &ct
		// Kept aside by a recreate that hostd did not see end; another's of that name is left.
		o.e.ctrs.removeOwned(ctx, name+hq.ContainerPrev, o.module, o.decl.Name)
		if d := ct.Labels[labelDecl]; d != "" {
			var prev hq.Resource
			if json.Unmarshal([]byte(d), &prev) == nil {
				c.prev = &prev
			}
		}
	default:
		// Not hostd's under this node's labels: a container of the name without them is not
		// hostd's to touch. Asked only when something is to change.
		other, found, err := o.e.ctrs.cli.named(ctx, name)
		if err != nil {
			return err
		}
		switch {
		case found && owner(other) != noOwner:
			// Made in this reconcile, after the list was read, for the resource whose it is.
			foreign = fmt.Sprintf("a container named %s on this node belongs to %s, not to %s", name, owner(other), o.ref)
		case found:
			foreign = fmt.Sprintf("a container named %s that hostd did not create is on this node (%s); remove or rename it", name, other.State)
		}
	}
	if foreign != "" {
		// Not a hold: no take of any module makes it hostd's, so it fails, as a job's does,
		// until someone removes or renames it.
		return errors.New(foreign)
	}
	o.present = ok
	o.managed = o.managed || c.found != nil
	if c.found == nil {
		c.drift = "missing"
		return nil
	}
	specOK := ct.Labels[labelSpec] == o.spec
	switch {
	case !specOK:
		c.drift = "replaced with another spec"
		return nil
	case !o.taken:
		// Created and not started is what an untaken module asks for.
		o.equal = !ct.running()
	case ct.State == "created":
		// Never started: hostd made it for a module not taken then, or was stopped before it
		// started it. Starting it now puts back nothing anyone else changed.
		c.leftByHostd = true
		return nil
	case !ct.running():
		c.drift = stoppedDrift(ct)
		c.crash = o.crashOf(ctx, ct)
		return nil
	case o.restart:
		// Something in its restart_on changed earlier in this reconcile: commit restarts it.
		return nil
	default:
		if err := o.e.ctrs.checkHealth(ctx, name, o.decl, o.e.cfg.HealthTimeout); err != nil {
			o.sawHealth(false)
			o.unhealthy = err
			c.drift = err.Error()
			return nil
		}
		o.sawHealth(true)
		o.equal = true
		c.crash = o.restartedOf(ctx, ct)
	}
	if o.equal {
		o.record = containerEntry(o, "adopted", ct)
	}
	return nil
}

// crashOf says how container ct, which should run and does not, failed, when it did so on its
// own while hostd had it running: it exited with a code of its own, or was killed for memory,
// or is paused. "" when it never ran under hostd, or was stopped: a stop signal's exit (0, or
// 143 and 137 for SIGTERM and the SIGKILL after it) reads as someone's stop, which is drift.
func (o *op) crashOf(ctx context.Context, ct container) string {
	if en := o.entry; en == nil || !en.Ran && en.Proc == nil || en.Spec != o.spec {
		return ""
	}
	var what string
	switch {
	case ct.State == "paused":
		what = "the container is paused"
	case ct.ExitCode != 0 && ct.ExitCode != 137 && ct.ExitCode != 143:
		what = fmt.Sprintf("the container exited with code %d", ct.ExitCode)
	default:
		return ""
	}
	return what + o.e.ctrs.lastLogs(ctx, ct.Name)
}

// restartedOf says, of container ct found running as declared, whether it exited and was
// started again since hostd last saw it: by its restart policy, or by someone. hostd recorded
// another process for it, and did not start this one itself.
func (o *op) restartedOf(ctx context.Context, ct container) string {
	en := o.entry
	if en == nil || en.Proc == nil || en.Spec != o.spec {
		return ""
	}
	now := procOf(ct)
	if now == nil || *now == *en.Proc {
		return ""
	}
	return "the container exited and was started again since the last reconcile" + o.e.ctrs.lastLogs(ctx, ct.Name)
}

// markCrash records in o's ledger entry that its container was found failed at now, and
// counts the restarts that stands for.
func (o *op) markCrash(now time.Time) {
	if o.record == nil {
		return
	}
	r := *o.record
	r.CrashedAtMS = now.UnixMilli()
	r.Restarts += o.restartsSeen()
	o.record = &r
}

// restartsSeen is how many restarts the failure hostd just found stands for: one, or as many
// as the engine counted since hostd last listed the container, when the engine counts them
// (its restart policy may restart a container several times between two looks).
func (o *op) restartsSeen() int64 {
	n := int64(1)
	if c, en := o.ctr, o.entry; c != nil && c.found != nil && en != nil && en.Spec == o.spec {
		n = max(n, c.found.Restarts-en.EngineRestarts)
	}
	return n
}

// sawHealth notes whether o's container passed its health check in this reconcile, for its
// status (containerStatus).
func (o *op) sawHealth(ok bool) {
	if o.e.ctrs.healthy == nil {
		o.e.ctrs.healthy = map[string]bool{}
	}
	o.e.ctrs.healthy[o.ref] = ok
}

// settling says why container o, found running as declared, is not yet applied: hostd put it
// back after a crash less than settleTime ago. Past that, the mark goes and it is applied.
func (o *op) settling(now time.Time) string {
	r := o.record
	if r == nil || r.Kind != hq.KindContainer || r.CrashedAtMS == 0 {
		return ""
	}
	at := time.UnixMilli(r.CrashedAtMS)
	settle := max(5*o.e.cfg.Interval, 10*time.Second)
	if now.Sub(at) < settle {
		return fmt.Sprintf("running again since a failure at %s; applied once it has run for %s (a crash loop stays failed)",
			hq.FormatTime(at), settle)
	}
	cleared := *r
	cleared.CrashedAtMS = 0
	o.record = &cleared
	return ""
}

// crashed is the failure a container's check saw, nil when none: the result is failed even when
// commit put the container back.
func (o *op) crashed() error {
	if o.ctr == nil || o.ctr.crash == "" {
		return nil
	}
	return errors.New(o.ctr.crash)
}

// stillAsRecorded reports whether o's container is, without asking the container CLI, the one
// the ledger recorded running with o's spec: its process, named by PID and start time, is
// alive, and its health URL answers. A container stopped, removed, restarted or replaced by
// anything has another process or none, and is then looked at through the CLI. A reconcile
// whose containers all stand as recorded runs no CLI at all: a listing is a process of the
// CLI's, which costs more than the rest of a reconcile.
func (o *op) stillAsRecorded(ctx context.Context) bool {
	en := o.entry
	// An entry without the container's id was written before entries kept it: the container
	// is listed once, and its entry says what runs from then on.
	if en == nil || en.Kind != hq.KindContainer || en.Spec != o.spec || !o.taken || o.restart || en.ContainerID == "" || !en.Proc.alive() {
		return false
	}
	if o.e.ctrs.checkHealth(ctx, containerName(o.module, o.decl.Name), o.decl, o.e.cfg.HealthTimeout) != nil {
		return false // looked at again through the CLI, which the restart needs
	}
	o.sawHealth(true)
	o.present, o.managed, o.equal, o.record = true, true, true, en
	return true
}

// stoppedDrift says how a container that should run is found.
func stoppedDrift(ct container) string {
	if ct.State == "exited" {
		return fmt.Sprintf("exited with code %d", ct.ExitCode)
	}
	return "not running (" + ct.State + ")"
}

// ownedBy reports whether ct carries the labels of module's resource.
func ownedBy(ct container, module, resource string) bool {
	return ct.Labels[labelModule] == module && ct.Labels[labelResource] == resource
}

// owner names the resource whose labels ct carries, or noOwner.
func owner(ct container) string {
	if m, r := ct.Labels[labelModule], ct.Labels[labelResource]; m != "" && r != "" {
		return hq.Ref(m, r)
	}
	return noOwner
}

const noOwner = "no resource of hostd's"

// containerEntry is the ledger entry of container ct, made (or found) with o's spec: its id,
// its image's digest, when it started and its process when it runs (hostd then has it
// running). An entry of the same spec keeps the restarts counted; one already saying all this
// is kept as it is, so the ledger is not written again for nothing.
func containerEntry(o *op, wrote string, ct container) *Entry {
	proc, ran := procOf(ct), ct.running()
	_, image, _ := strings.Cut(o.decl.Image, "@")
	en := o.entry
	if en == nil || en.Kind != o.decl.Kind || en.Spec != o.spec {
		return &Entry{Kind: o.decl.Kind, Spec: o.spec, Wrote: wrote, Proc: proc, Ran: ran,
			ContainerID: ct.ID, ImageDigest: image, StartedAt: ct.StartedAt, EngineRestarts: ct.Restarts}
	}
	if en.Ran == ran && (en.Proc == nil) == (proc == nil) && (proc == nil || *en.Proc == *proc) &&
		en.ContainerID == ct.ID && en.ImageDigest == image && en.StartedAt == ct.StartedAt && en.EngineRestarts == ct.Restarts {
		return en
	}
	again := *en
	again.Proc, again.Ran = proc, ran
	again.ContainerID, again.ImageDigest, again.StartedAt, again.EngineRestarts = ct.ID, image, ct.StartedAt, ct.Restarts
	return &again
}

// containerStatus is what runs for container resource r of module m, from its ledger entry
// (nil when hostd has made no container for it): healthy says whether it passed its health
// check in this reconcile.
func containerStatus(r hq.Resource, en *Entry, healthy, seen bool) *hq.ContainerStatus {
	if en == nil || en.Kind != hq.KindContainer || en.ContainerID == "" {
		return nil
	}
	st := &hq.ContainerStatus{ID: en.ContainerID, ImageDigest: en.ImageDigest, Restarts: en.Restarts, Spec: en.Spec,
		Health: hq.HealthNone, EarlierSpec: en.Spec != r.Digest()}
	if en.StartedAt > 0 {
		st.StartedAt = time.Unix(en.StartedAt, 0).UTC()
	}
	if r.Health != nil {
		st.Health = hq.HealthUnhealthy
		if seen && healthy {
			st.Health = hq.HealthHealthy
		}
	}
	return st
}

// stage pulls the image and creates the container the declaration asks for, touching none
// that runs: a new one beside a container of another spec, or the first one.
func (containerStep) stage(ctx context.Context, o *op) error {
	c := o.ctr
	if c.found != nil && c.found.Labels[labelSpec] == o.spec {
		return nil // the same container: commit starts (or stops) it
	}
	name := containerName(o.module, o.decl.Name)
	if c.found != nil {
		name += hq.ContainerNext
		// Left by a recreate that hostd did not see end. Another's of that name is left, and
		// the create below fails on it.
		o.e.ctrs.removeOwned(ctx, name, o.module, o.decl.Name)
	}
	id, err := o.e.createContainer(ctx, o, name)
	if err != nil {
		return err
	}
	c.next, c.nextID = name, id
	return nil
}

func (s containerStep) commit(ctx context.Context, o *op) error {
	c, cli := o.ctr, o.e.ctrs
	name := containerName(o.module, o.decl.Name)
	o.committed = true
	if c.found != nil && c.next != "" {
		// Recreate: the old one stops and is kept aside until the change stays.
		aside := name + hq.ContainerPrev
		if other, left := cli.byName[aside]; left {
			// One of ours left before was removed by check: this one is another's.
			return fmt.Errorf("a container named %s, which belongs to %s, holds the name %s is kept aside under while it is replaced: remove or rename it", aside, owner(other), o.ref)
		}
		c.wasRunning = c.found.running()
		if err := cli.stop(ctx, name, o.e.cfg.StopTimeout); err != nil {
			return err
		}
		if err := o.failpoint(ctx, failpointContainerStopped); err != nil {
			return err
		}
		if err := cli.rename(ctx, name, aside); err != nil {
			if c.wasRunning {
				if serr := o.e.startContainer(ctx, name); serr != nil {
					return errors.Join(err, serr)
				}
			}
			return err
		}
		c.aside = aside
		if err := o.failpoint(ctx, failpointContainerAside); err != nil {
			return err
		}
		if err := cli.rename(ctx, c.next, name); err != nil {
			return err
		}
		c.next = ""
		if err := o.failpoint(ctx, failpointContainerRenamed); err != nil {
			return err
		}
	} else if c.next != "" {
		c.next = "" // created under its own name
	}
	wrote := "created"
	if c.found != nil {
		wrote = "replaced"
	}
	id := c.nextID
	if id == "" && c.found != nil {
		id = c.found.ID
	}
	o.record = containerEntry(o, wrote, container{ID: id}) // its process, once it runs
	if !o.taken {
		if c.found != nil && c.found.running() && c.aside == "" {
			return cli.stop(ctx, name, o.e.cfg.StopTimeout)
		}
		return nil
	}
	if c.found != nil && c.aside == "" && c.found.running() {
		// The same spec, running but unhealthy, or restarted for its restart_on: start it again.
		if err := cli.stop(ctx, name, o.e.cfg.StopTimeout); err != nil {
			return err
		}
	}
	if err := o.e.startContainer(ctx, name); err != nil {
		return err
	}
	c.started = true
	if err := o.failpoint(ctx, failpointContainerStarted); err != nil {
		return err
	}
	ct, err := cli.waitReady(ctx, name, o.decl, o.e.cfg.HealthTimeout, o.e.cfg.StartGrace)
	o.sawHealth(err == nil)
	if err == nil {
		o.record = containerEntry(o, wrote, ct)
	}
	return err
}

// failpoint pauses at point for a test, when o is a member of a group: see Engine.failpoint.
func (o *op) failpoint(ctx context.Context, point string) error {
	if o.decl.Group == "" {
		return nil
	}
	return o.e.failpoint(ctx, point, hq.Ref(o.module, o.decl.Group))
}

// undo puts back what was there before stage and commit: the new container goes, and the one
// kept aside comes back, started again when it ran.
func (containerStep) undo(ctx context.Context, o *op) error {
	c, cli := o.ctr, o.e.ctrs
	if c == nil {
		return nil
	}
	name := containerName(o.module, o.decl.Name)
	if c.next != "" {
		cli.remove(ctx, c.next)
		c.next = ""
	}
	switch {
	case c.aside != "":
		cli.remove(ctx, name)
		if err := cli.rename(ctx, c.aside, name); err != nil {
			return err
		}
		c.aside = ""
		o.pruneSecrets(ctx, c.prev)
		if c.wasRunning {
			return o.e.startContainer(ctx, name)
		}
	case c.found == nil && o.committed:
		// The first container of the resource: nothing to go back to.
		cli.remove(ctx, name)
		o.pruneSecrets(ctx, nil)
	case c.started && c.found != nil && !c.found.running():
		return cli.stop(ctx, name, o.e.cfg.StopTimeout)
	}
	return nil
}

// finish removes the container kept aside, stopped: the change stays.
func (containerStep) finish(o *op) {
	if c := o.ctr; c != nil && c.aside != "" {
		if _, err := o.e.ctrs.cli.run(context.Background(), time.Minute, "rm", "-f", c.aside); err != nil {
			o.e.log.Warn("removing the container a change replaced; the next reconcile tries again", "resource", o.ref, "err", err)
		}
		c.aside = ""
		o.pruneSecrets(context.Background(), &o.decl)
	}
}

// pruneSecrets removes the secrets hostd made for o's container that the container of r (the
// one that stays; nil: none) does not use.
func (o *op) pruneSecrets(ctx context.Context, r *hq.Resource) {
	if len(o.decl.SecretPins) > 0 || r != nil && len(r.SecretPins) > 0 {
		name := containerName(o.module, o.decl.Name)
		o.e.pruneSecrets(ctx, name, secretsUsed(name, r))
	}
}

// note says what a recreate changed, and every volume whose host path moved with nothing
// copied: the data the container used is where it was, not where it is now.
func (o *op) containerNote() string {
	c := o.ctr
	if c != nil && c.note != "" {
		return c.note
	}
	if c == nil || c.found == nil || c.found.Labels[labelSpec] == o.spec {
		return ""
	}
	note := o.ref + " recreated"
	if c.prev == nil {
		return note
	}
	if changed := o.e.specChanges(*c.prev, o.decl); len(changed) > 0 {
		note += " (" + strings.Join(changed, ", ") + " changed)"
	}
	for _, v := range hq.MovedVolumes(c.prev.Volumes, o.decl.Volumes) {
		note += fmt.Sprintf("; volume %s of %s now at %s (was %s): nothing was copied", v.Target, o.ref, v.Now, v.Was)
	}
	return note
}

// specChanges names the fields of a container's spec that differ; env values are compared by
// their digests, which is all a label keeps of them.
func (e *Engine) specChanges(a, b hq.Resource) []string {
	a, errA := e.digestEnv(a)
	b, errB := e.digestEnv(b)
	if errA != nil || errB != nil {
		a.Env, b.Env = nil, map[string]string{"": ""} // no key to compare with: say env changed
	}
	var out []string
	for _, f := range []struct {
		name string
		same bool
	}{
		{"image", a.Image == b.Image},
		{"command", slices.Equal(a.Command, b.Command)},
		{"env", mapsEqual(a.Env, b.Env)},
		{"volumes", slices.Equal(a.Volumes, b.Volumes)},
		{"ports", slices.Equal(a.Ports, b.Ports)},
		{"network", a.Network == b.Network},
		{"user", a.User == b.User},
		{"health", fmt.Sprint(a.Health) == fmt.Sprint(b.Health)},
		{"cpus", a.Cpus == b.Cpus},
		{"memory", a.Memory == b.Memory},
		{"log_max_size", a.LogMaxSize == b.LogMaxSize},
		{"restart", a.Restart == b.Restart},
	} {
		if !f.same {
			out = append(out, f.name)
		}
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// createContainer ensures o's image is in the store by its digest, pulling it when it is not,
// and creates the container o declares under name, not started. It returns the new
// container's id, as the CLI prints it.
func (e *Engine) createContainer(ctx context.Context, o *op, name string) (string, error) {
	cli := e.ctrs.cli
	imageID, err := cli.ensureImage(ctx, o.decl.Image, e.cfg.CommandTimeout)
	if err != nil {
		return "", err
	}
	e.imageUsed(o.decl.Image, imageID)
	args, err := e.createArgs(o, name)
	if err != nil {
		return "", err
	}
	if len(o.decl.SecretPins) > 0 {
		sargs, err := e.secretArgs(ctx, o, name)
		if err != nil {
			return "", err
		}
		// Before the image: what follows it is the container's command.
		at := len(args) - len(o.decl.Command) - 1
		args = append(args[:at], append(sargs, args[at:]...)...)
	}
	if err := e.ensureNetwork(ctx, o); err != nil {
		return "", err
	}
	envFile, err := e.writeEnvFile(o, name)
	if err != nil {
		return "", err
	}
	if envFile != "" {
		// The CLI copies the values into the container's own config: the file has done its part.
		defer os.Remove(envFile)
	}
	out, err := cli.run(ctx, time.Minute, args...)
	return strings.TrimSpace(string(out)), err
}

// createArgs are the CLI's arguments creating o's container under name: its labels, its
// volumes' host paths joined under the root (and made when missing), and its spec.
func (e *Engine) createArgs(o *op, name string) ([]string, error) {
	d := o.decl
	decl, err := e.declLabel(d)
	if err != nil {
		return nil, err
	}
	args := []string{"create", "--name", name,
		"--label", labelNode + "=" + e.cfg.Node, "--label", labelModule + "=" + o.module,
		"--label", labelResource + "=" + d.Name, "--label", labelSpec + "=" + o.spec,
		"--label", labelDecl + "=" + decl}
	for _, v := range d.Volumes {
		host, target, ro, err := hq.ParseVolume(v)
		if err != nil {
			return nil, err
		}
		abs, err := under(e.cfg.Root, host)
		if err != nil {
			return nil, err
		}
		if err := e.confiner.check(abs, true); err != nil {
			return nil, err
		}
		if err := e.guardState("volume "+host, abs, e.confiner.resolved(abs), true); err != nil {
			return nil, err
		}
		// Made when missing; a link there, dangling or not, is left for volumeSource to judge.
		if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(abs, 0o755); err != nil {
				return nil, err
			}
		}
		real, err := e.volumeSource(host, abs)
		if err != nil {
			return nil, err
		}
		mount := real + ":" + target
		if ro {
			mount += ":ro"
		}
		args = append(args, "--volume", mount)
	}
	for _, p := range d.Ports {
		args = append(args, "--publish", p)
	}
	args = append(args, e.runArgs(o, name)...)
	if d.User != "" {
		args = append(args, "--user", d.User)
	}
	args = append(args, d.Image)
	return append(args, d.Command...), nil
}

// volumeSource is what the engine mounts for a volume whose host path, joined under the root,
// is abs (spec names it in errors): abs with every link in it resolved, the last component's
// too, since the engine follows a link there as anywhere else. It must be a directory or a file
// under the root, and neither be, hold nor lie in hostd's state dir; anything else is refused
// and not mounted. It resolves afresh each time: a workload with a volume may have put a link
// in since the last look.
func (e *Engine) volumeSource(spec, abs string) (string, error) {
	if err := e.confiner.check(abs, false); err != nil {
		return "", fmt.Errorf("volume %s: %w", spec, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", spec, err)
	}
	if !within(e.confiner.real, real) {
		return "", fmt.Errorf("volume %s resolves outside HOSTD_ROOT (to %s): refused", spec, real)
	}
	if err := e.guardState("volume "+spec, abs, real, true); err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", spec, err)
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("volume %s is neither a directory nor a file (%s): refused", spec, fi.Mode().Type())
	}
	return real, nil
}

// startContainer starts the container called name once every host path it mounts passes
// volumeSource again: a link put in since it was created would be followed at this start.
func (e *Engine) startContainer(ctx context.Context, name string) error {
	sources, err := e.ctrs.cli.bindSources(ctx, name)
	if err != nil {
		return err
	}
	for _, src := range sources {
		if _, err := e.volumeSource(e.confiner.spec(src), src); err != nil {
			return fmt.Errorf("not started: %w", err)
		}
	}
	return e.ctrs.start(ctx, name)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// errNoContainerCLI is the error of a container resource on a node whose hostd has no CLI.
var errNoContainerCLI = errors.New("no container CLI: install podman, or name a Docker-compatible one with HOSTD_CONTAINER_CLI")
