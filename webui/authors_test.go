package webui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// signIn adds an operator with role and signs it in to the pages, returning its session.
func signIn(t *testing.T, b *bundle, name string, role hq.Role) *http.Cookie {
	t.Helper()
	tok, err := b.store.AddOperator(context.Background(), hq.Operator{Name: name, Role: role}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := login(t, b, tok.Token)
	if w.Code != http.StatusSeeOther || len(w.Result().Cookies()) != 1 {
		t.Fatalf("%s signs in: %d with %d cookie(s)", name, w.Code, len(w.Result().Cookies()))
	}
	return w.Result().Cookies()[0]
}

// getAs fetches path with session c, wanting 200.
func getAs(t *testing.T, b *bundle, c *http.Cookie, path string) string {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.AddCookie(c)
	code, body := b.do(req)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

// The node page says who assigned each module and how long ago, and who took it: here dan
// assigned it, and alice took it from the page (the host holds the file until it next reports).
func TestNodePageSaysWhoAssignedAndTook(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	b.node(t, "db-1")
	b.module(t, "proxy", file("ca"))
	dan := hq.WithIdentity(ctx, hq.Identity{Operator: "dan", Role: hq.RoleDeployer})
	if _, err := b.store.Assign(dan, "db-1", "proxy", nil, nil); err != nil {
		t.Fatal(err)
	}
	b.report(t, "db-1", result("proxy", "ca", hq.StateHeld))
	b.clock.Advance(3 * time.Minute)
	alice := signIn(t, b, "alice", hq.RoleAdmin)

	assigned := `<td class="assigned">dan <time datetime="2026-11-30T03:00:00Z" title="2026-11-30T03:00:00Z">3m ago</time></td>`
	wantAll(t, "/nodes/db-1 before the take", getAs(t, b, alice, "/nodes/db-1"),
		`<td class="taken">not taken (1 held)</td>`, assigned)
	if w := post(b, alice, "/nodes/db-1/assignments/proxy/take", csrfOf(t, b, alice, "/nodes/db-1")); w.Code != http.StatusSeeOther {
		t.Fatalf("alice takes proxy: %d %s", w.Code, w.Body)
	}
	page := getAs(t, b, alice, "/nodes/db-1")
	wantAll(t, "/nodes/db-1 after the take", page, `<td class="taken">taken by alice (1 held)</td>`, assigned)
	wantNone(t, "/nodes/db-1 after the take", page, "not taken")
}

// Pausing a rollout from its page as a named operator: the page says who paused it, and the
// audit log has the pause as that operator's.
func TestRolloutPageSaysWhoSteeredIt(t *testing.T) {
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
	dan := signIn(t, b, "dan", hq.RoleDeployer)
	before := getAs(t, b, dan, "/rollouts/1")
	wantNone(t, "/rollouts/1 before the pause", before, `id="steered"`)
	if w := post(b, dan, "/rollouts/1/pause", csrfOf(t, b, dan, "/rollouts/1")); w.Code != http.StatusSeeOther {
		t.Fatalf("dan pauses rollout 1: %d %s", w.Code, w.Body)
	}
	wantAll(t, "/rollouts/1 after the pause", getAs(t, b, dan, "/rollouts/1"), `<dd id="steered">paused by dan</dd>`)

	log, err := b.store.ListAudit(ctx, db.AuditFilter{Operator: "dan", Action: "rollout.pause"})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Entries) != 1 || log.Entries[0].Object != "rollout/1" || log.Entries[0].Via != hq.ViaPage {
		t.Fatalf("dan's pause in the audit log: %+v", log.Entries)
	}
}
