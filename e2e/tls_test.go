package e2e

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/certs"
	hqclient "github.com/meshhq/hq/client"
	"github.com/meshhq/hq/internal/testdb"
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
	ctl := startController(t, testdb.New(t), "HQ_CLIENT_CA="+suite.ca.file)
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

// servingUntil waits until the controller at addr serves a certificate that ends at notAfter.
func servingUntil(t *testing.T, addr string, notAfter time.Time) {
	t.Helper()
	waitFor(t, 10*time.Second, "the controller to serve the certificate ending "+notAfter.String(), func() bool {
		// Only to read what is served: no request goes over this connection.
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return false
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].NotAfter.Equal(notAfter.Truncate(time.Second))
	})
}

// A controller whose certificate expired: its host refuses to talk, says why once, and keeps
// what it has; nothing reaches the controller. The certificate renewed in place (no restart),
// the host converges, and its first report says from when to when TLS was refused and why,
// in the same words on the host and in the controller's history.
func TestRenewedCertificateEndsATransportRefusal(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "hq.pem"), filepath.Join(dir, "hq.key")
	replace := func(spec func() (string, string)) {
		cf, kf := spec()
		copyFile(t, kf, keyFile)
		copyFile(t, cf, certFile)
	}
	replace(func() (string, string) { return suite.ca.issue(t, serverSpec()) })
	ctl := startController(t, testdb.New(t), "HQ_TLS_CERT="+certFile, "HQ_TLS_KEY="+keyFile)
	c := newClient(t, ctl.url)
	motd(c)
	token := c.register("web-1")
	c.assign("web-1", "motd", false)
	key := controllerKey(t, ctl.url)

	lapsed := expired(serverSpec())
	replace(func() (string, string) { return suite.ca.issue(t, lapsed) })
	servingUntil(t, ctl.addr, lapsed.NotAfter)
	root := filepath.Join(dir, "root")
	os.MkdirAll(root, 0o755)
	h := startHost(t, ctl.url, "web-1", token, root, filepath.Join(dir, "state"), "HOSTD_CONTROLLER_KEY="+key)
	cause := `cause="tls: failed to verify the controller's certificate: x509: certificate has expired or is not yet valid: it is valid from ` +
		hq.FormatTime(lapsed.NotBefore.Truncate(time.Second)) + " to " + hq.FormatTime(lapsed.NotAfter.Truncate(time.Second)) + `" controller=` + ctl.url + " ca=" + suite.ca.file
	waitFor(t, 20*time.Second, "hostd to say why it cannot talk", func() bool { return strings.Contains(h.out.String(), cause) })
	refusedByHost := regexp.MustCompile(`TLS handshake error .*remote error: tls: bad certificate`)
	waitFor(t, 20*time.Second, "hostd to try three times", func() bool { return count(ctl.out.String(), refusedByHost) >= 3 })
	if n := count(h.out.String(), hostdRefused); n != 1 {
		t.Fatalf("hostd said it cannot talk %d times, want once:\n%s", n, h.out)
	}

	renewed := time.Now()
	replace(func() (string, string) { return suite.ca.issue(t, serverSpec()) })
	waitFor(t, 20*time.Second, "web-1 to converge after the renewal", func() bool {
		return readFile(filepath.Join(root, "etc/motd")) == "over TLS\n"
	})
	var carried hq.ReportView
	waitFor(t, 20*time.Second, "the report that says TLS was refused", func() bool {
		reps := c.reports("web-1")
		if len(reps) == 0 {
			return false
		}
		carried = reps[len(reps)-1] // the first the controller ever had from web-1
		return strings.Contains(carried.Summary, "; transport refused from ")
	})
	// The first report after the renewal carries the refusal, whether it answers the new
	// declaration (1 applied) or, when the reconcile's interval comes before the poll's next
	// try, what hostd had (nothing).
	want := regexp.MustCompile(`^applied [01] resource\(s\); transport refused from (\S+) to (\S+): tls: failed to verify the controller's certificate: x509: certificate has expired or is not yet valid: it is valid from \S+ to \S+$`)
	m := want.FindStringSubmatch(carried.Summary)
	if m == nil {
		t.Fatalf("the first report says %q", carried.Summary)
	}
	from, to := hq.ParseTime(m[1]), hq.ParseTime(m[2])
	if from.After(renewed) || to.Before(renewed.Add(-time.Second)) || to.After(carried.At) {
		t.Fatalf("refused from %s to %s; renewed at %s, reported at %s", from, to, renewed, carried.At)
	}
	if !strings.Contains(h.out.String(), `msg="`+carried.Summary+`"`) {
		t.Fatalf("hostd's report line is not the controller's %q:\n%s", carried.Summary, h.out)
	}
	for _, s := range c.sends("web-1") {
		if s.SentAt.Before(renewed) {
			t.Fatalf("a declaration was sent at %s, before the renewal at %s", s.SentAt, renewed)
		}
	}
	waitFor(t, 20*time.Second, "a report after it, without the refusal", func() bool {
		reps := c.reports("web-1")
		return len(reps) > 1 && reps[0].Summary == "applied 1 resource(s)"
	})
}

