package hostd

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/certs"
)

// tlsBed is a CA, its file for HOSTD_CA, and certificates it issues, for real TLS servers from
// the standard library.
type tlsBed struct {
	t      *testing.T
	ca     *certs.CA
	dir    string
	caFile string
	n      int
}

func newTLSBed(t *testing.T, name string) *tlsBed {
	t.Helper()
	ca, err := certs.NewCA(name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b := &tlsBed{t: t, ca: ca, dir: t.TempDir()}
	b.caFile = filepath.Join(b.dir, "ca.pem")
	if err := ca.WriteCert(b.caFile); err != nil {
		t.Fatal(err)
	}
	return b
}

var loopback = []net.IP{net.IPv4(127, 0, 0, 1)}

// expired bounds a certificate that ended an hour ago.
func expired(s certs.Spec) certs.Spec {
	s.NotBefore, s.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	return s
}

// cert issues a certificate for a server to serve.
func (b *tlsBed) cert(s certs.Spec) *tls.Certificate {
	b.t.Helper()
	p, err := b.ca.Issue(s)
	if err != nil {
		b.t.Fatal(err)
	}
	c, err := tls.X509KeyPair(p.Cert, p.Key)
	if err != nil {
		b.t.Fatal(err)
	}
	return &c
}

// files issues a certificate into files, for HOSTD_CERT and HOSTD_KEY.
func (b *tlsBed) files(s certs.Spec) (certFile, keyFile string) {
	b.t.Helper()
	p, err := b.ca.Issue(s)
	if err != nil {
		b.t.Fatal(err)
	}
	b.n++
	stem := filepath.Join(b.dir, fmt.Sprintf("%s-%d", s.Name, b.n))
	certFile, keyFile = stem+".pem", stem+".key"
	if err := p.Write(certFile, keyFile); err != nil {
		b.t.Fatal(err)
	}
	return certFile, keyFile
}

// tlsServer serves h over HTTPS with whatever certificate serving holds at each handshake,
// asking for a client certificate from clientCAs when it is set; it counts the handshakes.
type tlsServer struct {
	*httptest.Server
	serving    atomic.Pointer[tls.Certificate]
	handshakes atomic.Int64
}

func newTLSServer(t *testing.T, h http.Handler, cert *tls.Certificate, clientCAs *x509.CertPool) *tlsServer {
	s := &tlsServer{Server: httptest.NewUnstartedServer(h)}
	s.serving.Store(cert)
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused on purpose
	s.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		s.handshakes.Add(1)
		c := &tls.Config{Certificates: []tls.Certificate{*s.serving.Load()}}
		if clientCAs != nil {
			c.ClientCAs, c.ClientAuth = clientCAs, tls.RequireAndVerifyClientCert
		}
		return c, nil
	}}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// serve makes new connections get cert, and ends the ones open, which would not handshake again.
func (s *tlsServer) serve(cert *tls.Certificate) {
	s.serving.Store(cert)
	s.CloseClientConnections()
}

