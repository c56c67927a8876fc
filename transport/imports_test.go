package transport_test

import (
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestImports: transport speaks AHP and knows nothing of how decisions
// are made nor of other formats. Its code imports the standard library,
// OPA's values (the one parse), the protocol vocabulary and the bounded
// file reader; the native hooks reach it as a Mount, so it imports no
// adapter.
func TestImports(t *testing.T) {
	testkit.ImportsOnly(t,
		"github.com/open-policy-agent/opa/v1/ast",
		"github.com/ahp-opa/ahp-opa/transport/ahp",
		"github.com/ahp-opa/ahp-opa/internal/pathread",
	)
}
