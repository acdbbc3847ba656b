package db

import (
	"context"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

func at(kind, name, path string) hq.Resource {
	r := hq.Resource{Name: name, Kind: kind, Path: path}
	switch kind {
	case hq.KindFile:
		r.Content = "x\n"
	case hq.KindSymlink:
		r.Target = "/t"
	}
	return r
}

// Two modules on one node may not declare one path, nor a path under another's file, symlink or
// absent: the assignment that would do it is refused with a conflict and changes nothing.
func TestOverlappingPathsAcrossModulesRefusedAtAssignment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		first  hq.Resource
		second hq.Resource
		ok     bool
	}{
		{"the same path", at(hq.KindFile, "a", "/etc/same"), at(hq.KindFile, "b", "/etc/same"), false},
		{"a file used as a directory", at(hq.KindFile, "a", "/etc/same"), at(hq.KindFile, "b", "/etc/same/child"), false},
		{"a file under an absent", at(hq.KindAbsent, "a", "/x"), at(hq.KindFile, "b", "/x/y"), false},
		{"an absent over a file", at(hq.KindFile, "a", "/x/y/z"), at(hq.KindAbsent, "b", "/x"), false},
		{"a file under a symlink", at(hq.KindSymlink, "a", "/opt/l"), at(hq.KindDirectory, "b", "/opt/l/d"), false},
		{"a file under a directory", at(hq.KindDirectory, "a", "/srv"), at(hq.KindFile, "b", "/srv/b"), true},
		{"a directory over a file", at(hq.KindFile, "a", "/srv/a"), at(hq.KindDirectory, "b", "/srv"), true},
		{"a shared prefix", at(hq.KindFile, "a", "/etc/same"), at(hq.KindFile, "b", "/etc/same-child"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := setup(t)
			ctx := context.Background()
			mustNode(t, s, "web-1")
			mustNode(t, s, "web-2")
			mustModule(t, s, "one", tc.first)
			mustModule(t, s, "two", tc.second)
			mustAssign(t, s, "web-1", "one")
			mustAssign(t, s, "web-2", "two") // another node: nothing to share
			_, err := s.Assign(ctx, "web-1", "two", nil, nil)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantCode(t, err, hq.CodeConflict)
			for _, ref := range []string{"one/a", "two/b", "web-1", tc.first.Path, tc.second.Path} {
				if !strings.Contains(err.Error(), ref) {
					t.Errorf("%q does not name %s", err, ref)
				}
			}
			v := mustGetNode(t, s, "web-1")
			if v.Generation != 1 || len(v.Assignments) != 1 || len(v.Resources) != 1 {
				t.Fatalf("after a refused assignment: generation %d, %d assignment(s), %d resource(s); want 1, 1, 1",
					v.Generation, len(v.Assignments), len(v.Resources))
			}
		})
	}
}

// A new revision that would overlap with another module already on one of its nodes is refused
// with a conflict: no revision, no generation moves, on any node.
func TestOverlappingPathsAcrossModulesRefusedAtUpload(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	for _, n := range []string{"web-1", "web-2", "web-3"} {
		mustNode(t, s, n)
	}
	mustModule(t, s, "base", at(hq.KindFile, "motd", "/etc/motd"), at(hq.KindDirectory, "etc-app", "/etc/app"))
	mustModule(t, s, "app", at(hq.KindFile, "conf", "/etc/app/app.conf"))
	for _, n := range []string{"web-1", "web-2"} {
		mustAssign(t, s, n, "app")
	}
	mustAssign(t, s, "web-2", "base")
	mustAssign(t, s, "web-3", "base")

	_, err := s.PutModule(ctx, "app", []hq.Resource{at(hq.KindFile, "conf", "/etc/app/app.conf"), at(hq.KindFile, "banner", "/etc/motd/banner")})
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "app/banner") || !strings.Contains(err.Error(), "base/motd") || !strings.Contains(err.Error(), "web-2") {
		t.Fatalf("%q does not name both resources and the node", err)
	}
	_, err = s.PutModule(ctx, "app", []hq.Resource{at(hq.KindFile, "conf", "/etc/app/app.conf"), at(hq.KindFile, "motd", "/etc/motd")})
	wantCode(t, err, hq.CodeConflict)
	m := mustGetModule(t, s, "app")
	if m.Revision != 1 {
		t.Fatalf("a refused upload made revision %d", m.Revision)
	}
	for n, want := range map[string]int64{"web-1": 1, "web-2": 2, "web-3": 1} {
		if g := mustGeneration(t, s, n); g != want {
			t.Fatalf("%s at generation %d after a refused upload, want %d", n, g, want)
		}
	}
	// Under base's directory is fine, on every node.
	res := mustModule(t, s, "app", at(hq.KindFile, "conf", "/etc/app/app.conf"), at(hq.KindFile, "extra", "/etc/app/extra.conf"))
	if len(res.Generations) != 2 {
		t.Fatalf("upload moved %v, want web-1 and web-2", res.Generations)
	}
}

