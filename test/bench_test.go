package test

import (
	"strconv"
	"strings"
	"testing"
)

// benchRequest returns a hooks/intercept line for a shell command with an
// integer request id (so the event id need not follow it, B-RPC-8) and a
// fresh event id: a repeated event id would be answered from the retry
// cache (B-DUP-1) instead of being decided.
func benchRequest(command string) func(id int) string {
	line := encode(interceptMsg(0, toolEvent("evt-bench-0", command), "deny"))
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
