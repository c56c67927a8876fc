package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// serveString runs the stdio binding over in and returns the reply lines.
func serveString(t *testing.T, s *Stdio, in string) []string {
	t.Helper()
	var out strings.Builder
	if err := s.Serve(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if out.Len() == 0 {
		return nil
	}
	if !strings.HasSuffix(out.String(), "\n") {
		t.Fatalf("output does not end with a newline: %q", out.String())
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

func newStdio() *Stdio {
	return &Stdio{Server: &Server{Interceptor: &fakeInterceptor{}, Observer: &recordingObserver{}}}
}

func replyID(t *testing.T, line string) (id string, code int) {
	t.Helper()
	var r struct {
		ID    json.RawMessage
		Error *struct{ Code int }
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("reply is not JSON: %q", line)
	}
	if r.Error != nil {
		code = r.Error.Code
	}
	return string(r.ID), code
}

func TestStdioFraming(t *testing.T) {
	deny := `{"effects":["deny"]}`
	req := request(`"e1"`, validEvent, deny)
	note := `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","event":{}}}`
	tests := []struct {
		name  string
		in    string
		want  []string // reply id and code per line, as "id code"
		limit int
	}{
		{name: "one request (per_event, B-STDIO-3)", in: req + "\n", want: []string{`"e1" 0`}},
		{name: "last line without newline", in: req, want: []string{`"e1" 0`}},
		{name: "CRLF line ending", in: req + "\r\n", want: []string{`"e1" 0`}},
		{name: "blank lines ignored (B-STDIO-5)", in: "\n  \n" + req + "\n\n", want: []string{`"e1" 0`}},
		{name: "notification alone writes nothing (B-STDIO-4)", in: note + "\n", want: nil},
		{name: "malformed line then request (B-STDIO-5)", in: "{\n" + req + "\n", want: []string{"null -32700", `"e1" 0`}},
		{name: "pretty-printed request", in: "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": \"x\"\n}\n", want: []string{"null -32700", "null -32700", "null -32700", "null -32700"}},
		{name: "line over the limit is refused, next served", in: `{"pad":"` + strings.Repeat("x", 2000) + `"}` + "\n" + req + "\n", limit: 1024, want: []string{"null -32600", `"e1" 0`}},
		{name: "over-limit last line without newline", in: req + "\n" + strings.Repeat("x", 3000), limit: 1024, want: []string{`"e1" 0`, "null -32600"}},
		{name: "line exactly at a buffer boundary", in: `{"jsonrpc":"2.0","method":"x","pad":"` + strings.Repeat("y", 64<<10) + `"}`, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStdio()
			s.MaxMessageBytes = tt.limit
			lines := serveString(t, s, tt.in)
			if len(lines) != len(tt.want) {
				t.Fatalf("got %d lines %q, want %d", len(lines), lines, len(tt.want))
			}
			for i, line := range lines {
				id, code := replyID(t, line)
				if got := fmt.Sprintf("%s %d", id, code); got != tt.want[i] {
					t.Errorf("line %d = %s, want %s", i, got, tt.want[i])
				}
			}
		})
	}
}

// TestStdioPipelined sends many requests without waiting; every one is
// answered once, each reply a whole line (B-STDIO-1, B-RPC-3).
func TestStdioPipelined(t *testing.T) {
	const n = 500
	var in strings.Builder
	for i := range n {
		ev := strings.Replace(validEvent, `"id":"e1"`, fmt.Sprintf(`"id":"e%d"`, i), 1)
		if i%3 == 0 {
			ev = strings.Replace(ev, `"Bash"`, `"Danger"`, 1)
		}
		fmt.Fprintln(&in, request(fmt.Sprintf(`"e%d"`, i), ev, `{"effects":["deny"]}`))
		fmt.Fprintln(&in, `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","event":{}}}`)
	}
	s := newStdio()
	s.Concurrency = 8
	s.Server.Interceptor = &lockedInterceptor{next: &fakeInterceptor{}}
	lines := serveString(t, s, in.String())
	if len(lines) != n {
		t.Fatalf("got %d replies, want %d", len(lines), n)
	}
	seen := map[string]bool{}
	for _, line := range lines {
		var r struct {
			ID     string
			Result struct{ Effects []Effect }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("torn or invalid reply line %q: %v", line, err)
		}
		if seen[r.ID] {
			t.Fatalf("id %s answered twice", r.ID)
		}
		seen[r.ID] = true
		var i int
		fmt.Sscanf(r.ID, "e%d", &i)
		if denied := len(r.Result.Effects) > 0; denied != (i%3 == 0) {
			t.Errorf("%s: denied = %v, answer correlated with the wrong request", r.ID, denied)
		}
	}
}

// lockedInterceptor makes the fake safe to call from several goroutines.
type lockedInterceptor struct {
	mu   sync.Mutex
	next Interceptor
}

func (l *lockedInterceptor) Intercept(ctx context.Context, req *InterceptRequest) (*InterceptResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next.Intercept(ctx, req)
}

// gatedInterceptor blocks each request until release is closed.
type gatedInterceptor struct {
	started chan struct{}
	release chan struct{}
}

func (g *gatedInterceptor) Intercept(ctx context.Context, _ *InterceptRequest) (*InterceptResult, error) {
	g.started <- struct{}{}
	<-g.release
	return NewResult(), nil
}

// TestStdioCancelAnswersInFlight: a signal stops reading, but a request
// already being decided is still answered before Serve returns.
func TestStdioCancelAnswersInFlight(t *testing.T) {
	g := &gatedInterceptor{started: make(chan struct{}, 1), release: make(chan struct{})}
	s := &Stdio{Server: &Server{Interceptor: g}}
	pr, pw := io.Pipe()
	defer pw.Close()
	var out testkit.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, pr, &out) }()

	fmt.Fprintln(pw, request(`"e1"`, validEvent, `{"effects":["deny"]}`))
	<-g.started
	cancel()
	select {
	case err := <-done:
		t.Fatalf("Serve returned (%v) before the in-flight request was answered", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if id, code := replyID(t, strings.TrimSpace(out.String())); id != `"e1"` || code != 0 {
		t.Errorf("reply = %s, want a result for e1", out.String())
	}
}

// firstHeld holds the decision of event e1 until release is closed and
// answers every other at once.
type firstHeld struct {
	held    chan struct{} // closed when e1's decision has begun
	release chan struct{}
}

func (f *firstHeld) Intercept(_ context.Context, req *InterceptRequest) (*InterceptResult, error) {
	if req.Event.ID == "e1" {
		close(f.held)
		<-f.release
	}
	return NewResult(), nil
}

// TestStdioConcurrentRequests: with concurrency 2, a request sent while
// another is being decided gets the other worker and is answered first,
// whether it was pipelined behind the first (buffered with it) or sent
// alone once the first decision had begun (the worker deciding hands on
// its turn at reading after passTurnAfter). With one worker the second
// would wait for the first, and this test would hang.
func TestStdioConcurrentRequests(t *testing.T) {
	e1 := request(`"e1"`, validEvent, `{"effects":["deny"]}`)
	e2 := request(`"e2"`, strings.Replace(validEvent, `"id":"e1"`, `"id":"e2"`, 1), `{"effects":["deny"]}`)
	for _, pipelined := range []bool{true, false} {
		t.Run(fmt.Sprintf("pipelined=%v", pipelined), func(t *testing.T) {
			f := &firstHeld{held: make(chan struct{}), release: make(chan struct{})}
			s := &Stdio{Server: &Server{Interceptor: f}, Concurrency: 2}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- s.Serve(context.Background(), inR, outW)
				outW.Close()
			}()
			if pipelined {
				fmt.Fprint(inW, e1+"\n"+e2+"\n") // one write: both lines buffered at once
			} else {
				fmt.Fprintln(inW, e1)
				<-f.held
				fmt.Fprintln(inW, e2)
			}
			replies := bufio.NewScanner(outR)
			if !replies.Scan() {
				t.Fatalf("no reply: %v", replies.Err())
			}
			if id, _ := replyID(t, replies.Text()); id != `"e2"` {
				t.Fatalf("first reply is for %s, want e2 while e1 is still being decided", id)
			}
			close(f.release)
			if !replies.Scan() {
				t.Fatalf("no second reply: %v", replies.Err())
			}
			if id, _ := replyID(t, replies.Text()); id != `"e1"` {
				t.Fatalf("second reply is for %s, want e1", id)
			}
			inW.Close()
			if err := <-done; err != nil {
				t.Fatalf("Serve: %v", err)
			}
		})
	}
}

// readEntered tells entered each time a Read begins.
type readEntered struct {
	r       io.Reader
	entered chan<- struct{}
}

func (r readEntered) Read(p []byte) (int, error) {
	r.entered <- struct{}{}
	return r.r.Read(p)
}

// writeFailing fails every write and tells attempted.
type writeFailing struct{ attempted chan<- struct{} }

func (w writeFailing) Write([]byte) (int, error) {
	w.attempted <- struct{}{}
	return 0, errBrokenPipe
}

type interceptorFunc func(context.Context, *InterceptRequest) (*InterceptResult, error)

func (f interceptorFunc) Intercept(ctx context.Context, req *InterceptRequest) (*InterceptResult, error) {
	return f(ctx, req)
}

// countingInterceptor counts decisions.
type countingInterceptor struct{ n atomic.Int64 }

func (c *countingInterceptor) Intercept(context.Context, *InterceptRequest) (*InterceptResult, error) {
	c.n.Add(1)
	return NewResult(), nil
}

// TestStdioNoDecisionAfterWriteFailure: a line that reaches the worker
// waiting at the pipe after another worker's reply could not be written
// is not decided: its answer could reach nobody.
func TestStdioNoDecisionAfterWriteFailure(t *testing.T) {
	held := &firstHeld{held: make(chan struct{}), release: make(chan struct{})}
	counted := &countingInterceptor{}
	both := interceptorFunc(func(ctx context.Context, req *InterceptRequest) (*InterceptResult, error) {
		counted.Intercept(ctx, req)
		return held.Intercept(ctx, req)
	})
	s := &Stdio{Server: &Server{Interceptor: both}, Concurrency: 2}
	pr, pw := io.Pipe()
	defer pw.Close()
	reads, writes := make(chan struct{}, 8), make(chan struct{}, 8)
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), readEntered{pr, reads}, writeFailing{writes}) }()

	go fmt.Fprintln(pw, request(`"e1"`, validEvent, `{"effects":["deny"]}`))
	<-reads
	<-held.held
	<-reads // e1 is being decided and the turn has passed: another worker waits at the pipe
	close(held.release)
	<-writes // e1's reply failed
	fmt.Fprintln(pw, request(`"e2"`, strings.Replace(validEvent, `"id":"e1"`, `"id":"e2"`, 1), `{"effects":["deny"]}`))
	if err := <-done; !errors.Is(err, errBrokenPipe) {
		t.Fatalf("Serve = %v, want the write error", err)
	}
	if n := counted.n.Load(); n != 1 {
		t.Errorf("%d decisions, want 1: e2 was decided after the output failed", n)
	}
}