// Each way TLS fails against a real server gets words naming the cause, the same at every
// attempt; what is not a TLS failure gets none.
func TestTLSTroubleNamesTheCause(t *testing.T) {
	ours, theirs := newTLSBed(t, "our CA"), newTLSBed(t, "their CA")
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"key":"x"}`)) })
	notTLS, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer notTLS.Close()
	go func() {
		for {
			c, err := notTLS.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
			c.Close()
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closed.Close()
	nodeCert, nodeKey := ours.files(certs.Spec{Name: "web-1", Client: true})
	oldCert, oldKey := ours.files(expired(certs.Spec{Name: "web-1", Client: true}))

	for _, c := range []struct {
		name, url, cert, key string
		want                 string
	}{
		{"expired", newTLSServer(t, ok, ours.cert(expired(certs.Spec{Name: "hq", IPs: loopback})), nil).URL, "", "",
			"tls: failed to verify the controller's certificate: x509: certificate has expired or is not yet valid: it is valid from "},
		{"another CA", newTLSServer(t, ok, theirs.cert(certs.Spec{Name: "hq", IPs: loopback}), nil).URL, "", "",
			"tls: failed to verify the controller's certificate: x509: certificate signed by unknown authority"},
		{"another address", newTLSServer(t, ok, ours.cert(certs.Spec{Name: "hq", IPs: []net.IP{net.IPv4(10, 0, 0, 1)}}), nil).URL, "", "",
			"tls: failed to verify the controller's certificate: x509: certificate is valid for 10.0.0.1, not 127.0.0.1"},
		{"our certificate expired", newTLSServer(t, ok, ours.cert(certs.Spec{Name: "hq", IPs: loopback}), ours.ca.Pool()).URL, oldCert, oldKey,
			"the controller refused the TLS handshake: remote error: tls: expired certificate"},
		{"no certificate of ours", newTLSServer(t, ok, ours.cert(certs.Spec{Name: "hq", IPs: loopback}), ours.ca.Pool()).URL, "", "",
			"the controller refused the TLS handshake: remote error: tls: certificate required"},
		{"not TLS", "https://" + notTLS.Addr().String(), "", "",
			"tls: what answered at the controller's address does not speak TLS"},
		{"all well", newTLSServer(t, ok, ours.cert(certs.Spec{Name: "hq", IPs: loopback}), ours.ca.Pool()).URL, nodeCert, nodeKey, ""},
		{"nobody there", "https://" + closed.Addr().String(), "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newClient([]string{c.url}, "web-1", "tok")
			tr, err := transportFor(ours.caFile, c.cert, c.key)
			if err != nil {
				t.Fatal(err)
			}
			cl.HTTP.Transport = tr
			var got []string
			for range 2 {
				_, err := cl.ControllerKey(t.Context())
				if c.want != "" && err == nil {
					t.Fatal("the call went through")
				}
				got = append(got, tlsTrouble(err))
				tr.CloseIdleConnections()
			}
			if got[0] != got[1] {
				t.Fatalf("the words changed between attempts: %q, then %q", got[0], got[1])
			}
			if c.want == "" && got[0] != "" || !strings.HasPrefix(got[0], c.want) {
				t.Fatalf("got %q, want %q", got[0], c.want)
			}
		})
	}
}

// hostd that cannot talk to its controller because TLS fails logs each cause once, not at
// every retry, with the controller and the CA it trusts; it goes on reconciling; and once TLS
// works again its next report says from when to when it was refused, and why, and the
// reports after it do not.
func TestRunCarriesATLSRefusalIntoItsNextReport(t *testing.T) {
	ours, theirs := newTLSBed(t, "our CA"), newTLSBed(t, "their CA")
	good := ours.cert(certs.Spec{Name: "hq", IPs: loopback})
	f, h := fakeControllerHandler(t)
	srv := newTLSServer(t, h, good, nil)
	cfg := f.config(srv.Server)
	cfg.CA, cfg.Interval = ours.caFile, 100*time.Millisecond
	logs := &logBuffer{}
	runHostd(t, cfg, logs)
	f.send(1, nil, mod("app", false, file("conf", "/etc/app.conf", "v1")))
	f.waitReport("the first report", func(r hq.Report) bool { return r.Generation == 1 && r.Transport == nil })

	const refused = `msg="cannot talk to the controller: TLS failed`
	cutOff := func(cert *tls.Certificate, cause string) {
		t.Helper()
		srv.serve(cert)
		before := srv.handshakes.Load()
		waitFor(t, 10*time.Second, "hostd to say why it cannot talk", func() bool {
			return strings.Contains(logs.String(), cause)
		})
		waitFor(t, 10*time.Second, "hostd to try again a few times", func() bool { return srv.handshakes.Load() >= before+3 })
		if n := strings.Count(logs.String(), cause); n != 1 {
			t.Fatalf("%q logged %d times:\n%s", cause, n, logs)
		}
	}
	f.mu.Lock()
	reports := len(f.posted)
	f.mu.Unlock()
	start := time.Now()
	cutOff(ours.cert(expired(certs.Spec{Name: "hq", IPs: loopback})), "x509: certificate has expired or is not yet valid")
	cutOff(theirs.cert(certs.Spec{Name: "hq", IPs: loopback}), "x509: certificate signed by unknown authority")
	line := logs.String()[strings.Index(logs.String(), refused):]
	line = line[:strings.IndexByte(line, '\n')]
	for _, want := range []string{"controller=" + srv.URL, "ca=" + ours.caFile} {
		if !strings.Contains(line, want) {
			t.Fatalf("the line does not say %s: %s", want, line)
		}
	}
	if n := strings.Count(logs.String(), refused); n != 2 {
		t.Fatalf("%d lines for two causes:\n%s", n, logs)
	}
	f.mu.Lock()
	if len(f.posted) != reports {
		t.Fatal("a report went through while TLS failed")
	}
	f.mu.Unlock()
	waitFor(t, 5*time.Second, "reconciles going on without the controller", func() bool {
		return strings.Count(logs.String(), `msg="applied 1 resource(s)"`) >= 5
	})

	srv.serve(good)
	rep := f.waitReport("a report carrying the refusal", func(r hq.Report) bool { return r.Transport != nil })
	tr := rep.Transport
	if tr.From.Before(start) || !tr.To.After(tr.From) || tr.To.After(time.Now()) {
		t.Fatalf("refused from %s to %s, the test cut it off at %s", tr.From, tr.To, start)
	}
	want := "tls: failed to verify the controller's certificate: x509: certificate has expired or is not yet valid: it is valid from "
	if !strings.HasPrefix(tr.Reason, want) || !strings.HasSuffix(tr.Reason, "; then tls: failed to verify the controller's certificate: x509: certificate signed by unknown authority") {
		t.Fatalf("reason %q", tr.Reason)
	}
	if rep.Generation != 1 || len(rep.Results) != 1 {
		t.Fatalf("the report of generation %d with %d results", rep.Generation, len(rep.Results))
	}
	if !strings.Contains(logs.String(), `msg="applied 1 resource(s); transport refused from `+hq.FormatTime(tr.From)+" to "+hq.FormatTime(tr.To)+": "+want) {
		t.Fatalf("the report line does not say it:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "TLS with the controller works again") {
		t.Fatal("hostd did not say TLS works again")
	}
	f.mu.Lock()
	carried := len(f.posted)
	f.mu.Unlock()
	f.waitReport("a report after it, without the refusal", func(r hq.Report) bool { return r.Transport == nil && r.StartedAt.After(rep.StartedAt) })
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.posted[carried:] {
		if r.Transport != nil {
			t.Fatalf("a later report carries the refusal again: %+v", r.Transport)
		}
	}
}

// Two refusals before either is reported are carried as one, from the first failure.
func TestTLSWatchJoinsRefusalsNotYetReported(t *testing.T) {
	w := newTLSWatch(slog.New(slog.DiscardHandler), "https://hq:8443", "", "")
	w.refused("cause A")
	w.through()
	first := w.pending()
	w.refused("cause B")
	w.refused("cause A")
	w.through()
	r := w.pending()
	if !r.From.Equal(first.From) || r.Reason != "cause A; then cause B; then cause A" {
		t.Fatalf("joined into %+v", r)
	}
	w.delivered(first) // an older report's answer
	if w.pending() != r {
		t.Fatal("a refusal not yet reported was forgotten")
	}
	w.delivered(r)
	if w.pending() != nil {
		t.Fatal("a delivered refusal is still pending")
	}
	var none *tlsWatch // a client without one, as in tests of other things
	none.observe(nil)
	none.delivered(r)
	if none.pending() != nil {
		t.Fatal("a nil watch has a refusal")
	}
}
