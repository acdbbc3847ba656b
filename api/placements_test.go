package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

func TestLabelsAndPlacementsOverHTTP(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.want(f.do("PUT", "/api/v1/modules/app", admin, `{"resources":[{"name":"conf","kind":"file","path":"/etc/app.conf","content":"1"}]}`), 201)
	f.want(f.do("POST", "/api/v1/nodes", admin, map[string]any{"name": "web-1", "labels": map[string]string{"role": "web"}}), 201)
	f.want(f.do("POST", "/api/v1/nodes", admin, map[string]any{"name": "db-1", "labels": map[string]string{"role": "db"}}), 201)

	var p hq.Placement
	f.want(f.do("PUT", "/api/v1/placements/web", admin, map[string]any{"module": "app", "selector": "role=web"}), 200).json(t, &p)
	if p.Matched != 1 || p.Assigned != 1 || p.Selector != "role=web" {
		t.Fatalf("placement %+v", p)
	}
	// A node registered into the selector starts with the module declared.
	var reg struct{ Generation int64 }
	f.want(f.do("POST", "/api/v1/nodes", admin, map[string]any{"name": "web-2", "labels": map[string]string{"role": "web"}}), 201).json(t, &reg)
	if reg.Generation != 1 {
		t.Fatalf("web-2 registered at generation %d", reg.Generation)
	}
	var list struct{ Placements []hq.Placement }
	f.want(f.do("GET", "/api/v1/placements", admin, nil), 200).json(t, &list)
	if len(list.Placements) != 1 || list.Placements[0].Matched != 2 {
		t.Fatalf("placements %+v", list.Placements)
	}
	var nodes nodeList
	f.want(f.do("GET", "/api/v1/nodes?selector=role%3Dweb", admin, nil), 200).json(t, &nodes)
	if len(nodes.Nodes) != 2 || nodes.Nodes[0].Labels["role"] != "web" {
		t.Fatalf("role=web lists %+v", nodes.Nodes)
	}

	// Relabel with If-Match: out of the selector, the generation moves; a stale one is 409.
	f.want(f.do("PUT", "/api/v1/nodes/web-1/labels", admin, map[string]any{"labels": map[string]string{"role": "db"}}, "If-Match", `"0"`), 409)
	r := f.want(f.do("PUT", "/api/v1/nodes/web-1/labels", admin, map[string]any{"labels": map[string]string{"role": "db"}}, "If-Match", `"1"`), 200)
	if r.header.Get("ETag") != `"2"` {
		t.Fatalf("ETag %s", r.header.Get("ETag"))
	}
	r = f.want(f.do("PUT", "/api/v1/nodes/web-1/vars", admin, map[string]any{"vars": map[string]string{"motd": "hi there"}}), 200)
	if r.header.Get("ETag") != `"2"` {
		t.Fatalf("vars moved the generation: ETag %s", r.header.Get("ETag"))
	}
	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	if v.Labels["role"] != "db" || v.Vars["motd"] != "hi there" || len(v.Assignments) != 0 {
		t.Fatalf("web-1 %+v", v)
	}

	// Bad input: 422 naming the term or label, 409 for a conflict; nothing changes.
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		names        string
	}{
		{"PUT", "/api/v1/placements/bad", map[string]any{"module": "app", "selector": "role=web,tier in gold"}, 422, `"tier in gold"`},
		{"GET", "/api/v1/nodes?selector=role%3D%3D%3D", nil, 422, `"role==="`},
		{"PUT", "/api/v1/nodes/web-1/labels", map[string]any{"labels": map[string]string{"role": "db", "bad/key/x": "1"}}, 422, `"bad/key/x"`},
		{"POST", "/api/v1/nodes", map[string]any{"name": "web-9", "labels": map[string]string{"role": "-web"}}, 422, `"-web"`},
		{"PUT", "/api/v1/placements/web2", map[string]any{"module": "app", "selector": "role in (web,db)"}, 409, "placement web"},
		{"PUT", "/api/v1/placements/web", map[string]any{"module": "nope", "selector": "role=web"}, 404, "nope"},
	} {
		r := f.want(f.do(c.method, c.path, admin, c.body), c.status)
		if !strings.Contains(string(r.body), strings.ReplaceAll(c.names, `"`, `\"`)) {
			t.Errorf("%s %s: %s does not name %s", c.method, c.path, r.body, c.names)
		}
	}
	f.want(f.do("GET", "/api/v1/placements/web2", admin, nil), 404)
	f.want(f.do("GET", "/api/v1/nodes/web-9", admin, nil), 404)
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	if v.Generation != 2 || len(v.Labels) != 1 {
		t.Fatalf("web-1 after bad input %+v", v)
	}

	f.want(f.do("DELETE", "/api/v1/placements/web", admin, nil), 204)
	f.want(f.do("DELETE", "/api/v1/placements/web", admin, nil), 404)
	f.want(f.do("GET", "/api/v1/nodes/web-2", admin, nil), 200).json(t, &v)
	if len(v.Assignments) != 0 || v.Generation != 2 {
		t.Fatalf("web-2 after the placement went %+v", v)
	}
}