func TestStdioWriteFailure(t *testing.T) {
	s := newStdio()
	in := strings.Repeat(request(`"e1"`, validEvent, `{"effects":["deny"]}`)+"\n", 3)
	err := s.Serve(context.Background(), strings.NewReader(in), failingWriter{})
	if !errors.Is(err, errBrokenPipe) {
		t.Fatalf("Serve = %v, want the write error", err)
	}
}

var errBrokenPipe = errors.New("broken pipe")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errBrokenPipe }

// FuzzReadLines checks the framing: whatever the bytes, every non-blank
// line within the limit comes out once, without its line ending.
func FuzzReadLines(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n  \nc"), 4)
	f.Add([]byte(strings.Repeat("x", 100)+"\ny"), 10)
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if limit < 1 || limit > 1<<12 {
			return
		}
		var want []string
		tooLong := 0
		for _, l := range strings.Split(string(data), "\n") {
			trimmed := strings.TrimSuffix(l, "\r")
			switch {
			case len(trimmed) > limit:
				tooLong++
			case strings.TrimSpace(trimmed) != "":
				want = append(want, trimmed)
			}
		}
		var got []string
		gotTooLong := 0
		lr := newLineReader(strings.NewReader(string(data)), limit)
		for {
			l, err := lr.next()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("next: %v", err)
				}
				break
			}
			if l.tooLong {
				gotTooLong++
			} else {
				got = append(got, string(*l.data))
			}
		}
		if _, err := lr.next(); err != io.EOF {
			t.Fatalf("next after the end = %v, want io.EOF again", err)
		}
		if gotTooLong != tooLong || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("lines %q (%d too long), want %q (%d too long)", got, gotTooLong, want, tooLong)
		}
	})
}

