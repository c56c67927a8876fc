package rego_test

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
)

// TestLibraryCompilesWithoutNetworkBuiltins proves the policies do not call
// http.send or net.*: they compile with the capabilities the engine serves
// with, which lack them.
func TestLibraryCompilesWithoutNetworkBuiltins(t *testing.T) {
	t.Parallel()
	caps := engine.DefaultCapabilities()

	// The capabilities must reject a module that does use them.
	probe, err := ast.ParseModuleWithOpts("probe.rego",
		"package probe\n\nx := http.send({\"method\": \"GET\", \"url\": \"http://localhost\"})\n\ny := net.lookup_ip_addr(\"localhost\")\n",
		ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	c := ast.NewCompiler().WithCapabilities(caps)
	if c.Compile(map[string]*ast.Module{"probe.rego": probe}); !c.Failed() {
		t.Fatal("capabilities without network builtins accepted http.send and net.lookup_ip_addr")
	}

	p, err := bundles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Compile(context.Background(), p, engine.CompileOptions{Capabilities: caps}); err != nil {
		t.Error(err)
	}
}
