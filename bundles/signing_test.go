package bundles_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-opa/ahp-opa/bundles"
)

// TestSignedBundles: with verification configured, only bundles whose
// signature verifies against the configured keys are served.
func TestSignedBundles(t *testing.T) {
	ci, rogue := newSigner(t, "ci"), newSigner(t, "ci") // same key id, different keys
	files := map[string]string{"p.rego": rule("p", "P", "p1")}
	required := json.RawMessage(`{"keyid": "ci"}`)
	cases := []struct {
		name    string
		spec    bundleSpec
		plain   bool // a .rego directory instead of a bundle
		signing json.RawMessage
		wantErr error // nil: loads
	}{
		{name: "signed", spec: bundleSpec{files: files, signer: ci}, signing: required},
		{name: "unsigned", spec: bundleSpec{files: files}, signing: required, wantErr: bundles.ErrUnsigned},
		{name: "tampered", spec: bundleSpec{files: files, signer: ci, tamper: true}, signing: required, wantErr: bundles.ErrUnsigned},
		{name: "other key", spec: bundleSpec{files: files, signer: rogue}, signing: required, wantErr: bundles.ErrUnsigned},
		{name: "plain files", plain: true, signing: required, wantErr: bundles.ErrUnsigned},
		// Keys without a signing block: OPA's rule, a signature is checked
		// when there is one.
		{name: "optional, unsigned", spec: bundleSpec{files: files}},
		{name: "optional, tampered", spec: bundleSpec{files: files, signer: ci, tamper: true}, wantErr: bundles.ErrUnsigned},
		{name: "optional, plain files", plain: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "b.tar.gz")
			if c.plain {
				path = filepath.Join(dir, "plain")
				put(t, filepath.Join(path, "p.rego"), files["p.rego"])
			} else {
				c.spec.writeTarball(t, path)
			}
			opts := bundles.Options{Paths: []string{path}, OPA: bundles.OPAConfig{Keys: keysJSON(t, ci), Signing: c.signing}}
			s, err := tryStand(t, opts)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("Start: %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			if got := s.reasons("P"); !equalStrings(got, []string{"p1"}) {
				t.Errorf("reasons %q", got)
			}
		})
	}
}

// TestSignedBundleReplacedByTampered: a tampered replacement is refused and
// the signed one keeps deciding.
func TestSignedBundleReplacedByTampered(t *testing.T) {
	ci := newSigner(t, "ci")
	dir := t.TempDir()
	path := filepath.Join(dir, "b.tar.gz")
	bundleSpec{revision: "v1", files: map[string]string{"p.rego": rule("p", "P", "v1")}, signer: ci}.writeTarball(t, path)
	s := newStand(t, bundles.Options{
		Paths: []string{path}, Watch: true, RescanInterval: -1,
		OPA: bundles.OPAConfig{Keys: keysJSON(t, ci), Signing: json.RawMessage(`{"keyid": "ci"}`)},
	})
	for i, spec := range []bundleSpec{
		{revision: "v2", files: map[string]string{"p.rego": rule("p", "P", "v2")}, signer: ci, tamper: true},
		{revision: "v3", files: map[string]string{"p.rego": rule("p", "P", "v3")}},
	} {
		spec.writeTarball(t, path)
		ev := s.waitEvent(bundles.Failed, i)
		if !errors.Is(ev.Err, bundles.ErrUnsigned) {
			t.Errorf("%s: error %v, want ErrUnsigned", spec.revision, ev.Err)
		}
		if got := s.reasons("P"); !equalStrings(got, []string{"v1"}) {
			t.Errorf("%s: reasons %q, want the signed v1", spec.revision, got)
		}
	}
	bundleSpec{revision: "v4", files: map[string]string{"p.rego": rule("p", "P", "v4")}, signer: ci}.writeTarball(t, path)
	s.waitReasons("P", "v4")
	if rev := s.rl.Status().Revision; rev != "v4" {
		t.Errorf("revision %q, want the manifest's v4", rev)
	}
}

// TestSignedBundleDirectory verifies an unpacked bundle directory.
func TestSignedBundleDirectory(t *testing.T) {
	ci := newSigner(t, "ci")
	dir := t.TempDir()
	tarball := filepath.Join(dir, "b.tar.gz")
	bundleSpec{revision: "d1", files: map[string]string{"p.rego": rule("p", "P", "d1")}, signer: ci}.writeTarball(t, tarball)
	unpacked := filepath.Join(dir, "unpacked")
	untar(t, tarball, unpacked)
	opts := bundles.Options{
		Paths: []string{unpacked},
		OPA:   bundles.OPAConfig{Keys: keysJSON(t, ci), Signing: json.RawMessage(`{"keyid": "ci"}`)},
	}
	s := newStand(t, opts)
	if got := s.reasons("P"); !equalStrings(got, []string{"d1"}) {
		t.Errorf("reasons %q", got)
	}
	put(t, filepath.Join(unpacked, "p.rego"), rule("p", "P", "edited"))
	if _, err := tryStand(t, opts); !errors.Is(err, bundles.ErrUnsigned) {
		t.Errorf("edited signed directory: %v, want ErrUnsigned", err)
	}
	must(t, os.Remove(filepath.Join(unpacked, ".signatures.json")))
	if _, err := tryStand(t, opts); !errors.Is(err, bundles.ErrUnsigned) {
		t.Errorf("directory without signature: %v, want ErrUnsigned", err)
	}
}
