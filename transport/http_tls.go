package transport

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"

	"github.com/ahp-opa/ahp-opa/internal/pathread"
)

// CertReloader serves a certificate and key from files and picks up new
// versions without a restart: each TLS handshake re-reads both files and
// reloads the pair when either changed. Comparing contents rather than
// modification times catches rewrites within one timestamp tick; the files
// are small and handshakes rare on keep-alive connections. A pair that
// fails to load, typically because a rotation has written the certificate
// but not yet the key, is ignored and the previous one keeps serving until
// the files form a valid pair again.
type CertReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu              sync.Mutex
	cert            *tls.Certificate
	certPEM, keyPEM []byte   // contents of the pair being served
	skipped         [32]byte // digest of the last pair that failed to load
}

// NewCertReloader loads the pair once and fails if it is not valid.
func NewCertReloader(certFile, keyFile string, log *slog.Logger) (*CertReloader, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &CertReloader{certFile: certFile, keyFile: keyFile, log: log}
	certPEM, keyPEM, err := c.read()
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls: loading %s and %s: %w", certFile, keyFile, err)
	}
	c.cert, c.certPEM, c.keyPEM = &cert, certPEM, keyPEM
	return c, nil
}

func (c *CertReloader) read() (certPEM, keyPEM []byte, err error) {
	// Called on every handshake: bounded, and never stuck on a FIFO.
	if certPEM, err = pathread.Read(c.certFile, pathread.Limits{}); err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	if keyPEM, err = pathread.Read(c.keyFile, pathread.Limits{}); err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	return certPEM, keyPEM, nil
}

// GetCertificate implements tls.Config.GetCertificate.
func (c *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	certPEM, keyPEM, err := c.read()
	if err != nil {
		// Files missing in the middle of a rotation: keep what we have.
		return c.cert, nil
	}
	if bytes.Equal(certPEM, c.certPEM) && bytes.Equal(keyPEM, c.keyPEM) {
		return c.cert, nil
	}
	h := sha256.New()
	h.Write(certPEM)
	h.Write([]byte{0})
	h.Write(keyPEM)
	var sum [32]byte
	h.Sum(sum[:0])
	if sum == c.skipped {
		return c.cert, nil // already reported
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		c.skipped = sum
		c.log.Warn("tls: changed certificate files do not load; still serving the previous certificate",
			"cert", c.certFile, "key", c.keyFile, "err", err)
		return c.cert, nil
	}
	c.cert, c.certPEM, c.keyPEM = &cert, certPEM, keyPEM
	c.log.Info("tls: certificate reloaded", "cert", c.certFile)
	return c.cert, nil
}

// TLSConfig returns a server configuration that serves the reloaded
// certificate, TLS 1.2 at least.
func (c *CertReloader) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: c.GetCertificate,
	}
}
