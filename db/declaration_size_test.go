package db

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// amplifying is a 1.1 MB module that, filled in with a 1 KiB var, would declare 100 MB: ten
// actions of ten arguments, each the var a thousand times.
func amplifying() []hq.Resource {
	arg := strings.Repeat("{{.Vars.a}}", 1000)
	rs := make([]hq.Resource, 10)
	for i := range rs {
		rs[i] = hq.Resource{Name: fmt.Sprintf("act%d", i), Kind: hq.KindAction, Command: []string{"/bin/echo"}}
		for range 10 {
			rs[i].Command = append(rs[i].Command, arg)
		}
	}
	return rs
}

// A declaration that templates would make larger than the bound is refused at the write that
// would make it so, and nothing changes: an assignment, an upload, a placement, a label that
// places the module, a var that fills it in.
func TestDeclarationSizeIsBoundedAtEveryWrite(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	kib := strings.Repeat("v", 1024)
	mustModule(t, s, "amp", amplifying()...)
	mustNode(t, s, "small")
	mustNode(t, s, "big")
	if _, err := s.SetVars(ctx, "small", map[string]string{"a": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetVars(ctx, "big", map[string]string{"a": kib}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetLabels(ctx, "big", map[string]string{"tier": "big"}, nil); err != nil {
		t.Fatal(err)
	}

	// Assigned where the var is a byte, it declares 100 KB.
	mustAssign(t, s, "small", "amp")
	if d := mustCompose(t, s, "small", "test"); len(d.Modules[0].Resources[0].Command[1]) != 1000 {
		t.Fatalf("declared %d bytes of argument", len(d.Modules[0].Resources[0].Command[1]))
	}

	before := rowCounts(t, s)
	_, err := s.Assign(ctx, "big", "amp", nil, nil)
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "node big would be declared 97.7 MiB") || !strings.Contains(err.Error(), "more than the 16.0 MiB") {
		t.Fatalf("the refusal does not say what is too large: %v", err)
	}
	_, err = s.SetVars(ctx, "small", map[string]string{"a": kib}, nil)
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "node small would be declared") {
		t.Fatalf("the refused var does not say why: %v", err)
	}
	_, err = s.PutPlacement(ctx, hq.Placement{Name: "bigs", Module: "amp", Selector: "tier=big"})
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "1 node(s) (big)") {
		t.Fatalf("the refused placement does not name the node: %v", err)
	}
	if after := rowCounts(t, s); !mapsEqual(before, after) {
		t.Fatalf("a refused write changed the database:\n%v\n%v", before, after)
	}

	// An upload that would amplify on an assigned node is refused naming it.
	mustModule(t, s, "grow", hq.Resource{Name: "run", Kind: hq.KindAction, Command: []string{"/bin/true"}})
	mustAssign(t, s, "big", "grow")
	before = rowCounts(t, s)
	_, err = s.PutModule(ctx, "grow", amplifying())
	wantCode(t, err, hq.CodeInvalid)
	if !strings.Contains(err.Error(), "1 node(s) (big) with module grow would be declared more than 16.0 MiB") {
		t.Fatalf("the refused upload does not name the node: %v", err)
	}
	if after := rowCounts(t, s); !mapsEqual(before, after) {
		t.Fatalf("a refused upload changed the database:\n%v\n%v", before, after)
	}

	// A label that would place it is refused as well.
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "tagged", Module: "amp", Selector: "amp=yes"}); err != nil {
		t.Fatal(err)
	}
	before = rowCounts(t, s)
	_, err = s.SetLabels(ctx, "big", map[string]string{"amp": "yes"}, nil)
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "node big would be declared") {
		t.Fatalf("the refused label does not say why: %v", err)
	}
	if after := rowCounts(t, s); !mapsEqual(before, after) {
		t.Fatalf("a refused label changed the database:\n%v\n%v", before, after)
	}
}

// Untemplated modules count as well: the bound is on the declaration, all modules together.
func TestDeclarationSizeCountsEveryModule(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	s.opt.MaxDeclaration = 64 << 10
	ctx := context.Background()
	big := strings.Repeat("x", 40<<10)
	mustModule(t, s, "one", file("one", big))
	mustModule(t, s, "two", file("two", big))
	mustNode(t, s, "n")
	mustAssign(t, s, "n", "one")
	_, err := s.Assign(ctx, "n", "two", nil, nil)
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "more than the 64.0 KiB") {
		t.Fatalf("refused with %v", err)
	}
}

// A declaration past the bound (written before it, or under a larger one) is refused when it
// is composed, before it is built.
func TestComposeRefusesADeclarationPastTheBound(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "amp", amplifying()...)
	mustNode(t, s, "n")
	if _, err := s.SetVars(ctx, "n", map[string]string{"a": "0123456789"}, nil); err != nil {
		t.Fatal(err)
	}
	mustAssign(t, s, "n", "amp") // 1 MB
	s.opt.MaxDeclaration = 512 << 10
	_, err := s.Compose(ctx, "n", "test")
	wantCode(t, err, hq.CodeConflict)
	if !strings.Contains(err.Error(), "node n would be declared 977.") {
		t.Fatalf("composed past the bound: %v", err)
	}
}
