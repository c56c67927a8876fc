package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

const oneRecord = `{"time":"2026-01-02T03:04:05Z","kind":"decision","event_id":"old","decision":"allow"}` + "\n"

// TestOpenFileRefusesWhatIsNotAnAuditLog: ahp-opa never renames, truncates
// or replaces what the user points it at unless it is an audit log. Each
// refusal names the path and the reason, at startup, and the tree is left
// exactly as it was.
func TestOpenFileRefusesWhatIsNotAnAuditLog(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string // DIR stands for the directory
		is    error
	}{
		{"a directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "logs")
			must(t, os.Mkdir(p, 0o755))
			must(t, os.WriteFile(filepath.Join(p, "keep.txt"), []byte("precious"), 0o644))
			return p
		}, "audit log DIR/logs: not an ahp-opa audit log: it is a directory", ErrNotAuditLog},
		{"a FIFO", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			must(t, syscall.Mkfifo(p, 0o600))
			return p
		}, "audit log DIR/fifo: not an ahp-opa audit log: it is a named pipe (FIFO)", ErrNotAuditLog},
		{"a symlink to a directory", func(t *testing.T, dir string) string {
			must(t, os.Mkdir(filepath.Join(dir, "real"), 0o755))
			p := filepath.Join(dir, "link")
			must(t, os.Symlink(filepath.Join(dir, "real"), p))
			return p
		}, "audit log DIR/real: not an ahp-opa audit log: it is a directory", ErrNotAuditLog},
		{"a symlink to a FIFO", func(t *testing.T, dir string) string {
			must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
			p := filepath.Join(dir, "link")
			must(t, os.Symlink(filepath.Join(dir, "fifo"), p))
			return p
		}, "audit log DIR/fifo: not an ahp-opa audit log: it is a named pipe (FIFO)", ErrNotAuditLog},
		{"a file of something else", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "notes.txt")
			must(t, os.WriteFile(p, []byte("my notes\nmore notes\n"), 0o644))
			return p
		}, "audit log DIR/notes.txt: not an ahp-opa audit log: its first line is not an audit record", ErrNotAuditLog},
		{"JSON that is not an audit record", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "app.jsonl")
			must(t, os.WriteFile(p, []byte(`{"time":"2026-01-02T03:04:05Z","level":"info"}`+"\n"), 0o644))
			return p
		}, "audit log DIR/app.jsonl: not an ahp-opa audit log: its first line is not an audit record", ErrNotAuditLog},
		{"one long line with no end", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "blob")
			must(t, os.WriteFile(p, bytes.Repeat([]byte("x"), auditHead+10), 0o644))
			return p
		}, "audit log DIR/blob: not an ahp-opa audit log: its first line is not an audit record", ErrNotAuditLog},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.setup(t, dir)
			before := testkit.SnapshotTree(t, dir)
			f, err := OpenFile(FileConfig{Path: path, MaxSizeMB: 1})
			want := strings.ReplaceAll(c.want, "DIR", dir)
			if err == nil {
				f.Close()
			}
			if err == nil || err.Error() != want || !errors.Is(err, c.is) {
				t.Errorf("OpenFile = %v\nwant %s", err, want)
			}
			testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir))
		})
	}
	t.Run("a device", func(t *testing.T) {
		_, err := OpenFile(FileConfig{Path: "/dev/null"})
		if want := "audit log /dev/null: not an ahp-opa audit log: it is a character device"; err == nil || err.Error() != want {
			t.Errorf("OpenFile = %v, want %s", err, want)
		}
	})
}

