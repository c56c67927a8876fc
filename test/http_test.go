package test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// Black-box tests of `ahp-opa serve --http` (PROTOCOL.md §8). The process
// listens on 127.0.0.1:0 and logs JSON; the tests learn the port from the
// "http: listening" log record.

const hsToken = "bb-token-7f3a9c1e5d2b4a6f8e0c"

// httpServe is one running `ahp-opa serve --http` process.
type httpServe struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	// closeStdout closes our end of the child's stdout, as `| head` does.
	closeStdout func() error
	base        string // http(s)://127.0.0.1:port

	records chan map[string]any // stderr log records, in order
	stderr  *testkit.Buffer     // all of stderr, for failure messages
	exited  chan struct{}
	waitErr error
}

// startHTTPServe runs `serve --http 127.0.0.1:0 --log-format json` with
// extra args and environment entries, and waits until it listens.
func startHTTPServe(t *testing.T, env []string, args ...string) *httpServe {
	t.Helper()
	hs := launchHTTPServe(t, env, args...)
	rec := hs.waitLog(t, "http: listening")
	scheme := "http"
	if rec["tls"] == true {
		scheme = "https"
	}
	addr, _ := rec["addr"].(string)
	hs.base = scheme + "://" + addr
	return hs
}

func launchHTTPServe(t *testing.T, env []string, args ...string) *httpServe {
	t.Helper()
	full := append([]string{"serve", "--http", "127.0.0.1:0", "--log-format", "json"}, args...)
	cmd := exec.Command(binPath, full...)
	cmd.Env = append(childEnv(), env...)
	if raceEnabled {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GORACE=halt_on_error=1 exitcode=%d", raceExitCode))
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	hs := &httpServe{
		cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), closeStdout: stdout.Close,
		records: make(chan map[string]any, 1<<12),
		stderr:  &testkit.Buffer{},
		exited:  make(chan struct{}),
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", binPath, err)
	}
	logsDone := make(chan struct{})
	go func() {
		defer close(logsDone)
		defer close(hs.records)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			hs.stderr.Write(append(sc.Bytes(), '\n'))
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil {
				select {
				case hs.records <- rec:
				default: // nobody waits for these: keep the process unblocked
				}
			}
		}
	}()
	go func() {
		<-logsDone // Wait must not run before the stderr reads ended
		hs.waitErr = cmd.Wait()
		close(hs.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-hs.exited:
		default:
			hs.stdin.Close()
			_ = cmd.Process.Kill() // our own child, by its pid
			<-hs.exited
		}
		if strings.Contains(hs.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("data race in ahp-opa:\n%s", hs.stderr.String())
		}
	})
	return hs
}

// waitLog returns the first log record with message msg, skipping others.
func (hs *httpServe) waitLog(t *testing.T, msg string) map[string]any {
	t.Helper()
	deadline := time.NewTimer(replyTimeout)
	defer deadline.Stop()
	for {
		select {
		case rec, ok := <-hs.records:
			if !ok {
				t.Fatalf("ahp-opa ended before logging %q\nstderr:\n%s", msg, hs.stderr.String())
			}
			if rec["msg"] == msg {
				return rec
			}
		case <-deadline.C:
			t.Fatalf("no %q log record within %v\nstderr:\n%s", msg, replyTimeout, hs.stderr.String())
		}
	}
}

// waitExit waits for the process to end and returns its exit status.
func (hs *httpServe) waitExit(t *testing.T) int {
	t.Helper()
	select {
	case <-hs.exited:
	case <-time.After(exitTimeout):
		t.Fatalf("ahp-opa did not exit within %v\nstderr:\n%s", exitTimeout, hs.stderr.String())
	}
	return hs.cmd.ProcessState.ExitCode()
}

type hsReply struct {
	status int
	header http.Header
	body   string
}

