package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// A server certificate verifies for its address against the CA alone, and not for another
// address; a client certificate names its node; an expired one does not verify.
func TestIssuedCertificatesVerifyAgainstTheirCA(t *testing.T) {
	ca, err := NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Issue(Spec{Name: "hq", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(p Pair, opts x509.VerifyOptions) error {
		opts.Roots = ca.Pool()
		_, err := p.Leaf.Verify(opts)
		return err
	}
	if err := verify(srv, x509.VerifyOptions{DNSName: "127.0.0.1"}); err != nil {
		t.Fatalf("server certificate for 127.0.0.1: %v", err)
	}
	if _, ok := errors.AsType[x509.HostnameError](verify(srv, x509.VerifyOptions{DNSName: "10.0.0.1"})); !ok {
		t.Fatal("server certificate verified for an address it does not name")
	}
	if !srv.Leaf.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Fatalf("ends %s, the CA at %s", srv.Leaf.NotAfter, ca.Cert.NotAfter)
	}

	node, err := ca.Issue(Spec{Name: "web-1", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(node, x509.VerifyOptions{KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client certificate: %v", err)
	}
	if node.Leaf.Subject.CommonName != "web-1" || len(node.Leaf.DNSNames) != 1 || node.Leaf.DNSNames[0] != "web-1" {
		t.Fatalf("client certificate names %q %v", node.Leaf.Subject.CommonName, node.Leaf.DNSNames)
	}

	old, err := ca.Issue(Spec{Name: "hq", IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := errors.AsType[x509.CertificateInvalidError](verify(old, x509.VerifyOptions{DNSName: "127.0.0.1"})); !ok || e.Reason != x509.Expired {
		t.Fatal("an expired certificate verified")
	}

	other, _ := NewCA("another CA", time.Hour)
	if _, err := srv.Leaf.Verify(x509.VerifyOptions{Roots: other.Pool(), DNSName: "127.0.0.1"}); err == nil {
		t.Fatal("verified against a CA that did not issue it")
	}
}

// What Write puts in files loads as a TLS key pair, and the CA's PEM reads back as a pool.
func TestFilesLoadAsTheStandardLibraryReadsThem(t *testing.T) {
	dir := t.TempDir()
	ca, _ := NewCA("test CA", time.Hour)
	p, err := ca.Issue(Spec{Name: "hq", DNS: []string{"localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	cf, kf := filepath.Join(dir, "hq.pem"), filepath.Join(dir, "hq.key")
	if err := p.Write(cf, kf); err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(cf, kf); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := ca.WriteCert(caFile); err != nil {
		t.Fatal(err)
	}
	pool, err := ReadPool(caFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPool(kf); err == nil {
		t.Fatal("a key file read as a bundle of certificates")
	}
}
