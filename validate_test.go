package hq

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSymlinkTargetMustStayInside(t *testing.T) {
	for target, ok := range map[string]bool{
		"../../outside": false, "../a.conf": true, "../../a": false, "/etc/x": true, "a/../../..": false, "./x": true, "..": true,
	} {
		err := ValidateModule([]Resource{{Name: "l", Kind: KindSymlink, Path: "/opt/esc", Target: target}})
		if (err == nil) != ok {
			t.Errorf("target %q from /opt: err = %v, want ok=%v", target, err, ok)
		}
	}
}

func TestOverlappingPathsRefused(t *testing.T) {
	file := func(name, p string) Resource { return Resource{Name: name, Kind: KindFile, Path: p, Content: "x"} }
	dir := func(name, p string) Resource { return Resource{Name: name, Kind: KindDirectory, Path: p} }
	absent := func(name, p string) Resource { return Resource{Name: name, Kind: KindAbsent, Path: p} }
	link := func(name, p string) Resource { return Resource{Name: name, Kind: KindSymlink, Path: p, Target: "/t"} }
	for _, tc := range []struct {
		name      string
		resources []Resource
		// want is the field of each detail and the two names its message must hold.
		want [][3]string
	}{
		{"absent above a file", []Resource{absent("gone", "/x"), file("y", "/x/y")},
			[][3]string{{"resources[1].path", `"gone"`, `"y"`}}},
		{"a file used as a directory", []Resource{file("conf", "/etc/same/child"), file("same", "/etc/same")},
			[][3]string{{"resources[0].path", `"same"`, `"conf"`}}},
		{"a symlink above a file, two levels down", []Resource{link("l", "/opt/l"), file("f", "/opt/l/a/b")},
			[][3]string{{"resources[1].path", `"l"`, `"f"`}}},
		{"the same path twice", []Resource{dir("a", "/srv"), dir("b", "/srv")},
			[][3]string{{"resources[1].path", `"a"`, `"b"`}}},
		{"a file under a file under a directory", []Resource{dir("d", "/srv"), file("f", "/srv/f"), file("g", "/srv/f/g")},
			[][3]string{{"resources[2].path", `"f"`, `"g"`}}},
		{"two files under an absent", []Resource{file("a", "/x/a"), absent("x", "/x"), file("b", "/x/b")},
			[][3]string{{"resources[0].path", `"x"`, `"a"`}, {"resources[2].path", `"x"`, `"b"`}}},
		{"files under a directory", []Resource{dir("d", "/srv"), file("a", "/srv/a"), dir("sub", "/srv/sub"), absent("b", "/srv/sub/b")}, nil},
		{"a shared prefix is not a parent", []Resource{file("a", "/x"), file("b", "/x-y"), file("c", "/xy/z"), absent("d", "/x.d/e")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateModule(tc.resources)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Code != CodeInvalid || len(e.Details) != len(tc.want) {
				t.Fatalf("error %#v, want %d invalid detail(s)", err, len(tc.want))
			}
			for i, w := range tc.want {
				d := e.Details[i]
				if d.Field != w[0] || !strings.Contains(d.Message, w[1]) || !strings.Contains(d.Message, w[2]) {
					t.Errorf("detail %+v, want field %s naming %s and %s", d, w[0], w[1], w[2])
				}
			}
		})
	}
}

func TestPackageValidation(t *testing.T) {
	pkg := func(r Resource) []Resource {
		r.Name, r.Kind = "p", KindPackage
		return []Resource{r}
	}
	for _, tc := range []struct {
		r Resource
		// field is the one detail's field, "" when the resource is valid.
		field string
	}{
		{Resource{Package: "nginx", Version: "1.22.1-9"}, ""},
		{Resource{Package: "libstdc++6", Version: "1:12.2.0-14+deb12u1"}, ""},
		{Resource{Package: "g++", Version: "4:12.2.0-3"}, ""},
		{Resource{Package: "hq-demo", Version: "2.0~rc1"}, ""},
		{Resource{Package: "zlib1g", Version: "1:1.2.13.dfsg-1"}, ""},
		{Resource{Package: "tzdata", Version: "2024a-0+deb12u1"}, ""},
		{Resource{Package: "nginx"}, ""},
		{Resource{Package: "nginx", State: "present"}, ""},
		{Resource{Package: "nginx", State: "absent"}, ""},
		{Resource{Package: "hq-demo", Source: "/srv/pkgs/hq-demo_1.0_all.deb"}, ""},
		{Resource{Package: "hq-demo", Version: "1.0", Source: "/srv/pkgs/hq-demo_1.0_all.deb"}, ""},
		{Resource{Package: "nginx", Scripts: true}, ""},
		{Resource{}, "package"},
		{Resource{Package: "n"}, "package"},
		{Resource{Package: "Nginx"}, "package"},
		{Resource{Package: "-nginx"}, "package"},
		{Resource{Package: "nginx_x"}, "package"},
		{Resource{Package: "nginx:amd64"}, "package"},
		{Resource{Package: "nginx", Version: "v1.0"}, "version"},
		{Resource{Package: "nginx", Version: "1.0-"}, "version"},
		{Resource{Package: "nginx", Version: ":1.0"}, "version"},
		{Resource{Package: "nginx", Version: "a:1.0"}, "version"},
		{Resource{Package: "nginx", Version: "1.0 beta"}, "version"},
		{Resource{Package: "nginx", Version: "1.0-1_2"}, "version"},
		{Resource{Package: "nginx", Version: "1.0;rm"}, "version"},
		{Resource{Package: "nginx", State: "latest"}, "state"},
		{Resource{Package: "nginx", State: "absent", Version: "1.0"}, "version"},
		{Resource{Package: "nginx", State: "absent", Source: "/x.deb"}, "source"},
		{Resource{Package: "nginx", State: "absent", Scripts: true}, "scripts"},
		{Resource{Package: "nginx", Source: "x.deb"}, "source"},
		{Resource{Package: "nginx", Source: "/srv/../x.deb"}, "source"},
		{Resource{Package: "nginx", Group: "g"}, "group"},
		{Resource{Package: "nginx", Path: "/usr/sbin/nginx"}, "path"},
		{Resource{Package: "nginx", Command: []string{"true"}}, "command"},
	} {
		err := ValidateModule(pkg(tc.r))
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v refused: %v", tc.r, err)
			}
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Code != CodeInvalid || len(e.Details) != 1 || e.Details[0].Field != "resources[0]."+tc.field {
			t.Errorf("%+v: error %#v, want one detail on %s", tc.r, err, tc.field)
		}
	}
	// Package fields belong to packages only.
	err := ValidateModule([]Resource{{Name: "f", Kind: KindFile, Path: "/x", Package: "nginx", Version: "1", State: "absent", Source: "/y"}})
	if e, ok := err.(*Error); !ok || len(e.Details) != 4 {
		t.Fatalf("package fields on a file: %v", err)
	}
}

