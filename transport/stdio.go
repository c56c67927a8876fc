package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// DefaultMaxMessageBytes is the framing limit of every binding: the
// longest stdio line and the largest HTTP body read. It is four times
// DefaultMaxInputBytes so that a message too large to decide is still read
// whole and answered with a deny; a longer one is skipped (stdio) or
// refused with 413 (HTTP), not truncated.
const DefaultMaxMessageBytes = 4 * DefaultMaxInputBytes

// Stdio serves the stdio binding: one JSON object per line in, one per line
// out (B-STDIO-1). The same loop serves both registration lifecycles: a
// per_event harness simply closes stdin after its one message (B-STDIO-3).
type Stdio struct {
	Server *Server
	// MaxMessageBytes bounds one line; zero means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Concurrency bounds requests decided at once; zero means 1.
	// Pipelined requests are answered as they finish, correlated by id.
	Concurrency int
}

// Serve reads messages from r and writes responses to w until r reaches EOF
// or ctx is cancelled. Either way it waits for requests already read to be
// answered, then returns nil. It returns an error only when w fails, since
// then no answer can reach the harness.
func (s *Stdio) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	limit := s.MaxMessageBytes
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	workers := max(s.Concurrency, 1)

	out := &lineWriter{w: w}
	lines := make(chan line)
	go func() {
		defer close(lines)
		readLines(ctx, r, limit, lines)
	}()
	tooLong := InvalidRequest("message exceeds the limit of " + strconv.Itoa(limit) + " bytes")

	// Long-lived workers, not a goroutine per line: an evaluation grows a
	// goroutine's stack to tens of KiB, and a fresh goroutine would copy
	// its stack up to that size again on every request.
	// They start on demand, so a large concurrency setting costs nothing
	// until the harness uses it.
	work := make(chan line)
	var wg sync.WaitGroup
	started := 0
	worker := func() {
		defer wg.Done()
		for l := range work {
			s.answer(ctx, out, l, tooLong)
		}
	}
	for {
		var l line
		var ok bool
		select {
		case <-ctx.Done():
		case l, ok = <-lines:
		}
		if !ok || out.err() != nil {
			break
		}
		select {
		case work <- l:
			continue
		default:
		}
		if started < workers {
			started++
			wg.Add(1)
			go worker()
		}
		work <- l // a line already read is answered, even after a signal
	}
	close(work)
	wg.Wait()
	return out.err()
}

// answer answers one line. Requests already read are answered even when
// ctx is cancelled: a harness waiting for them should not time out.
func (s *Stdio) answer(ctx context.Context, out *lineWriter, l line, tooLong *Error) {
	if l.tooLong {
		// Answered by id when the line's beginning names it, so that the
		// harness can tell which call failed.
		out.write(&Response{ID: idFromPrefix(l.head), Error: tooLong})
		return
	}
	resp := s.Server.Handle(context.WithoutCancel(ctx), *l.data)
	putBuffer(l.data) // Handle keeps nothing of the bytes
	if resp != nil {
		out.write(resp)
	}
}

// line is one framed message, or the notice that a line was too long
// with the first bytes of that line (head).
type line struct {
	data    *[]byte // from getBuffer
	tooLong bool
	head    []byte
}

// headBytes is how much of a line over the limit is kept to find its id.
const headBytes = 64 << 10

// idFromPrefix returns the top-level "id" of a JSON object that may be cut
// short, when it comes before the cut; the null id otherwise.
func idFromPrefix(prefix []byte) ID {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ID{}
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ID{}
		}
		if key == "id" {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return ID{}
			}
			v, _, err := parseJSON(raw)
			if err != nil {
				return ID{}
			}
			id, _ := parseID(v)
			return id
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ID{}
		}
	}
	return ID{}
}

// readLines sends each non-blank line of r, without its line ending (\n or
// \r\n), to lines. A line longer than limit is not kept: it is skipped
// whole and sent as a tooLong notice, in its place in the stream. A last
// line without a newline still counts.
func readLines(ctx context.Context, r io.Reader, limit int, lines chan<- line) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf, head []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping {
			if len(buf)+len(chunk) > limit+2 { // +2: a CRLF line ending
				head = append(head[:0], buf[:min(len(buf), headBytes)]...)
				if n := headBytes - len(head); n > 0 {
					head = append(head, chunk[:min(len(chunk), n)]...)
				}
				skipping, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return // a read error: the harness is gone
		}
		content := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
		var l line
		switch {
		case skipping:
			l.tooLong, l.head = true, bytes.Clone(head)
		case len(content) > limit:
			l.tooLong, l.head = true, bytes.Clone(content[:min(len(content), headBytes)])
		case len(bytes.TrimSpace(content)) > 0:
			l.data = getBuffer()
			*l.data = append((*l.data)[:0], content...)
		}
		if l.tooLong || l.data != nil {
			select {
			case lines <- l:
			case <-ctx.Done():
				return
			}
		}
		skipping, buf = false, buf[:0]
		if err != nil {
			return // EOF
		}
	}
}

// lineWriter serialises responses, one complete line each, in a single
// write (B-STDIO-6). After a write error it drops everything.
type lineWriter struct {
	mu   sync.Mutex
	w    io.Writer
	fail error
}

func (lw *lineWriter) write(resp *Response) {
	buf := getBuffer()
	defer putBuffer(buf)
	b, err := resp.AppendJSON((*buf)[:0])
	if err != nil {
		// Only a handler bug gets here; the harness still needs an answer.
		b, _ = (&Response{ID: resp.ID, Error: InternalError("")}).AppendJSON((*buf)[:0])
	}
	b = append(b, '\n')
	*buf = b
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.fail != nil {
		return
	}
	if _, err := lw.w.Write(b); err != nil {
		lw.fail = fmt.Errorf("writing response: %w", err)
	}
}

func (lw *lineWriter) err() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.fail
}

// buffers recycles the byte slices of messages and replies: a decision
// then allocates none for its bytes. Slices grown past maxPooledBuffer (a
// rare large message) are dropped rather than kept.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooledBuffer = 256 << 10

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		buffers.Put(b)
	}
}
