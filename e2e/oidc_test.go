package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
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
// from hq's sign-in page to the provider's form and back, with a role from their groups; they
// retry a stuck resource and sign out, after which their cookie is refused. Someone whose
// groups map to no role is turned away with a page that says so.
func TestSignInThroughAProviderInABrowser(t *testing.T) {
	skipWithoutChromium(t)
	// hq's address is the provider's redirect URI, so it is chosen first.
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	const secret = "client-secret-of-hq"
	issuer := startProvider(t, secret, "https://"+addr+"/auth/callback",
		"alice:alice-pw:staff,hq-deployers", "mallory:mallory-pw:contractors")
	secretFile := filepath.Join(t.TempDir(), "oidc-secret")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctl := startControllerAt(t, testdb.New(t), addr, "HQ_STUCK_ATTEMPTS=2",
		"HQ_OIDC_ISSUER="+issuer, "HQ_OIDC_CLIENT_ID=hq", "HQ_OIDC_CLIENT_SECRET_FILE="+secretFile,
		"HQ_OIDC_ROLES=hq-admins=admin,hq-deployers=deployer")
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
}
