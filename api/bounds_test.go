package api

import (
	"fmt"
	"strings"
	"testing"
)

// amplifyingModule is a 1.1 MB upload that, filled in with a 1 KiB var, would declare 100 MB:
// ten actions of ten arguments, each the var a thousand times.
func amplifyingModule() map[string]any {
	arg := strings.Repeat("{{.Vars.a}}", 1000)
	var rs []map[string]any
	for i := range 10 {
		cmd := []string{"/bin/echo"}
		for range 10 {
			cmd = append(cmd, arg)
		}
		rs = append(rs, map[string]any{"name": fmt.Sprintf("act%d", i), "kind": "action", "command": cmd})
	}
	return map[string]any{"resources": rs}
}

// A module that templates would amplify past a declaration's bound is refused: at upload, 422
// naming the node it is assigned to; at assignment, 409; and the declaration is never built.
func TestTemplateAmplificationIsRefused(t *testing.T) {
	f := setup(t)
	f.node("web-1")
	f.want(f.do("PUT", "/api/v1/nodes/web-1/vars", admin, map[string]any{"vars": map[string]string{"a": strings.Repeat("v", 1024)}}), 200)
	f.want(f.do("PUT", "/api/v1/modules/amp", admin, amplifyingModule()), 201)
	r := f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/amp", admin, map[string]any{}), 409)
	if !strings.Contains(string(r.body), "node web-1 would be declared 97.7 MiB of resources, more than the 16.0 MiB") {
		t.Fatalf("the refused assignment says %s", r.body)
	}
	f.want(f.do("PUT", "/api/v1/modules/small", admin, map[string]any{"resources": []map[string]any{{"name": "run", "kind": "action", "command": []string{"/bin/true"}}}}), 201)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/small", admin, map[string]any{}), 200)
	r = f.want(f.do("PUT", "/api/v1/modules/small", admin, amplifyingModule()), 422)
	if !strings.Contains(string(r.body), "1 node(s) (web-1) with module small would be declared more than 16.0 MiB") {
		t.Fatalf("the refused upload says %s", r.body)
	}
	// The node's declaration is the small module, as it was.
	r = f.want(f.do("GET", "/api/v1/nodes/web-1/declaration", admin, nil), 200)
	if len(r.body) > 4096 || !strings.Contains(string(r.body), "/bin/true") {
		t.Fatalf("declaration of %d bytes: %.200s", len(r.body), r.body)
	}
}

// A value that only renders to a bad command or env value is refused as the literal is: 422 at
// upload naming the node, 409 at assignment. A selector of 1.9 MB is refused with 422.
func TestRenderedCommandsAndLongSelectorsAreRefused(t *testing.T) {
	f := setup(t)
	f.node("web-1")
	f.want(f.do("PUT", "/api/v1/nodes/web-1/vars", admin, map[string]any{"vars": map[string]string{"empty": "", "nul": "a\x00b"}}), 200)
	for _, c := range []struct {
		name string
		res  map[string]any
		says string
	}{
		{"empty", map[string]any{"name": "run", "kind": "action", "command": []string{"{{.Vars.empty}}"}}, `command: renders to [\"\"]`},
		{"nul", map[string]any{"name": "run", "kind": "action", "command": []string{"{{.Vars.nul}}"}}, `command: renders to [\"a\\x00b\"]`},
		{"env", map[string]any{"name": "svc", "kind": "service", "command": []string{"/bin/svc"}, "env": map[string]string{"E": "{{.Vars.nul}}"}}, `env.E: renders to`},
	} {
		mod := map[string]any{"resources": []map[string]any{c.res}}
		f.want(f.do("PUT", "/api/v1/modules/"+c.name, admin, mod), 201)
		r := f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/"+c.name, admin, map[string]any{}), 409)
		if !strings.Contains(string(r.body), c.says) {
			t.Errorf("%s: the refused assignment says %s", c.name, r.body)
		}
		// Assigned while it was harmless, the upload that would render it so is refused.
		ok := fmt.Sprintf("ok-%s", c.name)
		f.want(f.do("PUT", "/api/v1/modules/"+ok, admin, map[string]any{"resources": []map[string]any{{"name": "run", "kind": "action", "command": []string{"/bin/true"}}}}), 201)
		f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/"+ok, admin, map[string]any{}), 200)
		r = f.want(f.do("PUT", "/api/v1/modules/"+ok, admin, mod), 422)
		if !strings.Contains(string(r.body), "web-1") || !strings.Contains(string(r.body), c.says) {
			t.Errorf("%s: the refused upload says %s", c.name, r.body)
		}
		f.want(f.do("DELETE", "/api/v1/nodes/web-1/assignments/"+ok, admin, nil), 200)
	}
	// The literal forms are refused at upload.
	f.want(f.do("PUT", "/api/v1/modules/lit", admin, map[string]any{"resources": []map[string]any{{"name": "svc", "kind": "service", "command": []string{"/bin/svc"}, "env": map[string]string{"E": "a\x00b"}}}}), 422)

	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	long := "role in (" + strings.Repeat("a,", 950_000) + "b)"
	r := f.want(f.do("PUT", "/api/v1/placements/long", admin, map[string]any{"module": "app", "selector": long}), 422)
	if !strings.Contains(string(r.body), "selector is 1900011 bytes, at most 4096") {
		t.Fatalf("the refused selector says %.300s", r.body)
	}
	f.want(f.do("GET", "/api/v1/placements/long", admin, nil), 404)
}
