package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// tlsClient trusts the given certificates and opens a new connection for
// every request, so that each one sees the certificate served right now.
func tlsClient(certs ...*x509.Certificate) *http.Client {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		DisableKeepAlives: true,
	}}
}

// servedSerial makes one request and returns the serial number of the
// certificate the server presented.
func servedSerial(t *testing.T, c *http.Client, url string) int64 {
	t.Helper()
	resp, err := c.Post(url+"/ahp", "application/json", strings.NewReader(eventRequest("t1")))
	if err != nil {
		t.Fatalf("request over TLS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
}

// TestHTTPTLS: HTTPS with a certificate that is reloaded when its files
// change, and kept when the new files do not load (B-HTTP-6).
func TestHTTPTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	cert1, key1, x1 := testkit.SelfSigned(t, 1)
	testkit.WriteSecret(t, certFile, cert1)
	testkit.WriteSecret(t, keyFile, key1)

	reloader, err := NewCertReloader(certFile, keyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newHTTP(statelessInterceptor{})
	h.TLSConfig = reloader.TLSConfig()
	ctx, cancel := context.WithCancel(context.Background())
	url, _, done := serveHTTP(t, ctx, h)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	cert2, key2, x2 := testkit.SelfSigned(t, 2)
	c := tlsClient(x1, x2)
	if got := servedSerial(t, c, url); got != 1 {
		t.Fatalf("serial %d, want 1", got)
	}

	// Plain HTTP to the TLS port gets no AHP answer.
	plain := &http.Client{}
	if resp, err := plain.Post(strings.Replace(url, "https", "http", 1)+"/ahp", "application/json",
		strings.NewReader(eventRequest("t1"))); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP was answered on the TLS port")
		}
	}

	// A half-done rotation (new certificate, old key) keeps the old pair.
	testkit.WriteSecret(t, certFile, cert2)
	if got := servedSerial(t, c, url); got != 1 {
		t.Errorf("mismatched pair: serial %d, want the previous certificate 1", got)
	}
	// Finishing it switches to the new pair without a restart.
	testkit.WriteSecret(t, keyFile, key2)
	if got := servedSerial(t, c, url); got != 2 {
		t.Errorf("after rotation: serial %d, want 2", got)
	}
	// A removed file leaves the last good pair in place.
	os.Remove(certFile)
	if got := servedSerial(t, c, url); got != 2 {
		t.Errorf("missing file: serial %d, want 2", got)
	}

	// HTTP/2, which TLS clients may negotiate, serves the endpoint too.
	h2 := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   c.Transport.(*http.Transport).TLSClientConfig,
		ForceAttemptHTTP2: true,
	}}
	if resp, err := h2.Post(url+"/ahp", "application/json", strings.NewReader(eventRequest("h2"))); err != nil {
		t.Errorf("HTTP/2: %v", err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"h2"`) {
			t.Errorf("HTTP/2: %s %d %s", resp.Proto, resp.StatusCode, b)
		}
		h2.CloseIdleConnections()
	}

	// TLS below 1.2 is refused.
	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: c.Transport.(*http.Transport).TLSClientConfig.RootCAs, MaxVersion: tls.VersionTLS11,
	}}}
	if resp, err := old.Get(url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("a TLS 1.1 client was served")
	}
}

func TestNewCertReloaderErrors(t *testing.T) {
	dir := t.TempDir()
	cert, key, _ := testkit.SelfSigned(t, 1)
	_, otherKey, _ := testkit.SelfSigned(t, 2)
	good := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		testkit.WriteSecret(t, p, data)
		return p
	}
	certFile, keyFile := good("c.pem", cert), good("k.pem", key)
	tests := []struct {
		name, cert, key string
	}{
		{"missing cert", filepath.Join(dir, "none.pem"), keyFile},
		{"missing key", certFile, filepath.Join(dir, "none.pem")},
		{"not PEM", good("junk.pem", []byte("junk")), keyFile},
		{"key of another certificate", certFile, good("other.pem", otherKey)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewCertReloader(tt.cert, tt.key, nil); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, err := NewCertReloader(certFile, keyFile, nil); err != nil {
		t.Fatalf("valid pair: %v", err)
	}
}
