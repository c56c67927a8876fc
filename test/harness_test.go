package test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// Deadlines. They are generous because the binary may be built with -race
// and the machine may be busy; a healthy reply takes milliseconds.
const (
	replyTimeout = 20 * time.Second
	exitTimeout  = 30 * time.Second

	raceEvalTimeout = "10s" // --eval-timeout of a -race binary
)

// proc is one running ahp-opa process with its stdio wired to the test.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *testkit.Buffer
	// serial is true when the process decides one message at a time
	// (--concurrency 1): replies then come in input order.
	serial bool

	lines   chan string   // complete stdout lines, without "\n"
	eof     chan struct{} // closed when stdout reaches EOF
	partial string        // bytes after the last "\n", set before eof closes
	readErr error         // stdout read error other than EOF

	exited  chan struct{} // closed once Wait returned
	waitErr error

	stdinOnce sync.Once
	probes    int
}

// startProc runs the binary with args and extra environment entries.
func startProc(tb testing.TB, env []string, args ...string) *proc {
	tb.Helper()
	return startBin(tb, binPath, env, args...)
}

// startBin runs bin with args and extra environment entries.
func startBin(tb testing.TB, bin string, env []string, args ...string) *proc {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(childEnv(), env...)
	p := &proc{
		cmd:    cmd,
		stderr: &testkit.Buffer{},
		lines:  make(chan string, 1<<14),
		eof:    make(chan struct{}),
		exited: make(chan struct{}),
	}
	for _, a := range args {
		if a == "--concurrency=1" {
			p.serial = true
		}
	}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatalf("stdin pipe: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatalf("stdout pipe: %v", err)
	}
	p.stdin = stdin
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting %s: %v", bin, err)
	}
	go p.readStdout(stdout)
	go func() {
		<-p.eof // Wait must not run before every read of the pipe ended
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	tb.Cleanup(func() { p.stop(tb) })
	return p
}

// childEnv is the test's environment without AHP_OPA_* variables. The
// binary reads every AHP_OPA_* variable as configuration and refuses
// unknown keys, so the variables that steer these tests
// (AHP_OPA_BIN, a developer's typo) would stop it from starting, and a
// developer's AHP_OPA_POLICY would change its decisions. Tests that want a
// variable pass it explicitly.
//
// For a -race binary it adds GORACE settings that make a data race exit
// with raceExitCode, and a longer evaluation deadline: the race detector
// slows policy evaluation tenfold or more, and the default 250ms would
// turn decisions into -32004 on a busy machine. Explicit environment
// entries appended after these, and flags, still win.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AHP_OPA_") {
			env = append(env, kv)
		}
	}
	if raceEnabled {
		env = append(env,
			fmt.Sprintf("GORACE=halt_on_error=1 exitcode=%d", raceExitCode),
			"AHP_OPA_EVAL_TIMEOUT="+raceEvalTimeout)
	}
	return env
}

// startServe runs `serve --stdio` with extra flags.
func startServe(tb testing.TB, args ...string) *proc {
	tb.Helper()
	return startProc(tb, nil, append([]string{"serve", "--stdio"}, args...)...)
}

// startSerial runs `serve --stdio --concurrency=1`: one message is decided
// at a time, so replies come in input order and silence can be proven by
// the reply to a following probe request.
func startSerial(tb testing.TB, args ...string) *proc {
	tb.Helper()
	return startServe(tb, append([]string{"--concurrency=1"}, args...)...)
}

func (p *proc) readStdout(r io.Reader) {
	defer close(p.eof)
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			p.partial = line
			if !errors.Is(err, io.EOF) {
				p.readErr = err
			}
			return
		}
		p.lines <- strings.TrimSuffix(line, "\n")
	}
}

