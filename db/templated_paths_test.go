package db

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// nodeState is what a refused write must leave as it was on a node.
type nodeState struct {
	generation  int64
	assignments []string
	labels      map[string]string
	vars        map[string]string
}

func stateOf(t *testing.T, s *Store, node string) nodeState {
	t.Helper()
	v, err := s.GetNode(context.Background(), node)
	if err != nil {
		t.Fatal(err)
	}
	st := nodeState{generation: v.Generation, labels: v.Labels, vars: v.Vars}
	for _, a := range v.Assignments {
		st.assignments = append(st.assignments, fmt.Sprintf("%s@%d/%s", a.Module, a.Revision, a.Source))
	}
	return st
}

func sameState(a, b nodeState) bool {
	return a.generation == b.generation && slices.Equal(a.assignments, b.assignments) &&
		fmt.Sprint(a.labels) == fmt.Sprint(b.labels) && fmt.Sprint(a.vars) == fmt.Sprint(b.vars)
}

// unchanged fails the test when a refused write moved anything on nodes.
func unchanged(t *testing.T, s *Store, before map[string]nodeState) {
	t.Helper()
	for n, want := range before {
		if got := stateOf(t, s, n); !sameState(got, want) {
			t.Fatalf("a refused write changed %s:\n%+v\nwas\n%+v", n, got, want)
		}
	}
}

func statesOf(t *testing.T, s *Store, nodes ...string) map[string]nodeState {
	t.Helper()
	out := map[string]nodeState{}
	for _, n := range nodes {
		out[n] = stateOf(t, s, n)
	}
	return out
}

// wantNamed fails the test when err does not name every one of refs.
func wantNamed(t *testing.T, err error, refs ...string) {
	t.Helper()
	for _, ref := range refs {
		if !strings.Contains(err.Error(), ref) {
			t.Errorf("%q does not name %s", err, ref)
		}
	}
}

// A templated path is held to the one-path-per-node rule as the node fills it in: on n2,
// /srv/{{.Node}}.conf is /srv/n2.conf, whichever module is assigned first; on n1 it is not.
func TestTemplatedPathsOverlapAsFilledIn(t *testing.T) {
	t.Parallel()
	perNode := hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Node}}.conf", Content: "x\n"}
	literal := at(hq.KindFile, "conf", "/srv/n2.conf")
	for _, tc := range []struct {
		name          string
		first, second string
	}{
		{"the templated one first", "tmpl", "lit"},
		{"the literal one first", "lit", "tmpl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := setup(t)
			ctx := context.Background()
			mustNode(t, s, "n1")
			mustNode(t, s, "n2")
			mustModule(t, s, "tmpl", perNode)
			mustModule(t, s, "lit", literal)
			mustAssign(t, s, "n2", tc.first)
			before := statesOf(t, s, "n1", "n2")
			_, err := s.Assign(ctx, "n2", tc.second, nil, nil)
			wantCode(t, err, hq.CodeConflict)
			wantNamed(t, err, "n2", "tmpl/conf", "lit/conf", "/srv/n2.conf")
			unchanged(t, s, before)
			mustAssign(t, s, "n1", tc.first)
			mustAssign(t, s, "n1", tc.second)
		})
	}

	// Within one module too: filled in on n1, two of its paths are one.
	s, _ := setup(t)
	mustNode(t, s, "n1")
	mustNode(t, s, "n2")
	mustModule(t, s, "both", perNode, at(hq.KindFile, "fixed", "/srv/n1.conf"))
	before := statesOf(t, s, "n1")
	_, err := s.Assign(context.Background(), "n1", "both", nil, nil)
	wantCode(t, err, hq.CodeConflict)
	wantNamed(t, err, "n1", "both/conf", "both/fixed")
	unchanged(t, s, before)
	mustAssign(t, s, "n2", "both")
}

