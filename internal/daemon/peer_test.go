package daemon

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// hostileEnv makes the test binary a listener that answers every request
// with "no objection", as a process of another user would after swapping
// the daemon's socket.
const hostileEnv = "AHP_OPA_TEST_HOSTILE_SOCKET"

func TestMain(m *testing.M) {
	if path := os.Getenv(hostileEnv); path != "" {
		os.Exit(serveHostile(path))
	}
	os.Exit(m.Run())
}

func serveHostile(path string) int {
	ln, err := net.Listen("unix", path)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	os.Chmod(path, 0o777)
	os.Stdout.WriteString("ready\n")
	go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }() // the test ends: so do we
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		go func() {
			defer c.Close()
			ReadRequest(bufio.NewReader(c))
			WriteResponse(c, StatusOK, adapters.Answer{Stdout: []byte("{}\n")})
		}()
	}
}

// listenAs starts the hostile listener on a socket in a fresh directory
// owned by uid, running as uid; it stops when the test ends.
func listenAs(t *testing.T, uid int) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a listener as another user")
	}
	// uid must reach the binary and the directory: the test's own temp
	// dirs are opened up for it.
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Skip("cannot copy the test binary: ", err)
	}
	bin := filepath.Join(root, "hostile")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "rt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "d-x.sock")
	cmd := exec.Command(bin)
	cmd.Env = []string{hostileEnv + "=" + sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var serr strings.Builder
	cmd.Stderr = &serr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("hostile listener did not start: %q %v %s", line, err, serr.String())
	}
	return sock
}

// TestClientRefusesAnotherUsersSocket: whoever answers on the socket must
// be this user, checked by the kernel's record of the peer on every
// connection. A socket of another user (planted, or swapped in with its
// directory) gets nothing sent, starts no daemon in its place, and the
// chain answers the agent's deny, never the listener's "{}".
func TestClientRefusesAnotherUsersSocket(t *testing.T) {
	for _, tc := range []struct {
		name   string
		socket func(t *testing.T) string
	}{
		{"uid 65534 listens", func(t *testing.T) string { return listenAs(t, 65534) }},
		{"client uid injected", func(t *testing.T) string {
			p := testPaths(t)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			fakeDaemonFunc(t, ctx, p, SelfIdentity(), func(Request) adapters.Answer { return adapters.Answer{Stdout: []byte("{}\n")} })
			old := ownUID
			ownUID = os.Getuid() + 4242
			t.Cleanup(func() { ownUID = old })
			return p.Socket
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := tc.socket(t)
			dir := filepath.Dir(sock)
			before := testkit.SnapshotTree(t, dir)
			started := 0
			c := &Client{Paths: PathsAt(sock), Start: func(context.Context) (<-chan error, error) {
				started++
				return nil, errors.New("no start expected")
			}}
			ans, err := c.Hook(t.Context(), Request{Agent: "codex", Payload: []byte(`{"tool_name":"Bash"}`)})
			if !errors.Is(err, ErrPeer) || ans.Stdout != nil {
				t.Fatalf("Hook = %q, %v; want no answer and ErrPeer", ans.Stdout, err)
			}
			if started != 0 {
				t.Errorf("a daemon was started in place of a foreign listener")
			}
			chain := &Chain{Daemon: c, Refuse: denyFor}
			got := chain.Answer(t.Context(), "codex", []byte(`{"tool_name":"Bash"}`))
			want := "deny:ahp-opa: could not decide (" + err.Error() + "); blocked because hooks fail closed (see 'ahp-opa hook --no-daemon codex' or pass --fail-open)"
			if string(got.Stdout) != want || got.Stderr != "" || got.Exit != 0 {
				t.Errorf("chain answer %q / %q / %d, want %q", got.Stdout, got.Stderr, got.Exit, want)
			}
			testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir))
		})
	}
}