// stop ends the process if the test left it running and reports races.
func (p *proc) stop(tb testing.TB) {
	select {
	case <-p.exited:
	default:
		p.closeStdin()
		_ = p.cmd.Process.Kill() // our own child, by its pid
		// Unblock the reader if the test stopped reading.
		deadline := time.After(exitTimeout)
	drain:
		for {
			select {
			case <-p.lines:
			case <-p.exited:
				break drain
			case <-deadline:
				tb.Errorf("ahp-opa (pid %d) did not end after kill", p.cmd.Process.Pid)
				return
			}
		}
	}
	if strings.Contains(p.stderr.String(), "WARNING: DATA RACE") {
		tb.Errorf("data race in ahp-opa:\n%s", p.stderr.String())
	}
}

// write sends one message line (a "\n" is appended).
func (p *proc) write(s string) error {
	_, err := io.WriteString(p.stdin, s+"\n")
	return err
}

// send writes lines and fails the test on a write error.
func (p *proc) send(tb testing.TB, lines ...string) {
	tb.Helper()
	for _, l := range lines {
		if err := p.write(l); err != nil {
			tb.Fatalf("writing to ahp-opa: %v\nstderr:\n%s", err, p.stderr.String())
		}
	}
}

// sendRaw writes bytes exactly as given.
func (p *proc) sendRaw(tb testing.TB, b []byte) {
	tb.Helper()
	if _, err := p.stdin.Write(b); err != nil {
		tb.Fatalf("writing to ahp-opa: %v\nstderr:\n%s", err, p.stderr.String())
	}
}

func (p *proc) closeStdin() {
	p.stdinOnce.Do(func() { _ = p.stdin.Close() })
}

// nextLine returns the next stdout line; ok is false at EOF. It fails the
// test when nothing arrives within the deadline.
func (p *proc) nextLine(tb testing.TB, timeout time.Duration) (line string, ok bool) {
	tb.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case l := <-p.lines:
		return l, true
	case <-p.eof:
		// Lines are queued before eof closes: take what is left first.
		select {
		case l := <-p.lines:
			return l, true
		default:
			return "", false
		}
	case <-timer.C:
		tb.Fatalf("no stdout line from ahp-opa within %s\nstderr:\n%s", timeout, p.stderr.String())
		return "", false
	}
}

// reply reads the next line, which must be a well-formed response.
func (p *proc) reply(tb testing.TB) *reply {
	tb.Helper()
	line, ok := p.nextLine(tb, replyTimeout)
	if !ok {
		tb.Fatalf("ahp-opa closed stdout instead of replying (partial %q)\nstderr:\n%s", p.partial, p.stderr.String())
	}
	return mustReply(tb, line)
}

// roundTrip sends one line and returns the next reply.
func (p *proc) roundTrip(tb testing.TB, line string) *reply {
	tb.Helper()
	p.send(tb, line)
	return p.reply(tb)
}

// assertSilent sends msgs, then a probe request, and requires the next
// stdout line to be the probe's reply: none of msgs got an answer
// (B-RPC-4, B-OBS-1). It needs a serial process, where replies keep the
// input order.
func (p *proc) assertSilent(tb testing.TB, msgs ...string) {
	tb.Helper()
	if !p.serial {
		tb.Fatal("assertSilent needs a process started with startSerial")
	}
	p.send(tb, msgs...)
	p.probe(tb)
}

// probe sends an allowed request and requires the next line to be its
// reply, an empty effect list.
func (p *proc) probe(tb testing.TB) {
	tb.Helper()
	p.probes++
	id := fmt.Sprintf("probe-%d", p.probes)
	p.send(tb, interceptLine(id, "ls -la"))
	r := p.reply(tb)
	if r.idJSON != jsonText(id) {
		tb.Fatalf("expected only the reply to %s, got an extra line: %s", id, r.line)
	}
	wantNoObjection(tb, r)
}

