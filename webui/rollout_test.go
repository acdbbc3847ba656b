package webui

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"regexp"
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

// A rollout's nodes are listed a page at a time, unfiltered and filtered alike, and its waves
// count every node, not the page's.
func TestRolloutNodesPaged(t *testing.T) {
	b := setup(t)
	n := nodeListSize + 5
	fillRollout(t, b, n)
	rows := func(body string) int { return strings.Count(body, `class="rollout-node-row"`) }
	for _, first := range []string{"/rollouts/1", "/rollouts/1?selector=role%3Dweb"} {
		body := getOK(t, b, first)
		if got := rows(body); got != nodeListSize {
			t.Fatalf("%s lists %d nodes, want %d", first, got, nodeListSize)
		}
		next := regexp.MustCompile(`class="next-page" href="([^"]+)"`).FindStringSubmatch(body)
		if next == nil {
			t.Fatalf("%s links no next page", first)
		}
		link := html.UnescapeString(next[1])
		if u, _ := url.Parse(link); u.Query().Get("after") != fmt.Sprintf("web-%04d", nodeListSize-1) {
			t.Fatalf("%s: next page %s", first, link)
		}
		rest := getOK(t, b, link)
		if got := rows(rest); got != 5 || strings.Contains(rest, `class="next-page"`) {
			t.Fatalf("%s lists %d nodes", link, got)
		}
		wantAll(t, link, rest, `id="node-web-0200"`, `id="node-web-0204"`)
	}
	// The canaries in flight, the rest waiting: every node counted.
	wantAll(t, "/rollouts/1", getOK(t, b, "/rollouts/1"),
		`<tr class="wave-row"><td>wave 1</td><td class="num">10</td><td><span class="badge t-wait">in-flight</span> 10`,
		fmt.Sprintf(`<tr class="wave-row"><td>waiting</td><td class="num">%d</td><td><span class="badge t-neutral">pending</span> %d`, n-10, n-10))
}