func TestIDFromPrefix(t *testing.T) {
	tests := []struct {
		prefix string
		want   string // the id as JSON text
	}{
		{`{"jsonrpc":"2.0","id":"evt_1","params":{"event":{"tool":{"input":{"content":"xxxx`, `"evt_1"`},
		{`{"id":42,"jsonrpc":"2.0"`, `42`},
		{`{"jsonrpc":"2.0","method":"hooks/intercept","params":{"a":[1,2,{"b":"c"}]},"id":"late"}`, `"late"`},
		{`{"params":{"content":"xxxxxxxxxxxx`, `null`},
		{`{"id":1.5}`, `null`},
		{`{"id":""}`, `null`},
		{`{"id":{"nested":1}}`, `null`},
		{`{"params":{"id":"inner"}}`, `null`},
		{`["id","x"]`, `null`},
		{``, `null`},
		{`{"id"`, `null`},
	}
	for _, tt := range tests {
		if got := idFromPrefix([]byte(tt.prefix)).String(); got != tt.want {
			t.Errorf("idFromPrefix(%q) = %s, want %s", tt.prefix, got, tt.want)
		}
	}
}

func FuzzIDFromPrefix(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"evt_1","params":{`))
	f.Add([]byte(`{"params":{"a":"b"},"id":7}`))
	f.Fuzz(func(t *testing.T, prefix []byte) {
		id := idFromPrefix(prefix)
		if id.IsNull() {
			return
		}
		// An id found in a prefix is one a whole message could carry.
		v, _, err := parseJSON([]byte(id.String()))
		if err != nil {
			t.Fatalf("id %s is not JSON", id)
		}
		if _, ok := parseID(v); !ok {
			t.Fatalf("id %s is not a valid id", id)
		}
	})
}

// writeRecorder keeps every Write call apart.
type writeRecorder struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

// TestStdioOneWritePerReply: each reply reaches the harness in a single
// write holding exactly one whole line, so that replies written from
// several goroutines never interleave and a reader sees no partial line.
func TestStdioOneWritePerReply(t *testing.T) {
	var in strings.Builder
	const n = 50
	for i := range n {
		in.WriteString(request(`"e1"`, withTool("Danger"), `{"effects":["deny"]}`) + "\n")
		in.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"nope"}` + "\n")
	}
	s := newStdio()
	s.Concurrency = 4
	s.Server.Interceptor = &lockedInterceptor{next: &fakeInterceptor{}}
	var w writeRecorder
	if err := s.Serve(context.Background(), strings.NewReader(in.String()), &w); err != nil {
		t.Fatal(err)
	}
	if len(w.writes) != 2*n {
		t.Fatalf("%d writes for %d replies", len(w.writes), 2*n)
	}
	for _, p := range w.writes {
		if strings.Count(p, "\n") != 1 || !strings.HasSuffix(p, "\n") || !json.Valid([]byte(p)) {
			t.Errorf("write %q is not one whole line", p)
		}
	}
}
