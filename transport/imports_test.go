package transport_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports: transport speaks AHP and knows nothing of how decisions
// are made nor of other formats. Its code imports the standard library,
// OPA's values (the one parse), the protocol vocabulary and the bounded
// file reader; the native hooks reach it as a Mount, so it imports no
// adapter.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{
		"github.com/open-policy-agent/opa/v1/ast",
		"github.com/ahp-opa/ahp-opa/transport/ahp",
		"github.com/ahp-opa/ahp-opa/internal/pathread",
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
			first, _, _ := strings.Cut(p, "/")
			if strings.Contains(first, ".") && !contains(allowed, p) {
				t.Errorf("%s imports %s; transport may import only %v beyond the standard library", f, p, allowed)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
