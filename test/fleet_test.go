package test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// The fleet test: three `serve --http` replicas behind haproxy
// (round-robin, health-checked) share session state through a real
// redis-server, and must answer as one process does.
const (
	fleetSessions = 200
	fleetEvents   = 50
	fleetReplicas = 3
	fleetSource   = "urn:uuid:5b7de29e-0000-4000-8000-00000000f1ee"
	fleetOutage   = 5 * time.Second
)

// needBinary returns the path of a system binary the fleet test drives,
// or skips (fails with AHP_REQUIRE_FLEET=1) when it is not installed.
func needBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("AHP_REQUIRE_FLEET") == "1" {
			t.Fatalf("%s is not installed and AHP_REQUIRE_FLEET=1 (apt-get install redis-server haproxy)", name)
		}
		t.Skipf("%s is not installed (apt-get install redis-server haproxy); set AHP_REQUIRE_FLEET=1 to fail instead", name)
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// child is a process the fleet test starts and stops by its pid.
type child struct {
	name string
	args []string
	env  []string
	log  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	// exitErr is how the last run ended (cmd.Wait).
	exitErr error
}

func (d *child) start(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(d.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(d.args[0], d.args[1:]...)
	cmd.Env = d.env
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", d.name, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		f.Close()
		d.mu.Lock()
		d.exitErr = err
		d.mu.Unlock()
		close(done)
	}()
	d.mu.Lock()
	d.cmd, d.done = cmd, done
	d.mu.Unlock()
}

// signal sends sig and, for a stopping signal, waits for the exit.
func (d *child) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("%s did not stop on %v", d.name, sig)
	}
}

// wait waits for the process to exit by itself.
func (d *child) wait(t *testing.T) {
	t.Helper()
	d.mu.Lock()
	done := d.done
	d.mu.Unlock()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not exit", d.name)
	}
}

