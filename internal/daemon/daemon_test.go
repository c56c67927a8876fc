package daemon

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// fakeDaemon answers on p.Socket as a daemon of version would, echoing
// the agent and payload (tagged "d", "(open)" when failing open) with
// stderr "note" and exit 3, until ctx ends. The real daemon is in package
// server, which this package must not import.
func fakeDaemon(t *testing.T, ctx context.Context, p Paths, version string) {
	t.Helper()
	fakeDaemonFunc(t, ctx, p, version, func(req Request) adapters.Answer {
		tag := "d"
		if req.FailOpen {
			tag += "(open)"
		}
		return adapters.Answer{Stdout: append([]byte(tag+":"+req.Agent+":"), req.Payload...), Stderr: "note", Exit: 3}
	})
}

// fakeDaemonFunc serves p, answering each request of the right version
// with answer.
func fakeDaemonFunc(t *testing.T, ctx context.Context, p Paths, version string, answer func(Request) adapters.Answer) {
	t.Helper()
	ln, err := net.Listen("unix", p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	context.AfterFunc(ctx, func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				got, req, err := ReadRequest(bufio.NewReader(c))
				switch {
				case err != nil:
				case got != version:
					WriteResponse(c, StatusVersion, adapters.Answer{Stderr: version})
				default:
					WriteResponse(c, StatusOK, answer(req))
				}
			}()
		}
	}()
}

// TestClientRoundTrip: the client's own dialling reaches a daemon, passes
// the request and reads the answer; a socket nobody listens on is an error.
func TestClientRoundTrip(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := testPaths(t)
	fakeDaemon(t, ctx, p, "v1")
	ans, err := (&Client{Paths: p, Version: "v1"}).Hook(ctx, Request{Agent: "codex", Payload: []byte(`{"x":1}`), FailOpen: true})
	if err != nil || string(ans.Stdout) != `d(open):codex:{"x":1}` || ans.Stderr != "note" || ans.Exit != 3 {
		t.Fatalf("answer %+v, %v", ans, err)
	}
	if _, err := (&Client{Paths: p, Version: "v2"}).Hook(ctx, Request{Agent: "codex"}); !errors.Is(err, ErrVersion) {
		t.Errorf("other version: %v, want ErrVersion", err)
	}
	if _, err := (&Client{Paths: testPaths(t), Version: "v1"}).Hook(ctx, Request{Agent: "codex"}); err == nil {
		t.Error("no daemon: want an error")
	}
}

func testPaths(t *testing.T) Paths {
	t.Helper()
	return PathsFor(t.TempDir(), []string{"test"})
}
func TestStartedDaemonThatDiesIsReported(t *testing.T) {
	p := testPaths(t)
	c := &Client{Paths: p, Version: "v1", Start: func(context.Context) (<-chan error, error) {
		ch := make(chan error, 1)
		ch <- errors.New("exit status 1")
		return ch, nil
	}}
	if _, err := c.Hook(t.Context(), Request{Agent: "codex", Payload: nil}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Hook: %v, want ErrNotStarted", err)
	}
}

