package hq

import (
	"cmp"
	"strings"
	"testing"
)

func TestContainerValidation(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	img := "registry.example/team/app" + digest
	container := func(r Resource) Resource {
		r.Name, r.Kind = cmp.Or(r.Name, "c"), KindContainer
		if r.Image == "" {
			r.Image = img
		}
		return r
	}
	job := func(r Resource) Resource {
		r.Name, r.Kind = cmp.Or(r.Name, "j"), KindJob
		if r.Image == "" {
			r.Image = img
		}
		return r
	}
	for _, tc := range []struct {
		r Resource
		// field is the one detail's field, "" when the resource is valid; message, when set, is
		// what its message must hold.
		field, message string
	}{
		{container(Resource{}), "", ""},
		{container(Resource{Image: "app" + digest}), "", ""},
		{container(Resource{Image: "localhost/app" + digest}), "", ""},
		{container(Resource{Image: "localhost:5000/app" + digest}), "", ""},
		{container(Resource{Image: "[::1]:5000/app" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "registry.example/team/app:1.2" + digest}), "", ""},
		{container(Resource{Image: "127.0.0.1:5000/app" + digest}), "", ""},
		{container(Resource{Image: "localhost/app:v1" + digest}), "", ""},
		{container(Resource{Image: "docker.io/library/nginx:1.27-alpine" + digest}), "", ""},
		{container(Resource{Image: "registry.example:443/a_b/c__d/e--f.g" + digest}), "", ""},
		{container(Resource{Command: []string{"/app", "--port", "80"}, Env: map[string]string{"A": "1"}}), "", ""},
		{container(Resource{Volumes: []string{"/srv/app/data:/data", "/etc/app:/etc/app:ro", "/srv/cache:/cache:rw"}}), "", ""},
		{container(Resource{Ports: []string{"127.0.0.1:8080:80", "8443:443/tcp", "[::1]:5353:53/udp", "5354:53/udp"}}), "", ""},
		{container(Resource{Ports: []string{"127.0.0.1:8080:80", "10.0.0.1:8080:80", "8080:80/udp"}}), "", ""},
		{container(Resource{Network: "host"}), "", ""},
		{container(Resource{Network: "none"}), "", ""},
		{container(Resource{User: "1000"}), "", ""},
		{container(Resource{User: "1000:1000"}), "", ""},
		{container(Resource{User: "app_user.x:staff-1"}), "", ""},
		{container(Resource{Health: &Health{HTTP: "http://127.0.0.1:8080/healthz"}}), "", ""},
		{container(Resource{Health: &Health{Command: []string{"pg_isready"}}}), "", ""},
		{container(Resource{RestartOn: []string{"conf"}}), "", ""},
		{container(Resource{Gate: new(true), Group: "g"}), "", ""},
		{container(Resource{Volumes: []string{"/srv/{{.Node}}:/data"}, Ports: []string{"{{.Vars.ip}}:{{.Vars.port}}:80"}, User: "{{.Vars.uid}}"}), "", ""},
		{job(Resource{}), "", ""},
		{job(Resource{Command: []string{"/migrate", "up"}, Volumes: []string{"/srv/db:/db"}, Network: "host", User: "0", Env: map[string]string{"X": "y"}}), "", ""},

		{container(Resource{Image: "app:latest"}), "image", "pinned by digest"},
		{container(Resource{Image: "app"}), "image", "pinned by digest"},
		{container(Resource{Image: "registry.example/team/app:1.2"}), "image", "a tag can move"},
		{container(Resource{Image: "app@sha256:abc"}), "image", "64 lowercase hex"},
		{container(Resource{Image: "app@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"}), "image", "64 lowercase hex"},
		{container(Resource{Image: "app@sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}), "image", "pinned by digest"},
		{container(Resource{Image: "App" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "team//app" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "app:" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "-app" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "host:port/app" + digest}), "image", "not an image reference"},
		// Transports: a file, a directory or a store the CLI would read past the digest.
		{container(Resource{Image: "oci-archive:x" + digest}), "image", "oci-archive"},
		{container(Resource{Image: "oci-archive:/tmp/x.tar" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "dir:x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "dir:5000/x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "sif:5000/x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "oci:5000/x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "containers-storage:x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "containers-storage:localhost/x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "docker://localhost/x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "docker:x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "docker-archive:x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "docker-daemon:x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "registry:5000/x" + digest}), "image", "not an image reference"},
		{container(Resource{Image: "app:1.2" + digest}), "image", "not an image reference"},
		{job(Resource{Image: "oci-archive:x" + digest}), "image", "not an image reference"},
		{container(Resource{Name: "web.prev"}), "name", `".prev"`},
		{job(Resource{Name: "migrate.next"}), "name", `".next"`},
		{container(Resource{Image: "{{.Vars.image}}"}), "image", "pinned by digest"},
		{container(Resource{Image: "app" + digest[:len(digest)-1] + "{{.Vars.x}}"}), "image", "pinned by digest"},
		{Resource{Name: "c", Kind: KindContainer}, "image", "is required"},
		{Resource{Name: "j", Kind: KindJob}, "image", "is required"},
		{job(Resource{Image: "app:latest"}), "image", "pinned by digest"},

		{container(Resource{Command: []string{}}), "command", ""},
		{container(Resource{Command: []string{"", "x"}}), "command", ""},
		{job(Resource{Command: []string{""}}), "command", ""},

		{container(Resource{Volumes: []string{"/srv/data"}}), "volumes[0]", "HOST:CONTAINER"},
		{container(Resource{Volumes: []string{"/a:/b:ro:x"}}), "volumes[0]", "HOST:CONTAINER"},
		{container(Resource{Volumes: []string{"/a:/b:z"}}), "volumes[0]", `"ro" or "rw"`},
		{container(Resource{Volumes: []string{"srv/data:/data"}}), "volumes[0]", "host path"},
		{container(Resource{Volumes: []string{"/srv/../etc:/data"}}), "volumes[0]", "host path"},
		{container(Resource{Volumes: []string{"/:/host"}}), "volumes[0]", "host path"},
		{container(Resource{Volumes: []string{"/srv/data/:/data"}}), "volumes[0]", "host path"},
		{container(Resource{Volumes: []string{"/srv/data:data"}}), "volumes[0]", "container path"},
		{container(Resource{Volumes: []string{"/srv/data:/data/../x"}}), "volumes[0]", "container path"},
		{container(Resource{Volumes: []string{"/srv/a:/data", "/srv/b:/data:ro"}}), "volumes[1]", "volumes[0]"},
		{job(Resource{Volumes: []string{"/srv/../x:/x"}}), "volumes[0]", "host path"},

		{container(Resource{Ports: []string{"80"}}), "ports[0]", "HOSTPORT:CONTAINERPORT"},
		{container(Resource{Ports: []string{"1.2.3.4:80:80:80"}}), "ports[0]", "HOSTPORT:CONTAINERPORT"},
		{container(Resource{Ports: []string{"::1:8080:80"}}), "ports[0]", "HOSTPORT:CONTAINERPORT"},
		{container(Resource{Ports: []string{"0:80"}}), "ports[0]", "1 to 65535"},
		{container(Resource{Ports: []string{"8080:65536"}}), "ports[0]", "1 to 65535"},
		{container(Resource{Ports: []string{"+80:80"}}), "ports[0]", "1 to 65535"},
		{container(Resource{Ports: []string{"8000-8010:80"}}), "ports[0]", "1 to 65535"},
		{container(Resource{Ports: []string{"8080:80/sctp"}}), "ports[0]", "tcp or udp"},
		{container(Resource{Ports: []string{"localhost:8080:80"}}), "ports[0]", "IPv4"},
		{container(Resource{Ports: []string{"1.2.3:8080:80"}}), "ports[0]", "IPv4"},
		{container(Resource{Ports: []string{"[1.2.3.4]:8080:80"}}), "ports[0]", "IPv6"},
		{container(Resource{Ports: []string{"[fe80::1%eth0]:8080:80"}}), "ports[0]", "IPv6"},
		{container(Resource{Ports: []string{"[::1]:8080"}}), "ports[0]", "HOSTPORT:CONTAINERPORT"},
		{container(Resource{Ports: []string{"127.0.0.1:8080:80", "127.0.0.1:8080:81"}}), "ports[1]", "ports[0]"},
		{container(Resource{Ports: []string{"8080:80", "127.0.0.1:8080:81"}}), "ports[1]", "ports[0]"},
		{container(Resource{Ports: []string{"8080:80", "8080:81"}}), "ports[1]", "ports[0]"},
		{container(Resource{Ports: []string{"8080:80"}, Network: "host"}), "ports", "host networking publishes nothing"},
		{container(Resource{Ports: []string{"8080:80"}, Network: "none"}), "ports", "no ports"},
		{job(Resource{Ports: []string{"8080:80"}}), "ports", "not a field of a job"},

		{container(Resource{Network: "bridge"}), "network", `"host"`},
		{container(Resource{Network: "container:db"}), "network", `"none"`},

		{container(Resource{Cpus: "0.5", Memory: "256m", LogMaxSize: "10m", Restart: "always"}), "", ""},
		{container(Resource{Cpus: "2", Memory: "1G", LogMaxSize: "512k", Restart: "on-failure"}), "", ""},
		{container(Resource{Cpus: "0.01", Memory: "6m", Restart: "no"}), "", ""},
		{job(Resource{Cpus: "1.25", Memory: "6291456", LogMaxSize: "1b"}), "", ""},
		{container(Resource{Cpus: "0.001"}), "cpus", "from 0.01"},
		{container(Resource{Cpus: "0"}), "cpus", "from 0.01"},
		{container(Resource{Cpus: "-1"}), "cpus", ""},
		{container(Resource{Cpus: "1e3"}), "cpus", ""},
		{container(Resource{Cpus: ".5"}), "cpus", ""},
		{container(Resource{Cpus: "half"}), "cpus", `"half"`},
		{container(Resource{Memory: "5m"}), "memory", "at least 6m"},
		{container(Resource{Memory: "256mb"}), "memory", ""},
		{container(Resource{Memory: "1.5g"}), "memory", ""},
		{container(Resource{Memory: "m"}), "memory", ""},
		{container(Resource{LogMaxSize: "0"}), "log_max_size", "above 0"},
		{container(Resource{LogMaxSize: "10 m"}), "log_max_size", ""},
		{container(Resource{Restart: "unless-stopped"}), "restart", `"on-failure"`},
		{container(Resource{Restart: "on-failure:3"}), "restart", ""},
		{job(Resource{Restart: "always"}), "restart", "not a field of a job"},
		{container(Resource{Env: map[string]string{"A": "line\nbreak"}}), "env.A", "line break"},
		{container(Resource{Env: map[string]string{"A B": "1"}}), "env", "not a variable name"},
		{container(Resource{Env: map[string]string{"PATH*": "1"}}), "env", "not a variable name"},
		{container(Resource{Env: map[string]string{"#A": "1"}}), "env", "not a variable name"},
		{job(Resource{Env: map[string]string{"1A": "1"}}), "env", "not a variable name"},
		{container(Resource{Env: map[string]string{"app.port-2": "x y", "_A": `"quoted" = #`}}), "", ""},

		{container(Resource{User: "root;id"}), "user", ""},
		{container(Resource{User: "a:b:c"}), "user", ""},
		{container(Resource{User: ":1000"}), "user", ""},
		{container(Resource{User: "1000:"}), "user", ""},
		{container(Resource{User: "-1"}), "user", ""},
		{container(Resource{User: strings.Repeat("u", 65)}), "user", ""},
		{job(Resource{User: "a b"}), "user", ""},

		{container(Resource{Health: &Health{}}), "health", "http"},
		{container(Resource{Health: &Health{HTTP: "http://x/", Command: []string{"true"}}}), "health", "not both"},
		{container(Resource{Health: &Health{Command: []string{}}}), "health.command", ""},
		{container(Resource{Health: &Health{Command: []string{"", "x"}}}), "health.command", ""},
		{container(Resource{Health: &Health{HTTP: "ftp://x/"}}), "health.http", ""},
		{job(Resource{Health: &Health{HTTP: "http://x/"}}), "health", "not a field of a job"},

		{container(Resource{RestartOn: []string{"nothing"}}), "restart_on", "not another resource"},
		{container(Resource{RestartOn: []string{"c"}}), "restart_on", "not another resource"},
		{job(Resource{RestartOn: []string{"conf"}}), "restart_on", "not a field of a job"},
		{container(Resource{Path: "/srv/app"}), "path", "not a field of a container"},
		{container(Resource{Mode: "0644"}), "mode", "not a field of a container"},
		{container(Resource{Package: "nginx"}), "package", "not a field of a container"},
	} {
		// A file for restart_on to name.
		err := ValidateModule([]Resource{tc.r, {Name: "conf", Kind: KindFile, Path: "/etc/app.conf", Content: "x"}})
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v refused: %v", tc.r, err)
			}
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Code != CodeInvalid || len(e.Details) != 1 || e.Details[0].Field != "resources[0]."+tc.field || !strings.Contains(e.Details[0].Message, tc.message) {
			t.Errorf("%+v: error %#v, want one detail on %s saying %q", tc.r, err, tc.field, tc.message)
		}
	}
}

func TestContainerFieldsLeaveOtherDigestsAlone(t *testing.T) {
	r := Resource{Name: "s", Kind: KindService, Command: []string{"/app"}, Health: &Health{HTTP: "http://127.0.0.1/"}}
	want := DigestOf([]byte(`{"name":"s","kind":"service","command":["/app"],"health":{"http":"http://127.0.0.1/"}}`))
	if got := r.Digest(); got != want {
		t.Fatalf("digest %s, want %s", got, want)
	}
}

// What a host says of itself is bounded and must name its hostd.

// Actions and jobs gate what follows them unless they say otherwise; containers, like
// services and files, gate only when they ask to.
func TestWhichKindsGateByDefault(t *testing.T) {
	for kind, want := range map[string]bool{KindAction: true, KindJob: true, KindContainer: false, KindService: false, KindFile: false} {
		r := Resource{Name: "r", Kind: kind}
		if got := r.IsGate(); got != want {
			t.Errorf("a %s gates by default: %v, want %v", kind, got, want)
		}
		r.Gate = ptrTo(!want)
		if got := r.IsGate(); got != !want {
			t.Errorf("a %s with gate: %v gates: %v", kind, !want, got)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