// TestOpenFileAccepts: a new file, an empty one, an audit log, and a link
// to one are written; only the log itself changes.
func TestOpenFileAccepts(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T, dir string) string
		changed string // the one entry allowed to change
		want    int    // records afterwards
	}{
		{"new file", func(t *testing.T, dir string) string { return filepath.Join(dir, "a.jsonl") }, "a.jsonl", 1},
		{"empty file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "a.jsonl")
			must(t, os.WriteFile(p, nil, 0o600))
			return p
		}, "a.jsonl", 1},
		{"existing audit log", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "a.jsonl")
			must(t, os.WriteFile(p, []byte(oneRecord), 0o600))
			return p
		}, "a.jsonl", 2},
		{"audit log cut mid-line by a crash", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "a.jsonl")
			must(t, os.WriteFile(p, []byte(oneRecord+`{"time":"2026-01`), 0o600))
			return p
		}, "a.jsonl", -1},
		{"symlink to an audit log", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "a.jsonl")
			must(t, os.WriteFile(p, []byte(oneRecord), 0o600))
			must(t, os.Symlink(p, filepath.Join(dir, "link")))
			return filepath.Join(dir, "link")
		}, "a.jsonl", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.setup(t, dir)
			before := testkit.SnapshotTree(t, dir)
			f, err := OpenFile(FileConfig{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			must(t, f.Write(&Record{Kind: KindDecision, EventID: "new"}))
			must(t, f.Close())
			testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir), c.changed)
			b, _ := os.ReadFile(filepath.Join(dir, c.changed))
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if c.want < 0 { // the crash's partial line stands alone; the new record is whole
				if len(lines) != 3 || !strings.Contains(lines[2], `"event_id":"new"`) {
					t.Errorf("log = %q, want the old record, the partial line, the new record", b)
				}
				return
			}
			if recs := readRecords(t, filepath.Join(dir, c.changed)); len(recs) != c.want || recs[len(recs)-1].EventID != "new" {
				t.Errorf("records = %+v, want %d ending with the new one", recs, c.want)
			}
		})
	}
}

// TestRotationTouchesOnlyItsOwnFile: when the path is replaced between
// writes (by a directory, by another file), the next write and a rotation
// leave the newcomer alone.
func TestRotationTouchesOnlyItsOwnFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	f, err := OpenFile(FileConfig{Path: path, MaxSizeMB: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	must(t, f.Write(&Record{Kind: KindDecision, EventID: "1"}))
	// Someone moves the log away and puts a directory in its place.
	must(t, os.Rename(path, path+".moved"))
	must(t, os.Mkdir(path, 0o755))
	must(t, f.Reopen())
	before := testkit.SnapshotTree(t, dir)
	err = f.Write(&Record{Kind: KindDecision, EventID: "2"})
	if want := "audit log " + path + ": not an ahp-opa audit log: it is a directory"; err == nil || err.Error() != want {
		t.Errorf("Write = %v, want %s", err, want)
	}
	testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir))

	// Without Reopen, a rotation due while the path names another file
	// renames nothing and opens… nothing it does not own.
	must(t, os.Remove(path))
	g, err := OpenFile(FileConfig{Path: path, MaxSizeMB: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	big := strings.Repeat("x", 600<<10)
	must(t, g.Write(&Record{Kind: KindDecision, EventID: "a", Reason: big}))
	must(t, os.Rename(path, path+".theirs"))
	must(t, os.WriteFile(path, []byte("someone else's file\n"), 0o644))
	before = testkit.SnapshotTree(t, dir)
	err = g.Write(&Record{Kind: KindDecision, EventID: "b", Reason: big}) // due to rotate
	if !errors.Is(err, ErrNotAuditLog) {
		t.Errorf("Write over a foreign file = %v, want ErrNotAuditLog", err)
	}
	testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir))
}

// TestFullDiskLeavesWholeLines runs a writer under a file-size limit, so
// that a record is cut part-way as on a full disk; the log must hold whole
// records only, and writing resumes once there is room again.
func TestFullDiskLeavesWholeLines(t *testing.T) {
	if path := os.Getenv("AUDIT_FSIZE_WRITER"); path != "" {
		os.Exit(writeUnderLimit(path))
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFullDiskLeavesWholeLines$")
	cmd.Env = append(os.Environ(), "AUDIT_FSIZE_WRITER="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("writer: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); !strings.Contains(got, "record 3 failed") || !strings.Contains(got, "file too large") {
		t.Errorf("writer said %q, want a write failure from the size limit", got)
	}
	recs := readRecords(t, path) // fails on any partial line
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.EventID)
	}
	if got := strings.Join(ids, ","); got != "0,1,2,after" {
		t.Errorf("records %s, want 0,1,2,after (3 whole, the cut one gone)", got)
	}
}

