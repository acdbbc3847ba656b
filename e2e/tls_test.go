package e2e

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// tlsHost registers node, assigns it motd, and starts its hostd with env.
func tlsHost(t *testing.T, c *client, ctl *controller, node string, env ...string) *host {
	t.Helper()
	h := newHost(t, c, ctl.url, node, env...)
	c.assign(node, "motd", false)
	return h
}

// certEnv is a node's client certificate as hostd takes it.
func certEnv(certFile, keyFile string) []string {
	return []string{"HOSTD_CERT=" + certFile, "HOSTD_KEY=" + keyFile}
}

func motd(c *client) {
	c.putModule("motd", hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "over TLS\n"})
}

// unheard checks that the controller never heard from node: never reported, nothing sent.
func unheard(t *testing.T, c *client, h *host) {
	t.Helper()
	if v := c.node(h.node); v.Status != hq.StatusNew {
		t.Errorf("%s is %s: it should never have been heard", h.node, v.Status)
	}
	if s := c.sends(h.node); len(s) != 0 {
		t.Errorf("%s was sent %d declaration(s)", h.node, len(s))
	}
	if _, err := os.Stat(filepath.Join(h.root, "etc/motd")); err == nil {
		t.Errorf("%s applied a declaration", h.node)
	}
}

// count is how many lines of out match re.
func count(out string, re *regexp.Regexp) int {
	n := 0
	for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
		if re.MatchString(sc.Text()) {
			n++
		}
	}
	return n
}

// hostdRefused is hostd's line when TLS fails; hostd logs it once per cause.
var hostdRefused = regexp.MustCompile(`msg="cannot talk to the controller: TLS failed`)

// The controller over HTTPS only, with node certificates: a host with its own certificate
// converges; one with another node's certificate is answered 403; one that trusts another CA,
// and one whose certificate has expired, cannot talk at all and say why, once; none of those
// three changes anything. A plain HTTP request is answered 400 and reaches nothing.
func TestTransportOverTLSWithNodeCertificates(t *testing.T) {
	ctl := startController(t, filepath.Join(t.TempDir(), "hq.db"), "HQ_CLIENT_CA="+suite.ca.file)
	c := newClient(t, ctl.url)
	motd(c)
	other := newTestCA(t, "somebody else's CA")
	own := certEnv(suite.ca.issue(t, nodeSpec("web-1")))
	good := tlsHost(t, c, ctl, "web-1", own...)
	borrowed := tlsHost(t, c, ctl, "web-2", own...)
	distrustful := tlsHost(t, c, ctl, "web-3", append(certEnv(suite.ca.issue(t, nodeSpec("web-3"))), "HOSTD_CA="+other.file)...)
	lapsed := tlsHost(t, c, ctl, "web-4", certEnv(suite.ca.issue(t, expired(nodeSpec("web-4"))))...)

	waitFor(t, 20*time.Second, "web-1 to converge over TLS", func() bool {
		return readFile(filepath.Join(good.root, "etc/motd")) == "over TLS\n"
	})
	waitFor(t, 20*time.Second, "web-2 to be refused for another node's certificate", func() bool {
		return strings.Contains(borrowed.out.String(), "403") && strings.Contains(borrowed.out.String(), "client certificate")
	})
	// Each of web-3 and web-4 tries at least three times, and says why once.
	distrusted := regexp.MustCompile(`TLS handshake error .*remote error: tls: `)
	expiredCert := regexp.MustCompile(`TLS handshake error .*x509: certificate has expired`)
	waitFor(t, 20*time.Second, "web-3 and web-4 to try three times", func() bool {
		return count(ctl.out.String(), distrusted) >= 3 && count(ctl.out.String(), expiredCert) >= 3
	})
	for h, cause := range map[*host]string{
		distrustful: `cause="tls: failed to verify the controller's certificate: x509: certificate signed by unknown authority" controller=` + ctl.url + " ca=" + other.file,
		lapsed:      `cause="the controller refused the TLS handshake: remote error: tls: expired certificate" controller=` + ctl.url + " ca=" + suite.ca.file,
	} {
		if n := count(h.out.String(), hostdRefused); n != 1 || !strings.Contains(h.out.String(), cause) {
			t.Errorf("%s said it cannot talk %d time(s), want once with %s:\n%s", h.node, n, cause, h.out)
		}
	}
	for _, h := range []*host{borrowed, distrustful, lapsed} {
		unheard(t, c, h)
	}

	resp, err := http.Get("http://" + ctl.addr + "/api/v1/nodes/web-1/declaration")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || string(b) != "Client sent an HTTP request to an HTTPS server.\n" {
		t.Fatalf("plain HTTP to the HTTPS-only controller: %d %q", resp.StatusCode, b)
	}
	waitFor(t, 5*time.Second, "the controller to log the plain request", func() bool {
		return strings.Contains(ctl.out.String(), "client sent an HTTP request to an HTTPS server")
	})
	if strings.Contains(ctl.out.String(), "path=/api/v1/nodes/web-1/declaration status=400") {
		t.Fatal("the plain request reached the API")
	}
}
