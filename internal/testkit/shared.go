package testkit

// The material that tests read at run time from the shared folder beside
// the checkout (<repo>/../shared): the AHP conformance fixtures and
// schemas, and the native-hook adapter fixtures.
//
// Where the material is absent (a fresh clone elsewhere) the tests that need
// it skip, and Main prints one line naming them, where it looked and how to
// run them; AHP_REQUIRE_SHARED=1, which CI sets, makes that a failure
// instead.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Environment variables that steer where the shared material is found.
const (
	EnvAHPDir        = "AHP_SHARED_DIR"     // the folder holding PROTOCOL.md and conformance/
	EnvAdaptersDir   = "AHP_ADAPTERS_DIR"   // the folder holding CONTRACTS.md and fixtures/
	EnvRequireShared = "AHP_REQUIRE_SHARED" // "1": missing material fails instead of skipping
	EnvEvalDir       = "AHP_EVAL_DIR"       // the folder holding the outside labelled sets (realworld1.jsonl …)
)

// AHP returns the AHP material folder (PROTOCOL.md, conformance/), or skips
// tb when it is absent.
func AHP(tb testing.TB) string {
	tb.Helper()
	dir, err := LocateAHP()
	return settle(tb, dir, err)
}

// Adapters returns the native-hook material folder (CONTRACTS.md,
// fixtures/), or skips tb when it is absent.
func Adapters(tb testing.TB) string {
	tb.Helper()
	dir, err := LocateAdapters()
	return settle(tb, dir, err)
}

// LocateAHP finds the AHP material without a test, for a TestMain. The
// error says where it looked and how to point elsewhere.
func LocateAHP() (string, error) {
	return locate(EnvAHPDir, "ahp", filepath.Join("conformance", "INDEX.json"))
}

// Eval returns the folder of labelled sets written outside the team
// (redteam*.jsonl, realworld*.jsonl), or skips tb when it is absent.
func Eval(tb testing.TB) string {
	tb.Helper()
	dir, err := locate(EnvEvalDir, "eval", "realworld1.jsonl")
	return settle(tb, dir, err)
}

// LocateAdapters is LocateAHP for the native-hook material.
func LocateAdapters() (string, error) {
	return locate(EnvAdaptersDir, "adapters", filepath.Join("fixtures", "INDEX.json"))
}

// SharedRequired reports whether missing shared material must fail the
// tests.
func SharedRequired() bool { return os.Getenv(EnvRequireShared) == "1" }

func settle(tb testing.TB, dir string, err error) string {
	tb.Helper()
	if err == nil {
		return dir
	}
	if SharedRequired() {
		tb.Fatalf("%v; %s=1 makes this a failure", err, EnvRequireShared)
	}
	skipped.Lock()
	skipped.names = append(skipped.names, tb.Name())
	skipped.why = err.Error()
	skipped.Unlock()
	tb.Skip(err.Error())
	return ""
}

// skipped collects the tests that skipped for want of the material, for
// the one summary line Main prints.
var skipped struct {
	sync.Mutex
	names []string
	why   string
}

// Main runs the package's tests (call it from TestMain) and then, when some
// skipped because the shared material is absent, prints one line naming
// them and how to run them, so that a skip is never silent, -v or not.
func Main(m *testing.M) int {
	code := m.Run()
	if line := SkipSummary(); line != "" {
		notice(line)
	}
	return code
}

// notice prints line where the person running the tests sees it. go test
// shows a passing package's output only with -v (or -json), so without it
// the line goes to the go command's own standard error when that is a
// terminal or a pipe; otherwise, and with -v, to the test's.
func notice(line string) {
	if !testing.Verbose() {
		if w := goCommandStderr(); w != nil {
			fmt.Fprintln(w, line)
			w.Close()
			return
		}
	}
	fmt.Fprintln(os.Stderr, line)
}

// goCommandStderr opens the standard error of the go command running this
// test binary, or returns nil: when the parent is not `go` (a binary run
// by hand, whose own stderr is seen), off Linux, or when that stderr is a
// regular file (reopened, it would not share the go command's offset).
func goCommandStderr() *os.File {
	ppid := os.Getppid()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ppid))
	if err != nil || filepath.Base(exe) != "go" {
		return nil
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", ppid), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode().IsRegular() {
		f.Close()
		return nil
	}
	return f
}

// SkipSummary is the line Main prints: "" when no test skipped.
func SkipSummary() string {
	skipped.Lock()
	defer skipped.Unlock()
	if len(skipped.names) == 0 {
		return ""
	}
	names := skipped.names
	if len(names) > 8 {
		names = append(names[:8:8], fmt.Sprintf("and %d more", len(skipped.names)-8))
	}
	return fmt.Sprintf("sharedtest: SKIPPED %d test(s) needing the shared material (%s): %s; to run them put the shared folder beside the checkout or set %s / %s",
		len(skipped.names), strings.Join(names, ", "), skipped.why, EnvAHPDir, EnvAdaptersDir)
}

func locate(env, sub, marker string) (string, error) {
	dir, from := os.Getenv(env), env
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", fmt.Errorf("shared %s material not found: %w (set %s)", sub, err, env)
		}
		dir, from = filepath.Join(root, "..", "shared", sub), "default"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if _, err := os.Stat(filepath.Join(abs, marker)); err != nil {
		return "", fmt.Errorf("shared %s material not found at %s (%s path; set %s to the folder holding %s): %w",
			sub, abs, from, env, filepath.Dir(marker), err)
	}
	return abs, nil
}

// moduleRoot walks up from the working directory (a package directory
// under go test) to the folder holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