// repliesUntilProbe sends a probe and returns every reply that came before
// the probe's own (serial processes only).
func (p *proc) repliesUntilProbe(tb testing.TB) []*reply {
	tb.Helper()
	if !p.serial {
		tb.Fatal("repliesUntilProbe needs a process started with startSerial")
	}
	p.probes++
	id := fmt.Sprintf("probe-%d", p.probes)
	p.send(tb, interceptLine(id, "ls -la"))
	var got []*reply
	for {
		r := p.reply(tb)
		if r.idJSON == jsonText(id) {
			wantNoObjection(tb, r)
			return got
		}
		got = append(got, r)
	}
}

// finish closes stdin and waits for the process to exit. It returns the
// stdout lines not read yet and the exit status (-1 when killed by a
// signal).
func (p *proc) finish(tb testing.TB) (rest []string, status int) {
	tb.Helper()
	p.closeStdin()
	return p.waitExit(tb)
}

// waitExit collects the remaining stdout and waits for the process.
func (p *proc) waitExit(tb testing.TB) (rest []string, status int) {
	tb.Helper()
	deadline := time.NewTimer(exitTimeout)
	defer deadline.Stop()
	for {
		select {
		case l := <-p.lines:
			rest = append(rest, l)
			continue
		case <-p.exited:
		case <-deadline.C:
			tb.Fatalf("ahp-opa did not exit within %s\nstderr:\n%s", exitTimeout, p.stderr.String())
		}
		break
	}
	for {
		select {
		case l := <-p.lines:
			rest = append(rest, l)
			continue
		default:
		}
		break
	}
	if p.readErr != nil {
		tb.Errorf("reading stdout: %v", p.readErr)
	}
	if p.partial != "" {
		tb.Errorf("stdout ended with an incomplete line (no \\n) (B-STDIO-1): %q", p.partial)
	}
	return rest, p.cmd.ProcessState.ExitCode()
}

// expectCleanExit closes stdin and requires exit status 0 with no stdout
// left unread (B-STDIO-3).
func (p *proc) expectCleanExit(tb testing.TB) {
	tb.Helper()
	rest, status := p.finish(tb)
	for _, l := range rest {
		tb.Errorf("unexpected stdout line: %s", l)
	}
	if status != 0 {
		tb.Errorf("exit status %d after EOF, want 0\nstderr:\n%s", status, p.stderr.String())
	}
}

func (p *proc) signal(tb testing.TB, sig syscall.Signal) {
	tb.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		tb.Fatalf("signal %v: %v", sig, err)
	}
}

// runOnce is the per_event lifecycle: a fresh process gets input on stdin,
// stdin is closed, and everything it printed is collected.
type onceResult struct {
	lines   []string
	partial string
	status  int
	stderr  string
}

func runOnce(tb testing.TB, input string, args ...string) onceResult {
	tb.Helper()
	return runOnceEnv(tb, nil, input, args...)
}

func runOnceEnv(tb testing.TB, env []string, input string, args ...string) onceResult {
	tb.Helper()
	return runBinOnce(tb, binPath, env, input, args...)
}

// runBinOnce is runOnceEnv for another binary.
func runBinOnce(tb testing.TB, bin string, env []string, input string, args ...string) onceResult {
	tb.Helper()
	p := startBin(tb, bin, env, args...)
	if input != "" {
		p.sendRaw(tb, []byte(input))
	}
	p.closeStdin()
	deadline := time.NewTimer(exitTimeout)
	defer deadline.Stop()
	var res onceResult
	for {
		select {
		case l := <-p.lines:
			res.lines = append(res.lines, l)
			continue
		case <-p.exited:
		case <-deadline.C:
			tb.Fatalf("ahp-opa %v did not exit within %s\nstderr:\n%s", args, exitTimeout, p.stderr.String())
		}
		break
	}
	for {
		select {
		case l := <-p.lines:
			res.lines = append(res.lines, l)
			continue
		default:
		}
		break
	}
	res.partial = p.partial
	res.status = p.cmd.ProcessState.ExitCode()
	res.stderr = p.stderr.String()
	return res
}