func hsDo(t *testing.T, c *http.Client, method, url, token, contentType, body string) hsReply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return hsReply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// TestHTTPServe drives every status of PROTOCOL.md §8 through the binary
// with the built-in policy, and checks JSON-RPC bodies against the wire
// contract and the shared schemas.
func TestHTTPServe(t *testing.T) {
	t.Parallel()
	hs := startHTTPServe(t, []string{"AHP_OPA_TOKEN=" + hsToken}, "--max-body-bytes", "4096")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer c.CloseIdleConnections()
	const ct = "application/json"
	big := with(denyRequest("big", "ls"), "params.event.tool.input.pad", strings.Repeat("x", 5000))
	tests := []struct {
		name        string
		method      string
		path        string
		token       string
		contentType string
		body        string
		status      int
		check       func(t *testing.T, r hsReply)
	}{
		{name: "no objection (B-HTTP-3)", body: interceptLine("a1", "ls -la"), status: 200, check: func(t *testing.T, r hsReply) {
			rep := mustReply(t, r.body)
			wantID(t, rep, "a1")
			wantNoObjection(t, rep)
		}},
		{name: "deny (B-HTTP-3, B-EFF-5)", body: interceptLine("d1", "rm -rf /"), status: 200, check: func(t *testing.T, r hsReply) {
			rep := mustReply(t, r.body)
			wantID(t, rep, "d1")
			wantDeny(t, rep)
		}},
		{name: "integer id (B-RPC-3)", body: encode(interceptMsg(json.Number("42"), testkit.ShellEvent("i1", "ls"), "deny")), status: 200, check: func(t *testing.T, r hsReply) {
			wantID(t, mustReply(t, r.body), json.Number("42"))
		}},
		{name: "charset=utf-8 (B-HTTP-2)", contentType: ct + "; charset=utf-8", body: interceptLine("u1", "ls"), status: 200},
		{name: "notification (B-HTTP-4)", body: encode(observeMsg(sessionEndEvent("o1"))), status: 202, check: emptyBody},
		{name: "invalid notification (B-OBS-1)", body: `{"jsonrpc":"2.0","method":"hooks/observe"}`, status: 202, check: emptyBody},
		{name: "parse error", body: `{"jsonrpc":"2.0",`, status: 400, check: func(t *testing.T, r hsReply) {
			rep := mustReply(t, r.body)
			wantID(t, rep, nil)
			wantError(t, rep, -32700)
		}},
		{name: "batch (B-RPC-1)", body: "[" + interceptLine("b1", "ls") + "]", status: 400, check: func(t *testing.T, r hsReply) {
			rep := mustReply(t, r.body)
			wantID(t, rep, nil)
			wantError(t, rep, -32600)
		}},
		{name: "unsupported version (B-VER-2)", body: encode(with(denyRequest("v1", "ls"), "params.protocolVersion", "0.1")), status: 200, check: func(t *testing.T, r hsReply) {
			rep := mustReply(t, r.body)
			wantError(t, rep, -32001)
			wantSupported(t, rep, "draft")
		}},
		{name: "invalid params (B-INT-5)", body: encode(without(denyRequest("p1", "ls"), "params.capabilities")), status: 200, check: func(t *testing.T, r hsReply) {
			wantError(t, mustReply(t, r.body), -32602)
		}},
		{name: "no token (B-HTTP-7)", token: "-", body: interceptLine("t1", "ls"), status: 401, check: challenge},
		{name: "wrong token (B-HTTP-7)", token: "not-the-token", body: interceptLine("t2", "ls"), status: 401, check: challenge},
		{name: "wrong content type (B-HTTP-2)", contentType: "text/plain", body: interceptLine("c1", "ls"), status: 415, check: says("Content-Type: application/json")},
		{name: "no content type", contentType: "-", body: interceptLine("c2", "ls"), status: 415, check: says("Content-Type: application/json")},
		{name: "GET (B-HTTP-5)", method: "GET", status: 405, check: func(t *testing.T, r hsReply) {
			if r.header.Get("Allow") != "POST" {
				t.Errorf("Allow = %q, want POST", r.header.Get("Allow"))
			}
		}},
		{name: "over the body limit (B-HTTP-8)", body: encode(big), status: 413, check: says("larger than")},
		{name: "no redirect for a trailing slash (B-HTTP-5)", path: "/ahp/", body: interceptLine("r1", "ls"), status: 404},
		{name: "healthz", method: "GET", path: "/healthz", token: "-", status: 200},
		{name: "readyz", method: "GET", path: "/readyz", token: "-", status: 200},
		{name: "metrics need the token", method: "GET", path: "/metrics", token: "-", status: 401},
		{name: "metrics", method: "GET", path: "/metrics", status: 200, check: func(t *testing.T, r hsReply) {
			for _, m := range []string{"ahp_opa_decisions_total", "ahp_opa_decision_duration_seconds_bucket",
				"ahp_opa_errors_total", "ahp_opa_observations_accepted_total", "ahp_opa_policy_reloads_total",
				"ahp_opa_policy_revision_info", "ahp_opa_audit_write_failures_total"} {
				if !strings.Contains(r.body, m) {
					t.Errorf("metrics lack %s", m)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, path, token, ctype := tt.method, tt.path, tt.token, tt.contentType
			if method == "" {
				method = "POST"
			}
			if path == "" {
				path = "/ahp"
			}
			switch token {
			case "":
				token = hsToken
			case "-":
				token = ""
			}
			switch ctype {
			case "":
				ctype = ct
			case "-":
				ctype = ""
			}
			r := hsDo(t, c, method, hs.base+path, token, ctype, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d; body %q", r.status, tt.status, r.body)
			}
			if strings.HasPrefix(r.body, "{") && r.header.Get("Content-Type") != ct {
				t.Errorf("Content-Type %q, want %s (B-HTTP-2)", r.header.Get("Content-Type"), ct)
			}
			if strings.Contains(r.body, hsToken) {
				t.Errorf("the token is echoed (B-HTTP-7): %s", r.body)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
	if strings.Contains(hs.stderr.String(), hsToken) {
		t.Errorf("the token reached the log (B-HTTP-7)")
	}
}

// says checks that a refusal explains itself in its body.
func says(text string) func(*testing.T, hsReply) {
	return func(t *testing.T, r hsReply) {
		t.Helper()
		if !strings.Contains(r.body, text) {
			t.Errorf("body %q, want one saying %q", r.body, text)
		}
	}
}

func emptyBody(t *testing.T, r hsReply) {
	t.Helper()
	if r.body != "" {
		t.Errorf("body %q, want none", r.body)
	}
}

func challenge(t *testing.T, r hsReply) {
	t.Helper()
	emptyBody(t, r)
	if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", r.header.Get("WWW-Authenticate"))
	}
}

// TestHTTPServeTokenFile: the token can come from a file instead.
func TestHTTPServeTokenFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(hsToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hs := startHTTPServe(t, nil, "--token-file", file)
	c := &http.Client{}
	defer c.CloseIdleConnections()
	if r := hsDo(t, c, "POST", hs.base+"/ahp", hsToken, "application/json", interceptLine("f1", "ls")); r.status != 200 {
		t.Errorf("right token: %d", r.status)
	}
	if r := hsDo(t, c, "POST", hs.base+"/ahp", "", "application/json", interceptLine("f2", "ls")); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
}

// TestHTTPServeRefusesOpenAddressWithoutToken: a non-loopback bind needs a
// token or an explicit, loudly logged opt-out.
func TestHTTPServeRefusesOpenAddressWithoutToken(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binPath, "serve", "--http", "0.0.0.0:0")
	cmd.Env = childEnv()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit = %v, want status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "--allow-insecure-no-auth") {
		t.Errorf("the refusal does not name the way out:\n%s", out)
	}
	cmd = exec.Command(binPath, "serve")
	cmd.Env = childEnv()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--http") {
		t.Errorf("serve without a binding: %v\n%s", err, out)
	}
}

// TestHTTPServeGracefulShutdown: SIGTERM stops the listener but a request
// already being read is still answered, then the process exits 0.
//
// The request announces "Expect: 100-continue"; the server sends 100 only
// once the handler has accepted the headers and starts reading the body,
// so the request is provably in flight when the signal is sent.
func TestHTTPServeGracefulShutdown(t *testing.T) {
	t.Parallel()
	hs := startHTTPServe(t, []string{"AHP_OPA_TOKEN=" + hsToken})
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(replyTimeout))
	body := interceptLine("g1", "rm -rf ~")
	fmt.Fprintf(conn, "POST /ahp HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", hsToken, len(body))
	br := bufio.NewReader(conn)
	cont, err := http.ReadResponse(br, nil)
	if err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue, got %v %v", cont, err)
	}

	if err := hs.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	hs.waitLog(t, "http: shutting down")

	io.WriteString(conn, body)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v\nstderr:\n%s", err, hs.stderr.String())
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	rep := mustReply(t, string(b))
	wantID(t, rep, "g1")
	wantDeny(t, rep)
	if status := hs.waitExit(t); status != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0\nstderr:\n%s", status, hs.stderr.String())
	}
}