// writeUnderLimit writes 3000-byte records under a 10000-byte file-size
// limit: three fit, the fourth is cut part-way and fails.
func writeUnderLimit(path string) int {
	signal.Ignore(syscall.SIGXFSZ) // the write fails with EFBIG instead
	f, err := OpenFile(FileConfig{Path: path})
	if err != nil {
		fmt.Println(err)
		return 3
	}
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	lim := syscall.Rlimit{Cur: 10000, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println(err)
		return 3
	}
	reason := strings.Repeat("r", 2900)
	for i := range 4 {
		if err := f.Write(&Record{Kind: KindDecision, EventID: fmt.Sprint(i), Reason: reason}); err != nil {
			fmt.Println("record", i, "failed:", errors.Unwrap(err))
		}
	}
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	if err := f.Write(&Record{Kind: KindDecision, EventID: "after"}); err != nil {
		fmt.Println(err)
		return 3
	}
	return 0
}

// partialWriter accepts the first n bytes of a write and then fails, as
// a pipe whose reader left mid-record.
type partialWriter struct {
	bytes.Buffer
	n    int
	fail bool
}

func (p *partialWriter) Write(b []byte) (int, error) {
	if !p.fail {
		return p.Buffer.Write(b)
	}
	p.fail = false
	p.Buffer.Write(b[:p.n])
	return p.n, syscall.EPIPE
}

// TestStreamPartialWriteStandsAlone: a record cut by a failing reader is
// ended with a newline, so the next record is whole on its own line.
func TestStreamPartialWriteStandsAlone(t *testing.T) {
	w := &partialWriter{n: 10, fail: true}
	s := NewStream(w)
	if err := s.Write(&Record{Kind: KindDecision, EventID: "cut"}); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Write = %v, want EPIPE", err)
	}
	must(t, s.Write(&Record{Kind: KindDecision, EventID: "next"}))
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(lines) != 2 || len(lines[0]) != 10 || !strings.Contains(lines[1], `"event_id":"next"`) || !strings.HasPrefix(lines[1], "{") {
		t.Errorf("stream = %q, want the cut part alone, then a whole record", w.String())
	}
}

// TestClosedPipeKeepsDeciding: the audit stream's reader goes away (a real
// pipe, closed); decisions go on, the loss is counted, logged once and
// shown by Health; with audit.required the decision becomes an error.
func TestClosedPipeKeepsDeciding(t *testing.T) {
	for _, required := range []bool{false, true} {
		t.Run(fmt.Sprintf("required=%v", required), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			r.Close()
			var logs bytes.Buffer
			a, err := New(Config{Required: required}, NewStream(w), nil, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			ic := a.Interceptor(&fakeJudge{deny: true})
			for i := range 3 {
				res, err := ic.Intercept(context.Background(), newReq(fmt.Sprint("e", i), "Danger", "x"))
				if required {
					var je *transport.Error
					if !errors.As(err, &je) || je.Code != ahp.CodeBackendUnavailable ||
						!strings.Contains(je.Error(), "could not be written, and audit.required is set") {
						t.Fatalf("required: %+v, %v; want -32003 naming audit.required", res, err)
					}
					continue
				}
				if err != nil || len(res.Effects) != 1 {
					t.Fatalf("decision changed by a closed audit pipe: %+v %v", res, err)
				}
			}
			flush(t, a)
			if st := a.Stats(); st.WriteFailures != 3 {
				t.Errorf("write failures = %d, want 3", st.WriteFailures)
			}
			if n := strings.Count(logs.String(), "audit records are being lost"); n != 1 {
				t.Errorf("logged %d times, want once (rate-limited):\n%s", n, logs.String())
			}
			problem, fatal := a.Health()
			if !strings.Contains(problem, "broken pipe") || fatal != required {
				t.Errorf("Health = %q, %v; want the broken pipe, fatal=%v", problem, fatal, required)
			}
		})
	}
}

