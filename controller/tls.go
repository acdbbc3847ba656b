package controller

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/meshhq/hq/certs"
)

// certReloader serves the certificate in certFile and keyFile and loads it again when either
// file changes (looked at once a second at most), so a renewed certificate is served to new
// connections without a restart and without dropping the long-polls already open.
type certReloader struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string
	checked time.Time
}

func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	c := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certReloader) fileStamp() string {
	var s string
	for _, f := range []string{c.certFile, c.keyFile} {
		if fi, err := os.Stat(f); err == nil {
			s += fmt.Sprintf("%d.%d;", fi.ModTime().UnixNano(), fi.Size())
		}
	}
	return s
}

func (c *certReloader) load() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	c.cert, c.stamp = &cert, c.fileStamp()
	return nil
}

// get answers a TLS handshake with the certificate, reloaded if its files changed. A change
// that does not load (a half-written file) keeps the certificate that was served.
func (c *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.checked) > time.Second {
		c.checked = time.Now()
		if c.fileStamp() != c.stamp {
			old := c.cert
			if c.load() != nil {
				c.cert = old
			}
		}
	}
	return c.cert, nil
}

// tlsConfig is the controller's TLS: its certificate, and with clientCA the node
// certificates it verifies when a client offers one (the API then requires one of the node's
// calls; the operator is known by the token alone).
func tlsConfig(certFile, keyFile, clientCA string) (*tls.Config, error) {
	r, err := newCertReloader(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.get}
	if clientCA != "" {
		pool, err := certs.ReadPool(clientCA)
		if err != nil {
			return nil, fmt.Errorf("HQ_CLIENT_CA: %w", err)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}
