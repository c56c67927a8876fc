package test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// benchRequest returns a hooks/intercept line for a shell command with an
// integer request id (so the event id need not follow it, B-RPC-8) and a
// fresh event id: a repeated event id would be answered from the retry
// cache (B-DUP-1) instead of being decided.
func benchRequest(command string) func(id int) string {
	line := encode(interceptMsg(0, testkit.ShellEvent("evt-bench-0", command), "deny"))
	line = strings.Replace(line, `"id":0,`, `"id":REQ,`, 1)
	line = strings.Replace(line, `"evt-bench-0"`, `"evt-bench-REQ"`, 1)
	if strings.Count(line, "REQ") != 2 {
		panic("benchRequest: ids not found in " + line)
	}
	return func(id int) string { return strings.ReplaceAll(line, "REQ", strconv.Itoa(id)) }
}

// BenchmarkStdioRoundTrip measures one request/reply exchange with a
// persistent process and one request outstanding at a time, the way a
// persistent stdio harness drives a backend (B-STDIO-6), on the built-in
// library.
func BenchmarkStdioRoundTrip(b *testing.B) {
	for _, c := range []struct{ name, command string }{
		{"allow", "git status && ls -la /repo | grep go"},
		{"deny", "git push --force origin main"},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := startServe(b)
			next := benchRequest(c.command)
			p.roundTrip(b, next(-1)) // warm up
			i := 0
			for b.Loop() {
				i++
				if err := p.write(next(i)); err != nil {
					b.Fatal(err)
				}
				line, ok := p.nextLine(b, replyTimeout)
				if !ok || !strings.Contains(line, `"id":`+strconv.Itoa(i)+",") {
					b.Fatalf("reply %d: %q", i, line)
				}
			}
			b.StopTimer()
			p.finish(b)
		})
	}
}

// BenchmarkPerEvent measures the per_event lifecycle: start the binary,
// send one request, close stdin, read the reply and wait for the exit.
func BenchmarkPerEvent(b *testing.B) {
	line := benchRequest("git push --force origin main")(1) + "\n"
	for b.Loop() {
		p := startProc(b, nil, "serve", "--stdio")
		p.sendRaw(b, []byte(line))
		p.closeStdin()
		reply, ok := p.nextLine(b, replyTimeout)
		if !ok || !strings.Contains(reply, `"type":"deny"`) {
			b.Fatalf("reply: %q\nstderr:\n%s", reply, p.stderr.String())
		}
		if rest, status := p.waitExit(b); status != 0 || len(rest) != 0 {
			b.Fatalf("exit status %d, extra output %q", status, rest)
		}
	}
}

// BenchmarkLargeInputRSS measures what one large Write costs the process
// in memory: the peak resident set (VmHWM, Linux) after deciding one
// 4 MB Write, less the resident set before it, against the
// message's size. Each iteration is a fresh process; the metrics are
// per-process figures.
func BenchmarkLargeInputRSS(b *testing.B) {
	const content = 3_900_000 // a 4.14 MB message, under the 4 MiB decided
	line := writeLine("w-large", content)
	var peak, before float64
	for b.Loop() {
		p := startServe(b)
		p.roundTrip(b, writeLine("w-small", 1000)) // loaded and warm
		rss0 := procStatus(b, p.cmd.Process.Pid, "VmRSS")
		r := p.roundTrip(b, line)
		wantNoObjection(b, r)
		peak += procStatus(b, p.cmd.Process.Pid, "VmHWM") - rss0
		before += rss0
		p.finish(b)
	}
	n := float64(b.N)
	b.ReportMetric(before/n/1e6, "MB-rss-before")
	b.ReportMetric(peak/n/1e6, "MB-peak-growth")
	b.ReportMetric(peak/n/float64(len(line)), "growth/message")
}

// procStatus returns a memory figure of /proc/PID/status in bytes.
func procStatus(tb testing.TB, pid int, key string) float64 {
	tb.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		tb.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				tb.Fatalf("%s: %q", key, l)
			}
			return kb * 1024
		}
	}
	tb.Fatalf("%s not in /proc/%d/status", key, pid)
	return 0
}
