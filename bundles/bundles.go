// Package bundles loads policy sources into a Policy: Rego modules plus data
// documents, with a revision that changes whenever their content does.
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
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"

	"github.com/ahp-opa/ahp-opa/rego"
)

// ErrNoPolicy is returned when the sources hold no Rego module to serve.
var ErrNoPolicy = errors.New("no Rego policy found")

// Policy is a loaded set of Rego modules and data documents.
type Policy struct {
	// Modules maps a file name to its parsed module. Test files are not
	// included.
	Modules map[string]*ast.Module
	// Data is the merged data document; nil when there is none.
	Data map[string]any
	// Revision identifies the content: equal content, equal revision.
	Revision string
}

// BuiltinRevisionPrefix starts the revision of the embedded library.
const BuiltinRevisionPrefix = "builtin-"

// Builtin returns the Rego library embedded in the binary.
func Builtin() (*Policy, error) {
	p, err := load(loader.NewFileLoader().WithFS(rego.FS), []string{"."})
	if err != nil {
		return nil, fmt.Errorf("built-in library: %w", err)
	}
	p.Revision = BuiltinRevisionPrefix + p.Revision
	named := make(map[string]*ast.Module, len(p.Modules))
	for name, m := range p.Modules {
		named[BuiltinPrefix+name] = m // never collides with a user's file name
	}
	p.Modules = named
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
	for _, p := range parts {
		for name, m := range p.Modules {
			if _, dup := out.Modules[name]; dup {
				return nil, fmt.Errorf("merging policies: module %s is loaded twice", name)
			}
			out.Modules[name] = m
		}
		if p.Data != nil {
			if out.Data == nil {
				out.Data = map[string]any{}
			}
			if err := mergeData(out.Data, p.Data, "data"); err != nil {
				return nil, fmt.Errorf("merging policies: %w", err)
			}
		}
		revs = append(revs, p.Revision)
	}
	out.Revision = strings.Join(revs, "+")
	return out, nil
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

// Load reads .rego files and directories. Directories are walked
// recursively for .rego files and for data.json / data.yaml documents, which
// land under data at their directory's path, as with `opa run`. Test files
// (_test.rego) and hidden entries are skipped.
func Load(paths []string) (*Policy, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no policy path given", ErrNoPolicy)
	}
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("policy path: %w", err)
		}
		if !info.IsDir() && filepath.Ext(path) != ".rego" {
			return nil, fmt.Errorf("policy path %s: not a .rego file or a directory", path)
		}
	}
	return load(loader.NewFileLoader(), paths)
}

func load(fl loader.FileLoader, paths []string) (*Policy, error) {
	res, err := fl.WithRegoVersion(ast.RegoV1).WithProcessAnnotation(true).Filtered(paths, servedFiles)
	if err != nil {
		return nil, fmt.Errorf("loading policy: %w", err)
	}
	if len(res.Modules) == 0 {
		return nil, fmt.Errorf("%w in %s (looked for .rego files that are not tests)",
			ErrNoPolicy, strings.Join(paths, ", "))
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
	for _, name := range names {
		f := byName[name]
		p.Modules[name] = f.Parsed
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(f.Raw))
		h.Write(f.Raw)
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
	return p, nil
}

// servedFiles is a loader filter: it returns true for what to skip.
func servedFiles(path string, info fs.FileInfo, depth int) bool {
	name := info.Name()
	if depth > 0 && strings.HasPrefix(name, ".") {
		return true // .git, editor swap files, .manifest of later bundle support
	}
	if info.IsDir() {
		return false
	}
	if strings.HasSuffix(name, "_test.rego") {
		return true
	}
	switch {
	case filepath.Ext(name) == ".rego":
		return false
	case name == "data.json", name == "data.yaml", name == "data.yml":
		return false
	}
	return true
}
