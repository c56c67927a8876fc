// Package bench drives policy endpoints with the same tool.before event
// and measures throughput and latency: ahp-opa's POST /ahp, its stdio
// binding and its per_event start against the OPA REST server's data API
// and `opa eval` running the same policy. Every answer is checked, so a
// fast wrong answer cannot pass for a fast one.
package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Protocol says how to wrap the event and read the answer.
type Protocol int

const (
	// AHP posts a hooks/intercept request; the answer is a JSON-RPC result.
	AHP Protocol = iota
	// OPA posts {"input": event} to a /v1/data/... deny set; the answer is
	// {"result": [...]}.
	OPA
	// ClaudeHook posts the Claude Code PreToolUse payload of the event to
	// ahp-opa's native hook endpoint (/hooks/claude-code); the answer is {}
	// or Claude Code's deny.
	ClaudeHook
)

func (p Protocol) String() string {
	switch p {
	case OPA:
		return "opa"
	case ClaudeHook:
		return "hook"
	}
	return "ahp-opa"
}

// Transport says how a request reaches the target.
type Transport int

const (
	// HTTP posts to URL over keep-alive connections.
	HTTP Transport = iota
	// Stdio writes one line per request to a process started once per
	// connection (Command) and reads one line back: a persistent stdio
	// harness. AHP only.
	Stdio
	// PerEvent starts Command afresh for every request, writes the request
	// to its standard input, closes it and waits for the exit: a per_event
	// harness, or `opa eval -I` for the OPA protocol, whose input is the
	// event alone and whose answer is eval's JSON output.
	PerEvent
)

func (t Transport) String() string {
	switch t {
	case Stdio:
		return "stdio"
	case PerEvent:
		return "per-event"
	}
	return "http"
}

// Target is one endpoint under test.
type Target struct {
	Protocol  Protocol
	Transport Transport
	URL       string   // full endpoint URL (HTTP)
	Command   []string // program and arguments (Stdio, PerEvent)
	Token     string   // bearer token, if any
	// PID, when set, is the server's process: its CPU time during each run
	// is measured (Linux), which the machine's noise affects less than
	// throughput.
	PID int
}

// String names the target in messages: its URL or its program.
func (t Target) String() string {
	if t.Transport == HTTP {
		return t.URL
	}
	if len(t.Command) == 0 {
		return t.Transport.String()
	}
	return t.Transport.String() + " " + filepath.Base(t.Command[0])
}

// Options bound a run. A run ends after Duration or Requests, whichever
// comes first; at least one must be set.
type Options struct {
	Conns    int           // concurrent keep-alive connections, one request at a time each
	Duration time.Duration // measured time
	Requests int           // measured requests in all
	Warmup   time.Duration // unmeasured time first, to fill caches and pools
	// Event is the tool.before event, sent identically to both protocols
	// apart from its id, which is new on every request so that no answer
	// can come from a retry cache (B-DUP-1).
	Event map[string]any
	// Deny is the decision every answer must carry.
	Deny bool
	// OPAInput, if set, builds what OPA gets as input from the event;
	// nil sends the event as it is.
	OPAInput func(event map[string]any) (any, error)
}

// errNoAnswer is a run that ended before any request was answered.
var errNoAnswer = errors.New("no request completed")

// Result of one run.
type Result struct {
	Target   Target
	Conns    int
	Requests int
	Errors   int
	FirstErr error
	Elapsed  time.Duration
	P50, P99 time.Duration
	CPU      time.Duration // server CPU time during the run; 0 if unknown
}

// CPUPerRequest is the server CPU time spent per answered request.
func (r Result) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Requests)
}

