package adapters_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStandardLibraryOnly: the package links into the small hook client,
// so it imports the standard library alone (no OPA, no engine), and the
// protocol vocabulary, which is standard-library only itself.
// vocabulary is the one module package adapters may import.
const vocabulary = "github.com/ahp-opa/ahp-opa/transport/ahp"

func TestStandardLibraryOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == vocabulary {
				continue
			}
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s: adapters must stay standard-library only", f, p)
			}
		}
	}
}
