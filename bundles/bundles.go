// Package bundles loads policy sources into a Policy: Rego modules plus data
// documents, with a revision that changes whenever their content does. The
// sources are .rego files and directories, OPA bundles (tarballs and bundle
// directories, optionally signed) and remote bundle services; a Reloader
// watches them and activates each new version.
package bundles

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/loader"

	"github.com/ahp-opa/ahp-opa/rego"
)

// ErrNoPolicy is returned when the sources hold no Rego module to serve.
var ErrNoPolicy = errors.New("no Rego policy found")

// ErrUnsigned is returned for a policy refused because signature
// verification is configured and the policy is not a signed bundle, or its
// signature does not verify.
var ErrUnsigned = errors.New("bundle signature verification failed")

// Policy is a loaded set of Rego modules and data documents.
type Policy struct {
	// Modules maps a file name to its parsed module. Test files are not
	// included.
	Modules map[string]*ast.Module
	// Data is the merged data document; nil when there is none.
	Data map[string]any
	// Revision names the content. For plain files it is a content hash;
	// a bundle's manifest may set it, so two contents can share it.
	Revision string
	// Digest is a hash of the content: equal content, equal digest.
	Digest string
	// Tests holds the _test.rego modules, loaded only when asked for
	// (LoadOptions.Tests); they are never served.
	Tests map[string]*ast.Module
	// Roots are the manifest roots of a bundle, nil for plain files.
	// Bundles merged together must not claim overlapping roots.
	Roots []string
}

// BuiltinRevisionPrefix starts the revision of the embedded library.
const BuiltinRevisionPrefix = "builtin-"

// Builtin returns the Rego library embedded in the binary. Its files are
// parsed in parallel: parsing them one after the other was a quarter of
// a per_event start on the built-in library, and they are independent.
func Builtin() (*Policy, error) { return builtin(false) }

// BuiltinWithTests is Builtin with the library's own _test.rego modules in
// Policy.Tests, for running them.
func BuiltinWithTests() (*Policy, error) { return builtin(true) }

func builtin(tests bool) (*Policy, error) {
	p, err := parseBuiltin(rego.FS, tests)
	if err != nil {
		return nil, fmt.Errorf("built-in library: %w", err)
	}
	// The effects table is part of the library: served at
	// data.ahp.lib.effects, and part of the revision, since a row changes
	// decisions as a rule does.
	var table map[string]any
	if err := json.Unmarshal(rego.EffectsTable, &table); err != nil {
		return nil, fmt.Errorf("built-in library: effects table: %w", err)
	}
	p.Data = map[string]any{"ahp": map[string]any{"lib": map[string]any{"effects": table}}}
	sum := sha256.Sum256(append([]byte(p.Revision+"\x00"), rego.EffectsTable...))
	p.Revision = BuiltinRevisionPrefix + hex.EncodeToString(sum[:])[:12]
	p.Digest = p.Revision
	p.Modules = prefixed(p.Modules)
	if p.Tests != nil {
		p.Tests = prefixed(p.Tests)
	}
	return p, nil
}

// prefixed renames the library's modules so that they never collide with a
// user's file name.
func prefixed(mods map[string]*ast.Module) map[string]*ast.Module {
	named := make(map[string]*ast.Module, len(mods))
	for name, m := range mods {
		named[BuiltinPrefix+name] = m
	}
	return named
}

