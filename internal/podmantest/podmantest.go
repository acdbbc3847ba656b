// Package podmantest gives a test a podman of its own: a containers.conf with the settings a
// sandbox without resource limits and with hybrid cgroups needs, its own image store, a
// registries.conf, a small busybox image made offline, and, when asked, a registry on loopback
// with the image pushed to it. Everything the test started is removed when it ends.
//
// Outside CI, a machine without podman, runc, busybox or docker-registry skips the test and
// says which is missing; in CI (CI set) that fails the test, since CI installs them.
package podmantest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testenv"
)

// Env is one test's podman.
type Env struct {
	t   testing.TB
	dir string
	// Vars are the environment variables that point podman at this Env; a process given them
	// (hostd, say) uses the same store and settings.
	Vars []string
	// Image is a busybox image in the store, by digest: name@sha256:….
	Image string
	// NetworkPrefix is the prefix of the module networks a hostd given Vars makes. Networks
	// are kept apart by their names alone on a machine (the network backend's run state is
	// shared by every store), so each Env has a prefix of its own.
	NetworkPrefix string
	// registry is the address of the registry Registry started.
	registry string
}

// New makes a podman environment for t with a busybox image in it.
func New(t testing.TB) *Env {
	t.Helper()
	testenv.Need(t, "podman", "runc", "busybox")
	// Not t.TempDir: podman's conmon may still be writing a container's exit file in the store
	// when rm returns, and TempDir fails the test when its removal meets a directory that is not
	// empty. This one is removed after the containers, trying again for a while.
	dir, err := os.MkdirTemp("", "podmantest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeAll(t, dir) })
	e := &Env{t: t, dir: dir, NetworkPrefix: "hqt" + strings.TrimPrefix(filepath.Base(dir), "podmantest-") + "-"}
	// One network configuration directory for every Env of the machine, so that the networks of
	// tests running side by side get subnets apart: the backend gives each new network a subnet
	// that no network of its directory has, and two directories would hand out the same one,
	// whose routes then meet on the host. Names stay apart by each Env's prefix.
	nets := filepath.Join(os.TempDir(), "podmantest-networks")
	if err := os.MkdirAll(nets, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "containers.conf"), fmt.Sprintf("[containers]\ndefault_ulimits = []\n[network]\nnetwork_config_dir = %q\n[engine]\ncgroup_manager = \"cgroupfs\"\nruntime = \"runc\"\n", nets))
	write(t, filepath.Join(dir, "storage.conf"), fmt.Sprintf("[storage]\ndriver = \"vfs\"\ngraphroot = %q\nrunroot = %q\n",
		filepath.Join(dir, "graph"), filepath.Join(dir, "run")))
	write(t, filepath.Join(dir, "registries.conf"), "")
	e.Vars = []string{
		"CONTAINERS_CONF=" + filepath.Join(dir, "containers.conf"),
		"CONTAINERS_STORAGE_CONF=" + filepath.Join(dir, "storage.conf"),
		"CONTAINERS_REGISTRIES_CONF=" + filepath.Join(dir, "registries.conf"),
		"HOSTD_CONTAINER_NETWORK_PREFIX=" + e.NetworkPrefix,
	}
	t.Cleanup(func() {
		// Containers are podman's, not the test's children: stop and remove them all.
		e.run(context.Background(), "rm", "-a", "-f", "-t", "0")
		// Then the networks its hostd made, whose names are the machine's.
		if out, err := e.run(context.Background(), "network", "ls", "--format", "{{.Name}}"); err == nil {
			for name := range strings.FieldsSeq(out) {
				if strings.HasPrefix(name, e.NetworkPrefix) {
					e.run(context.Background(), "network", "rm", "-f", name)
				}
			}
		}
	})
	e.Image = e.importBusybox()
	return e
}

// Setenv points this process's podman at e, for tests that run hostd's engine in-process.
func (e *Env) Setenv(t testing.TB) {
	for _, v := range e.Vars {
		k, val, _ := strings.Cut(v, "=")
		t.Setenv(k, val)
	}
}

