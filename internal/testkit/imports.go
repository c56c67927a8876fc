package testkit

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ImportsOnly fails t for every import of the package in the current
// directory (its non-test files) that is neither in the standard library
// nor in allowed. It pins a layer's boundary: what may link into the hook
// client, what transport may know.
func ImportsOnly(t *testing.T, allowed ...string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			// A standard-library path has no dot in its first element.
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") && !slices.Contains(allowed, p) {
				t.Errorf("%s imports %s; beyond the standard library only %v may be imported here", f, p, allowed)
			}
		}
	}
}
