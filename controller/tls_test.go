package controller

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeSelfSigned writes a self-signed certificate named name and its key.
func writeSelfSigned(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	cf, kf := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cf, kf
}

// A renewed certificate is served without a restart; a half-written one keeps the old.
func TestCertificateReloadsWhenItsFilesChange(t *testing.T) {
	dir := t.TempDir()
	cf, kf := writeSelfSigned(t, dir, "first")
	r, err := newCertReloader(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	name := func() string {
		c, _ := r.get(nil)
		leaf, _ := x509.ParseCertificate(c.Certificate[0])
		return leaf.Subject.CommonName
	}
	if name() != "first" {
		t.Fatal("not serving the first certificate")
	}
	time.Sleep(10 * time.Millisecond)
	writeSelfSigned(t, dir, "renewed")
	r.checked = time.Time{} // as if a second had passed
	if got := name(); got != "renewed" {
		t.Fatalf("serving %q after the files changed", got)
	}
	os.WriteFile(cf, []byte("-----BEGIN CERT"), 0o600)
	r.checked = time.Time{}
	if got := name(); got != "renewed" {
		t.Fatalf("serving %q after a half-written certificate", got)
	}
}