// A new revision is checked as each of its nodes fills its paths in, and so is a new revision
// of a literal module that meets another module's templated path: refused, nothing moves.
func TestTemplatedPathsOverlapAtUpload(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	for _, n := range []string{"n1", "n2", "n3"} {
		mustNode(t, s, n)
	}
	mustModule(t, s, "tmpl", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Node}}.x", Content: "x\n"})
	mustModule(t, s, "lit", at(hq.KindFile, "conf", "/srv/n2.conf"))
	mustModule(t, s, "alone", at(hq.KindFile, "a", "/opt/a"))
	for _, n := range []string{"n1", "n2"} {
		mustAssign(t, s, n, "tmpl")
	}
	mustAssign(t, s, "n2", "lit")
	mustAssign(t, s, "n3", "alone")
	before := statesOf(t, s, "n1", "n2", "n3")

	_, err := s.PutModule(ctx, "tmpl", []hq.Resource{{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Node}}.conf", Content: "x\n"}})
	wantCode(t, err, hq.CodeConflict)
	wantNamed(t, err, "n2", "tmpl/conf", "lit/conf")
	_, err = s.PutModule(ctx, "lit", []hq.Resource{at(hq.KindFile, "conf", "/srv/n2.x")})
	wantCode(t, err, hq.CodeConflict)
	wantNamed(t, err, "n2", "tmpl/conf", "lit/conf")
	// On n3 it is the module's only one, and its own paths meet once filled in.
	_, err = s.PutModule(ctx, "alone", []hq.Resource{at(hq.KindFile, "a", "/opt/n3"), at(hq.KindFile, "b", "/opt/{{.Node}}/x")})
	wantCode(t, err, hq.CodeConflict)
	wantNamed(t, err, "n3", "alone/a", "alone/b")
	// A path some node cannot fill in is the upload's mistake (invalid, naming the nodes), not
	// an overlap.
	_, err = s.PutModule(ctx, "tmpl", []hq.Resource{{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Labels.site}}.conf", Content: "x\n"}})
	wantCode(t, err, hq.CodeInvalid)
	wantNamed(t, err, "n1, n2")
	for m, want := range map[string]int64{"tmpl": 1, "lit": 1, "alone": 1} {
		if v := mustGetModule(t, s, m); v.Revision != want {
			t.Fatalf("a refused upload made %s revision %d", m, v.Revision)
		}
	}
	unchanged(t, s, before)
}

// Across a fleet whose nodes have the same modules, an upload whose templated path meets a
// literal one on one node alone is refused for that node: the check a node alike passed is
// not taken for it.
func TestTemplatedPathCheckAcrossAFleet(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "lit", at(hq.KindFile, "conf", "/srv/web-07.conf"))
	mustModule(t, s, "tmpl", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Node}}.x", Content: "x\n"})
	var nodes []string
	for i := range 20 {
		n := fmt.Sprintf("web-%02d", i)
		nodes = append(nodes, n)
		mustNode(t, s, n)
		mustAssign(t, s, n, "lit")
		mustAssign(t, s, n, "tmpl")
	}
	before := statesOf(t, s, nodes...)
	_, err := s.PutModule(ctx, "tmpl", []hq.Resource{{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Node}}.conf", Content: "x\n"}})
	wantCode(t, err, hq.CodeConflict)
	wantNamed(t, err, "web-07", "tmpl/conf", "lit/conf")
	unchanged(t, s, before)
	if res := mustModule(t, s, "tmpl", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Node}}.y", Content: "x\n"}); len(res.Generations) != 20 {
		t.Fatalf("moved %d node(s), want 20", len(res.Generations))
	}
}