// parseBuiltin parses the served .rego files of fsys as load does, with
// the same names and revision, a goroutine per processor; with tests, the
// _test.rego files too, which leave the revision alone.
func parseBuiltin(fsys fs.FS, tests bool) (*Policy, error) {
	var names []string
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(path) == ".rego" && (tests || !isTest(path)) {
			names = append(names, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	raws := make([][]byte, len(names))
	mods := make([]*ast.Module, len(names))
	errs := make([]error, len(names))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(names)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(names); i = int(next.Add(1) - 1) {
				if raws[i], errs[i] = fs.ReadFile(fsys, names[i]); errs[i] != nil {
					continue
				}
				mods[i], errs[i] = ast.ParseModuleWithOpts(names[i], string(raws[i]),
					ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("loading policy: %w", err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w (looked for .rego files that are not tests)", ErrNoPolicy)
	}
	p := &Policy{Modules: make(map[string]*ast.Module, len(names))}
	h := sha256.New()
	for i, name := range names {
		if isTest(name) {
			if p.Tests == nil {
				p.Tests = map[string]*ast.Module{}
			}
			p.Tests[name] = mods[i]
			continue
		}
		p.Modules[name] = mods[i]
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(raws[i]))
		h.Write(raws[i])
	}
	p.Revision = hex.EncodeToString(h.Sum(nil))[:12]
	p.Digest = p.Revision
	return p, nil
}

// BuiltinPrefix starts the module names of the embedded library.
const BuiltinPrefix = "builtin:"

// Merge combines policies into one, as if loaded together. Module names
// must be distinct and data documents must not set the same key; the
// revision combines the parts' revisions.
func Merge(parts ...*Policy) (*Policy, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	out := &Policy{Modules: map[string]*ast.Module{}}
	revs := make([]string, 0, len(parts))
	h := sha256.New()
	for i, p := range parts {
		if err := checkRoots(parts[:i], p); err != nil {
			return nil, fmt.Errorf("merging policies: %w", err)
		}
		for name, m := range p.Modules {
			if _, dup := out.Modules[name]; dup {
				return nil, fmt.Errorf("merging policies: module %s is loaded twice", name)
			}
			out.Modules[name] = m
		}
		for name, m := range p.Tests {
			if out.Tests == nil {
				out.Tests = map[string]*ast.Module{}
			}
			if _, dup := out.Tests[name]; dup {
				return nil, fmt.Errorf("merging policies: test module %s is loaded twice", name)
			}
			out.Tests[name] = m
		}
		if p.Data != nil {
			if out.Data == nil {
				out.Data = map[string]any{}
			}
			// Parts keep their own data: merging copies objects that
			// would otherwise be shared and modified.
			if err := mergeData(out.Data, deepCopy(p.Data), "data"); err != nil {
				return nil, fmt.Errorf("merging policies: %w", err)
			}
		}
		revs = append(revs, p.Revision)
		fmt.Fprintf(h, "%s\x00", p.Digest)
	}
	out.Revision = strings.Join(revs, "+")
	out.Digest = hex.EncodeToString(h.Sum(nil))[:16]
	return out, nil
}

// checkRoots refuses a bundle whose roots overlap those of a bundle before
// it: as in OPA, one bundle owns each part of the data tree.
func checkRoots(before []*Policy, p *Policy) error {
	for _, q := range before {
		for _, a := range p.Roots {
			for _, b := range q.Roots {
				if bundle.RootPathsOverlap(a, b) {
					return fmt.Errorf("bundle roots overlap: %q (revision %s) and %q (revision %s)",
						a, p.Revision, b, q.Revision)
				}
			}
		}
	}
	return nil
}

// deepCopy copies the objects of a data document; other values are
// immutable once decoded.
func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if obj, ok := v.(map[string]any); ok {
			v = deepCopy(obj)
		}
		out[k] = v
	}
	return out
}

// mergeData copies src into dst; objects merge key by key, and any other
// value may be set only once.
func mergeData(dst, src map[string]any, path string) error {
	for k, v := range src {
		old, exists := dst[k]
		if !exists {
			dst[k] = v
			continue
		}
		oldObj, ok1 := old.(map[string]any)
		newObj, ok2 := v.(map[string]any)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s.%s is set by more than one data document", path, k)
		}
		if err := mergeData(oldObj, newObj, path+"."+k); err != nil {
			return err
		}
	}
	return nil
}

// LoadOptions tune LoadWith.
type LoadOptions struct {
	// Tests loads the _test.rego modules into Policy.Tests as well.
	Tests bool
	// Verification checks bundle signatures with OPA's mechanism. When it
	// requires a signature, every path must be a signed bundle.
	Verification *bundle.VerificationConfig
	// Limits bound what the load reads; zero fields take the defaults.
	Limits Limits

	// testsAlone accepts plain paths holding _test.rego modules only
	// (LoadTests).
	testsAlone bool
}

// LoadTests reads paths for running their Rego tests (`ahp-opa test`): as
// LoadWith does, with the same limits and the same files, and the
// _test.rego modules in Policy.Tests. Unlike LoadWith, plain paths may hold
// tests only, such as tests of the built-in library's rules.
func LoadTests(paths []string, opts LoadOptions) (*Policy, error) {
	opts.Tests, opts.testsAlone = true, true
	return LoadWith(paths, opts)
}

// Load reads .rego files, directories and OPA bundles; see LoadWith.
func Load(paths []string) (*Policy, error) { return LoadWith(paths, LoadOptions{}) }

// LoadWith reads policy paths. Directories are walked recursively for .rego
// files and for data.json / data.yaml documents, which land under data at
// their directory's path, as with `opa run`; test files (_test.rego) and
// hidden entries are skipped. A .tar.gz file, or a directory holding a
// .manifest or .signatures.json, is read as an OPA bundle.
func LoadWith(paths []string, opts LoadOptions) (*Policy, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no policy path given", ErrNoPolicy)
	}
	opts.Limits = opts.Limits.WithDefaults()
	var plain []string
	var parts []*Policy
	for _, path := range paths {
		kind, err := pathKind(path)
		if err != nil {
			return nil, err
		}
		if kind == kindPlain {
			if opts.Verification.SignatureRequired() {
				return nil, fmt.Errorf("%w: %s is not a bundle, and signature verification is configured", ErrUnsigned, path)
			}
			plain = append(plain, path)
			continue
		}
		p, err := readBundleFile(path, kind, opts)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	if len(plain) > 0 {
		p, err := load(loader.NewFileLoader(), plain, opts)
		if err != nil {
			return nil, err
		}
		parts = append([]*Policy{p}, parts...)
	}
	return Merge(parts...)
}

