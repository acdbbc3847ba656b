package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

var issuerRE = regexp.MustCompile(`oidcprovider serving issuer=(\S+)`)

// startProvider starts the test's OpenID Connect provider (testdata/oidcprovider) with one
// client, hq, whose one redirect URI is redirect, and users NAME:PASSWORD:GROUPS; it returns
// the issuer URL.
func startProvider(t *testing.T, clientSecret, redirect string, users ...string) string {
	t.Helper()
	args := []string{"oidcprovider", "-client-id", "hq", "-client-secret", clientSecret, "-redirect-uri", redirect}
	for _, u := range users {
		args = append(args, "-user", u)
	}
	p := start(t, "oidcprovider", nil, args...)
	var issuer string
	waitFor(t, 20*time.Second, "the provider to listen", func() bool {
		if m := issuerRE.FindStringSubmatch(p.out.String()); m != nil {
			issuer = m[1]
			return true
		}
		return false
	})
	return issuer
}

// providerSignIn follows the pages' "Sign in with …" to the provider and fills its form.
func (b *browser) providerSignIn(t *testing.T, ctl *controller, name, password string) {
	t.Helper()
	b.run(t, chromedp.Navigate(ctl.url+"/"))
	b.run(t, chromedp.Click(chromedp.CSS("#oidc-login")))
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#username")))
	b.run(t, chromedp.SendKeys(chromedp.CSS("#username"), name))
	b.run(t, chromedp.SendKeys(chromedp.CSS("#password"), password))
	b.run(t, chromedp.Click(chromedp.CSS("#provider-submit")))
}

// A person signs in to the pages through a real OpenID Connect provider, in a real browser:
// from hq's sign-in page to the provider's form and back, with a role from their groups; the
// session's row names them; they retry a stuck resource, which the audit log attributes to
// them, and sign out, after which their cookie is refused. Someone whose groups map to no role
// is turned away with a page that says so; someone mapped to viewer is refused the Retry, and
// that refusal is in the audit log too.
func TestSignInThroughAProviderInABrowser(t *testing.T) {
	skipWithoutChromium(t)
	// hq's address is the provider's redirect URI, so it is chosen first.
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	const secret = "client-secret-of-hq"
	issuer := startProvider(t, secret, "https://"+addr+"/auth/callback",
		"alice:alice-pw:staff,hq-deployers", "mallory:mallory-pw:contractors", "victor:victor-pw:staff,hq-viewers")
	secretFile := filepath.Join(t.TempDir(), "oidc-secret")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dbName := testdb.New(t)
	ctl := startControllerAt(t, dbName, addr, "HQ_STUCK_ATTEMPTS=2",
		"HQ_OIDC_ISSUER="+issuer, "HQ_OIDC_CLIENT_ID=hq", "HQ_OIDC_CLIENT_SECRET_FILE="+secretFile,
		"HQ_OIDC_ROLES=hq-admins=admin,hq-deployers=deployer,hq-viewers=viewer")
	raw := openRaw(t, dbName)
	c := newClient(t, ctl.url)
	c.putModule("bad", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/bad.conf", Content: "x\n", Validate: []string{"/bin/false"}})
	newHost(t, c, ctl.url, "web-1")
	c.assign("web-1", "bad", false)

	b := newBrowser(t)
	b.run(t, chromedp.Navigate(ctl.url+"/"))
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#oidc-login")))
	u, _ := http.NewRequest("GET", issuer, nil)
	if err := expectText(b.text(t, "#oidc-login"), "Sign in with "+u.URL.Host); err != nil {
		t.Fatal(err)
	}
	b.providerSignIn(t, ctl, "alice", "alice-pw")
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#counts")))
	if got := b.text(t, "#who"); got != "signed in as alice (deployer)" {
		t.Fatalf("the chrome says %q, want signed in as alice (deployer)", got)
	}
	// The row holds who the session is; the cookie is its random id alone.
	var role, via string
	var tokenID int64
	if err := raw.QueryRow(testdb.Rebind(`SELECT role, token_id, via FROM web_sessions WHERE operator = ?`), "alice").Scan(&role, &tokenID, &via); err != nil ||
		role != "deployer" || tokenID != 0 || via != "oidc" {
		t.Fatalf("alice's session row: role %q, token_id %d, via %q (%v)", role, tokenID, via, err)
	}

	// An action as alice: Retry on the stuck resource, a form posted with the session's token.
	waitFor(t, 60*time.Second, "web-1 stuck", func() bool { return c.node("web-1").Status == hq.StatusStuck })
	b.run(t, chromedp.Navigate(ctl.url+"/nodes/web-1"))
	b.run(t, chromedp.Click(chromedp.CSS("form.retry button")))
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#flash")))
	if err := expectText(b.text(t, "#flash"), "retrying: the resource is pending again"); err != nil {
		t.Error(err)
	}
	if err := expectText(b.text(t, "#who"), "alice (deployer)"); err != nil {
		t.Error(err)
	}
	checkAudited(t, ctl, raw, "alice", hq.RoleDeployer, http.StatusSeeOther, "via OIDC")

	// Signing out ends the session on the server: the cookie, copied out before, is refused.
	session := b.cookie(t, "hq_session")
	if code := getWithCookie(t, ctl.url+"/", session); code != http.StatusOK {
		t.Fatalf("GET / with alice's session cookie: %d", code)
	}
	b.run(t, chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)))
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#token")))
	if code := getWithCookie(t, ctl.url+"/", session); code != http.StatusUnauthorized {
		t.Fatalf("GET / with alice's cookie after signing out: %d, want 401", code)
	}

	// mallory is someone at the provider, but of no group HQ_OIDC_ROLES maps: refused, and
	// not signed in.
	b.providerSignIn(t, ctl, "mallory", "mallory-pw")
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#refused")))
	if err := expectText(b.text(t, "#refused"), "mallory is signed in at the provider, but no value of their claim groups (contractors) maps to a role"); err != nil {
		t.Error(err)
	}
	b.screenshot(t, filepath.Join(outputDir(t), "oidc-refused.png"))
	b.run(t, chromedp.Navigate(ctl.url+"/"))
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#token")))
	if b.count(t, "#who") != 0 {
		t.Error("after a refused sign-in the page names someone signed in")
	}

	// victor's groups map to viewer: he reads the pages, and the Retry is refused him by the
	// authorization table, as it would be an operator who is a viewer.
	b.providerSignIn(t, ctl, "victor", "victor-pw")
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#counts")))
	waitFor(t, 60*time.Second, "web-1 stuck again", func() bool { return c.node("web-1").Status == hq.StatusStuck })
	b.run(t, chromedp.Navigate(ctl.url+"/nodes/web-1"))
	b.run(t, chromedp.Click(chromedp.CSS("form.retry button")))
	// #message is the refusal's page; the node page has none, so this waits for the answer.
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#message")))
	if err := expectText(b.text(t, "main"), "refused", "victor is a viewer: resource.retry needs deployer"); err != nil {
		t.Error(err)
	}
	if c.node("web-1").Status != hq.StatusStuck {
		t.Error("victor's refused Retry retried web-1")
	}
	checkAudited(t, ctl, raw, "victor", hq.RoleViewer, http.StatusForbidden, "via OIDC: victor is a viewer")
}