// RPS is the measured throughput.
func (r Result) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Run drives t with o.Conns connections and returns the measurements.
func Run(ctx context.Context, t Target, o Options) (Result, error) {
	if o.Conns < 1 || (o.Duration <= 0 && o.Requests <= 0) {
		return Result{}, errors.New("bench: need at least one connection and a duration or a request count")
	}
	if o.Event == nil {
		return Result{}, errors.New("bench: no event")
	}
	tmpl, err := newTemplate(t, o.Event, o.OPAInput)
	if err != nil {
		return Result{}, err
	}
	if o.Warmup > 0 {
		// A warm-up shorter than one answer (a per_event start, a loaded
		// machine) completes none: that is no failure.
		if _, err := run(ctx, t, tmpl, o, o.Warmup, 0); err != nil && !errors.Is(err, errNoAnswer) {
			return Result{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	return run(ctx, t, tmpl, o, o.Duration, o.Requests)
}

func run(ctx context.Context, t Target, tmpl *template, o Options, d time.Duration, limit int) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	var (
		issued   atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		errs     int
		first    error
		wg       sync.WaitGroup
		cpu0     = processCPU(t.PID)
		childCPU atomic.Int64 // per-event processes' CPU time, in ns
		started  = time.Now()
	)
	// Ids never repeat, not even across runs: ahp-opa replays the decision
	// for a retried event id (B-DUP-1), which would skip the evaluation.
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	for w := range o.Conns {
		wg.Go(func() {
			c := newRoundTripper(t, tmpl, &childCPU)
			defer c.close()
			// The deadline interrupts a request in flight by closing the
			// connection.
			stop := context.AfterFunc(ctx, c.close)
			defer stop()
			local := make([]time.Duration, 0, 4096)
			var localErrs int
			var localFirst error
			buf := make([]byte, 0, 1024)
			for n := 0; ctx.Err() == nil; n++ {
				if limit > 0 && issued.Add(1) > int64(limit) {
					break
				}
				id := "bench-" + nonce + "-" + strconv.Itoa(w) + "-" + strconv.Itoa(n)
				buf = tmpl.request(buf[:0], id)
				start := time.Now()
				body, err := c.roundTrip(buf)
				if ctx.Err() != nil {
					break // cut off by the deadline: neither counted nor timed
				}
				local = append(local, time.Since(start))
				if err == nil {
					err = check(t, body, id, o.Deny)
				}
				if err != nil {
					localErrs++
					if localFirst == nil {
						localFirst = err
					}
					c.close() // start afresh after anything unexpected
				}
			}
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, local...)
			errs += localErrs
			if first == nil {
				first = localFirst
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(started)
	cpu := time.Duration(childCPU.Load())
	if cpu0 >= 0 {
		if cpu1 := processCPU(t.PID); cpu1 >= 0 {
			cpu = cpu1 - cpu0
		}
	}
	if len(lat) == 0 {
		if first != nil {
			return Result{}, fmt.Errorf("bench: no request completed against %s: %w", t, first)
		}
		return Result{}, fmt.Errorf("bench: %w against %s within %v", errNoAnswer, t, d)
	}
	slices.Sort(lat)
	return Result{
		Target: t, Conns: o.Conns, Requests: len(lat), Errors: errs, FirstErr: first,
		Elapsed: elapsed, P50: percentile(lat, 0.50), P99: percentile(lat, 0.99), CPU: cpu,
	}, nil
}

// processCPU returns the user and system CPU time of a process from
// /proc/PID/stat, or -1 when pid is 0 or the file cannot be read.
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return -1
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name, field 2, may hold spaces: count from its end.
	rest := data[bytes.LastIndexByte(data, ')')+1:]
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	const userHZ = 100 // the unit of /proc times on Linux, whatever the kernel HZ
	return time.Duration(utime+stime) * time.Second / userHZ
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// idMark stands for the request id in a request template.
const idMark = "__AHP_BENCH_ID__"

// template is one request, pre-encoded, with the places of the id cut
// out: the driver must cost as little CPU as possible, since it shares
// the machine with the servers it measures.
type template struct {
	addr  string   // host:port, HTTP only
	head  string   // HTTP request line and headers, without Content-Length
	parts [][]byte // body split at each id; the id goes between parts
	tail  string   // after the body: a newline for a stdio line
}

func newTemplate(t Target, event map[string]any, opaInput func(map[string]any) (any, error)) (*template, error) {
	tm := &template{}
	switch t.Transport {
	case HTTP:
		u, err := url.Parse(t.URL)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("bench: %q: want an http:// URL (loopback benchmarks need no TLS)", t.URL)
		}
		tm.addr = u.Host
		tm.head = "POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\n"
		if t.Token != "" {
			tm.head += "Authorization: Bearer " + t.Token + "\r\n"
		}
	case Stdio, PerEvent:
		if len(t.Command) == 0 {
			return nil, fmt.Errorf("bench: %s target without a command", t.Transport)
		}
		if t.Transport == Stdio && t.Protocol == OPA {
			return nil, errors.New("bench: OPA has no stdio binding")
		}
		tm.tail = "\n"
	default:
		return nil, fmt.Errorf("bench: unknown transport %d", t.Transport)
	}
	body, err := requestBody(t.Protocol, t.Transport, event, idMark, opaInput)
	if err != nil {
		return nil, err
	}
	tm.parts = bytes.Split(body, []byte(idMark))
	return tm, nil
}

// request appends the request for id to buf.
func (tm *template) request(buf []byte, id string) []byte {
	if tm.head != "" {
		n := len(id) * (len(tm.parts) - 1)
		for _, p := range tm.parts {
			n += len(p)
		}
		buf = append(buf, tm.head...)
		buf = append(buf, "Content-Length: "...)
		buf = strconv.AppendInt(buf, int64(n), 10)
		buf = append(buf, "\r\n\r\n"...)
	}
	for i, p := range tm.parts {
		if i > 0 {
			buf = append(buf, id...)
		}
		buf = append(buf, p...)
	}
	return append(buf, tm.tail...)
}

// roundTripper sends one request and returns the answer's body; close
// interrupts a request in flight and releases what it holds.
type roundTripper interface {
	roundTrip(req []byte) ([]byte, error)
	close()
}

func newRoundTripper(t Target, tm *template, cpu *atomic.Int64) roundTripper {
	switch t.Transport {
	case Stdio:
		return &stdioConn{command: t.Command}
	case PerEvent:
		return &perEvent{command: t.Command, cpu: cpu}
	}
	return &conn{addr: tm.addr}
}

// conn is a minimal HTTP/1.1 keep-alive client for one connection: one
// request at a time, like a harness waiting for its decision.
type conn struct {
	addr string
	mu   sync.Mutex
	c    net.Conn
	br   *bufio.Reader
}

func (k *conn) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.c != nil {
		k.c.Close()
		k.c, k.br = nil, nil
	}
}

func (k *conn) get() (net.Conn, *bufio.Reader, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.c == nil {
		c, err := net.Dial("tcp", k.addr)
		if err != nil {
			return nil, nil, err
		}
		k.c, k.br = c, bufio.NewReaderSize(c, 16<<10)
	}
	return k.c, k.br, nil
}

// roundTrip sends one request and reads the whole answer.
func (k *conn) roundTrip(req []byte) ([]byte, error) {
	c, br, err := k.get()
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(req); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if resp.Close {
		k.close()
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
	}
	return body, nil
}

// stdioConn is a persistent stdio process: one line out, one line back.
type stdioConn struct {
	command []string
	mu      sync.Mutex
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	stderr  bytes.Buffer
}

func (s *stdioConn) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.in.Close() // EOF: the process finishes and exits
		s.cmd.Wait()
		s.cmd = nil
	}
}

func (s *stdioConn) get() (io.Writer, *bufio.Reader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		cmd := exec.Command(s.command[0], s.command[1:]...)
		s.stderr.Reset()
		cmd.Stderr = &s.stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		s.cmd, s.in, s.out = cmd, in, bufio.NewReaderSize(out, 16<<10)
	}
	return s.in, s.out, nil
}

