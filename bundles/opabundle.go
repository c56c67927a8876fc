package bundles

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/ahp-opa/ahp-opa/internal/pathread"
)

// readBundleFile reads an OPA bundle from a tarball or a bundle directory.
func readBundleFile(path string, kind sourceKind, opts LoadOptions) (*Policy, error) {
	var raw []byte
	if kind == kindTarball {
		// Read it whole: the digest needs the bytes anyway, and the file
		// may be replaced while it is read.
		var err error
		lim := pathread.Limits{MaxBytes: opts.Limits.MaxFileBytes}
		if raw, err = pathread.Read(path, lim); err != nil {
			return nil, fmt.Errorf("policy path: %w", err)
		}
		if err := checkTarball(path, raw, opts.Limits); err != nil {
			return nil, err
		}
	} else if err := checkBundleDir(path, opts.Limits); err != nil {
		return nil, err
	}
	read := func(vc *bundle.VerificationConfig) (bundle.Bundle, error) {
		var dl bundle.DirectoryLoader
		if kind == kindTarball {
			dl = bundle.NewTarballLoaderWithBaseURL(bytes.NewReader(raw), "")
		} else {
			dl = bundle.NewDirectoryLoader(path)
		}
		r := bundle.NewCustomReader(dl).
			WithRegoVersion(ast.RegoV1).
			WithProcessAnnotations(true).
			WithBundleVerificationConfig(vc).
			// Without keys there is nothing to check a signature against:
			// as good as an unsigned bundle, which is then accepted.
			WithSkipBundleVerification(vc == nil).
			// Checked above already; OPA's own cap guards the read itself.
			WithSizeLimitBytes(opts.Limits.MaxFileBytes)
		if kind == kindTarball {
			// Module names, and so compile errors, start with the
			// tarball's path.
			r = r.WithBaseDir(path)
		}
		return r.Read()
	}
	b, err := read(opts.Verification)
	if err != nil {
		if opts.Verification != nil {
			if _, err2 := read(nil); err2 == nil {
				// Readable without verification: the signature is what failed.
				return nil, fmt.Errorf("bundle %s: %w: %w", path, ErrUnsigned, err)
			}
		}
		return nil, fmt.Errorf("bundle %s: %w", path, err)
	}
	return fromBundle(path, &b, raw, opts.Tests, opts.Limits)
}

// fromBundle turns a read bundle into a Policy. name prefixes the module
// names; raw, when known, is the bundle's bytes, hashed for the digest.
func fromBundle(name string, b *bundle.Bundle, raw []byte, tests bool, lim Limits) (*Policy, error) {
	if b.Type() == bundle.DeltaBundleType {
		return nil, fmt.Errorf("bundle %s: delta bundles are not supported", name)
	}
	if len(b.WasmModules) > 0 || len(b.PlanModules) > 0 {
		return nil, fmt.Errorf("bundle %s: Wasm and plan modules are not supported", name)
	}
	p := &Policy{Modules: make(map[string]*ast.Module, len(b.Modules)), Data: b.Data}
	h := sha256.New()
	mods := slices.Clone(b.Modules)
	slices.SortFunc(mods, func(a, b bundle.ModuleFile) int { return strings.Compare(a.Path, b.Path) })
	// A downloaded bundle was only held to OPA's size_limit_bytes: its
	// Rego files and count meet ahp-opa's limits here, before compiling.
	t := tally{lim: lim.WithDefaults()}
	for _, mf := range mods {
		if err := t.add(name+":"+mf.Path, int64(len(mf.Raw))); err != nil {
			return nil, err
		}
	}
	for _, mf := range mods {
		key := mf.Path
		if !strings.HasPrefix(key, name+"/") {
			key = strings.TrimSuffix(name, "/") + "/" + strings.TrimPrefix(key, "/")
			// Errors found when compiling name the file: say which bundle.
			relabel(mf.Parsed, key)
		}
		if isTest(mf.Path) && !tests {
			continue
		}
		if raw == nil {
			fmt.Fprintf(h, "%s\x00%d\x00", mf.Path, len(mf.Raw))
			h.Write(mf.Raw)
		}
		if isTest(mf.Path) {
			if p.Tests == nil {
				p.Tests = map[string]*ast.Module{}
			}
			p.Tests[key] = mf.Parsed
			continue
		}
		p.Modules[key] = mf.Parsed
	}
	if len(p.Modules) == 0 {
		return nil, fmt.Errorf("%w in bundle %s", ErrNoPolicy, name)
	}
	if raw != nil {
		h.Write(raw)
	} else {
		// A bundle directory: the manifest counts as content too.
		fmt.Fprintf(h, "%s\x00", b.Manifest.Revision)
		if b.Manifest.Roots != nil {
			fmt.Fprintf(h, "%q\x00", *b.Manifest.Roots)
		}
		if err := hashData(h, b.Data); err != nil {
			return nil, err
		}
	}
	if len(p.Data) == 0 {
		p.Data = nil
	}
	p.Digest = hex.EncodeToString(h.Sum(nil))[:16]
	p.Revision = b.Manifest.Revision
	if p.Revision == "" {
		p.Revision = p.Digest[:12]
	}
	if b.Manifest.Roots != nil {
		p.Roots = slices.Clone(*b.Manifest.Roots)
	}
	return p, nil
}

// relabel sets the file name of every location in m.
func relabel(m *ast.Module, file string) {
	ast.WalkNodes(m, func(n ast.Node) bool {
		if loc := n.Loc(); loc != nil {
			loc.File = file
		}
		return false
	})
}

// hashData adds a data document to a hash: json.Marshal sorts map keys, so
// equal documents hash equally.
func hashData(h io.Writer, data map[string]any) error {
	if len(data) == 0 {
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("hashing data documents: %w", err)
	}
	_, err = h.Write(b)
	return err
}