// New labels or vars that fill a templated path in to one another module declares on the node
// are refused, and the node keeps its values; others are taken.
func TestValuesThatMakeAPathOverlapAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setupValues := func(t *testing.T) *Store {
		s, _ := setup(t)
		mustLabelled(t, s, "n1", map[string]string{"site": "a"})
		if _, err := s.SetVars(ctx, "n1", map[string]string{"name": "a", "other": "c"}, nil); err != nil {
			t.Fatal(err)
		}
		mustModule(t, s, "bylabel", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Labels.site}}.conf", Content: "x\n"})
		mustModule(t, s, "byvar", hq.Resource{Name: "dir", Kind: hq.KindFile, Path: "/opt/{{.Vars.name}}", Content: "x\n"})
		mustModule(t, s, "byvar2", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Vars.other}}.conf", Content: "x\n"})
		mustModule(t, s, "lit", at(hq.KindFile, "conf", "/srv/b.conf"), at(hq.KindFile, "bin", "/opt/b/bin"))
		for _, m := range []string{"bylabel", "byvar", "byvar2", "lit"} {
			mustAssign(t, s, "n1", m)
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		write func(s *Store) (int64, error)
		names []string
	}{
		{"a label, to another module's path", func(s *Store) (int64, error) {
			return s.SetLabels(ctx, "n1", map[string]string{"site": "b"}, nil)
		}, []string{"bylabel/conf", "lit/conf", "/srv/b.conf"}},
		{"a var, to a file over another module's path", func(s *Store) (int64, error) {
			return s.SetVars(ctx, "n1", map[string]string{"name": "b", "other": "c"}, nil)
		}, []string{"byvar/dir", "lit/bin", "/opt/b"}},
		{"a var, to another templated path", func(s *Store) (int64, error) {
			return s.SetVars(ctx, "n1", map[string]string{"name": "a", "other": "a"}, nil)
		}, []string{"bylabel/conf", "byvar2/conf", "/srv/a.conf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := setupValues(t)
			before := statesOf(t, s, "n1")
			_, err := tc.write(s)
			wantCode(t, err, hq.CodeConflict)
			wantNamed(t, err, append([]string{"n1"}, tc.names...)...)
			unchanged(t, s, before)
			if _, err := s.SetLabels(ctx, "n1", map[string]string{"site": "d"}, nil); err != nil {
				t.Fatal(err)
			}
			g, err := s.SetVars(ctx, "n1", map[string]string{"name": "e", "other": "f"}, nil)
			if err != nil || g != before["n1"].generation+2 {
				t.Fatalf("values taken at generation %d (%v), want %d", g, err, before["n1"].generation+2)
			}
		})
	}
}

