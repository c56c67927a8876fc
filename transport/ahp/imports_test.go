package ahp_test

import (
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestStandardLibraryOnly: every layer, the hook client included, may
// import the vocabulary, so it imports nothing but the standard library.
func TestStandardLibraryOnly(t *testing.T) {
	testkit.ImportsOnly(t)
}
