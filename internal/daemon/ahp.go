package daemon

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// AHP serves the AHP stdio binding (PROTOCOL.md §7) through the daemon,
// for a per_event harness that starts a backend for every event: each
// message line goes to the warm daemon, which answers it through the same
// transport, engine and audit layers as `ahp-opa serve --stdio`, and the
// reply is written as it came (the same bytes serve would write).
//
// From the first message the daemon cannot take, that message and every
// later one go to Fallback, a `serve --stdio` process with the same
// policy: the same answers, slower. Messages are answered in input order.
type AHP struct {
	Daemon *Client // nil: no daemon is used
	// Unavailable says why Daemon is nil; it is told once (see Noted).
	// Empty when the user chose not to use the daemon.
	Unavailable string
	// Fallback starts `ahp-opa serve --stdio` writing to stdout; nil when
	// there is no ahp-opa to run (FallbackErr says why).
	Fallback    func(ctx context.Context, stdout io.Writer) (stdin io.WriteCloser, wait func() error, err error)
	FallbackErr error
	// Timeout bounds the daemon's answer to one message, a daemon start
	// included; zero means DefaultStartTimeout.
	Timeout time.Duration
	// Noted is the marker file that makes the note about the fallback
	// appear once, not on every event; "" notes every time.
	Noted  string
	Stderr io.Writer

	maxLine int // the longest line sent to the daemon; tests lower it
}

// Serve answers the messages read from r on w until r ends. It returns an
// error when a message got no answer it should have had (a harness sees a
// per_event backend's non-zero exit as an operational failure) or when w
// fails.
func (a *AHP) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	rl := &relay{AHP: a, w: w, lr: &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: cmp.Or(a.maxLine, MaxPayloadBytes)}}
	for {
		line, long, rerr := rl.lr.next()
		if long || len(bytes.TrimSpace(line)) > 0 { // the binding skips blank lines
			if err := rl.answer(ctx, line, long); err != nil {
				if rl.fb != nil {
					rl.fb.finish(io.Discard) // reap it; the write error is what counts
				}
				return err
			}
		}
		if rerr != nil {
			var err error
			if rl.fb != nil {
				err = rl.fb.finish(w)
			}
			if !errors.Is(rerr, io.EOF) {
				err = errors.Join(err, fmt.Errorf("reading stdin: %w", rerr))
			}
			return err
		}
	}
}

// relay is one run of Serve.
type relay struct {
	*AHP
	w  io.Writer
	lr *lineReader
	fb *fallback // once started, it takes every message
}

// answer answers one message: by the daemon while it answers, then by the
// fallback.
func (rl *relay) answer(ctx context.Context, line []byte, long bool) error {
	if rl.fb == nil {
		why := rl.Unavailable
		if rl.Daemon != nil {
			if long {
				why = fmt.Sprintf("daemon: a message over %d bytes does not fit its frame", rl.lr.max)
			} else {
				reply, err := rl.ask(ctx, line)
				if _, isRequest := requestID(line, false); err == nil && len(reply) == 0 && isRequest {
					err = errors.New("daemon: no answer to a request")
				}
				if err == nil {
					outageOver(rl.Noted)
					if _, err := rl.w.Write(reply); err != nil {
						return fmt.Errorf("writing the reply: %w", err)
					}
					return nil
				}
				why = err.Error()
			}
		}
		rl.fb = rl.startFallback(ctx, rl.w, why)
	}
	rl.fb.feed(line, long, rl.lr)
	return nil
}

// ask returns the daemon's reply to one message line.
func (a *AHP) ask(ctx context.Context, line []byte) ([]byte, error) {
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ans, err := a.Daemon.Hook(ctx, Request{Agent: AgentAHP, Payload: line})
	switch {
	case err != nil:
		return nil, err // the note that uses it already says "the decision daemon"
	case ans.Exit != 0:
		return nil, fmt.Errorf("daemon: %s", firstLine(cmp.Or(ans.Stderr, fmt.Sprintf("exit %d", ans.Exit))))
	}
	return ans.Stdout, nil
}

// startFallback starts `serve --stdio` for the rest of the input, telling
// why once.
func (a *AHP) startFallback(ctx context.Context, w io.Writer, why string) *fallback {
	fb := &fallback{out: &countingWriter{w: w}, stderr: a.Stderr}
	if why != "" && noteOnce(a.Noted) {
		fmt.Fprintf(a.Stderr, "ahp-opa-hook: the decision daemon is unavailable, answering with 'ahp-opa serve --stdio' (slower): %s\n", why)
	}
	if a.Fallback == nil {
		fb.err = a.FallbackErr
		if fb.err == nil {
			fb.err = errors.New("no fallback")
		}
		return fb
	}
	fb.stdin, fb.wait, fb.err = a.Fallback(ctx, fb.out)
	return fb
}

// fallback is the `serve --stdio` process that answers what the daemon
// did not. It keeps the ids of the requests it was given: should it fail
// before answering anything, each of them still gets an error response.
type fallback struct {
	stdin  io.WriteCloser
	wait   func() error
	err    error // it could not start, or its stdin broke
	out    *countingWriter
	stderr io.Writer

	ids  [][]byte // JSON ids of the requests fed
	mute bool     // a message without a readable id was fed
}