// TestHTTPServeWithStdio: one process serves both bindings from one
// engine; closing stdin ends it, HTTP included.
func TestHTTPServeWithStdio(t *testing.T) {
	t.Parallel()
	hs := startHTTPServe(t, []string{"AHP_OPA_TOKEN=" + hsToken}, "--stdio")
	fmt.Fprintln(hs.stdin, interceptLine("s1", "rm -rf /"))
	line, err := hs.stdout.ReadString('\n')
	if err != nil {
		t.Fatalf("stdio reply: %v", err)
	}
	rep := mustReply(t, strings.TrimSuffix(line, "\n"))
	wantID(t, rep, "s1")
	wantDeny(t, rep)

	c := &http.Client{}
	r := hsDo(t, c, "POST", hs.base+"/ahp", hsToken, "application/json", interceptLine("h1", "rm -rf /"))
	c.CloseIdleConnections()
	if r.status != 200 {
		t.Fatalf("http status %d", r.status)
	}
	httpDeny := wantDeny(t, mustReply(t, r.body))
	stdioDeny := wantDeny(t, rep)
	if fmt.Sprint(httpDeny["extensions"]) != fmt.Sprint(stdioDeny["extensions"]) {
		t.Errorf("the bindings disagree: %v vs %v", httpDeny, stdioDeny)
	}

	hs.stdin.Close()
	if status := hs.waitExit(t); status != 0 {
		t.Errorf("exit status %d after stdin closed, want 0\nstderr:\n%s", status, hs.stderr.String())
	}
	if rest, _ := io.ReadAll(hs.stdout); len(rest) != 0 {
		t.Errorf("unexpected stdout: %q", rest)
	}
}