// checkAudited: the audit log has one row of who, a person the provider signed in, and it is
// their Retry of web-1's bad/conf from the pages, with outcome and a detail beginning with
// detail; read through the API with the bootstrap admin's token, and through SQL.
func checkAudited(t *testing.T, ctl *controller, raw *sql.DB, who string, role hq.Role, outcome int, detail string) {
	t.Helper()
	var log struct{ Entries []hq.AuditEntry }
	// The row is written right after the answer, which a page larger than a write buffer
	// may reach the browser before.
	waitFor(t, 10*time.Second, who+"'s audit entry", func() bool {
		st, body := as(t, ctl.url, adminToken, "GET", "/api/v1/audit?operator="+who, nil, nil)
		if st != http.StatusOK || json.Unmarshal([]byte(body), &log) != nil {
			t.Fatalf("GET /api/v1/audit?operator=%s: %d %s", who, st, body)
		}
		return len(log.Entries) > 0
	})
	if len(log.Entries) != 1 {
		t.Fatalf("the audit log has %d entries of %s, want 1: %+v", len(log.Entries), who, log.Entries)
	}
	e := log.Entries[0]
	if e.Role != role || e.Via != hq.ViaPage || e.Action != "resource.retry" || e.Object != "resource/web-1/bad/conf" ||
		e.Outcome != outcome || !strings.HasPrefix(e.Detail, detail) {
		t.Errorf("%s's audit entry: %+v", who, e)
	}
	var gotRole, via, action string
	var gotOutcome int
	err := raw.QueryRow(testdb.Rebind(`SELECT role, via, action, outcome FROM audit_log WHERE operator = ?`), who).Scan(&gotRole, &via, &action, &gotOutcome)
	if err != nil || gotRole != string(role) || via != "page" || action != "resource.retry" || gotOutcome != outcome {
		t.Errorf("SQL: %s's audit row: %s %s %s %d (%v)", who, gotRole, via, action, gotOutcome, err)
	}
}