func TestRuntimeDir(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", base)
	dir, err := RuntimeDir()
	if err != nil || dir != filepath.Join(base, "ahp-opa") {
		t.Fatalf("RuntimeDir = %q, %v", dir, err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RuntimeDir(); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("open runtime dir: %v, want ErrUnsafeDir", err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o755 {
		t.Errorf("RuntimeDir changed the mode of a directory it refused")
	}
}

func TestWireRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	req := request{Version: "v9 abc", Request: Request{Agent: "copilot", Payload: []byte(`{"toolName":"bash"}`), FailOpen: true}}
	if err := writeRequest(&buf, req); err != nil {
		t.Fatal(err)
	}
	got, err := readRequest(bufio.NewReader(&buf))
	if err != nil || got.Version != req.Version || got.Agent != req.Agent || !got.FailOpen || !bytes.Equal(got.Payload, req.Payload) {
		t.Errorf("request round trip: %+v, %v", got, err)
	}
	resp := response{Status: StatusOK, Answer: adapters.Answer{Stdout: []byte("{}"), Stderr: "s", Exit: -1}}
	if err := writeResponse(&buf, resp); err != nil {
		t.Fatal(err)
	}
	gr, err := readResponse(bufio.NewReader(&buf))
	if err != nil || gr.Status != resp.Status || string(gr.Answer.Stdout) != "{}" || gr.Answer.Stderr != "s" || gr.Answer.Exit != -1 {
		t.Errorf("response round trip: %+v, %v", gr, err)
	}
}

func TestWireRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":           "",
		"bad magic":       "XXXX",
		"short version":   "AHD1\x00\x00\x05ab",
		"unknown flags":   "AHD1\x80",
		"huge payload":    "AHD1\x00\x00\x00\x00\x00\xff\xff\xff\xff",
		"truncated agent": "AHD1\x00\x00\x00\x00\x09co",
	} {
		if _, err := readRequest(bufio.NewReader(bytes.NewReader([]byte(in)))); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v, want ErrFrame", name, err)
		}
	}
	if _, err := readResponse(bufio.NewReader(bytes.NewReader([]byte("AHD1\x07")))); !errors.Is(err, ErrFrame) {
		t.Errorf("unknown status: %v, want ErrFrame", err)
	}
}

func FuzzReadRequest(f *testing.F) {
	var buf bytes.Buffer
	writeRequest(&buf, request{Version: "v1", Request: Request{Agent: "codex", Payload: []byte(`{}`)}})
	f.Add(buf.Bytes())
	buf.Reset()
	writeRequest(&buf, request{Version: "v1", Request: Request{Agent: AgentAHP, Payload: []byte("{\"id\":1}\n")}})
	f.Add(buf.Bytes())
	f.Add([]byte("AHD1"))
	f.Fuzz(func(t *testing.T, in []byte) {
		req, err := readRequest(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := writeRequest(&out, req); err != nil {
			t.Fatalf("a decoded request does not encode: %v", err)
		}
		if !bytes.HasPrefix(in, out.Bytes()) {
			t.Fatalf("re-encoding differs: %q vs %q", out.Bytes(), in)
		}
	})
}

func FuzzReadResponse(f *testing.F) {
	var buf bytes.Buffer
	writeResponse(&buf, response{Status: StatusVersion, Answer: adapters.Answer{Stdout: []byte("{}"), Stderr: "v2", Exit: 2}})
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		resp, err := readResponse(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := writeResponse(&out, resp); err != nil {
			t.Fatalf("a decoded response does not encode: %v", err)
		}
		if !bytes.HasPrefix(in, out.Bytes()) {
			t.Fatalf("re-encoding differs: %q vs %q", out.Bytes(), in)
		}
	})
}

// TestRotateLog: daemon.log past the cap becomes daemon.log.1, replacing
// the one before; a small, absent or special file is left alone.
func TestRotateLog(t *testing.T) {
	for _, tc := range []struct {
		name     string
		content  string // "" : absent
		log, one string // afterwards ("-": absent)
	}{
		{"absent", "", "-", "old"},
		{"small", "abc", "abc", "old"},
		{"at the cap", "abcd", "abcd", "old"},
		{"over the cap", "abcde", "-", "abcde"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "daemon.log")
			os.WriteFile(p+".1", []byte("old"), 0o600)
			if tc.content != "" {
				os.WriteFile(p, []byte(tc.content), 0o600)
			}
			if err := RotateLog(p, 4); err != nil {
				t.Fatal(err)
			}
			read := func(p string) string {
				b, err := os.ReadFile(p)
				if err != nil {
					return "-"
				}
				return string(b)
			}
			if read(p) != tc.log || read(p+".1") != tc.one {
				t.Errorf("daemon.log %q, .1 %q; want %q, %q", read(p), read(p+".1"), tc.log, tc.one)
			}
		})
	}
}
