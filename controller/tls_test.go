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
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cf, kf := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFile(t, kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
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
		t.Helper()
		c, err := r.get(nil)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.Subject.CommonName
	}
	if name() != "first" {
		t.Fatal("not serving the first certificate")
	}
	writeSelfSigned(t, dir, "renewed")
	// A renewal an hour on, whatever the resolution of the file system's clock.
	later := time.Now().Add(time.Hour)
	for _, f := range []string{cf, kf} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	r.checked = time.Time{} // as if a second had passed
	if got := name(); got != "renewed" {
		t.Fatalf("serving %q after the files changed", got)
	}
	writeFile(t, cf, []byte("-----BEGIN CERT"))
	r.checked = time.Time{}
	if got := name(); got != "renewed" {
		t.Fatalf("serving %q after a half-written certificate", got)
	}
}