func TestPackageFieldsLeaveOtherDigestsAlone(t *testing.T) {
	// Resources declared before packages existed keep their digests: every new field is omitted
	// when empty, so hosts do not see a change in every resource.
	r := Resource{Name: "a", Kind: KindFile, Path: "/etc/a", Content: "x"}
	if got, want := r.Digest(), DigestOf([]byte(`{"name":"a","kind":"file","path":"/etc/a","content":"x"}`)); got != want {
		t.Fatalf("digest %s, want %s", got, want)
	}
}

func TestContainerValidation(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	img := "registry.example/team/app" + digest
	container := func(r Resource) Resource {
		r.Name, r.Kind = "c", KindContainer
		if r.Image == "" {
			r.Image = img
		}
		return r
	}
	job := func(r Resource) Resource {
		r.Name, r.Kind = "j", KindJob
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
		{container(Resource{Image: "app:1.2" + digest}), "", ""},
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

func TestServiceHealthIsHTTPOnly(t *testing.T) {
	svc := Resource{Name: "s", Kind: KindService, Command: []string{"/app"}, Health: &Health{HTTP: "http://127.0.0.1/", Command: []string{"true"}}}
	err := ValidateModule([]Resource{svc})
	e, ok := err.(*Error)
	if !ok || len(e.Details) != 1 || e.Details[0].Field != "resources[0].health.command" || !strings.Contains(e.Details[0].Message, "over http only") {
		t.Fatalf("a service's health command: %v", err)
	}
	svc.Health.Command = nil
	if err := ValidateModule([]Resource{svc}); err != nil {
		t.Fatalf("a service's http health refused: %v", err)
	}
}

func TestEveryKindHasItsFields(t *testing.T) {
	for _, k := range Kinds {
		if _, ok := allowed[k]; !ok {
			t.Errorf("kind %q has no allowed fields", k)
		}
	}
	if len(allowed) != len(Kinds) {
		t.Errorf("allowed has %d kinds, Kinds %d", len(allowed), len(Kinds))
	}
	// Every field a resource can set is one setFields reports, so a field that does not belong
	// to a kind is refused, and every field a kind allows is one of them.
	var all Resource
	v := reflect.ValueOf(&all).Elem()
	var names []string
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == "name" || name == "kind" || name == "gate" || name == "group" {
			continue
		}
		names = append(names, name)
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"x"}))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{"x": "x"}))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("field %s: set it here", name)
		}
	}
	set := all.setFields()
	slices.Sort(names)
	slices.Sort(set)
	if !slices.Equal(names, set) {
		t.Errorf("setFields reports %v, the resource has %v", set, names)
	}
	for k, fields := range allowed {
		for _, f := range fields {
			if !slices.Contains(names, f) {
				t.Errorf("kind %s allows %q, which is not a field", k, f)
			}
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
func TestValidateReportHostFacts(t *testing.T) {
	for _, tc := range []struct {
		host *HostFacts
		ok   bool
	}{
		{nil, true},
		{&HostFacts{HostdVersion: "v1", OS: "Debian", Arch: "amd64"}, true},
		{&HostFacts{OS: "Debian", Arch: "amd64"}, false},
		{&HostFacts{HostdVersion: "v1", OS: strings.Repeat("x", MaxHostFact+1)}, false},
		{&HostFacts{HostdVersion: strings.Repeat("1", MaxHostFact+1)}, false},
	} {
		err := ValidateReport(Report{Host: tc.host})
		if (err == nil) != tc.ok {
			t.Errorf("host %+v: %v, want ok=%v", tc.host, err, tc.ok)
		}
	}
}