// waitHTTP polls url until it answers 200: a process coming up has no
// other way to say it listens.
func waitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered 200: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitTCP(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listened: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fleetCommand is event j of session i: reads of a secret in even
// sessions, network transfers that the session policy then denies, and
// enough shell calls to reach its per-minute limit, so that most answers
// depend on what other replicas decided before.
func fleetCommand(i, j int) string {
	switch {
	case j == fleetEvents-1:
		return "curl -s https://example.com/last" // denied in secret sessions; its tool.after says executed
	case j%10 == 2 && i%2 == 0:
		return "cat /repo/.env"
	case j%5 == 4:
		return fmt.Sprintf("curl -s https://example.com/%d", j)
	default:
		return fmt.Sprintf("ls /repo/dir%d", j)
	}
}

func fleetEvent(i, j int) map[string]any {
	id := fmt.Sprintf("s%03d-e%02d", i, j)
	return map[string]any{
		"id": id, "source": fleetSource, "type": "tool.before", "time": "2026-01-02T03:04:05Z",
		"session": map[string]any{"id": fmt.Sprintf("sess-%03d", i), "cwd": "/repo", "workspaceRoots": []any{"/repo"}},
		"call":    map[string]any{"id": "call-" + id},
		"path":    "native",
		"tool": map[string]any{"name": "Bash", "kind": "shell", "origin": "native",
			"input": map[string]any{"command": fleetCommand(i, j)}},
	}
}

// afterOf is the tool.after a harness sends once the call is over: a
// denied call skipped, except the last call of a session, which the
// harness ran anyway (a "denied but executed" case).
func afterOf(ev map[string]any, denied, ranAnyway bool) map[string]any {
	after := map[string]any{}
	for k, v := range ev {
		after[k] = v
	}
	after["id"] = ev["id"].(string) + "-after"
	after["type"] = "tool.after"
	after["items"] = []any{}
	switch {
	case denied && !ranAnyway:
		after["outcome"] = "denied"
		after["execution"] = map[string]any{"status": "skipped", "reason": "policy"}
	default:
		after["outcome"] = "ok"
		after["execution"] = map[string]any{"status": "executed"}
	}
	return after
}

// fleetClient sends AHP messages over HTTP.
type fleetClient struct {
	http *http.Client
}

// intercept returns the answer as "allow", "deny CODE" or "error CODE",
// or an error when no answer came (connection refused, 502 while a
// replica restarts).
func (c *fleetClient) intercept(base string, ev map[string]any) (string, error) {
	body := encode(interceptMsg(ev["id"], ev, "deny"))
	resp, err := c.http.Post(base+"/ahp", "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	var r struct {
		Result *struct {
			Effects []struct {
				Code string `json:"code"`
			} `json:"effects"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return "", fmt.Errorf("answer %s: %w", b, err)
	}
	switch {
	case r.Error != nil:
		return fmt.Sprintf("error %d", r.Error.Code), nil
	case r.Result == nil:
		return "", fmt.Errorf("answer without result: %s", b)
	case len(r.Result.Effects) == 0:
		return "allow", nil
	default:
		return "deny " + r.Result.Effects[0].Code, nil
	}
}

func (c *fleetClient) observe(base string, ev map[string]any) error {
	resp, err := c.http.Post(base+"/ahp", "application/json", strings.NewReader(encode(observeMsg(ev))))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("observation: HTTP %d", resp.StatusCode)
	}
	return nil
}

// fleetRun is what one pass of the load saw.
type fleetRun struct {
	mu       sync.Mutex
	answers  map[string]string       // event id -> final answer
	retries  map[string][]string     // event id -> answers to the deliberate retries
	observed map[string]bool         // ids of tool.after notifications answered 202
	failures map[string]int          // sends that got no answer and were sent again, by why
	timing   map[string][2]time.Time // event id -> when its last send left and its answer came
	done     atomic.Int64            // events answered
}

// runFleetLoad plays every session concurrently through base, one event
// after the other as an agent would. retryTo, when set, names the
// replica a deliberate retry of event j of session i goes to.
func runFleetLoad(t *testing.T, base string, retryTo func(i, j int) string, run *fleetRun) *fleetRun {
	t.Helper()
	c := &fleetClient{http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	run.answers, run.retries, run.failures = map[string]string{}, map[string][]string{}, map[string]int{}
	run.observed, run.timing = map[string]bool{}, map[string][2]time.Time{}
	var wg sync.WaitGroup
	errs := make(chan error, fleetSessions)
	for i := range fleetSessions {
		wg.Go(func() {
			for j := range fleetEvents {
				ev := fleetEvent(i, j)
				id := ev["id"].(string)
				answer, err := "", error(nil)
				var sent time.Time
				for try := 0; ; try++ {
					// A harness retries an unanswered call with the same id (B-DUP-1).
					sent = time.Now()
					if answer, err = c.intercept(base, ev); err == nil && !strings.HasPrefix(answer, "error -32003") {
						break
					}
					if try == 50 {
						errs <- fmt.Errorf("%s: no answer after %d tries: %v %s", id, try, err, answer)
						return
					}
					why := answer
					if err != nil {
						why = "no answer"
						if strings.Contains(err.Error(), "HTTP ") {
							why = err.Error()[:8]
						}
					}
					run.mu.Lock()
					run.failures[why]++
					run.mu.Unlock()
					time.Sleep(100 * time.Millisecond)
				}
				run.mu.Lock()
				run.answers[id] = answer
				run.timing[id] = [2]time.Time{sent, time.Now()}
				run.mu.Unlock()
				run.done.Add(1)
				denied := strings.HasPrefix(answer, "deny")
				after := afterOf(ev, denied, j == fleetEvents-1)
				for try := 0; ; try++ {
					// A refused or unanswered notification is sent again,
					// perhaps to another replica, as a harness would.
					err := c.observe(base, after)
					if err == nil {
						run.mu.Lock()
						run.observed[after["id"].(string)] = true
						run.mu.Unlock()
						break
					}
					if try == 50 {
						errs <- fmt.Errorf("%s: observation never accepted", id)
						return
					}
					why := "observation: no answer"
					if strings.Contains(err.Error(), "HTTP ") {
						why = err.Error()
					}
					run.mu.Lock()
					run.failures[why]++
					run.mu.Unlock()
					time.Sleep(100 * time.Millisecond)
				}
				// The retry of the previous event goes, on purpose, to
				// another replica than the load balancer picked.
				if retryTo != nil && j > 0 && j%7 == 0 {
					prev := fleetEvent(i, j-1)
					for try := 0; try < 20; try++ {
						again, err := c.intercept(retryTo(i, j-1), prev)
						if err != nil || strings.HasPrefix(again, "error -32003") {
							time.Sleep(50 * time.Millisecond) // a replica restarting, or all its slots busy
							continue
						}
						run.mu.Lock()
						run.retries[prev["id"].(string)] = append(run.retries[prev["id"].(string)], again)
						run.mu.Unlock()
						break
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return run
}

// auditRecords reads the decision, observation and anomaly records of
// the audit logs named.
func auditRecords(t *testing.T, paths ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<16), 1<<22)
		for sc.Scan() {
			var r map[string]any
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				// kill -9 can cut the last line; the server cuts it at restart.
				continue
			}
			r["_log"] = filepath.Base(p)
			out = append(out, r)
		}
		f.Close()
	}
	return out
}

// collector is an OPA-compatible decision-log service.
type collector struct {
	mu     sync.Mutex
	events map[string]int // event id -> times received
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var batch []struct {
		Result struct {
			EventID string `json:"event_id"`
		} `json:"result"`
	}
	if err := json.NewDecoder(zr).Decode(&batch); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, e := range batch {
		c.events[e.Result.EventID]++
	}
	c.mu.Unlock()
}

func TestFleet(t *testing.T) {
	testkit.RequireLong(t)
	if raceEnabled {
		t.Skip("the fleet test measures a fleet, not races: .ci/run runs it without -race")
	}
	redisBin, haproxyBin := needBinary(t, "redis-server"), needBinary(t, "haproxy")
	dir := t.TempDir()
	logLevel := "warn"
	if keep := os.Getenv("AHP_FLEET_KEEP"); keep != "" {
		// The replicas' logs (at info: starts, activations, the store's
		// state) and audit logs of a failed run, to read after it (the
		// children are stopped by then: cleanups run last first).
		logLevel = "info"
		t.Cleanup(func() {
			if t.Failed() {
				if err := os.CopyFS(keep, os.DirFS(dir)); err != nil {
					t.Logf("keeping the fleet's files in %s: %v", keep, err)
				}
			}
		})
	}
	policy, err := filepath.Abs("../examples/session")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()

	// The reference: one process, session state in its memory.
	ref := startHTTPServe(t, nil, "--policy", policy, "--eval-timeout", "5s")
	want := runFleetLoad(t, ref.base, nil, &fleetRun{})
	ref.stdin.Close()
	_ = ref.cmd.Process.Signal(syscall.SIGTERM)
	ref.waitExit(t)
	t.Logf("reference run: %d answers in %s", len(want.answers), time.Since(start).Round(time.Millisecond))

	// The fleet.
	redisPort := freePort(t)
	redisAddr := fmt.Sprintf("127.0.0.1:%d", redisPort)
	redis := &child{name: "redis-server", log: filepath.Join(dir, "redis.log"), args: []string{redisBin,
		"--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}}
	redis.start(t)
	t.Cleanup(func() { redis.signal(t, syscall.SIGKILL) })
	waitTCP(t, redisAddr)

	logs := &collector{events: map[string]int{}}
	logSrv := httptest.NewServer(logs)
	t.Cleanup(logSrv.Close)

	// The replicas take the policy from a bundle server, as a fleet does.
	rego, err := os.ReadFile(filepath.Join(policy, "session.rego"))
	if err != nil {
		t.Fatal(err)
	}
	bundles := &reloadServer{}
	bundles.publish(t, "fleet-1", string(rego))
	bundleSrv := httptest.NewServer(bundles)
	t.Cleanup(bundleSrv.Close)

	replicas := make([]*child, fleetReplicas)
	ports := make([]int, fleetReplicas)
	var auditLogs []string
	for k := range replicas {
		ports[k] = freePort(t)
		cfg := filepath.Join(dir, fmt.Sprintf("replica%d.yaml", k))
		audit := filepath.Join(dir, fmt.Sprintf("audit%d.jsonl", k))
		auditLogs = append(auditLogs, audit)
		yaml := fmt.Sprintf(`http: 127.0.0.1:%d
log_level: %s
log_format: json
eval_timeout: 5s
audit:
  file:
    path: %q
  required: true
state:
  store: redis
  url: redis://%s/0
  timeout: 50ms
services:
  logs:
    url: %s
  bundles:
    url: %s
    credentials:
      bearer:
        token: reload-token
bundles:
  session:
    service: bundles
    resource: bundles/session.tar.gz
decision_logs:
  service: logs
  reporting:
    min_delay_seconds: 1
`, ports[k], logLevel, audit, redisAddr, logSrv.URL, bundleSrv.URL)
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		replicas[k] = &child{name: fmt.Sprintf("replica %d", k), log: filepath.Join(dir, fmt.Sprintf("replica%d.log", k)),
			args: []string{binPath, "serve", "--config", cfg}, env: append(childEnv(), "GOMAXPROCS=1")}
		replicas[k].start(t)
		t.Cleanup(func() { replicas[k].signal(t, syscall.SIGKILL) })
	}
	for _, p := range ports {
		waitHTTP(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", p))
	}

	lbPort := freePort(t)
	lbCfg := filepath.Join(dir, "haproxy.cfg")
	var servers strings.Builder
	for k, p := range ports {
		fmt.Fprintf(&servers, "    server r%d 127.0.0.1:%d check inter 200ms fall 1 rise 1\n", k, p)
	}
	haproxyConf := fmt.Sprintf(`global
    maxconn 4096
defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch
    retry-on conn-failure empty-response response-timeout
frontend ahp
    bind 127.0.0.1:%d
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /readyz
%s`, lbPort, servers.String())
	if err := os.WriteFile(lbCfg, []byte(haproxyConf), 0o600); err != nil {
		t.Fatal(err)
	}
	lb := &child{name: "haproxy", log: filepath.Join(dir, "haproxy.log"), args: []string{haproxyBin, "-db", "-f", lbCfg}}
	lb.start(t)
	t.Cleanup(func() { lb.signal(t, syscall.SIGKILL) })
	base := fmt.Sprintf("http://127.0.0.1:%d", lbPort)
	waitHTTP(t, base+"/readyz")

	// Faults, driven by the progress of the load: kill -9 a replica and
	// restart it; stop Redis for fleetOutage and start it again.
	var (
		run      = &fleetRun{}
		faults   sync.WaitGroup
		killedAt time.Time
		// termAt and exitedAt frame the rolling restart's SIGTERM.
		termAt, exitedAt time.Time
		outage           [2]time.Time

		healthDuringOutage, readyDuringOutage string
		drained                               error
	)
	total := int64(fleetSessions * fleetEvents)
	faults.Go(func() {
		r := run
		waitProgress(r, total/4)
		killedAt = time.Now()
		replicas[1].signal(t, syscall.SIGKILL)
		time.Sleep(500 * time.Millisecond) // the load balancer notices and routes around it
		replicas[1].start(t)
		waitProgress(r, total/2)
		outage[0] = time.Now()
		// SHUTDOWN SAVE: the server goes away (connections drop, clients
		// must reconnect) and comes back with what it held.
		if out, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", strconv.Itoa(redisPort), "shutdown", "save").CombinedOutput(); err != nil && len(out) > 0 {
			t.Logf("redis-cli shutdown: %v %s", err, out)
		}
		redis.wait(t)
		time.Sleep(fleetOutage / 2)
		healthDuringOutage = probe(fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[0]))
		readyDuringOutage = probe(fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[0]))
		time.Sleep(fleetOutage / 2)
		redis.start(t)
		waitTCP(t, redisAddr)
		outage[1] = time.Now()
		// A rolling restart: SIGTERM drains the replica (it stops
		// accepting, so haproxy's check takes it out and a refused
		// connection is sent to another) and it exits 0. The retries
		// sent to it directly reach the new process at once, often before
		// its bundle is active.
		waitProgress(r, total*3/4)
		termAt = time.Now()
		replicas[2].signal(t, syscall.SIGTERM)
		replicas[2].mu.Lock()
		drained = replicas[2].exitErr
		replicas[2].mu.Unlock()
		exitedAt = time.Now()
		replicas[2].start(t)
	})
	retryTo := func(i, j int) string {
		return fmt.Sprintf("http://127.0.0.1:%d", ports[(i+j+1)%fleetReplicas])
	}
	loadStart := time.Now()
	got := runFleetLoad(t, base, retryTo, run)
	loadTime := time.Since(loadStart)
	faults.Wait()

	// Every replica has written its outage backlog by now: none is behind
	// (ahp_opa_state_behind). The facts reads judged stale while they
	// wrote it, after Redis came back (ahp_opa_state_behind_reads_total),
	// are reported: the drain takes tens of milliseconds, so a run may
	// count none.
	var behindReads []int
	for k, p := range ports {
		text := probe(fmt.Sprintf("http://127.0.0.1:%d/metrics", p)) + "\n"
		if !strings.Contains(text, "\nahp_opa_state_behind 0\n") {
			t.Errorf("replica %d after the load: want ahp_opa_state_behind 0 in its metrics", k)
		}
		_, after, _ := strings.Cut(text, "\nahp_opa_state_behind_reads_total ")
		n, _ := strconv.Atoi(strings.SplitN(after, "\n", 2)[0])
		behindReads = append(behindReads, n)
	}

	// Stop the fleet gracefully: what is queued is written and shipped.
	lb.signal(t, syscall.SIGTERM)
	for _, r := range replicas {
		r.signal(t, syscall.SIGTERM)
	}

	recs := auditRecords(t, auditLogs...)
	decided := map[string][]map[string]any{}
	stale := map[string]bool{}
	anomalies := map[string]bool{}
	observedIDs := map[string]bool{}
	for _, r := range recs {
		id, _ := r["event_id"].(string)
		switch r["kind"] {
		case "decision":
			decided[id] = append(decided[id], r)
			if r["stale"] == true {
				stale[id] = true
			}
		case "observation":
			observedIDs[id] = true // a retry may have landed on another replica too
		case "anomaly":
			anomalies[r["decision_event_id"].(string)] = true
		}
	}

	if drained != nil {
		t.Errorf("replica 2 stopped by SIGTERM under load: %v, want exit 0 after draining", drained)
	}
	// The outage shows in the probes, degraded but not down: taking every
	// replica out of the balancer would stop all decisions.
	for _, p := range []string{healthDuringOutage, readyDuringOutage} {
		if !strings.HasPrefix(p, "200 ") || !strings.Contains(p, "degraded") || !strings.Contains(p, "state store") {
			t.Errorf("probe while Redis was down: %q, want 200 naming the state store as degraded", p)
		}
	}
	// Every replica decided with the bundle server's policy (an error
	// answer, such as -32003 before a restarted replica has its bundle,
	// was decided by no policy).
	for _, r := range recs {
		if r["kind"] == "decision" && r["decision"] != "error" && r["revision"] != "fleet-1" {
			t.Errorf("a decision of %s has revision %v, want the bundle's fleet-1", r["_log"], r["revision"])
			break
		}
	}

	// Answers equal the reference, except stale ones and, within their
	// sessions, what a stale answer changed afterwards. A retry decided
	// again, stale, is such an answer too: when it differs from the first
	// one, its facts differ (a call the first answer denied is counted),
	// from the event after the next on (the retry of event j-1 is sent
	// after event j).
	staleRetryFrom := map[string]int{} // session -> first event a stale retry's facts may change
	for id, answers := range got.retries {
		if !stale[id] {
			continue
		}
		for _, a := range answers {
			if a == got.answers[id] {
				continue
			}
			session, j := id[:len("s000")], 0
			fmt.Sscanf(id[len("s000-e"):], "%d", &j)
			if from, ok := staleRetryFrom[session]; !ok || j+2 < from {
				staleRetryFrom[session] = j + 2
			}
		}
	}
	var mismatches, staleCount, followStale int
	affected := map[string]bool{} // sessions whose facts a stale answer changed
	for i := range fleetSessions {
		session := fmt.Sprintf("s%03d", i)
		for j := range fleetEvents {
			id := fmt.Sprintf("%s-e%02d", session, j)
			g, w := got.answers[id], want.answers[id]
			if from, ok := staleRetryFrom[session]; ok && j >= from {
				affected[session] = true
			}
			switch {
			case stale[id]:
				staleCount++
				if g != w {
					affected[session] = true
				}
			case g == w:
			case affected[session]:
				followStale++
			default:
				mismatches++
				if mismatches <= 10 {
					t.Errorf("event %s: fleet answered %q, the reference %q (decided by %v); session: %s", id, g, w, logsOf(decided[id]),
						sessionTrail(recs, fmt.Sprintf("sess-%03d", i), got, trailMarks{killedAt, outage, termAt, exitedAt}))
				}
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d answers differ from the reference run", mismatches)
	}
	if staleCount == 0 {
		t.Error("no decision was marked stale although Redis was stopped for 5s")
	}

	// Every deliberate retry got the first answer, unless the replica it
	// reached could not read the store: it then decided again, stale.
	var retried, staleRetries int
	for id, answers := range got.retries {
		for _, a := range answers {
			retried++
			if a == got.answers[id] {
				continue
			}
			if stale[id] {
				staleRetries++
				t.Logf("stale retry of %s answered %q, first answer %q, reference %q", id, a, got.answers[id], want.answers[id])
				continue
			}
			t.Errorf("retry of %s on another replica answered %q, first answer %q; decisions: %s", id, a, got.answers[id],
				sessionTrail(decided[id], decided[id][0]["session_id"].(string), got, trailMarks{killedAt, outage, termAt, exitedAt}))
		}
	}
	if retried < fleetSessions*(fleetEvents/7)/2 {
		t.Errorf("only %d retries were answered", retried)
	}

	// Denied but executed: the last call of every secret session.
	var wantAnomalies, missingAnomalies int
	for i := 0; i < fleetSessions; i += 2 {
		id := fmt.Sprintf("s%03d-e%02d", i, fleetEvents-1)
		if !strings.HasPrefix(got.answers[id], "deny") {
			continue
		}
		wantAnomalies++
		if !anomalies[id] {
			missingAnomalies++
		}
	}
	if wantAnomalies == 0 || missingAnomalies > 0 {
		t.Errorf("anomaly records: %d of %d denied-but-executed calls missing", missingAnomalies, wantAnomalies)
	}

	// No audit record lost: audit.required writes a decision's record
	// before its answer, so every answer has one in some replica's log;
	// every decision reached the collector or a log.
	var unrecorded int
	for id := range got.answers {
		if len(decided[id]) == 0 && logs.events[id] == 0 {
			unrecorded++
			if unrecorded <= 5 {
				t.Errorf("event %s was answered but no audit record or shipped log has it", id)
			}
		}
	}
	// Nor is an observation's: with audit.required a replica answers 202
	// only once its record is written, so a kill -9 loses none that was
	// acknowledged.
	var unobserved int
	for id := range got.observed {
		if !observedIDs[id] {
			unobserved++
			if unobserved <= 5 {
				t.Errorf("observation %s was answered 202 but no replica's audit log has it", id)
			}
		}
	}
	if unobserved > 0 {
		t.Errorf("%d of %d acknowledged observations have no audit record", unobserved, len(got.observed))
	}
	var shipped int
	logs.mu.Lock()
	for id := range got.answers {
		if logs.events[id] > 0 {
			shipped++
		}
	}
	logs.mu.Unlock()
	if shipped < len(got.answers)*9/10 {
		t.Errorf("the collector received %d of %d decisions", shipped, len(got.answers))
	}

	t.Logf("fleet: %d answers in %s (%.0f decisions/s with observations and retries), sends sent again: %v",
		len(got.answers), loadTime.Round(time.Millisecond), float64(len(got.answers))/loadTime.Seconds(), got.failures)
	t.Logf("stale: %d decisions (Redis stopped %s..%s), %d later answers in their sessions changed by them",
		staleCount, outage[0].Sub(loadStart).Round(time.Millisecond), outage[1].Sub(loadStart).Round(time.Millisecond), followStale)
	t.Logf("facts reads judged stale while a replica was behind, by replica: %v (replica 2 restarted after the outage)", behindReads)
	t.Logf("retries: %d answered alike, %d decided again while the store was unreachable", retried-staleRetries, staleRetries)
	t.Logf("replica 1 killed at %s; %d retries; %d anomalies; %d observations recorded of %d acknowledged; %d decisions shipped",
		killedAt.Sub(loadStart).Round(time.Millisecond), retried, wantAnomalies, len(observedIDs), len(got.observed), shipped)
	t.Logf("total %s", time.Since(start).Round(time.Millisecond))
}

func logsOf(recs []map[string]any) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprint(r["_log"], " stale=", r["stale"] == true))
	}
	return out
}

// trailMarks are the faults' times, which a session's trail is told
// against.
type trailMarks struct {
	killed       time.Time
	outage       [2]time.Time
	term, exited time.Time
}

// sessionTrail lists a session's records (decisions and observations):
// event, log, kind, time from the kill, the outage and the SIGTERM,
// stale, answer, and for decisions when the client sent and got it. It
// explains a mismatch.
func sessionTrail(recs []map[string]any, session string, run *fleetRun, m trailMarks) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n  SIGTERM exit after %dms", m.exited.Sub(m.term).Milliseconds())
	for _, r := range recs {
		if (r["kind"] != "decision" && r["kind"] != "observation") || r["session_id"] != session {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, r["time"].(string))
		fmt.Fprintf(&b, "\n  %s %s %s kill%+dms outage%+dms term%+dms stale=%v %v %v", r["event_id"], r["_log"], r["kind"],
			at.Sub(m.killed).Milliseconds(), at.Sub(m.outage[0]).Milliseconds(), at.Sub(m.term).Milliseconds(),
			r["stale"] == true, r["decision"], r["codes"])
		if tm, ok := run.timing[r["event_id"].(string)]; ok && r["kind"] == "decision" {
			fmt.Fprintf(&b, " client sent term%+.1fms answered term%+.1fms", float64(tm[0].Sub(m.term).Microseconds())/1000,
				float64(tm[1].Sub(m.term).Microseconds())/1000)
		}
	}
	return b.String()
}

// probe returns a probe's status and body, "status body".
func probe(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

func waitProgress(r *fleetRun, n int64) {
	for r.done.Load() < n {
		time.Sleep(20 * time.Millisecond)
	}
}
