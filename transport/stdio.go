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
	"time"
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
	ss := &stdioSession{
		ctx:     context.WithoutCancel(ctx),
		srv:     s.Server,
		in:      newLineReader(r, limit),
		out:     &lineWriter{w: w},
		tooLong: InvalidRequest("message exceeds the limit of " + strconv.Itoa(limit) + " bytes"),
		workers: max(s.Concurrency, 1),
		ended:   make(chan struct{}),
	}
	ss.started = 1
	go ss.work()
	select {
	case <-ctx.Done():
	case <-ss.ended:
	}
	ss.stop()
	return ss.out.err()
}

// stdioSession is one Serve call. Its workers take turns at reading: the
// worker holding the turn reads a line and answers it itself, so that a
// request goes from the pipe to its decision on the goroutine (and thread)
// that the read woke. Handing each line to another goroutine, or having
// another worker wait at the pipe meanwhile, cost 65–80 µs per request on
// a 2-core machine, as much as a one-rule decision: each is a wake-up of
// another thread.
//
// The turn passes to another worker only when a concurrent request needs
// it: at once when the next line is already buffered (the harness
// pipelines), or when a decision has taken passTurnAfter, so that a request
// sent during a long decision still reaches a free worker within that
// time. Up to workers requests are decided at once.
//
// Workers are long-lived, not a goroutine per line: an evaluation grows a
// goroutine's stack to tens of KiB, and a fresh goroutine would copy its
// stack up to that size again on every request. They start on demand, so
// a large concurrency setting costs nothing until the harness uses it.
type stdioSession struct {
	ctx     context.Context // not cancelled: requests already read are answered
	srv     *Server
	in      *lineReader
	out     *lineWriter
	tooLong *Error
	workers int

	reading sync.Mutex // the turn at reading in, held across the blocking read

	mu       sync.Mutex
	started  int  // workers running
	busy     int  // workers answering a line
	stopping bool // Serve is returning: lines read from now on are dropped
	inflight sync.WaitGroup

	endOnce sync.Once
	ended   chan struct{} // closed at EOF, a read error, or when a worker going to read finds a write failed
}

// passTurnAfter is how long a decision keeps the turn at reading before a
// request sent meanwhile gets another worker: about the longest a
// concurrent request waits for a free worker (plus timer and scheduling
// delay). Most decisions take well under it.
const passTurnAfter = time.Millisecond

func (ss *stdioSession) work() {
	var pass *time.Timer // passes the turn on when a decision runs long
	ss.reading.Lock()
	for {
		if ss.isStopping() {
			// Serve has returned: leave the input unread.
			ss.reading.Unlock()
			return
		}
		var l line
		err := ss.out.err()
		if err == nil {
			l, err = ss.in.next()
		}
		if err == nil {
			// A write may have failed while this worker waited at the
			// pipe: its line would be decided for nobody.
			err = ss.out.err()
			if err != nil {
				l.release()
			}
		}
		if err != nil {
			ss.reading.Unlock()
			ss.endOnce.Do(func() { close(ss.ended) })
			return
		}
		if !ss.begin() {
			ss.reading.Unlock()
			l.release()
			return
		}
		// The turn is held while deciding, unless another request is
		// already waiting or the decision runs long.
		held, timed := true, false
		switch {
		case ss.workers == 1: // nobody else could read meanwhile
		case ss.in.pending():
			ss.passTurn()
			held = false
		case pass == nil:
			pass, timed = time.AfterFunc(passTurnAfter, ss.passTurn), true
		default:
			pass.Reset(passTurnAfter)
			timed = true
		}
		ss.answer(l)
		if timed && !pass.Stop() {
			held = false // the timer has passed the turn on
		}
		ss.mu.Lock()
		ss.busy--
		ss.mu.Unlock()
		ss.inflight.Done()
		if !held {
			ss.reading.Lock() // wait for the turn again
		}
	}
}

