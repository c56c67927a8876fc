package testkit

// The gate of the slow tests (storms, soaks, exhaustive and load cases), so
// the README's `go test -race ./...` stays quick on a small machine, while
// CI (.ci/run sets AHP_LONG_TESTS=1) still runs every one.
//
// testing.Short is not enough: the default run is not -short, and the
// quick run must be the default one a newcomer types.

import (
	"os"
	"testing"
)

// EnvLong is the environment variable that enables the long tests.
const EnvLong = "AHP_LONG_TESTS"

// LongEnabled reports whether the long tests run.
func LongEnabled() bool { return os.Getenv(EnvLong) == "1" }

// RequireLong skips tb unless the long tests are enabled, saying how to
// enable them.
func RequireLong(tb testing.TB) {
	tb.Helper()
	if !LongEnabled() {
		tb.Skipf("long test: set %s=1 to run it (CI does)", EnvLong)
	}
}

// Exhaustive reports whether a sweep over every row of a data set (the
// corpus through each transformation, the outside sets) runs in full: in
// the long tests, without the race detector, under which the sweep would
// outlast a package's deadline on two cores. CI runs the sweeps in full
// in their own steps, without -race; the race run samples them.
func Exhaustive() bool { return LongEnabled() && !Race }