// TestHTTPServeTLS: HTTPS with --tls-cert/--tls-key, and a rotated
// certificate served without a restart.
func TestHTTPServeTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	cert1, key1, x1 := testkit.SelfSigned(t, 1)
	cert2, key2, x2 := testkit.SelfSigned(t, 2)
	testkit.WriteSecret(t, certFile, cert1)
	testkit.WriteSecret(t, keyFile, key1)
	hs := startHTTPServe(t, []string{"AHP_OPA_TOKEN=" + hsToken}, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(hs.base, "https://") {
		t.Fatalf("base URL %s is not HTTPS", hs.base)
	}
	pool := x509.NewCertPool()
	pool.AddCert(x1)
	pool.AddCert(x2)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	serial := func(id string) int64 {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.base+"/ahp", strings.NewReader(interceptLine(id, "ls")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+hsToken)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("HTTPS request: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		wantNoObjection(t, mustReply(t, string(b)))
		return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	if s := serial("x1"); s != 1 {
		t.Fatalf("serial %d, want 1", s)
	}
	testkit.WriteSecret(t, certFile, cert2)
	testkit.WriteSecret(t, keyFile, key2)
	if s := serial("x2"); s != 2 {
		t.Errorf("after rotating the files: serial %d, want 2", s)
	}
}

// TestHTTPServeLoad sends a bounded burst from several keep-alive
// connections and checks every answer: right id, right decision, valid
// wire format; the metrics then account for every decision.
func TestHTTPServeLoad(t *testing.T) {
	testkit.RequireLong(t)
	const workers, perWorker = 8, 40
	hs := startHTTPServe(t, []string{"AHP_OPA_TOKEN=" + hsToken}, "--http-queue-wait", "10s")
	var wg sync.WaitGroup
	errs := make(chan string, workers*perWorker)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
			defer c.CloseIdleConnections()
			for i := range perWorker {
				id := fmt.Sprintf("w%d-%d", w, i)
				command, deny := "ls -la", i%2 == 1
				if deny {
					command = "rm -rf /"
				}
				req, _ := http.NewRequest("POST", hs.base+"/ahp", strings.NewReader(interceptLine(id, command)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+hsToken)
				resp, err := c.Do(req)
				if err != nil {
					errs <- fmt.Sprintf("%s: %v", id, err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				r, probs := replyProblems(string(b), []string{"deny"})
				switch {
				case resp.StatusCode != 200 || r == nil || len(probs) > 0:
					errs <- fmt.Sprintf("%s: status %d %v %s", id, resp.StatusCode, probs, b)
				case r.idJSON != jsonText(id):
					errs <- fmt.Sprintf("%s: answered as %s", id, r.idJSON)
				case (r.denyEffect() != nil) != deny:
					errs <- fmt.Sprintf("%s: deny = %v, want %v: %s", id, r.denyEffect() != nil, deny, b)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	c := &http.Client{}
	defer c.CloseIdleConnections()
	m := hsDo(t, c, "GET", hs.base+"/metrics", hsToken, "", "").body
	for _, line := range []string{
		fmt.Sprintf(`ahp_opa_decisions_total{outcome="deny"} %d`, workers*perWorker/2),
		fmt.Sprintf(`ahp_opa_decisions_total{outcome="no_objection"} %d`, workers*perWorker/2),
		fmt.Sprintf(`ahp_opa_http_responses_total{status="200"} %d`, workers*perWorker),
	} {
		if !strings.Contains(m, "\n"+line+"\n") {
			t.Errorf("metrics lack %q", line)
		}
	}
}
