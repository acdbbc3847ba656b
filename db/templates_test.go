package db

import (
	"context"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// A module that fills in a node's labels declares each node's own content; a node without the
// label cannot be assigned it, an upload that needs a label an assigned node lacks is refused
// naming it, a label a template needs cannot be taken away, and changing one moves the
// generation of the node whose declaration it changes.
func TestTemplatesAreFilledInPerNode(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	motd := hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "{{.Node}} in {{.Labels.region}}\n"}
	mustModule(t, s, "base", motd)
	mustLabelled(t, s, "web-1", map[string]string{"region": "eu"})
	mustLabelled(t, s, "web-2", map[string]string{"region": "us"})
	mustLabelled(t, s, "web-3", nil)
	mustAssign(t, s, "web-1", "base")
	mustAssign(t, s, "web-2", "base")
	d1 := mustCompose(t, s, "web-1", "test")
	d2 := mustCompose(t, s, "web-2", "test")
	if d1.Modules[0].Resources[0].Content != "web-1 in eu\n" || d2.Modules[0].Resources[0].Content != "web-2 in us\n" || d1.Digest == d2.Digest {
		t.Fatalf("declared %q and %q", d1.Modules[0].Resources[0].Content, d2.Modules[0].Resources[0].Content)
	}

	before := rowCounts(t, s)
	_, err := s.Assign(ctx, "web-3", "base", nil, nil)
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), `"region"`) {
		t.Fatalf("the refusal does not name the key: %v", err)
	}
	_, err = s.SetLabels(ctx, "web-1", map[string]string{"role": "web"}, nil)
	wantCode(t, err, hq.CodeConflict)
	if after := rowCounts(t, s); !mapsEqual(before, after) {
		t.Fatalf("a refused assignment or relabelling changed the database:\n%v\n%v", before, after)
	}
	mustModule(t, s, "other", file("x", "1"))
	mustAssign(t, s, "web-3", "other")
	before = rowCounts(t, s)
	_, err = s.PutModule(ctx, "base", []hq.Resource{{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "{{.Vars.owner}}\n"}})
	wantCode(t, err, hq.CodeInvalid)
	if !strings.Contains(err.Error(), "web-1, web-2") {
		t.Fatalf("the refused upload does not name the nodes: %v", err)
	}
	if after := rowCounts(t, s); !mapsEqual(before, after) {
		t.Fatalf("a refused upload changed the database:\n%v\n%v", before, after)
	}

	g, err := s.SetLabels(ctx, "web-1", map[string]string{"region": "ap"}, nil)
	if err != nil || g != d1.Generation+1 {
		t.Fatalf("relabelling moved web-1 to generation %d (%v), want %d", g, err, d1.Generation+1)
	}
	if d := mustCompose(t, s, "web-1", "test"); d.Modules[0].Resources[0].Content != "web-1 in ap\n" {
		t.Fatalf("after relabelling web-1 declares %q", d.Modules[0].Resources[0].Content)
	}
}

// A placement is refused, as assigning its module by hand would be, when some node it would put
// the module on cannot fill in its templates; it is taken once the node can.
func TestPlacementRefusesNodesThatCannotFillItsTemplates(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustLabelled(t, s, "web-1", map[string]string{"role": "web"})
	mustLabelled(t, s, "web-2", map[string]string{"role": "web"})
	if _, err := s.SetVars(ctx, "web-1", map[string]string{"size": "large"}, nil); err != nil {
		t.Fatal(err)
	}
	mustModule(t, s, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "size={{.Vars.size}}\n"})
	_, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web"})
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "web-2") || strings.Contains(err.Error(), "web-1") {
		t.Fatalf("the refusal names %q: want web-2 alone", err)
	}
	if nodes, err := s.AssignedNodes(ctx, "app"); err != nil || len(nodes) != 0 {
		t.Fatalf("after the refusal app is on %v (%v), want nowhere", nodes, err)
	}
	if _, err := s.GetPlacement(ctx, "web"); hq.ErrorCode(err) != hq.CodeNotFound {
		t.Fatalf("the refused placement: %v, want not found", err)
	}
	if _, err := s.SetVars(ctx, "web-2", map[string]string{"size": "small"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web"}); err != nil {
		t.Fatal(err)
	}
	if nodes, err := s.AssignedNodes(ctx, "app"); err != nil || len(nodes) != 2 {
		t.Fatalf("app is on %v (%v), want web-1 and web-2", nodes, err)
	}
}

// Registering a node whose labels a templated placement matches, when the node cannot fill in
// the templates (it has no vars yet), is refused and registers nothing; registered without
// those labels, given its vars, then labelled, the node takes the module.
func TestRegisteringIntoATemplatedPlacementWantsItsVarsFirst(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "size={{.Vars.size}}\n"})
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web"}); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.CreateLabelledNode(ctx, "web-9", map[string]string{"role": "web"})
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "placement web") || !strings.Contains(err.Error(), "size") {
		t.Fatalf("the refusal says %q: want the placement and the missing key named", err)
	}
	if _, err := s.GetNode(ctx, "web-9"); hq.ErrorCode(err) != hq.CodeNotFound {
		t.Fatalf("the refused node: %v, want not found", err)
	}
	mustNode(t, s, "web-9")
	if _, err := s.SetVars(ctx, "web-9", map[string]string{"size": "large"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetLabels(ctx, "web-9", map[string]string{"role": "web"}, nil); err != nil {
		t.Fatal(err)
	}
	d, err := s.Compose(ctx, "web-9", "test")
	if err != nil || len(d.Modules) != 1 || d.Modules[0].Resources[0].Content != "size=large\n" {
		t.Fatalf("web-9's declaration: %+v, %v", d.Modules, err)
	}
}

// A declaration's digest is the one hostd computes from what it receives, whether its modules
// are encoded once for the fleet (no templates) or again for the node (templates filled in).
func TestComposedDigestIsTheDeclarations(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	mustModule(t, s, "plain", file("a", "<same & everywhere>"))
	mustModule(t, s, "own", hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "{{.Node}} in {{.Labels.region}}\n"})
	for _, n := range []string{"web-1", "web-2"} {
		mustLabelled(t, s, n, map[string]string{"region": "r-" + n})
		mustAssign(t, s, n, "plain")
		mustAssign(t, s, n, "own")
	}
	for _, n := range []string{"web-1", "web-2", "web-1"} {
		d := mustCompose(t, s, n, "test")
		if len(d.Modules) != 2 || d.Digest != d.ComputeDigest() {
			t.Fatalf("%s: %d modules, digest %s, computed from what it declares %s", n, len(d.Modules), d.Digest, d.ComputeDigest())
		}
	}
}