func TestRolloutPoliciesAndRolloutsOverHTTP(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.want(f.do("PUT", "/api/v1/modules/app", admin, `{"resources":[{"name":"conf","kind":"file","path":"/etc/app.conf","content":"1"}]}`), 201)
	f.want(f.do("POST", "/api/v1/nodes", admin, map[string]any{"name": "web-1", "labels": map[string]string{"role": "web"}}), 201)
	var p hq.Placement
	f.want(f.do("PUT", "/api/v1/placements/web", admin, `{"module":"app","selector":"role=web",
		"rollout":{"canary":1,"max_unavailable":"10%","failure_budget":1,"progress_deadline":"2m","auto_revert":true}}`), 200).json(t, &p)
	if p.Rollout == nil || p.Rollout.MaxUnavailable != (hq.Amount{N: 10, Percent: true}) || p.Rollout.Deadline().String() != "2m0s" {
		t.Fatalf("placement %+v", p.Rollout)
	}
	for body, field := range map[string]string{
		`{"module":"app","selector":"role=web","rollout":{"max_unavailable":"ten"}}`:    "max_unavailable",
		`{"module":"app","selector":"role=web","rollout":{"max_unavailable":"200%"}}`:   "max_unavailable",
		`{"module":"app","selector":"role=web","rollout":{"progress_deadline":"soon"}}`: "progress_deadline",
		`{"module":"app","selector":"role=web","rollout":{"canary":-1}}`:                "canary",
		`{"module":"app","selector":"role=web","rollout":{"surprise":1}}`:               "surprise",
	} {
		r := f.do("PUT", "/api/v1/placements/web", admin, body)
		if r.status/100 != 4 || !strings.Contains(string(r.body), field) {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
	f.want(f.do("PUT", "/api/v1/modules/app", admin, `{"resources":[{"name":"conf","kind":"file","path":"/etc/app.conf","content":"2"}]}`), 201)
	var list struct{ Rollouts []hq.Rollout }
	f.want(f.do("GET", "/api/v1/rollouts", admin, nil), 200).json(t, &list)
	if len(list.Rollouts) != 1 || list.Rollouts[0].Module != "app" || list.Rollouts[0].Placement != "web" {
		t.Fatalf("rollouts %+v", list.Rollouts)
	}
	id := list.Rollouts[0].ID
	var r hq.Rollout
	f.want(f.do("GET", fmt.Sprintf("/api/v1/rollouts/%d", id), admin, nil), 200).json(t, &r)
	if len(r.Progress) != 1 || r.Progress[0].Node != "web-1" {
		t.Fatalf("rollout %+v", r)
	}
	f.want(f.do("POST", fmt.Sprintf("/api/v1/rollouts/%d/resume", id), admin, nil), 409)
	f.want(f.do("POST", fmt.Sprintf("/api/v1/rollouts/%d/abort", id), admin, nil), 200).json(t, &r)
	if r.State != hq.RolloutAborted {
		t.Fatalf("after abort %+v", r)
	}
	f.want(f.do("POST", fmt.Sprintf("/api/v1/rollouts/%d/abort", id), admin, nil), 409)
	f.want(f.do("GET", "/api/v1/rollouts/99", admin, nil), 404)
	f.want(f.do("GET", "/api/v1/rollouts/x", admin, nil), 400)
}
