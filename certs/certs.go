// Package certs makes throwaway certificate authorities and the certificates they sign, for hq
// demo and the end-to-end tests: ECDSA P-256 keys and PEM files, from the standard library
// alone, nothing downloaded. A CA's private key lives only in memory, so once the process that
// made it ends, nobody can issue another certificate its holders would trust.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// CA is a certificate authority made by NewCA.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a CA named name, valid from an hour ago (a little clock skew is no failure)
// for validity.
func NewCA(name string, validity time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(validity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key}, nil
}

// PEM is the CA's certificate as HOSTD_CA, HQ_CLIENT_CA, HQ_CA and curl --cacert read it.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// WriteCert writes the CA's certificate to file, PEM. A certificate is public: mode 0644.
func (ca *CA) WriteCert(file string) error { return os.WriteFile(file, ca.PEM(), 0o644) }

// Pool is a pool holding the CA alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Spec says what a certificate is for.
type Spec struct {
	// Name is the subject's common name; a client certificate names it as a DNS name too, as
	// HQ_CLIENT_CA wants a node named.
	Name string
	// Client makes a client certificate (a node's); otherwise it is a server's, for IPs and DNS.
	Client bool
	IPs    []net.IP
	DNS    []string
	// NotBefore and NotAfter bound its validity; zero, an hour ago and the CA's own end.
	NotBefore, NotAfter time.Time
}

// Pair is a certificate and its private key, PEM.
type Pair struct {
	Cert, Key []byte
	// Leaf is the certificate parsed.
	Leaf *x509.Certificate
}

// Issue signs a certificate for s with a new key.
func (ca *CA) Issue(s Spec) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: s.Name},
		NotBefore: s.NotBefore, NotAfter: s.NotAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: s.IPs, DNSNames: s.DNS}
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	if s.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		tmpl.DNSNames = append(tmpl.DNSNames, s.Name)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return Pair{}, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Pair{}, err
	}
	return Pair{Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), Leaf: leaf}, nil
}

// Write writes the certificate (mode 0644) and the key (0600) to their files.
func (p Pair) Write(certFile, keyFile string) error {
	return errors.Join(os.WriteFile(certFile, p.Cert, 0o644), os.WriteFile(keyFile, p.Key, 0o600))
}

// ReadPool reads a PEM bundle of certificates to trust.
func ReadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}

// serial is a random serial number: two certificates of one CA must not share one.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic("certs: no randomness: " + err.Error())
	}
	return n
}
