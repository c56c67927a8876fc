package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// ahpDaemon answers AHP lines as the real daemon's shape does: "d:" and the
// line for a request (a line holding "id"), nothing for the rest, and a
// failure (exit 1) for a line holding "down".
func ahpDaemon(req Request) adapters.Answer {
	line := strings.TrimRight(string(req.Payload), "\r\n")
	switch {
	case req.Agent != AgentAHP:
		return adapters.Answer{Stderr: "not ahp", Exit: 2}
	case strings.Contains(line, "down"):
		return adapters.Answer{Stderr: "policy p.rego failed to load", Exit: 1}
	case strings.Contains(line, "mute"): // a broken daemon: exit 0, no reply
		return adapters.Answer{}
	case strings.Contains(line, `"id"`):
		return adapters.Answer{Stdout: []byte("d:" + line + "\n")}
	}
	return adapters.Answer{}
}

// fakeServe is a fallback that answers "s:" and each line that holds an
// "id" (but not "drop"), and then exits with exitErr; with failStart it
// does not start.
func fakeServe(exitErr, failStart error) func(context.Context, io.Writer) (io.WriteCloser, func() error, error) {
	return func(_ context.Context, stdout io.Writer) (io.WriteCloser, func() error, error) {
		if failStart != nil {
			return nil, nil, failStart
		}
		pr, pw := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			br := bufio.NewReader(pr)
			for {
				line, err := br.ReadString('\n')
				if t := strings.TrimRight(line, "\r\n"); strings.Contains(t, `"id"`) && !strings.Contains(t, "drop") {
					io.WriteString(stdout, "s:"+t+"\n")
				}
				if err != nil {
					return
				}
			}
		}()
		return pw, func() error { <-done; return exitErr }, nil
	}
}

func TestAHPServe(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	up := testPaths(t)
	fakeDaemonFunc(t, ctx, up, "v1", ahpDaemon)
	clients := map[string]*Client{
		"up":   {Paths: up, Version: "v1"},
		"down": {Paths: testPaths(t), Version: "v1"}, // nothing listens, no starter
		"none": nil,
	}
	req := func(id string) string { return `{"id":` + id + `}` }
	const note = "the decision daemon is unavailable"
	crash := errors.New("exit status 1")
	for _, tc := range []struct {
		name        string
		daemon      string // up, down or none
		unavailable string
		fallback    func(context.Context, io.Writer) (io.WriteCloser, func() error, error)
		in          string
		out         string
		stderr      []string // substrings; nil: empty
		err         string   // substring; "": none
	}{
		{name: "daemon answers in order, nothing for a notification or a blank line", daemon: "up",
			in:  req(`"a"`) + "\n\n \r\n{\"n\":1}\n" + req("2") + "\r\n" + req(`"c"`),
			out: "d:" + req(`"a"`) + "\nd:" + req("2") + "\nd:" + req(`"c"`) + "\n"},
		{name: "nothing at all", daemon: "up", in: ""},
		{name: "daemon fails half way: the rest goes to serve", daemon: "up",
			in:     req(`"a"`) + "\n" + req(`"down"`) + "\n" + req(`"c"`) + "\n",
			out:    "d:" + req(`"a"`) + "\ns:" + req(`"down"`) + "\ns:" + req(`"c"`) + "\n",
			stderr: []string{note, "policy p.rego failed to load"}},
		{name: "daemon down", daemon: "down", in: req("1") + "\n", out: "s:" + req("1") + "\n",
			stderr: []string{note, "connect "}},
		{name: "daemon answers a request with nothing: serve answers it", daemon: "up",
			in: req(`"mute"`) + "\n", out: "s:" + req(`"mute"`) + "\n", stderr: []string{note, "no answer to a request"}},
		{name: "no daemon, said why", daemon: "none", unavailable: "runtime dir is open to others",
			in: req("1") + "\n", out: "s:" + req("1") + "\n", stderr: []string{note, "runtime dir is open to others"}},
		{name: "no daemon by choice: no note", daemon: "none", in: req("1") + "\n", out: "s:" + req("1") + "\n"},
		{name: "serve fails too: requests get -32003 with their id",
			daemon: "down", fallback: fakeServe(crash, errors.New("no ahp-opa")),
			in: req(`"x\u0041"`) + "\n" + req("12") + "\n",
			out: `{"jsonrpc":"2.0","id":"xA","error":{"code":-32003,"message":"Backend unavailable","data":{"reason":"neither the decision daemon nor 'ahp-opa serve --stdio' could answer (ahp-opa-hook's stderr says why)"}}}` + "\n" +
				`{"jsonrpc":"2.0","id":12,"error":{"code":-32003,"message":"Backend unavailable","data":{"reason":"neither the decision daemon nor 'ahp-opa serve --stdio' could answer (ahp-opa-hook's stderr says why)"}}}` + "\n",
			stderr: []string{note, "failed too: no ahp-opa"}},
		{name: "serve fails on a notification: an error, nothing written",
			daemon: "down", fallback: fakeServe(crash, errors.New("no ahp-opa")),
			in: "{\"n\":1}\n", stderr: []string{note, "failed too"}, err: "notification"},
		{name: "serve fails on garbage: an error, nothing written",
			daemon: "down", fallback: fakeServe(crash, errors.New("no ahp-opa")),
			in: "{\"id\":1,\n", stderr: []string{note, "failed too"}, err: "notification"},
		{name: "serve fails after answering every request: the answers stand",
			daemon: "down", fallback: fakeServe(crash, nil),
			in: req("1") + "\n", out: "s:" + req("1") + "\n", stderr: []string{note, "failed too: exit status 1"}},
		{name: "serve fails after answering some: an error",
			daemon: "down", fallback: fakeServe(crash, nil),
			in: req("1") + "\n" + req(`"drop"`) + "\n", out: "s:" + req("1") + "\n", stderr: []string{note, "failed too: exit status 1"},
			err: "after answering 1 of 2 requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &AHP{Daemon: clients[tc.daemon], Unavailable: tc.unavailable, Fallback: tc.fallback,
				Noted: filepath.Join(t.TempDir(), "noted")}
			if a.Fallback == nil {
				a.Fallback = fakeServe(nil, nil)
			}
			var out, stderr bytes.Buffer
			a.Stderr = &stderr
			err := a.Serve(ctx, strings.NewReader(tc.in), &out)
			if out.String() != tc.out {
				t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), tc.out)
			}
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one about %q", err, tc.err)
			}
			if tc.stderr == nil && stderr.Len() > 0 {
				t.Errorf("stderr %q, want none", stderr.String())
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr %q lacks %q", stderr.String(), s)
				}
			}
			for _, l := range strings.SplitAfter(out.String(), "\n") {
				if l != "" && strings.HasPrefix(l, "{") && !json.Valid([]byte(l)) {
					t.Errorf("reply is not JSON: %q", l)
				}
			}
		})
	}
}