// The suite's controllers serve HTTPS unless a test asks for plain HTTP, which then works as
// before: hostd, given no CA, converges over it.
func TestPlainHTTPControllerWhenATestAsksForIt(t *testing.T) {
	dir := t.TempDir()
	if ctl := startController(t, filepath.Join(dir, "tls.db")); !strings.HasPrefix(ctl.url, "https://") {
		t.Fatalf("the default controller is at %s", ctl.url)
	}
	ctl := startPlainController(t, filepath.Join(dir, "plain.db"))
	if !strings.HasPrefix(ctl.url, "http://") {
		t.Fatalf("the plain controller is at %s", ctl.url)
	}
	c := newClient(t, ctl.url)
	motd(c)
	h := tlsHost(t, c, ctl, "web-1")
	waitFor(t, 20*time.Second, "web-1 to converge over plain HTTP", func() bool {
		return readFile(filepath.Join(h.root, "etc/motd")) == "over TLS\n"
	})
	if strings.Contains(h.out.String(), "HOSTD_CA") {
		t.Fatalf("hostd was given a CA for plain HTTP:\n%s", h.out)
	}
}

var demoRE = regexp.MustCompile(`hq demo: a controller at (https://\S+) .* under (\S+),`)

// hq demo serves HTTPS only, with a CA of its own that its hosts trust and that it tells the
// operator to curl with; its hosts converge over it, and plain HTTP is refused.
func TestDemoServesHTTPS(t *testing.T) {
	p := start(t, "hq demo", []string{"HQ_ADDR=127.0.0.1:0", "HQ_ADMIN_TOKEN=" + adminToken, "TMPDIR=" + t.TempDir()}, "hq", "demo")
	var url, dir string
	waitFor(t, 60*time.Second, "the demo's instructions", func() bool {
		m := demoRE.FindStringSubmatch(p.out.String())
		if m != nil {
			url, dir = m[1], m[2]
		}
		return m != nil
	})
	caFile := filepath.Join(dir, "ca.pem")
	if !strings.Contains(p.out.String(), "export HQ_URL="+url+" HQ_CA="+caFile+" CURL_CA_BUNDLE="+caFile+" ") {
		t.Fatalf("the demo does not say how to curl it:\n%s", p.out)
	}
	roots, err := certs.ReadPool(caFile)
	if err != nil {
		t.Fatal(err)
	}
	c := hqclient.New(url, adminToken)
	c.HTTP = hqclient.Trusting(roots)
	waitFor(t, 60*time.Second, "web-1 to converge over HTTPS", func() bool {
		v, err := c.Node(t.Context(), "web-1")
		return err == nil && v.Status == hq.StatusConverged
	})
	if _, err := hqclient.New(url, adminToken).Status(t.Context()); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("a client that does not trust the demo's CA: %v", err)
	}
	resp, err := http.Get("http://" + strings.TrimPrefix(url, "https://") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("plain HTTP to the demo: %d", resp.StatusCode)
	}
	for _, n := range []string{"web-1", "edge-1", "app-1"} {
		if log := readFile(filepath.Join(dir, n, "hostd.log")); hostdRefused.MatchString(log) {
			t.Fatalf("%s could not talk to the demo's controller:\n%s", n, log)
		}
	}
}
