package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// What hostd found in a held file comes in with its report (read by the scanner) and goes out
// with the node's answer, not with the listing of nodes; a report that says it of a resource
// not held is refused.
func TestHeldFoundReachesTheNodesAnswer(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	var d hq.Declaration
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration?after=0", tok, nil), 200).json(t, &d)
	var results []string
	for _, r := range d.Modules[0].Resources {
		results = append(results, fmt.Sprintf(`{"module":"app","resource":%q,"outcome":"applied","attempted":true}`, r.Name))
	}
	results[0] = `{"module":"app","resource":"conf","outcome":"held","hold_reason":"would overwrite /etc/app/app.conf","held_found":{"text":"v0\n"}}`
	report := func(results []string) response {
		return f.do("POST", "/api/v1/nodes/web-1/reports", tok, fmt.Sprintf(`{"send_id":%d,"generation":%d,"digest":%q,"signature":%q,"results":[%s]}`,
			d.SendID, d.Generation, d.Digest, d.Signature, strings.Join(results, ",")))
	}
	f.want(report(results), 200)
	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	if len(v.Holds) != 1 || v.Holds[0].Found == nil || v.Holds[0].Found.Text != "v0\n" {
		t.Fatalf("holds %+v, want conf found as v0", v.Holds)
	}
	var list struct{ Nodes []hq.NodeView }
	f.want(f.do("GET", "/api/v1/nodes", admin, nil), 200).json(t, &list)
	if len(list.Nodes) != 1 || len(list.Nodes[0].Holds) != 1 || list.Nodes[0].Holds[0].Found != nil {
		t.Fatalf("the listing's holds %+v, want conf without what was found", list.Nodes[0].Holds)
	}
	results[0] = `{"module":"app","resource":"conf","outcome":"applied","held_found":{"text":"v0\n"}}`
	f.want(report(results), 422)
}
