package e2e

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshhq/hq/certs"
)

// testCA is a certificate authority made for the tests, nothing downloaded, with the file of
// its certificate.
type testCA struct {
	*certs.CA
	dir string
	// file is the CA's certificate, PEM, as HOSTD_CA, HQ_CLIENT_CA and HQ_CA take it.
	file string
	// issued names the files of its certificates apart.
	issued atomic.Int64
}

func makeCA(dir, name string) (*testCA, error) {
	ca, err := certs.NewCA(name, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	c := &testCA{CA: ca, dir: dir, file: filepath.Join(dir, "ca.pem")}
	return c, ca.WriteCert(c.file)
}

// newTestCA is a CA of one test's own, beside the suite's.
func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	ca, err := makeCA(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// serverSpec is a controller's certificate on the loopback address, where the tests run it.
func serverSpec() certs.Spec {
	return certs.Spec{Name: "hq", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}
}

// nodeSpec is a node's client certificate, naming it as HQ_CLIENT_CA wants.
func nodeSpec(node string) certs.Spec { return certs.Spec{Name: node, Client: true} }

// expired makes s a certificate that ended an hour ago.
func expired(s certs.Spec) certs.Spec {
	s.NotBefore, s.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	return s
}

func (ca *testCA) write(s certs.Spec) (certFile, keyFile string, err error) {
	p, err := ca.Issue(s)
	if err != nil {
		return "", "", err
	}
	stem := filepath.Join(ca.dir, fmt.Sprintf("%s-%d", s.Name, ca.issued.Add(1)))
	return stem + ".pem", stem + ".key", p.Write(stem+".pem", stem+".key")
}

// issue makes a certificate for s and returns the paths of it and of its key.
func (ca *testCA) issue(t testing.TB, s certs.Spec) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile, err := ca.write(s)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// suite is the TLS every controller the tests start serves unless a test says otherwise: a CA
// made once for the test binary and one certificate it issued for 127.0.0.1.
var suite struct {
	ca        *testCA
	cert, key string
	// spki is the certificate's public key, as Chromium's --ignore-certificate-errors-spki-list
	// names the one key it accepts.
	spki string
}

// setUpSuiteTLS makes the suite's CA and certificate in dir, and has every client in this
// binary that uses Go's default transport (the e2e client, the client package without an
// http.Client of its own, http.Get) trust that CA and nothing else, as hostd with HOSTD_CA does.
func setUpSuiteTLS(dir string) error {
	ca, err := makeCA(dir, "hq e2e CA")
	if err != nil {
		return err
	}
	p, err := ca.Issue(serverSpec())
	if err != nil {
		return err
	}
	suite.ca, suite.cert, suite.key = ca, filepath.Join(dir, "hq.pem"), filepath.Join(dir, "hq.key")
	sum := sha256.Sum256(p.Leaf.RawSubjectPublicKeyInfo)
	suite.spki = base64.StdEncoding.EncodeToString(sum[:])
	http.DefaultTransport.(*http.Transport).TLSClientConfig = suiteTLS()
	return p.Write(suite.cert, suite.key)
}

// suiteTLS is a client's TLS that trusts the suite's CA alone, for a transport of a test's own.
func suiteTLS() *tls.Config { return &tls.Config{RootCAs: suite.ca.Pool()} }
