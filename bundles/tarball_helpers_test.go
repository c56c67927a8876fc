package bundles_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"
)

// signer holds a test key pair; pub is in the shape of OPA's `keys`.
type signer struct {
	id      string
	private string // PEM
	public  string // PEM
}

func newSigner(t testing.TB, id string) *signer {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{
		id:      id,
		private: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: priv})),
		public:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
	}
}

// keysJSON is the OPA `keys` block holding the signers' public keys.
func keysJSON(t testing.TB, ss ...*signer) json.RawMessage {
	t.Helper()
	m := map[string]any{}
	for _, s := range ss {
		m[s.id] = map[string]any{"key": s.public, "algorithm": "RS256"}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bundleSpec describes a bundle tarball to build.
type bundleSpec struct {
	revision string
	roots    []string
	files    map[string]string // path in the bundle → Rego source
	data     map[string]any
	signer   *signer
	tamper   bool // change a module after signing
}

func (s bundleSpec) build(t testing.TB) []byte {
	t.Helper()
	b := bundle.Bundle{Data: s.data, Manifest: bundle.Manifest{Revision: s.revision}}
	if b.Data == nil {
		b.Data = map[string]any{}
	}
	if s.roots != nil {
		roots := slices.Clone(s.roots)
		b.Manifest.Roots = &roots
	}
	for _, name := range slices.Sorted(maps.Keys(s.files)) {
		b.Modules = append(b.Modules, bundle.ModuleFile{URL: "/" + name, Path: "/" + name, Raw: []byte(s.files[name])})
	}
	if s.signer != nil {
		if err := b.GenerateSignature(bundle.NewSigningConfig(s.signer.private, "RS256", ""), s.signer.id, false); err != nil {
			t.Fatalf("signing: %v", err)
		}
	}
	if s.tamper {
		b.Modules[0].Raw = append(slices.Clone(b.Modules[0].Raw), []byte("\n# changed after signing\n")...)
	}
	var buf bytes.Buffer
	if err := bundle.NewWriter(&buf).Write(b); err != nil {
		t.Fatalf("writing bundle: %v", err)
	}
	return buf.Bytes()
}

// writeTarball writes the bundle at path by renaming a temporary file over
// it, as a CI job publishing a bundle does.
func (s bundleSpec) writeTarball(t testing.TB, path string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, s.build(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// untar unpacks a bundle tarball into dir.
func untar(t testing.TB, tarball, dir string) {
	t.Helper()
	f, err := os.Open(tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		put(t, filepath.Join(dir, filepath.FromSlash(h.Name)), string(b))
	}
}
