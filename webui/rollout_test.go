package webui

import (
	"context"
	"html"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// The mesh page shows a line per unfinished rollout, the same line /status has; the node page
// says which rollout the node is in.
func TestRolloutLinesOnThePages(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	b.module(t, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "1"})
	if _, _, err := b.store.CreateLabelledNode(ctx, "web-1", map[string]string{"role": "web"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
		Rollout: &hq.RolloutPolicy{Canary: 1}}); err != nil {
		t.Fatal(err)
	}
	b.module(t, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "2"})
	st, err := b.store.MeshStatus(ctx)
	if err != nil || len(st.Rollouts) != 1 {
		t.Fatalf("status rollouts %+v, %v", st.Rollouts, err)
	}
	// The rollout loop may step between the two reads, so the line is compared up to its counts.
	code, body := b.get(t, "/")
	head, _, _ := strings.Cut(st.Rollouts[0].Line, ":")
	if code != 200 || !strings.Contains(html.UnescapeString(body), head+": ") || !strings.Contains(body, "node(s) done") {
		t.Fatalf("mesh page %d lacks %q", code, st.Rollouts[0].Line)
	}
	_, body = b.get(t, "/nodes/web-1")
	if !strings.Contains(html.UnescapeString(body), "rollout 1 of app r1→r2") {
		t.Fatalf("node page lacks its rollout:\n%s", body)
	}
}
