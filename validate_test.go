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
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Map:
			f.Set(reflect.MakeMapWithSize(f.Type(), 1))
			f.SetMapIndex(reflect.New(f.Type().Key()).Elem(), reflect.New(f.Type().Elem()).Elem())
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

// A refused path says which rule it breaks.
func TestPathProblemSaysWhatIsWrong(t *testing.T) {
	for p, want := range map[string]string{
		"etc/rel":     `"etc/rel" must be absolute (start with /)`,
		"":            "is required: an absolute path, like /etc/app.conf",
		"/":           "must name something under /, not / itself",
		"/etc/../x":   `"/etc/../x" must not climb with '..'`,
		"/etc/app/":   `"/etc/app/" must be clean: "/etc/app" (no trailing '/', no '//' or '/./')`,
		"/etc//a":     `"/etc//a" must be clean: "/etc/a" (no trailing '/', no '//' or '/./')`,
		"/etc/a\x00b": `"/etc/a\x00b" holds a NUL byte`,
	} {
		err := ValidateModule([]Resource{{Name: "conf", Kind: KindFile, Path: p, Content: "x"}})
		e, ok := err.(*Error)
		if !ok || len(e.Details) != 1 || e.Details[0].Field != "resources[0].path" || e.Details[0].Message != want {
			t.Errorf("path %q: %v, want resources[0].path: %s", p, err, want)
		}
	}
	if _, _, _, err := ParseVolume("data:/data"); err == nil || !strings.Contains(err.Error(), `"data" must be absolute (start with /)`) {
		t.Errorf("a relative host path: %v", err)
	}
}
