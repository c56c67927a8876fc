package test

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// envBinary names a prebuilt binary to test instead of building one.
const envBinary = "AHP_OPA_BIN"

var (
	// binPath is the ahp-opa binary built by TestMain.
	binPath string
	// tmpDir holds the binaries for the run.
	tmpDir string
	// sharedDir is the absolute path of the shared material, "" when it
	// was not found; sharedMissing then says where it was looked for.
	sharedDir     string
	sharedMissing string
)

// raceExitCode is the status a -race binary exits with after a data race
// report (GORACE exitcode), so that any race fails the exit status checks.
const raceExitCode = 66

func TestMain(m *testing.M) {
	flag.Parse()
	runMoreInParallel()
	os.Exit(runMain(m))
}

// runMoreInParallel raises -test.parallel, unless given, to twice the
// CPUs: the tests spend much of their time waiting for child processes
// (startup, replies, exits), so two at a time left the CPUs half idle.
func runMoreInParallel() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "ahp-opa-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "test: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	tmpDir = tmp

	if bin := os.Getenv(envBinary); bin != "" {
		binPath, err = filepath.Abs(bin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "test:", err)
			return 1
		}
		return runWithShared(m)
	}
	binPath, err = buildCommand(tmp, "ahp-opa")
	if err != nil {
		fmt.Fprintln(os.Stderr, "test:", err)
		return 1
	}
	return runWithShared(m)
}

// buildCommand builds cmd/NAME and returns a private copy in dir. The
// binary is race-enabled when the tests run with -race and the long tests
// are on (CI): a race-enabled start costs several times more CPU, and the
// quick run starts about a hundred of them.
//
// The build goes to a cache folder first: go build does not relink a
// target that is already up to date, which saves a race-enabled link
// (seconds of CPU) on every run but the first after a change. A lock keeps
// concurrent runs of this checkout from writing it at once, and the copy
// keeps a later rebuild from changing the binary under this run.
func buildCommand(dir, command string) (string, error) {
	name := command
	args := []string{"build"}
	if raceEnabled && testkit.LongEnabled() {
		name += "-race"
		args = append(args, "-race")
	}
	bin := filepath.Join(dir, name)
	target := bin
	if cache, err := binCache(); err == nil {
		unlock, err := lockDir(cache)
		if err != nil {
			return "", err
		}
		defer unlock()
		target = filepath.Join(cache, name)
	}
	args = append(args, "-o", target, "./cmd/"+command)
	build := exec.Command("go", args...)
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %v: %w\n%s", args, err, out)
	}
	if target != bin {
		if err := copyFile(bin, target); err != nil {
			return "", err
		}
	}
	return bin, nil
}

// binCache is this checkout's folder for the built binary, under the
// user's cache directory.
func binCache() (string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(base, "ahp-opa-test", hex.EncodeToString(sum[:8]))
	return dir, os.MkdirAll(dir, 0o755)
}

// lockDir takes an exclusive lock on dir's lock file until unlock.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func runWithShared(m *testing.M) int {
	dir, err := testkit.LocateAHP()
	if err != nil {
		sharedMissing = err.Error()
		fmt.Fprintf(os.Stderr, "test: %s; fixture tests skip and replies are checked without the JSON Schemas\n", sharedMissing)
	}
	sharedDir = dir
	return testkit.Main(m)
}

// requireShared returns the shared directory, or skips the test (fails it
// when AHP_REQUIRE_SHARED=1) naming where it looked.
func requireShared(tb testing.TB) string {
	tb.Helper()
	return testkit.AHP(tb)
}