// TestAHPNotesOnce: the note about the fallback appears on the first
// event only.
func TestAHPNotesOnce(t *testing.T) {
	noted := filepath.Join(t.TempDir(), "noted")
	for i, want := range []bool{true, false} {
		var out, stderr bytes.Buffer
		a := &AHP{Daemon: &Client{Paths: testPaths(t), Version: "v1"}, Fallback: fakeServe(nil, nil), Noted: noted, Stderr: &stderr}
		if err := a.Serve(t.Context(), strings.NewReader(`{"id":1}`), &out); err != nil || out.String() != "s:{\"id\":1}\n" {
			t.Fatalf("event %d: %q, %v", i, out.String(), err)
		}
		if got := strings.Contains(stderr.String(), "unavailable"); got != want {
			t.Errorf("event %d: noted = %v, want %v (%q)", i, got, want, stderr.String())
		}
	}
}

// TestAHPLongLine: a line over the frame limit goes whole to serve, and
// the lines after it too.
func TestAHPLongLine(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	up := testPaths(t)
	fakeDaemonFunc(t, ctx, up, "v1", ahpDaemon)
	long := `{"id":"long","pad":"` + strings.Repeat("x", 300) + `"}`
	in := `{"id":1}` + "\n" + long + "\n" + `{"id":2}` + "\n"
	var out, stderr bytes.Buffer
	a := &AHP{Daemon: &Client{Paths: up, Version: "v1"}, Fallback: fakeServe(nil, nil), Stderr: &stderr, maxLine: 100}
	if err := a.Serve(ctx, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if want := "d:{\"id\":1}\ns:" + long + "\ns:{\"id\":2}\n"; out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want)
	}
	if !strings.Contains(stderr.String(), "does not fit") {
		t.Errorf("stderr %q does not say why", stderr.String())
	}

	// When serve fails, the long line's request still gets its error.
	out.Reset()
	a.Fallback = fakeServe(nil, errors.New("gone"))
	if err := a.Serve(ctx, strings.NewReader(long+"\n"), &out); err != nil || !strings.Contains(out.String(), `"id":"long","error"`) {
		t.Errorf("%q, %v", out.String(), err)
	}
}

