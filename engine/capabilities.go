package engine

import (
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// DefaultCapabilities are OPA's capabilities without the builtins that reach
// the network: a policy decides from its input and data alone, and cannot
// be turned into a way to call out of the process.
func DefaultCapabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	kept := caps.Builtins[:0]
	for _, b := range caps.Builtins {
		if b.Name == "http.send" || strings.HasPrefix(b.Name, "net.") {
			continue
		}
		kept = append(kept, b)
	}
	caps.Builtins = kept
	caps.AllowNet = []string{}
	return caps
}
