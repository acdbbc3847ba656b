package api

import (
	"testing"

	"github.com/meshhq/hq"
)

// operator adds a named operator by the API, as the bootstrap admin, and returns its token.
func (f *fixture) operator(name string, role hq.Role) string {
	f.t.Helper()
	var tok hq.NewToken
	f.want(f.do("POST", "/api/v1/operators", admin, map[string]any{"name": name, "role": role}), 201).json(f.t, &tok)
	return tok.Token
}

// A node's answer says who assigned each module, when, and who took it; so does the listing,
// which reads the same rows.
func TestNodeAnswerSaysWhoAssignedAndTook(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.node("web-1")
	dan, alice := f.operator("dan", hq.RoleDeployer), f.operator("alice", hq.RoleAdmin)
	f.want(f.do("PUT", "/api/v1/modules/app", dan, `{"resources":[{"name":"conf","kind":"file","path":"/a"}]}`), 201)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", dan, nil), 200)

	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", alice, nil), 200).json(t, &v)
	if len(v.Assignments) != 1 || v.Assignments[0].AssignedBy != "dan" || v.Assignments[0].TakenBy != "" ||
		v.Assignments[0].AssignedAt.IsZero() {
		t.Fatalf("before the take: %+v", v.Assignments)
	}
	f.want(f.do("POST", "/api/v1/nodes/web-1/assignments/app/take", alice, nil), 200)
	f.want(f.do("GET", "/api/v1/nodes/web-1", alice, nil), 200).json(t, &v)
	if a := v.Assignments[0]; !a.Taken || a.AssignedBy != "dan" || a.TakenBy != "alice" {
		t.Fatalf("after alice's take: %+v", a)
	}
	var list struct{ Nodes []hq.NodeView }
	f.want(f.do("GET", "/api/v1/nodes", alice, nil), 200).json(t, &list)
	if len(list.Nodes) != 1 || len(list.Nodes[0].Assignments) != 1 || list.Nodes[0].Assignments[0] != v.Assignments[0] {
		t.Fatalf("the listing's assignments: %+v, the node's %+v", list.Nodes, v.Assignments)
	}
}