// begin counts a line read as being answered, unless Serve is returning.
func (ss *stdioSession) begin() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.stopping {
		return false
	}
	ss.inflight.Add(1)
	ss.busy++
	return true
}

// passTurn gives the turn at reading to another worker, starting one when
// none is free. Its caller holds the turn (for the timer, the worker that
// set it), since a sync.Mutex may be unlocked by another goroutine than
// the one that locked it.
func (ss *stdioSession) passTurn() {
	ss.mu.Lock()
	if !ss.stopping && ss.busy == ss.started && ss.started < ss.workers {
		ss.started++
		go ss.work()
	}
	ss.mu.Unlock()
	ss.reading.Unlock()
}

func (ss *stdioSession) isStopping() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.stopping
}

// stop drops lines read from now on and waits for those being answered.
func (ss *stdioSession) stop() {
	ss.mu.Lock()
	ss.stopping = true
	ss.mu.Unlock()
	// Every Add happened under mu before stopping was set, so none can
	// race with this Wait.
	ss.inflight.Wait()
}

// answer answers one line.
func (ss *stdioSession) answer(l line) {
	if l.tooLong {
		// Answered by id when the line's beginning names it, so that the
		// harness can tell which call failed.
		ss.out.write(&Response{ID: idFromPrefix(l.head), Error: ss.tooLong})
		return
	}
	resp := ss.srv.Handle(ss.ctx, *l.data)
	l.release() // Handle keeps nothing of the bytes
	if resp != nil {
		ss.out.write(resp)
	}
}

// line is one framed message, or the notice that a line was too long
// with the first bytes of that line (head).
type line struct {
	data    *[]byte // from getBuffer
	tooLong bool
	head    []byte
}

func (l line) release() {
	if l.data != nil {
		putBuffer(l.data)
	}
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

// lineReader frames a stream into lines. It is not safe for concurrent
// use.
type lineReader struct {
	br        *bufio.Reader
	limit     int
	buf, head []byte
	err       error // sticky: io.EOF or the read error
}

func newLineReader(r io.Reader, limit int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// next returns the next non-blank line, without its line ending (\n or
// \r\n). A line longer than the limit is not kept: it is skipped whole
// and returned as a tooLong notice, in its place in the stream. A last
// line without a newline still counts. At the end of the stream next
// returns io.EOF, after a read error that error, and then the same again.
func (lr *lineReader) next() (line, error) {
	for lr.err == nil {
		if l, ok := lr.readLine(); ok {
			return l, nil
		}
	}
	return line{}, lr.err
}

// pending says whether more input is already buffered: the harness has
// sent another line, or part of one.
func (lr *lineReader) pending() bool { return lr.br.Buffered() > 0 }

// readLine reads one line, blank or not; ok says whether it is to be
// answered.
func (lr *lineReader) readLine() (l line, ok bool) {
	buf, skipping := lr.buf[:0], false
	for {
		chunk, err := lr.br.ReadSlice('\n')
		if !skipping {
			if len(buf)+len(chunk) > lr.limit+2 { // +2: a CRLF line ending
				lr.head = append(lr.head[:0], buf[:min(len(buf), headBytes)]...)
				if n := headBytes - len(lr.head); n > 0 {
					lr.head = append(lr.head, chunk[:min(len(chunk), n)]...)
				}
				skipping, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		lr.buf = buf[:0]
		if err != nil {
			lr.err = err
			if !errors.Is(err, io.EOF) {
				return line{}, false // a read error: the harness is gone
			}
		}
		content := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
		switch {
		case skipping:
			return line{tooLong: true, head: bytes.Clone(lr.head)}, true
		case len(content) > lr.limit:
			return line{tooLong: true, head: bytes.Clone(content[:min(len(content), headBytes)])}, true
		case len(bytes.TrimSpace(content)) > 0:
			l.data = getBuffer()
			*l.data = append((*l.data)[:0], content...)
			return l, true
		}
		return line{}, false
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