// removeAll removes dir, trying again while something still writes in it; what it cannot
// remove in a few seconds is logged and left in the temporary directory.
func removeAll(t testing.TB, dir string) {
	var err error
	for range 50 {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("leaving %s: %v", dir, err)
}

func write(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Podman runs podman in e and returns its standard output; it fails the test on an error.
func (e *Env) Podman(args ...string) string {
	e.t.Helper()
	out, err := e.run(context.Background(), args...)
	if err != nil {
		e.t.Fatalf("podman %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// TryPodman runs podman in e and returns its standard output and error, for a command that may
// race with hostd (a stop while hostd starts the container again).
func (e *Env) TryPodman(args ...string) (string, error) {
	return e.run(context.Background(), args...)
}

func (e *Env) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", args...)
	cmd.Env = append(os.Environ(), e.Vars...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// importBusybox makes an image of busybox and its applets, without a registry, and returns it
// by digest.
func (e *Env) importBusybox() string {
	e.t.Helper()
	return e.Digest(e.Build("bb", "hello from the image\n"))
}

// Build makes an image of busybox and its applets whose /www/index.html says index, without a
// registry, and returns its name in the store (localhost/hq-test/NAME:1). Images built with
// other words have other digests.
func (e *Env) Build(name, index string) string {
	e.t.Helper()
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		e.t.Fatal(err)
	}
	rootfs := filepath.Join(e.dir, "rootfs-"+name)
	if err := os.MkdirAll(filepath.Join(rootfs, "bin"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	b, err := os.ReadFile(busybox)
	if err != nil {
		e.t.Fatal(err)
	}
	write(e.t, filepath.Join(rootfs, "bin", "busybox"), string(b))
	os.Chmod(filepath.Join(rootfs, "bin", "busybox"), 0o755)
	for _, applet := range []string{"sh", "sleep", "httpd", "echo", "cat", "ls", "true", "false", "test", "wget", "mkdir"} {
		os.Symlink("busybox", filepath.Join(rootfs, "bin", applet))
	}
	for _, d := range []string{"tmp", "www", "data"} {
		os.MkdirAll(filepath.Join(rootfs, d), 0o755)
	}
	write(e.t, filepath.Join(rootfs, "www", "index.html"), index)
	tarball := filepath.Join(e.dir, "rootfs-"+name+".tar")
	if out, err := exec.Command("tar", "-C", rootfs, "-cf", tarball, ".").CombinedOutput(); err != nil {
		e.t.Fatalf("tar: %v: %s", err, out)
	}
	image := "localhost/hq-test/" + name + ":1"
	e.Podman("import", "-q", tarball, image)
	return image
}

// Digest returns image (a tag in the store) by its digest.
func (e *Env) Digest(image string) string {
	e.t.Helper()
	d := e.Podman("image", "inspect", "--format", "{{.Digest}}", image)
	name := image
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		name = image[:i]
	}
	return name + "@" + d
}

// Registry starts a registry on loopback (Debian's docker-registry), tells podman it speaks
// plain HTTP, pushes the busybox image to it, and returns the image there by digest. The
// image is then removed from the store, so the first use of it pulls.
func (e *Env) Registry() string {
	e.t.Helper()
	testenv.Need(e.t, "docker-registry")
	addr := freeAddr(e.t)
	cfg := filepath.Join(e.dir, "registry.yml")
	write(e.t, cfg, fmt.Sprintf("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n",
		filepath.Join(e.dir, "registry"), addr))
	write(e.t, filepath.Join(e.dir, "registries.conf"), fmt.Sprintf("[[registry]]\nlocation = %q\ninsecure = true\n", addr))
	cmd := exec.Command("docker-registry", "serve", cfg)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the registry did not listen on %s: %s", addr, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.registry = addr
	return e.Publish("localhost/hq-test/bb:1")
}

// UseRegistryOf tells e's podman that the registry other's Registry started speaks plain
// HTTP, so that several stores (one per hostd) pull one image by one digest.
func (e *Env) UseRegistryOf(other *Env) {
	e.t.Helper()
	write(e.t, filepath.Join(e.dir, "registries.conf"), fmt.Sprintf("[[registry]]\nlocation = %q\ninsecure = true\n", other.registry))
}

// Publish pushes an image of the store to the registry Registry started, removes it from the
// store, and returns it there by digest.
func (e *Env) Publish(image string) string {
	e.t.Helper()
	name := strings.TrimPrefix(image, "localhost/")
	tag := e.registry + "/" + name
	e.Podman("tag", image, tag)
	digestFile := filepath.Join(e.dir, "digest")
	e.Podman("push", "-q", "--digestfile", digestFile, tag)
	d, err := os.ReadFile(digestFile)
	if err != nil {
		e.t.Fatal(err)
	}
	e.Podman("rmi", "-f", tag, image)
	repo := tag
	if i := strings.LastIndex(tag, ":"); i > strings.LastIndex(tag, "/") {
		repo = tag[:i]
	}
	return repo + "@" + strings.TrimSpace(string(d))
}

// freeAddr returns a loopback address with a port nothing listens on now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// FreePort returns a loopback port nothing listens on now, for a container to publish.
func FreePort(t testing.TB) int {
	t.Helper()
	addr, err := net.ResolveTCPAddr("tcp", freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	return addr.Port
}

// Web is a container resource that serves the image's /www (Build writes its index.html) on a
// loopback port, with the port's root as its health check; edit changes it further.
func Web(name, image string, port int, edit ...func(*hq.Resource)) hq.Resource {
	r := hq.Resource{Name: name, Kind: hq.KindContainer, Image: image,
		Command: []string{"httpd", "-f", "-p", "80", "-h", "/www"},
		Ports:   []string{fmt.Sprintf("127.0.0.1:%d:80", port)},
		Health:  &hq.Health{HTTP: fmt.Sprintf("http://127.0.0.1:%d/", port)}}
	for _, e := range edit {
		e(&r)
	}
	return r
}

// ArgvLog writes a container CLI that logs the arguments of each of its runs, a line each, to
// log, then runs podman with them: named by HOSTD_CONTAINER_CLI, it shows every command line
// hostd ran.
func (e *Env) ArgvLog() (cli, log string) {
	e.t.Helper()
	podman, err := exec.LookPath("podman")
	if err != nil {
		e.t.Fatal(err)
	}
	cli, log = filepath.Join(e.dir, "podman-argv"), filepath.Join(e.dir, "argv.log")
	write(e.t, cli, fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> %q\nexec %q \"$@\"\n", log, podman))
	if err := os.Chmod(cli, 0o755); err != nil {
		e.t.Fatal(err)
	}
	return cli, log
}