// A value that would fill a path in with ".." is refused wherever it would reach a node: set
// on a node whose module uses it, or by assigning (an operator or a placement) the module to a
// node that has it.
func TestAValueThatEscapesThePathRuleIsRefused(t *testing.T) {
	t.Parallel()
	const escape = "../../../../tmp/escape"
	// n1 has app with a var that fills it in well; n2 has the var that escapes, and no module.
	setupEscape := func(t *testing.T) (*Store, map[string]nodeState) {
		s, _ := setup(t)
		ctx := context.Background()
		mustModule(t, s, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Vars.dir}}/app.conf", Content: "x\n"})
		mustLabelled(t, s, "n1", map[string]string{"role": "db"})
		mustLabelled(t, s, "n2", map[string]string{"role": "db"})
		if _, err := s.SetVars(ctx, "n1", map[string]string{"dir": "ok"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetVars(ctx, "n2", map[string]string{"dir": escape}, nil); err != nil {
			t.Fatal(err) // no module uses it there yet
		}
		mustAssign(t, s, "n1", "app")
		return s, statesOf(t, s, "n1", "n2")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		node  string
		write func(s *Store) error
	}{
		{"set on a node with the module", "n1", func(s *Store) error {
			_, err := s.SetVars(ctx, "n1", map[string]string{"dir": escape}, nil)
			return err
		}},
		{"assigned by an operator", "n2", func(s *Store) error {
			_, err := s.Assign(ctx, "n2", "app", nil, nil)
			return err
		}},
		{"a placement's first write", "n2", func(s *Store) error {
			if _, err := s.Unassign(ctx, "n1", "app", nil); err != nil {
				return err
			}
			_, err := s.PutPlacement(ctx, hq.Placement{Name: "dbs", Module: "app", Selector: "role=db"})
			return err
		}},
		{"relabelled into a placement", "n2", func(s *Store) error {
			if _, err := s.PutPlacement(ctx, hq.Placement{Name: "webs", Module: "app", Selector: "role=web"}); err != nil {
				return err
			}
			_, err := s.SetLabels(ctx, "n2", map[string]string{"role": "web"}, nil)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, before := setupEscape(t)
			err := tc.write(s)
			wantCode(t, err, hq.CodeConflict)
			wantNamed(t, err, tc.node, "app", "as rendered")
			if tc.name == "a placement's first write" {
				if _, err := s.GetPlacement(ctx, "dbs"); hq.ErrorCode(err) != hq.CodeNotFound {
					t.Fatalf("the refused placement was stored: %v", err)
				}
				delete(before, "n1") // the operator's unassign went through
			}
			unchanged(t, s, before)
		})
	}
}

// A placement meets templated paths as the operator's assign does: its first write and a node
// relabelled into it are refused when a path, filled in, is another module's on the node; the
// placement, labels and assignments stay as they were.
func TestPlacedTemplatedPathsOverlapAsFilledIn(t *testing.T) {
	t.Parallel()
	setupPlaced := func(t *testing.T) *Store {
		s, _ := setup(t)
		mustModule(t, s, "tmpl", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Node}}.conf", Content: "x\n"})
		mustModule(t, s, "lit", at(hq.KindFile, "conf", "/srv/n2.conf"))
		mustLabelled(t, s, "n1", map[string]string{"role": "web"})
		mustLabelled(t, s, "n2", map[string]string{"role": "web"})
		mustAssign(t, s, "n2", "lit")
		return s
	}
	ctx := context.Background()

	t.Run("the first write", func(t *testing.T) {
		s := setupPlaced(t)
		before := statesOf(t, s, "n1", "n2")
		_, err := s.PutPlacement(ctx, hq.Placement{Name: "webs", Module: "tmpl", Selector: "role=web"})
		wantCode(t, err, hq.CodeConflict)
		wantNamed(t, err, "n2", "tmpl/conf", "lit/conf", "/srv/n2.conf")
		if _, err := s.GetPlacement(ctx, "webs"); hq.ErrorCode(err) != hq.CodeNotFound {
			t.Fatalf("the refused placement was stored: %v", err)
		}
		unchanged(t, s, before)
	})

	t.Run("relabelled into it", func(t *testing.T) {
		s := setupPlaced(t)
		if _, err := s.SetLabels(ctx, "n2", map[string]string{"role": "web", "lit": "yes"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutPlacement(ctx, hq.Placement{Name: "webs", Module: "tmpl", Selector: "role=web,!lit"}); err != nil {
			t.Fatal(err)
		}
		before := statesOf(t, s, "n1", "n2")
		_, err := s.SetLabels(ctx, "n2", map[string]string{"role": "web"}, nil)
		wantCode(t, err, hq.CodeConflict)
		wantNamed(t, err, "n2", "tmpl/conf", "lit/conf")
		unchanged(t, s, before)
		if got := placedOn(t, s, "tmpl"); len(got) != 1 || got["n1"] != "webs" {
			t.Fatalf("tmpl is on %v", got)
		}
	})

	// The placed module's path is filled in from the labels the relabel that places it brings.
	t.Run("filled in from the labels that place it", func(t *testing.T) {
		s := setupPlaced(t)
		mustModule(t, s, "bysite", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Labels.site}}.conf", Content: "x\n"})
		if _, err := s.PutPlacement(ctx, hq.Placement{Name: "sites", Module: "bysite", Selector: "site"}); err != nil {
			t.Fatal(err)
		}
		before := statesOf(t, s, "n1", "n2")
		_, err := s.SetLabels(ctx, "n2", map[string]string{"role": "web", "site": "n2"}, nil)
		wantCode(t, err, hq.CodeConflict)
		wantNamed(t, err, "n2", "bysite/conf", "lit/conf")
		unchanged(t, s, before)
		if _, err := s.SetLabels(ctx, "n2", map[string]string{"role": "web", "site": "eu"}, nil); err != nil {
			t.Fatal(err)
		}
		if got := placedOn(t, s, "bysite"); len(got) != 1 || got["n2"] != "sites" {
			t.Fatalf("bysite is on %v", got)
		}
	})
}

// Relabelling a node out of a placement and a templated path onto the path its module declared
// is one change: the path is free when the change is made, and it is taken.
func TestRelabelOutOfAPlacementFreesItsPaths(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "lit", at(hq.KindFile, "conf", "/srv/eu.conf"))
	mustModule(t, s, "bysite", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/{{.Labels.site}}.conf", Content: "x\n"})
	mustLabelled(t, s, "n1", map[string]string{"region": "eu", "site": "us"})
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "eu", Module: "lit", Selector: "region=eu"}); err != nil {
		t.Fatal(err)
	}
	mustAssign(t, s, "n1", "bysite")
	if _, err := s.SetLabels(ctx, "n1", map[string]string{"region": "us", "site": "eu"}, nil); err != nil {
		t.Fatal(err)
	}
	d, err := s.Compose(ctx, "n1", "test")
	if err != nil || len(d.Modules) != 1 || d.Modules[0].Resources[0].Path != "/srv/eu.conf" {
		t.Fatalf("n1 declares %+v (%v)", d.Modules, err)
	}
}
