// Package bench drives HTTP policy endpoints with the same tool.before
// event and measures throughput and latency: ahp-opa's POST /ahp against
// the OPA REST server's data API running the same policy. Every answer is
// checked, so a fast wrong answer cannot pass for a fast one.
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

// Target is one endpoint under test.
type Target struct {
	Protocol Protocol
	URL      string // full endpoint URL
	Token    string // bearer token, if any
	// PID, when set, is the server's process: its CPU time during each run
	// is measured (Linux), which the machine's noise affects less than
	// throughput.
	PID int
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
	u, err := url.Parse(t.URL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return Result{}, fmt.Errorf("bench: %q: want an http:// URL (loopback benchmarks need no TLS)", t.URL)
	}
	tmpl, err := newTemplate(t, u, o.Event, o.OPAInput)
	if err != nil {
		return Result{}, err
	}
	if o.Warmup > 0 {
		if _, err := run(ctx, t, tmpl, o, o.Warmup, 0); err != nil {
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
		issued  atomic.Int64
		mu      sync.Mutex
		lat     []time.Duration
		errs    int
		first   error
		wg      sync.WaitGroup
		cpu0    = processCPU(t.PID)
		started = time.Now()
	)
	// Ids never repeat, not even across runs: ahp-opa replays the decision
	// for a retried event id (B-DUP-1), which would skip the evaluation.
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	for w := range o.Conns {
		wg.Go(func() {
			c := &conn{addr: tmpl.addr}
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
				status, body, err := c.roundTrip(buf)
				if ctx.Err() != nil {
					break // cut off by the deadline: neither counted nor timed
				}
				local = append(local, time.Since(start))
				if err == nil && status != 200 {
					err = fmt.Errorf("status %d: %.200s", status, body)
				}
				if err == nil {
					err = check(t.Protocol, body, id, o.Deny)
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
	var cpu time.Duration
	if cpu0 >= 0 {
		if cpu1 := processCPU(t.PID); cpu1 >= 0 {
			cpu = cpu1 - cpu0
		}
	}
	if len(lat) == 0 {
		return Result{}, fmt.Errorf("bench: no request completed against %s (%v)", t.URL, first)
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
	addr  string
	parts [][]byte // HTTP request split at each id; the id goes between parts
}

func newTemplate(t Target, u *url.URL, event map[string]any, opaInput func(map[string]any) (any, error)) (*template, error) {
	body, err := requestBody(t.Protocol, event, idMark, opaInput)
	if err != nil {
		return nil, err
	}
	path := u.RequestURI()
	head := "POST " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\n"
	if t.Token != "" {
		head += "Authorization: Bearer " + t.Token + "\r\n"
	}
	tm := &template{addr: u.Host}
	tm.parts = append(tm.parts, []byte(head))
	tm.parts = append(tm.parts, bytes.Split(body, []byte(idMark))...)
	return tm, nil
}

// request appends the HTTP request for id to buf.
func (tm *template) request(buf []byte, id string) []byte {
	n := 0
	for _, p := range tm.parts[1:] {
		n += len(p)
	}
	n += len(id) * (len(tm.parts) - 2)
	buf = append(buf, tm.parts[0]...)
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(n), 10)
	buf = append(buf, "\r\n\r\n"...)
	for i, p := range tm.parts[1:] {
		if i > 0 {
			buf = append(buf, id...)
		}
		buf = append(buf, p...)
	}
	return buf
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
func (k *conn) roundTrip(req []byte) (status int, body []byte, err error) {
	c, br, err := k.get()
	if err != nil {
		return 0, nil, err
	}
	if _, err := c.Write(req); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, nil, err
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, nil, err
	}
	if resp.Close {
		k.close()
	}
	return resp.StatusCode, body, nil
}

// requestBody wraps the event, given an id, for the protocol.
func requestBody(p Protocol, event map[string]any, id string, opaInput func(map[string]any) (any, error)) ([]byte, error) {
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
func check(p Protocol, data []byte, id string, deny bool) error {
	var denies int
	switch p {
	case ClaudeHook:
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
	case OPA:
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
