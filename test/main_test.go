package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/sharedtest"
)

// envBinary names a prebuilt binary to test instead of building one.
const envBinary = "AHP_OPA_BIN"

var (
	// binPath is the ahp-opa binary built by TestMain.
	binPath string
	// sharedDir is the absolute path of the shared material, "" when it
	// was not found; sharedMissing then says where it was looked for.
	sharedDir     string
	sharedMissing string
)

// raceExitCode is the status a -race binary exits with after a data race
// report (GORACE exitcode), so that any race fails the exit status checks.
const raceExitCode = 66

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "ahp-opa-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "test: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	if bin := os.Getenv(envBinary); bin != "" {
		binPath, err = filepath.Abs(bin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "test:", err)
			return 1
		}
		return runWithShared(m)
	}
	binPath = filepath.Join(tmp, "ahp-opa")
	args := []string{"build", "-o", binPath}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/ahp-opa")
	build := exec.Command("go", args...)
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "test: go %v: %v\n%s", args, err, out)
		return 1
	}

	return runWithShared(m)
}

func runWithShared(m *testing.M) int {
	dir, err := sharedtest.LocateAHP()
	if err != nil {
		sharedMissing = err.Error()
		fmt.Fprintf(os.Stderr, "test: %s; fixture tests skip and replies are checked without the JSON Schemas\n", sharedMissing)
	}
	sharedDir = dir
	return sharedtest.Main(m)
}

// requireShared returns the shared directory, or skips the test (fails it
// when AHP_REQUIRE_SHARED=1) naming where it looked.
func requireShared(tb testing.TB) string {
	tb.Helper()
	return sharedtest.AHP(tb)
}