// feed passes one message on, with the rest of a long line from lr.
func (fb *fallback) feed(line []byte, long bool, lr *lineReader) {
	if id, ok := requestID(line, long); ok {
		fb.ids = append(fb.ids, id)
	} else {
		fb.mute = true
	}
	var dst io.Writer = io.Discard
	if fb.err == nil {
		dst = fb.stdin
	}
	_, err := dst.Write(line)
	if long {
		// The rest is read even when it cannot be written: the next
		// message starts after it.
		err = cmp.Or(err, lr.copyRest(dst))
	}
	if err != nil && fb.err == nil {
		// It went away; what it answered, or not, shows at finish.
		fb.err = fmt.Errorf("writing to 'ahp-opa serve --stdio': %w", err)
	}
}

// finish ends the input and waits for the answers. When the process
// failed without answering anything, every request it was given gets a
// backend_unavailable error (PROTOCOL.md §5: nothing was evaluated); a
// notification or unreadable message cannot be answered, and a process
// that failed half way may have left any of them unanswered: both are
// errors, for a non-zero exit.
func (fb *fallback) finish(w io.Writer) error {
	var err error
	if fb.stdin != nil {
		fb.stdin.Close()
		err = fb.wait()
	}
	if err == nil {
		err = fb.err
	}
	if err == nil {
		return nil
	}
	fmt.Fprintf(fb.stderr, "ahp-opa-hook: 'ahp-opa serve --stdio' failed too: %v\n", err)
	if fb.out.n > 0 {
		if !fb.mute && fb.out.lines == len(fb.ids) {
			// It answered every request it was given and failed after
			// (a signal, say): the answers stand.
			return nil
		}
		return fmt.Errorf("ahp-opa serve --stdio failed after answering %d of %d requests", fb.out.lines, len(fb.ids))
	}
	for _, id := range fb.ids {
		if _, err := w.Write(unavailable(id)); err != nil {
			return fmt.Errorf("writing the reply: %w", err)
		}
	}
	if fb.mute {
		return errors.New("a notification or a message without a readable id reached no backend")
	}
	return nil
}

// unavailable is the error response to a request nobody could evaluate,
// in the transport's words for -32003.
func unavailable(id []byte) []byte {
	const reason = "neither the decision daemon nor 'ahp-opa serve --stdio' could answer (ahp-opa-hook's stderr says why)"
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	return append(b, `,"error":{"code":-32003,"message":"Backend unavailable","data":{"reason":"`+reason+`"}}}`+"\n"...)
}

// requestID returns a request's id as the transport echoes it: a
// non-empty string (encoded again) or an integer as written. ok is false
// for a notification, an id the transport would not accept, and a line
// that is not JSON. A line cut short (partial) is read as far as it goes,
// and its id counts only when the cut comes after it.
func requestID(line []byte, partial bool) (id []byte, ok bool) {
	if !partial && !json.Valid(line) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		if key != "id" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil, false
			}
			continue
		}
		t, err := dec.Token()
		if err != nil || partial && dec.InputOffset() >= int64(len(line)) {
			return nil, false // a number at the cut may go on past it
		}
		switch v := t.(type) {
		case string:
			if v == "" {
				return nil, false
			}
			b, err := json.Marshal(v)
			return b, err == nil
		case json.Number:
			if strings.ContainsAny(string(v), ".eE") {
				return nil, false
			}
			return []byte(v), true
		}
		return nil, false
	}
	return nil, false
}

// lineReader splits the input as the stdio binding does: at "\n", the
// last line with or without one.
type lineReader struct {
	br      *bufio.Reader
	max     int
	buf     []byte
	rest    []byte // the part of a long line's last chunk past max
	restEnd bool   // rest ends the line
	err     error  // sticky read error, io.EOF at the end
}

// next returns the next line with its "\n", and the read error that
// ended the input with the last line. A line longer than max comes as its
// first max bytes with long set; copyRest passes on the rest.
func (lr *lineReader) next() (line []byte, long bool, err error) {
	lr.buf = lr.buf[:0]
	for lr.err == nil {
		chunk, err := lr.br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			lr.err = err
		}
		if room := lr.max - len(lr.buf); len(chunk) > room {
			lr.buf = append(lr.buf, chunk[:room]...)
			lr.rest = append(lr.rest[:0], chunk[room:]...)
			lr.restEnd = !errors.Is(err, bufio.ErrBufferFull)
			return lr.buf, true, nil
		}
		lr.buf = append(lr.buf, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return lr.buf, false, lr.err
		}
	}
	return nil, false, lr.err
}

// copyRest writes the rest of the long line next returned to w. It reads
// the whole rest even after w fails, and returns w's first error.
func (lr *lineReader) copyRest(w io.Writer) error {
	var werr error
	write := func(b []byte) {
		if werr == nil {
			_, werr = w.Write(b)
		}
	}
	write(lr.rest)
	for end := lr.restEnd; !end; {
		chunk, err := lr.br.ReadSlice('\n')
		write(chunk)
		if !errors.Is(err, bufio.ErrBufferFull) {
			lr.err, end = err, true
		}
	}
	lr.rest, lr.restEnd = lr.rest[:0], false
	return werr
}

// countingWriter counts the bytes and the lines that reached w.
type countingWriter struct {
	w     io.Writer
	n     int64
	lines int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.lines += bytes.Count(p[:n], []byte("\n"))
	return n, err
}

// ExecServe returns an AHP.Fallback that runs exe with args (`serve
// --stdio` and the policy flags), its stderr going to stderr.
func ExecServe(exe string, args []string, stderr io.Writer) func(ctx context.Context, stdout io.Writer) (io.WriteCloser, func() error, error) {
	return func(ctx context.Context, stdout io.Writer) (io.WriteCloser, func() error, error) {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		return stdin, cmd.Wait, nil
	}
}