type sourceKind int

const (
	kindPlain     sourceKind = iota // .rego files and directories of them
	kindTarball                     // an OPA bundle .tar.gz
	kindBundleDir                   // an OPA bundle directory
)

// pathKind tells how to read path.
func pathKind(path string) (sourceKind, error) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("policy path: %w", err)
	}
	if info.IsDir() {
		for _, marker := range []string{".manifest", ".signatures.json"} {
			if _, err := os.Stat(filepath.Join(path, marker)); err == nil {
				return kindBundleDir, nil
			}
		}
		return kindPlain, nil
	}
	switch {
	case filepath.Ext(path) == ".rego":
		return kindPlain, nil
	case isTarball(path):
		return kindTarball, nil
	}
	return 0, fmt.Errorf("policy path %s: not a .rego file, a bundle (.tar.gz) or a directory", path)
}

func isTarball(path string) bool {
	return strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz")
}

// load reads plain paths (.rego files, directories) with OPA's loader;
// opts.Limits must hold the defaults already.
func load(fl loader.FileLoader, paths []string, opts LoadOptions) (*Policy, error) {
	filter := servedFiles
	if opts.Tests {
		filter = servedFilesAndTests
	}
	// The filter sees every file before the loader reads it: a FIFO, a
	// device or a file over the limits is refused unread.
	var refused error
	res, err := fl.WithRegoVersion(ast.RegoV1).WithProcessAnnotation(true).
		Filtered(paths, limitFilter(filter, opts.Limits, &refused))
	if refused != nil {
		return nil, refused
	}
	if err != nil {
		return nil, fmt.Errorf("loading policy: %w", err)
	}
	p := &Policy{Modules: make(map[string]*ast.Module, len(res.Modules))}
	h := sha256.New()
	names := make([]string, 0, len(res.Modules))
	for _, f := range res.Modules {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	byName := make(map[string]*loader.RegoFile, len(res.Modules))
	for _, f := range res.Modules {
		byName[f.Name] = f
	}
	th := sha256.New() // the tests: part of the digest, not of the revision
	for _, name := range names {
		f := byName[name]
		if isTest(name) {
			if p.Tests == nil {
				p.Tests = map[string]*ast.Module{}
			}
			p.Tests[name] = f.Parsed
			fmt.Fprintf(th, "%s\x00%d\x00", name, len(f.Raw))
			th.Write(f.Raw)
			continue // tests do not change what is served
		}
		p.Modules[name] = f.Parsed
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(f.Raw))
		h.Write(f.Raw)
	}
	switch {
	case opts.testsAlone && len(p.Modules)+len(p.Tests) == 0:
		return nil, fmt.Errorf("%w in %s (looked for .rego files)", ErrNoPolicy, strings.Join(paths, ", "))
	case !opts.testsAlone && len(p.Modules) == 0:
		return nil, fmt.Errorf("%w in %s (looked for .rego files that are not tests)",
			ErrNoPolicy, strings.Join(paths, ", "))
	}
	if len(res.Documents) > 0 {
		p.Data = res.Documents
		b, err := json.Marshal(res.Documents) // map keys are sorted: stable
		if err != nil {
			return nil, fmt.Errorf("hashing data documents: %w", err)
		}
		h.Write(b)
	}
	p.Revision = hex.EncodeToString(h.Sum(nil))[:12]
	p.Digest = p.Revision
	if len(p.Tests) > 0 {
		p.Digest += "-" + hex.EncodeToString(th.Sum(nil))[:12]
	}
	return p, nil
}

func isTest(name string) bool { return strings.HasSuffix(name, "_test.rego") }

// servedFiles is a loader filter: it returns true for what to skip.
func servedFiles(path string, info fs.FileInfo, depth int) bool {
	name := info.Name()
	if depth > 0 && strings.HasPrefix(name, ".") {
		return true // .git, editor swap files, Kubernetes' ..data
	}
	if info.IsDir() {
		return false
	}
	if isTest(name) {
		return true
	}
	return !served(name)
}

// servedFilesAndTests is servedFiles that keeps the test files too.
func servedFilesAndTests(path string, info fs.FileInfo, depth int) bool {
	if depth > 0 && strings.HasPrefix(info.Name(), ".") {
		return true
	}
	return !info.IsDir() && !served(info.Name())
}

// served reports whether a file of this name is policy content.
func served(name string) bool {
	switch {
	case filepath.Ext(name) == ".rego":
		return true
	case name == "data.json", name == "data.yaml", name == "data.yml":
		return true
	}
	return false
}