// TestHealthRecovers: once a write succeeds again, Health clears and the
// log says so.
func TestHealthRecovers(t *testing.T) {
	w := &memWriter{fail: errors.New("disk full")}
	var logs bytes.Buffer
	a, err := New(Config{}, w, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ic := a.Interceptor(&fakeJudge{})
	ic.Intercept(context.Background(), newReq("e1", "Bash", "ls"))
	flush(t, a)
	if p, _ := a.Health(); !strings.Contains(p, "disk full") {
		t.Fatalf("Health = %q while failing", p)
	}
	w.mu.Lock()
	w.fail = nil
	w.mu.Unlock()
	ic.Intercept(context.Background(), newReq("e2", "Bash", "ls"))
	flush(t, a)
	if p, _ := a.Health(); p != "" || !strings.Contains(logs.String(), "audit log writable again") {
		t.Errorf("Health = %q after recovery; logs:\n%s", p, logs.String())
	}
}

// TestSIGPIPEOnStdout: with SIGPIPE ignored, as serve does, writing audit
// records to a stdout whose reader is gone fails with EPIPE and the
// process lives on; without it the process dies (the behaviour before).
func TestSIGPIPEOnStdout(t *testing.T) {
	if mode := os.Getenv("AUDIT_STDOUT_WRITER"); mode != "" {
		if mode == "ignore" {
			signal.Ignore(syscall.SIGPIPE)
		}
		s := NewStream(os.Stdout)
		for i := range 3 {
			err := s.Write(&Record{Kind: KindDecision, EventID: fmt.Sprint(i)})
			fmt.Fprintln(os.Stderr, "write:", errors.Is(err, syscall.EPIPE))
		}
		fmt.Fprintln(os.Stderr, "alive")
		os.Exit(0)
	}
	for _, c := range []struct{ mode, want string }{
		{"ignore", "write: true\nwrite: true\nwrite: true\nalive\n"},
		{"default", ""},
	} {
		t.Run(c.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSIGPIPEOnStdout$")
			cmd.Env = append(os.Environ(), "AUDIT_STDOUT_WRITER="+c.mode)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // the reader is gone before the first record
			cmd.Stdout = w
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err = cmd.Run()
			w.Close()
			if c.mode == "default" {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGPIPE {
					t.Errorf("without ignoring SIGPIPE: %v, want death by SIGPIPE", err)
				}
				return
			}
			if err != nil || stderr.String() != c.want {
				t.Errorf("child: %v, stderr %q; want %q", err, stderr.String(), c.want)
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestObserveRouteStatus: over HTTP, an observation is acknowledged (202)
// only once its record is written when audit.required is set, and refused
// with 503 when it cannot be, so the sender may retry; without
// audit.required it is queued and acknowledged at once, whatever the sink.
func TestObserveRouteStatus(t *testing.T) {
	tests := []struct {
		required, failing bool
		want              int
	}{
		{false, false, http.StatusAccepted},
		{false, true, http.StatusAccepted},
		{true, false, http.StatusAccepted},
		{true, true, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("required=%v/failing=%v", tt.required, tt.failing), func(t *testing.T) {
			w := &memWriter{}
			if tt.failing {
				w.fail = errors.New("disk full")
			}
			a := newAuditor(t, Config{Required: tt.required}, w)
			srv := httptest.NewServer(&transport.HTTP{Server: &transport.Server{
				Interceptor: a.Interceptor(&fakeJudge{}), Observer: a.Observer()}})
			defer srv.Close()
			send := func() (int, string) {
				t.Helper()
				note := `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft",` +
					`"event":{"id":"o1","source":"urn:h","type":"tool.after","session":{"id":"s1"}}}}`
				resp, err := srv.Client().Post(srv.URL+"/ahp", "application/json", strings.NewReader(note))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			status, body := send()
			if status != tt.want {
				t.Fatalf("status %d %s, want %d", status, body, tt.want)
			}
			switch {
			case tt.required && !tt.failing:
				// No Flush: the 202 itself says the record is written.
				if got := w.kinds(); !slices.Equal(got, []string{"observation:o1"}) {
					t.Errorf("records at the 202: %v, want the observation's", got)
				}
			case tt.required && tt.failing:
				if !strings.Contains(body, "could not be written, and audit.required is set") || strings.Contains(body, "jsonrpc") {
					t.Errorf("503 body %s, want a JSON-RPC-free reason naming audit.required", body)
				}
				// The sink recovers: the sender's retry is recorded, not
				// taken for a duplicate of the delivery that was refused.
				w.mu.Lock()
				w.fail = nil
				w.mu.Unlock()
				if status, body := send(); status != http.StatusAccepted || !slices.Equal(w.kinds(), []string{"observation:o1"}) {
					t.Errorf("retry: %d %s, records %v; want 202 and the observation's record", status, body, w.kinds())
				}
			}
			flush(t, a)
			if st := a.Stats(); st.WriteFailures != map[bool]uint64{false: 0, true: 1}[tt.failing] {
				t.Errorf("write failures = %d", st.WriteFailures)
			}
		})
	}
}
