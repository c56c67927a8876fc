// Package longtest gates the slow tests (storms, soaks, exhaustive and
// load cases) so the README's `go test -race ./...` stays quick on a small
// machine, while CI (.ci/run sets AHP_LONG_TESTS=1) still runs every one.
//
// testing.Short is not enough: the default run is not -short, and the
// quick run must be the default one a newcomer types.
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that enables the long tests.
const Env = "AHP_LONG_TESTS"

// Enabled reports whether the long tests run.
func Enabled() bool { return os.Getenv(Env) == "1" }

// Require skips tb unless the long tests are enabled, saying how to enable
// them.
func Require(tb testing.TB) {
	tb.Helper()
	if !Enabled() {
		tb.Skipf("long test: set %s=1 to run it (CI does)", Env)
	}
}
