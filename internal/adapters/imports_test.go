package adapters_test

import (
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestStandardLibraryOnly: the package links into the small hook client,
// so it imports the standard library alone (no OPA, no engine), and the
// protocol vocabulary, which is standard-library only itself.
func TestStandardLibraryOnly(t *testing.T) {
	testkit.ImportsOnly(t, "github.com/ahp-opa/ahp-opa/transport/ahp")
}