// A fleet-wide upload passes on nodes alike (whose check is remembered from the first of them)
// and is still refused for the one node whose other modules differ and overlap.
func TestOverlapCheckAcrossAFleet(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "base", at(hq.KindDirectory, "etc", "/etc/app"))
	mustModule(t, s, "odd", at(hq.KindAbsent, "gone", "/etc/app/new.conf"))
	mustModule(t, s, "app", at(hq.KindFile, "conf", "/etc/app/app.conf"))
	for i := range 50 {
		n := "web-" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		mustNode(t, s, n)
		mustAssign(t, s, n, "base")
		mustAssign(t, s, n, "app")
	}
	if res := mustModule(t, s, "app", at(hq.KindFile, "conf", "/etc/app/app.conf"), at(hq.KindFile, "old", "/etc/app/old.conf")); len(res.Generations) != 50 {
		t.Fatalf("moved %d node(s), want 50", len(res.Generations))
	}
	mustAssign(t, s, "web-bx", "odd")
	_, err := s.PutModule(ctx, "app", []hq.Resource{at(hq.KindFile, "conf", "/etc/app/app.conf"), at(hq.KindFile, "new", "/etc/app/new.conf")})
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "web-bx") {
		t.Fatalf("%q does not name web-bx", err)
	}
	if m := mustGetModule(t, s, "app"); m.Revision != 2 {
		t.Fatalf("a refused upload made revision %d", m.Revision)
	}
}

// Containers are named hq-<module>-<resource>, and names hold '-': module a's resource b-c and
// module a-b's resource c would share one container on a node, each taking the other's for its
// own. The assignment, the upload and the placement that would bring them together are refused
// with a conflict naming both; apart, on two nodes, both are fine.
func TestContainerNamesMeetRefused(t *testing.T) {
	t.Parallel()
	const img = "localhost/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	ctr := func(kind, name string) hq.Resource { return hq.Resource{Name: name, Kind: kind, Image: img} }
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustNode(t, s, "web-2")
	wantNamed := func(err error, what ...string) {
		t.Helper()
		wantCode(t, err, hq.CodeConflict)
		for _, s := range what {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%q does not name %s", err, s)
			}
		}
	}

	mustModule(t, s, "a", ctr(hq.KindContainer, "b-c"))
	mustModule(t, s, "a-b", ctr(hq.KindJob, "c"))
	mustAssign(t, s, "web-1", "a")
	mustAssign(t, s, "web-2", "a-b") // apart: fine
	_, err := s.Assign(ctx, "web-1", "a-b", nil, nil)
	wantNamed(err, "a/b-c", "a-b/c", "web-1", "hq-a-b-c")
	if v := mustGetNode(t, s, "web-1"); v.Generation != 1 || len(v.Assignments) != 1 {
		t.Fatalf("after a refused assignment: generation %d, %d assignment(s); want 1, 1", v.Generation, len(v.Assignments))
	}

	// A new revision that would bring the name to a node where the other module is.
	mustModule(t, s, "m", ctr(hq.KindContainer, "n"))
	mustModule(t, s, "m-n", ctr(hq.KindContainer, "z"))
	mustAssign(t, s, "web-2", "m")
	mustAssign(t, s, "web-2", "m-n") // hq-m-n and hq-m-n-z
	_, err = s.PutModule(ctx, "m", []hq.Resource{ctr(hq.KindContainer, "n"), ctr(hq.KindContainer, "n-z")})
	wantNamed(err, "m/n-z", "m-n/z", "web-2", "hq-m-n-z")
	if m := mustGetModule(t, s, "m"); m.Revision != 1 {
		t.Fatalf("a refused upload made revision %d", m.Revision)
	}

	// A placement that would put the other module on the node.
	mustModule(t, s, "p", ctr(hq.KindContainer, "q-r"))
	mustModule(t, s, "p-q", ctr(hq.KindContainer, "r"))
	mustAssign(t, s, "web-1", "p")
	if _, err := s.SetLabels(ctx, "web-1", map[string]string{"role": "web"}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.PutPlacement(ctx, hq.Placement{Name: "pq", Module: "p-q", Selector: "role=web"})
	wantNamed(err, "p/q-r", "p-q/r", "web-1", "hq-p-q-r")
}