func (s *stdioConn) roundTrip(req []byte) ([]byte, error) {
	in, out, err := s.get()
	if err != nil {
		return nil, err
	}
	if _, err := in.Write(req); err != nil {
		return nil, err
	}
	line, err := out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w (stderr: %.300s)", err, s.stderr.String())
	}
	return line, nil
}

// perEvent starts the command for every request and waits for its exit,
// which a per_event harness needs to see (B-STDIO-4): the latency is
// from start to exit.
type perEvent struct {
	command []string
	cpu     *atomic.Int64
	mu      sync.Mutex
	cmd     *exec.Cmd
}

func (p *perEvent) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
}

func (p *perEvent) roundTrip(req []byte) ([]byte, error) {
	var out, stderr bytes.Buffer
	cmd := exec.Command(p.command[0], p.command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req), &out, &stderr
	p.mu.Lock()
	p.cmd = cmd
	err := cmd.Start()
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	err = cmd.Wait()
	if st := cmd.ProcessState; st != nil {
		p.cpu.Add(int64(st.UserTime() + st.SystemTime()))
	}
	if err != nil {
		return nil, fmt.Errorf("%w (stderr: %.300s)", err, stderr.String())
	}
	return out.Bytes(), nil
}

// requestBody wraps the event, given an id, for the protocol and
// transport: `opa eval -I` reads the input document alone.
func requestBody(p Protocol, tr Transport, event map[string]any, id string, opaInput func(map[string]any) (any, error)) ([]byte, error) {
	ev := make(map[string]any, len(event))
	for k, v := range event {
		ev[k] = v
	}
	ev["id"] = id
	if p == OPA {
		var input any = ev
		if opaInput != nil {
			var err error
			if input, err = opaInput(ev); err != nil {
				return nil, fmt.Errorf("bench: building the OPA input: %w", err)
			}
		}
		if tr == PerEvent {
			return json.Marshal(input)
		}
		return json.Marshal(map[string]any{"input": input})
	}
	if p == ClaudeHook {
		// The id becomes the tool_use_id, from which the adapter derives
		// the event id: every request is a new event, as on /ahp.
		session, _ := ev["session"].(map[string]any)
		tool, _ := ev["tool"].(map[string]any)
		return json.Marshal(map[string]any{
			"session_id": cmp.Or(session["id"], any("bench")), "cwd": cmp.Or(session["cwd"], any("/")),
			"hook_event_name": "PreToolUse", "tool_name": tool["name"], "tool_input": tool["input"], "tool_use_id": id,
		})
	}
	return json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "hooks/intercept",
		"params": map[string]any{
			"protocolVersion": "draft",
			"event":           ev,
			"capabilities":    map[string]any{"effects": []string{"deny"}},
		},
	})
}