// TestAHPRequestFrames: an AHP frame is one line and never fails open.
func TestAHPRequestFrames(t *testing.T) {
	if adapters.Known(AgentAHP) {
		t.Fatalf("%q is an adapter's name too", AgentAHP)
	}
	for name, r := range map[string]Request{
		"two lines": {Agent: AgentAHP, Payload: []byte("{}\n{}\n")},
		"fail-open": {Agent: AgentAHP, Payload: []byte("{}\n"), FailOpen: true},
	} {
		if _, err := (&Client{Paths: testPaths(t)}).Hook(t.Context(), r); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v, want ErrFrame", name, err)
		}
		var buf bytes.Buffer
		writeRequest(&buf, request{Version: "v", Request: Request{Agent: "codex", Payload: r.Payload, FailOpen: r.FailOpen}})
		frame := bytes.Replace(buf.Bytes(), []byte("\x00\x05codex"), []byte("\x00\x03ahp"), 1)
		if _, _, err := ReadRequest(bufio.NewReader(bytes.NewReader(frame))); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: the daemon reads it: %v", name, err)
		}
	}
}

func TestRequestID(t *testing.T) {
	for _, tc := range []struct {
		line    string
		partial bool
		id      string // "": none
	}{
		{`{"jsonrpc":"2.0","id":"evt_1","method":"hooks/intercept"}`, false, `"evt_1"`},
		{`{"method":"m","id":42}` + "\r\n", false, `42`},
		{`{"id":-7}`, false, `-7`},
		{`{"id":"\u003c\u0041"}`, false, `"\u003cA"`},
		{`{"params":{"id":"inner"},"id":"outer"}`, false, `"outer"`},
		{`{"method":"hooks/observe"}`, false, ""},
		{`{"id":null}`, false, ""},
		{`{"id":""}`, false, ""},
		{`{"id":1.5}`, false, ""},
		{`{"id":1e3}`, false, ""},
		{`{"id":{"a":1}}`, false, ""},
		{`{"id":1,`, false, ""},
		{`[{"id":1}]`, false, ""},
		{`not json`, false, ""},
		{`{"id":"a","params":{"x":"cut here`, true, `"a"`},
		{`{"id":123`, true, ""}, // the number may go on past the cut
		{`{"id":123,`, true, `123`},
		{`{"params":{"x":"cut`, true, ""},
		{`{"id":"cut`, true, ""},
	} {
		id, ok := requestID([]byte(tc.line), tc.partial)
		if ok != (tc.id != "") || string(id) != tc.id {
			t.Errorf("requestID(%q, %v) = %s, %v; want %s", tc.line, tc.partial, id, ok, tc.id)
		}
	}
}

// FuzzRequestID: an id found is one the transport would echo, and a
// prefix of a line never finds another id than the whole line.
func FuzzRequestID(f *testing.F) {
	for _, s := range []string{`{"id":"e1","method":"m"}`, `{"id":12}`, `{"x":[1,{"id":2}],"id":-3}`, `{"id":1.0}`, `{"id":"\ud800"}`} {
		f.Add([]byte(s), uint16(5))
	}
	f.Fuzz(func(t *testing.T, line []byte, cut uint16) {
		id, ok := requestID(line, false)
		if ok {
			var v any
			d := json.NewDecoder(bytes.NewReader(id))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Fatalf("id %q is not JSON", id)
			}
			switch v := v.(type) {
			case string:
				if v == "" {
					t.Fatalf("empty string id from %q", line)
				}
			case json.Number:
				if bytes.ContainsAny(id, ".eE") {
					t.Fatalf("non-integer id %q", id)
				}
			default:
				t.Fatalf("id %q is neither string nor integer", id)
			}
		}
		prefix := line[:min(int(cut), len(line))]
		if pid, pok := requestID(prefix, true); pok && ok && !bytes.Equal(pid, id) {
			t.Fatalf("prefix %q finds id %s, the line %s", prefix, pid, id)
		}
	})
}

// FuzzLineReader: the lines and the rest of long lines put together are
// the input, each line ends at its first newline, and no line is longer
// than the limit.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\nccc"), uint8(2))
	f.Add([]byte(strings.Repeat("x", 200)+"\ny"), uint8(7))
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		lr := &lineReader{br: bufio.NewReaderSize(bytes.NewReader(in), 16), max: int(max) + 1}
		var got bytes.Buffer
		for {
			line, long, err := lr.next()
			if len(line) > lr.max {
				t.Fatalf("line of %d bytes over the limit %d", len(line), lr.max)
			}
			if i := bytes.IndexByte(line, '\n'); i >= 0 && i != len(line)-1 {
				t.Fatalf("line %q holds a newline inside", line)
			}
			got.Write(line)
			if long {
				if bytes.IndexByte(line, '\n') >= 0 {
					t.Fatalf("long line %q ended", line)
				}
				var rest bytes.Buffer
				lr.copyRest(&rest)
				if i := bytes.IndexByte(rest.Bytes(), '\n'); i >= 0 && i != rest.Len()-1 {
					t.Fatalf("rest %q goes past the line end", rest.Bytes())
				}
				got.Write(rest.Bytes())
			}
			if err != nil {
				break
			}
		}
		if !bytes.Equal(got.Bytes(), in) {
			t.Fatalf("read back %q, want %q", got.Bytes(), in)
		}
	})
}
