package hostd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// writer is a container that writes into its volume at /data and stays.
func writer(name, image, volume string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindContainer, Image: image, Volumes: []string{volume + ":/data"},
		Command: []string{"sh", "-c", "ls /data > /data/listing; echo x > /data/written; sleep 600"}}
}

// onlyIn fails t when dir holds anything but want.
func onlyIn(t *testing.T, dir string, want ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s holds %v, want %v: a container reached it", dir, got, want)
	}
}

// A volume whose host path is itself a symlink out of the root, or leads there through one, is
// refused: no container is made, and nothing outside is read or written.
func TestContainerVolumeThroughALinkOutRefused(t *testing.T) {
	b, env := containerBed(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.link(outside, "srv/link")
	b.link(b.state, "srv/state") // hostd's own state dir, outside the root here
	for _, vol := range []string{"/srv/link", "/srv/link/sub", "/srv/state"} {
		rs := b.reconcile(b.decl(mod("app", true, writer("c", env.Image, vol))))
		r := rs.want(t, "app/c", hq.StateFailed, true, false)
		if !strings.Contains(r.Error, "outside HOSTD_ROOT") && !strings.Contains(r.Error, "hostd's own state") {
			t.Fatalf("volume %s: error %q, want it refused as outside the root", vol, r.Error)
		}
		if id, _ := state(env, "hq-app-c"); id != "" {
			t.Fatalf("volume %s: a container was created", vol)
		}
	}
	onlyIn(t, outside, "secret")
}

// A link put in after a container was created, in place of its volume's directory, is found
// before the container is started: by the take of its module, and by the restart of a
// container someone stopped.
func TestContainerVolumeLinkPlantedBeforeStartRefused(t *testing.T) {
	b, env := containerBed(t)
	outside := t.TempDir()
	plant := func(p string) {
		t.Helper()
		if err := os.RemoveAll(b.path(p)); err != nil {
			t.Fatal(err)
		}
		b.link(outside, p)
	}

	c := writer("c", env.Image, "/srv/c")
	b.reconcile(b.decl(mod("app", false, c))).want(t, "app/c", hq.StateHeld, true, true)
	plant("srv/c")
	r := b.reconcile(b.decl(mod("app", true, c))).want(t, "app/c", hq.StateFailed, true, false)
	if !strings.Contains(r.Error, "not started") || !strings.Contains(r.Error, "outside HOSTD_ROOT") {
		t.Fatalf("the take's start: %q", r.Error)
	}
	if _, st := state(env, "hq-app-c"); st == "running" {
		t.Fatal("the container was started through the link")
	}

	d := writer("d", env.Image, "/srv/d")
	b.reconcile(b.decl(mod("app", true, c, d))).want(t, "app/d", hq.StateApplied, true, true)
	waitFor(t, 10*time.Second, "the container to write", func() bool { return b.exists("srv/d/written") })
	env.Podman("stop", "-t", "0", "hq-app-d")
	plant("srv/d")
	r = b.reconcile(b.decl(mod("app", true, c, d))).want(t, "app/d", hq.StateFailed, true, false)
	if !strings.Contains(r.Error, "not started") || !strings.Contains(r.Error, "outside HOSTD_ROOT") {
		t.Fatalf("the restart: %q", r.Error)
	}
	if _, st := state(env, "hq-app-d"); st == "running" {
		t.Fatal("the container was restarted through the link")
	}
	onlyIn(t, outside)
}

// A volume that is, holds, or lies in hostd's state dir is refused when that dir is under the
// root: a container would write beside the ledger.
func TestContainerVolumeOfTheStateDirRefused(t *testing.T) {
	b, env := containerBed(t)
	b.eng.Close()
	b.state = b.path("var/lib/hostd")
	if err := os.MkdirAll(b.state, 0o700); err != nil {
		t.Fatal(err)
	}
	b.open()
	b.reconcile(b.decl(mod("base", true))) // the ledger is written
	for _, vol := range []string{"/var/lib", "/var", "/var/lib/hostd", "/var/lib/hostd/sub"} {
		r := b.reconcile(b.decl(mod("app", true, writer("c", env.Image, vol)))).want(t, "app/c", hq.StateFailed, true, false)
		if !strings.Contains(r.Error, "hostd's own state") {
			t.Fatalf("volume %s: error %q, want it refused as hostd's state", vol, r.Error)
		}
		if id, _ := state(env, "hq-app-c"); id != "" {
			t.Fatalf("volume %s: a container was created", vol)
		}
	}
	if _, err := os.Stat(b.path("var/lib/hostd/sub")); err == nil {
		t.Fatal("a volume's path was made inside the state dir")
	}
}

// Two resources whose containers would share a name (a/b-c and a-b/c: hq-a-b-c) on one node: the
// second fails, saying whose the container is, and is not counted as held for a module not
// taken; changing the first leaves the second's name and the first's container alone.
func TestContainerNamesMeetOnANode(t *testing.T) {
	b, env := containerBed(t)
	first := func(v string) hq.DeclaredModule {
		return mod("a-b", true, hq.Resource{Name: "c", Kind: hq.KindContainer, Image: env.Image, Command: []string{"sleep", "600"}, Env: map[string]string{"V": v}})
	}
	second := mod("a", true, hq.Resource{Name: "b-c", Kind: hq.KindContainer, Image: env.Image, Command: []string{"sleep", "600"}})
	rs := b.reconcile(b.decl(first("1"), second))
	rs.want(t, "a-b/c", hq.StateApplied, true, true)
	r := rs.want(t, "a/b-c", hq.StateFailed, true, false)
	if !strings.Contains(r.Error, "belongs to a-b/c") {
		t.Fatalf("the second: %q", r.Error)
	}
	var list []hq.Result
	for _, r := range rs {
		list = append(list, r)
	}
	if line := hq.TallyResults(list, len(list), nil).Line(); strings.Contains(line, "held") {
		t.Fatalf("report line %q: nothing is held for a module not taken", line)
	}
	rs = b.reconcile(b.decl(first("2"), second))
	rs.want(t, "a-b/c", hq.StateApplied, true, true)
	rs.want(t, "a/b-c", hq.StateFailed, true, false)
	if _, st := state(env, "hq-a-b-c"); st != "running" {
		t.Fatalf("a-b/c's container after its change: %s", st)
	}
}

// A container kept aside (.prev) or staged (.next) under a resource's name is touched only
// when its labels say it is that resource's: one of another's is left, and the recreate fails.
func TestContainerStagingNamesOfAnotherLeftAlone(t *testing.T) {
	b, env := containerBed(t)
	web := func(v string) hq.Resource {
		return hq.Resource{Name: "web", Kind: hq.KindContainer, Image: env.Image, Command: []string{"sleep", "600"}, Env: map[string]string{"V": v}}
	}
	// Another module's resource, whose the container of the staging name says it is.
	x := hq.Resource{Name: "x", Kind: hq.KindContainer, Image: env.Image, Command: []string{"sleep", "600"}}
	b.reconcile(b.decl(mod("app", true, web("1")))).want(t, "app/web", hq.StateApplied, true, true)
	for i, suffix := range []string{hq.ContainerPrev, hq.ContainerNext} {
		name := "hq-app-web" + suffix
		env.Podman("run", "-d", "--name", name, "--label", "hq.node=web-1", "--label", "hq.module=other",
			"--label", "hq.resource=x", env.Image, "sleep", "600")
		id, _ := state(env, name)
		r := b.reconcile(b.decl(mod("app", true, web(fmt.Sprint(i+2))), mod("other", true, x)))["app/web"]
		if r.Outcome != hq.StateFailed {
			t.Fatalf("a recreate beside another's %s: %+v", name, r)
		}
		if now, st := state(env, name); now != id || st != "running" {
			t.Fatalf("another's %s was touched: %q %s", name, now, st)
		}
		if _, st := state(env, "hq-app-web"); st != "running" {
			t.Fatalf("app/web after the failed recreate: %s", st)
		}
		env.Podman("rm", "-f", "-t", "0", name)
	}
}

// link makes a symlink at p under the root, to target, with its parent directories.
func (b *bed) link(target, p string) {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Dir(b.path(p)), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.Symlink(target, b.path(p)); err != nil {
		b.t.Fatal(err)
	}
}

// An image the engine holds by another digest than the one pinned is refused, after a pull or
// when found in the store, and no container is created from it. The CLI here is a script that
// answers as an engine whose store holds another image under the name.
func TestContainerImageOfAnotherDigestRefused(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	calls, other := filepath.Join(dir, "calls"), strings.Repeat("1", 64)
	script := fmt.Sprintf(`#!/bin/sh
echo "$*" >> %[1]s
case "$1 $2" in
"ps -a") echo '[]' ;;
"image inspect") [ -e %[2]s/pulled ] || exit 1; echo '[{"Digest":"sha256:%[3]s","RepoDigests":["localhost/app@sha256:%[3]s"]}]' ;;
"pull -q") touch %[2]s/pulled ;;
*) exit 1 ;;
esac
`, calls, dir, other)
	cli := filepath.Join(dir, "cli")
	if err := os.WriteFile(cli, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b.eng.ctrs.cli.path = cli
	img := "localhost/app@sha256:" + strings.Repeat("0", 64)
	c := hq.Resource{Name: "c", Kind: hq.KindContainer, Image: img, Command: []string{"true"}}
	for _, what := range []string{"pulled", "found in the store"} {
		r := b.reconcile(b.decl(mod("app", true, c))).want(t, "app/c", hq.StateFailed, true, false)
		if !strings.Contains(r.Error, "not the one pinned") || !strings.Contains(r.Error, other) {
			t.Fatalf("%s: error %q", what, r.Error)
		}
	}
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(log), "pull -q") != 1 || strings.Contains(string(log), "create") {
		t.Fatalf("the CLI was asked:\n%s\nwant one pull and no create", log)
	}
}