// check verifies that an answer is well formed and carries the expected
// decision.
func check(t Target, data []byte, id string, deny bool) error {
	var denies int
	switch {
	case t.Protocol == ClaudeHook:
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("not a Claude Code hook answer: %.200s", data)
		}
		out, _ := v["hookSpecificOutput"].(map[string]any)
		switch {
		case len(v) == 0:
		case len(v) == 1 && out != nil && out["permissionDecision"] == "deny":
			denies = 1
		default:
			return fmt.Errorf("neither {} nor a deny: %.200s", data)
		}
	case t.Protocol == OPA && t.Transport == PerEvent:
		var v struct {
			Result []struct {
				Expressions []struct {
					Value *[]json.RawMessage `json:"value"`
				} `json:"expressions"`
			} `json:"result"`
		}
		if err := json.Unmarshal(data, &v); err != nil || len(v.Result) != 1 ||
			len(v.Result[0].Expressions) != 1 || v.Result[0].Expressions[0].Value == nil {
			return fmt.Errorf("not an opa eval answer: %.200s", data)
		}
		denies = len(*v.Result[0].Expressions[0].Value)
	case t.Protocol == OPA:
		var v struct {
			Result *[]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(data, &v); err != nil || v.Result == nil {
			return fmt.Errorf("not an OPA data answer: %.200s", data)
		}
		denies = len(*v.Result)
	default:
		var v struct {
			ID     string `json:"id"`
			Result *struct {
				Effects []struct {
					Type string `json:"type"`
				} `json:"effects"`
			} `json:"result"`
		}
		if err := json.Unmarshal(data, &v); err != nil || v.Result == nil || v.Result.Effects == nil {
			return fmt.Errorf("not an AHP result: %.200s", data)
		}
		if v.ID != id {
			return fmt.Errorf("answer for id %q to request %q", v.ID, id)
		}
		for _, e := range v.Result.Effects {
			if e.Type == "deny" {
				denies++
			}
		}
	}
	if (denies > 0) != deny {
		return fmt.Errorf("deny = %v, want %v: %.200s", denies > 0, deny, data)
	}
	return nil
}

// Median returns the result with the median throughput, and the median p50
// and p99 of all, so that one noisy round does not decide.
func Median(rs []Result) Result {
	if len(rs) == 0 {
		return Result{}
	}
	med := func(key func(Result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = key(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	byRPS := slices.Clone(rs)
	slices.SortFunc(byRPS, func(a, b Result) int {
		switch {
		case a.RPS() < b.RPS():
			return -1
		case a.RPS() > b.RPS():
			return 1
		}
		return 0
	})
	m := byRPS[len(byRPS)/2]
	m.P50 = time.Duration(med(func(r Result) float64 { return float64(r.P50) }))
	m.P99 = time.Duration(med(func(r Result) float64 { return float64(r.P99) }))
	cpuPer := time.Duration(med(func(r Result) float64 { return float64(r.CPUPerRequest()) }))
	m.CPU = cpuPer * time.Duration(m.Requests)
	m.Errors = 0
	for _, r := range rs {
		m.Errors += r.Errors
		if m.FirstErr == nil {
			m.FirstErr = r.FirstErr
		}
	}
	return m
}
