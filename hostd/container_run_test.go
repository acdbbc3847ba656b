package hostd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
)

// sleepingContainer is a container that runs until it is stopped.
func sleepingContainer(name, image string, edit ...func(*hq.Resource)) hq.Resource {
	r := hq.Resource{Name: name, Kind: hq.KindContainer, Image: image, Command: []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"}}
	for _, e := range edit {
		e(&r)
	}
	return r
}

// networks lists the networks of env's podman.
func networks(env *podmantest.Env) []string {
	return strings.Fields(env.Podman("network", "ls", "--format", "{{.Name}}"))
}

// A module's containers that leave network out share a network of the module's, made once,
// labelled as hostd's, where each answers to its resource's name; it goes with the module's
// last container.
func TestContainerModuleNetwork(t *testing.T) {
	b, env := containerBed(t)
	cli, argv := env.ArgvLog()
	b.eng.ctrs.cli.path = cli
	db := hq.Resource{Name: "db", Kind: hq.KindContainer, Image: env.Image, Command: []string{"httpd", "-f", "-p", "8080", "-h", "/www"}}
	rs := b.reconcile(b.decl(mod("app", true, db, sleepingContainer("app", env.Image))))
	rs.want(t, "app/db", hq.StateApplied, true, true)
	rs.want(t, "app/app", hq.StateApplied, true, true)
	if got := env.Podman("exec", "hq-app-app", "wget", "-q", "-O-", "http://db:8080/"); got != "hello from the image" {
		t.Fatalf("app asked http://db:8080/ and got %q", got)
	}
	net := env.NetworkPrefix + "app"
	if labels := env.Podman("network", "inspect", "--format", "{{.Labels}}", net); !strings.Contains(labels, "hq.node:web-1") || !strings.Contains(labels, "hq.module:app") {
		t.Fatalf("the network %s is labelled %s", net, labels)
	}
	log, _ := os.ReadFile(argv)
	if n := strings.Count(string(log), "network create"); n != 1 {
		t.Fatalf("the network was created %d times for two containers, want once:\n%s", n, log)
	}

	b.reconcile(b.decl(mod("app", true, db))) // app goes, db still joins the network
	if !strings.Contains(strings.Join(networks(env), " "), net) {
		t.Fatalf("the network went while db still uses it: %v", networks(env))
	}
	b.reconcile(b.decl())
	for _, n := range networks(env) {
		if n == net {
			t.Fatalf("the network %s is still there with no container of the module left", net)
		}
	}
}

// Env values reach the container through a file only hostd can read, which goes once the
// container is made: no value is on a podman command line or in a label, and a recreate still
// says when the env changed. Bounds and the restart policy reach podman.
func TestContainerEnvStaysOutOfLabelsAndArgv(t *testing.T) {
	b, env := containerBed(t)
	cli, argv := env.ArgvLog()
	b.eng.ctrs.cli.path = cli
	secret := "s3cr3t-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	app := func(value string) *hq.Declaration {
		return b.decl(mod("app", true, sleepingContainer("web", env.Image, func(r *hq.Resource) {
			r.Env = map[string]string{"SECRET": value, "SPACED": " a = b # c "}
			r.Cpus, r.Memory, r.LogMaxSize = "0.5", "256m", "10m"
		})))
	}
	b.reconcile(app(secret)).want(t, "app/web", hq.StateApplied, true, true)
	if got := env.Podman("exec", "hq-app-web", "sh", "-c", `echo "$SECRET"`); got != secret {
		t.Fatalf("echo $SECRET in the container: %q", got)
	}
	if got := env.Podman("exec", "hq-app-web", "sh", "-c", `printf '[%s]' "$SPACED"`); got != "[ a = b # c ]" {
		t.Fatalf("a value with spaces, '=' and '#' reached the container as %s", got)
	}
	labels := env.Podman("inspect", "--format", "{{json .Config.Labels}}", "hq-app-web")
	if strings.Contains(labels, secret) || !strings.Contains(labels, `SECRET`) {
		t.Fatalf("labels %s: want the variable's name and not its value", labels)
	}
	limits := env.Podman("inspect", "--format", "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.LogConfig.Size}}", "hq-app-web")
	if limits != "500000000 268435456 10MB" {
		t.Fatalf("cpus, memory and log size: %s", limits)
	}
	if left, _ := filepath.Glob(filepath.Join(b.state, "containers", "*.env")); len(left) > 0 {
		t.Fatalf("env files left after the create: %v", left)
	}
	if fi, err := os.Stat(filepath.Join(b.state, "containers", "env.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key of env digests: %v %v", fi, err)
	}

	changed := secret + "-2"
	r := b.reconcile(app(changed)).want(t, "app/web", hq.StateApplied, true, true)
	if r.Note != "app/web recreated (env changed)" {
		t.Fatalf("note %q", r.Note)
	}
	if got := env.Podman("exec", "hq-app-web", "sh", "-c", `echo "$SECRET"`); got != changed {
		t.Fatalf("after the change echo $SECRET: %q", got)
	}
	log, _ := os.ReadFile(argv)
	if strings.Contains(string(log), secret) {
		t.Fatalf("a value is on a command line:\n%s", log)
	}
	for _, want := range []string{"--env-file", "--cpus 0.5", "--memory 256m", "--log-opt max-size=10m"} {
		if !strings.Contains(string(log), want) {
			t.Fatalf("no command line has %q:\n%s", want, log)
		}
	}
}

// With restart always, podman itself brings back a container whose process was killed: no
// reconcile runs in between.
func TestContainerRestartAlways(t *testing.T) {
	b, env := containerBed(t)
	d := b.decl(mod("app", true, sleepingContainer("web", env.Image, func(r *hq.Resource) { r.Restart = hq.RestartAlways })))
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, true)
	pid, err := strconv.Atoi(env.Podman("inspect", "--format", "{{.State.Pid}}", "hq-app-web"))
	if err != nil || pid <= 0 {
		t.Fatalf("the container's process: %d %v", pid, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		now := env.Podman("inspect", "--format", "{{.State.Status}} {{.State.Pid}} {{.RestartCount}}", "hq-app-web")
		if f := strings.Fields(now); len(f) == 3 && f[0] == "running" && f[1] != strconv.Itoa(pid) && f[2] != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed container did not come back by itself: %s", now)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A label keeps env values as keyed digests: the same value, in a label written now or in one
// written before values were digested, is no change; another value is.
func TestSpecChangesComparesEnvByDigest(t *testing.T) {
	b := setup(t)
	declared := hq.Resource{Name: "web", Kind: hq.KindContainer, Env: map[string]string{"PASSWORD": "hunter2"}}
	label, err := b.eng.declLabel(declared)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(label, "hunter2") || !strings.Contains(label, "PASSWORD") {
		t.Fatalf("label %s: want the name and not the value", label)
	}
	var prev hq.Resource
	if err := json.Unmarshal([]byte(label), &prev); err != nil {
		t.Fatal(err)
	}
	if got := b.eng.specChanges(prev, declared); len(got) != 0 {
		t.Fatalf("the same env reads as changed: %v", got)
	}
	if got := b.eng.specChanges(declared, declared); len(got) != 0 {
		t.Fatalf("an older label with the value itself reads as changed: %v", got)
	}
	changed := declared
	changed.Env = map[string]string{"PASSWORD": "hunter3"}
	changed.Memory = "64m"
	if got := b.eng.specChanges(prev, changed); strings.Join(got, ",") != "env,memory" {
		t.Fatalf("changes %v, want env and memory", got)
	}
}
