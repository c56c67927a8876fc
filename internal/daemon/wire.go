package daemon

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// The wire format is binary and tiny so the hook client stays small and a
// round trip costs one write and one read on each side.
//
//	request:  magic "AHD1" | u8 flags | u16 len | version | u16 len | agent | u32 len | payload
//	response: magic "AHD1" | u8 status | i32 exit | u32 len | stdout | u32 len | stderr
//
// The build version travels in every request, so the handshake costs no
// extra round trip: a daemon of another version answers StatusVersion with
// its own version in stderr and leaves.
//
// The agent AgentAHP carries the AHP stdio binding instead of a native
// hook: the payload is one message line, the answer's stdout is what
// `ahp-opa serve --stdio` writes for it (a response line, or nothing for a
// notification), and a non-zero exit says the daemon could not serve it.
const magic = "AHD1"

// AgentAHP is the agent name reserved for AHP messages; no native agent
// has it.
const AgentAHP = "ahp"

// Status says what a response carries.
type Status uint8

const (
	StatusOK      Status = 0 // an answer for the agent
	StatusVersion Status = 1 // the daemon is another build; it is going away
	StatusRefused Status = 2 // the peer is not the daemon's user
)

// Limits on what a frame may carry; anything larger is refused unread.
const (
	maxVersionBytes = 256
	maxAgentBytes   = 64
	// MaxPayloadBytes bounds a native payload (Cursor's beforeReadFile
	// carries a whole file).
	MaxPayloadBytes = 16 << 20
	maxAnswerBytes  = 16 << 20
)

// ErrFrame marks a malformed frame.
var ErrFrame = errors.New("daemon: malformed frame")

// Request is one hook call: which agent, its native payload, and whether
// the hook was told to fail open.
type Request struct {
	Agent    string
	Payload  []byte
	FailOpen bool
}

const flagFailOpen = 1

type request struct {
	Version string
	Request
}

// check refuses what the daemon must never be asked. An AHP message is one
// line (the daemon answers it with at most one line) and the harness's
// failure policy, not a flag, decides what a failure means.
func (r Request) check() error {
	if len(r.Agent) > maxAgentBytes || len(r.Payload) > MaxPayloadBytes {
		return fmt.Errorf("%w: request too large", ErrFrame)
	}
	if r.Agent != AgentAHP {
		return nil
	}
	if r.FailOpen {
		return fmt.Errorf("%w: fail-open does not apply to %s messages", ErrFrame, AgentAHP)
	}
	if i := bytes.IndexByte(r.Payload, '\n'); i >= 0 && i != len(r.Payload)-1 {
		return fmt.Errorf("%w: an %s payload is one line", ErrFrame, AgentAHP)
	}
	return nil
}

type response struct {
	Status Status
	Answer adapters.Answer
}

// ReadRequest reads one request frame, as the daemon does: the client's
// build version, and its request.
func ReadRequest(r *bufio.Reader) (version string, req Request, err error) {
	rq, err := readRequest(r)
	return rq.Version, rq.Request, err
}

// WriteResponse writes one response frame, in one write.
func WriteResponse(w io.Writer, st Status, ans adapters.Answer) error {
	return writeResponse(w, response{Status: st, Answer: ans})
}

func writeRequest(w io.Writer, r request) error {
	if len(r.Version) > maxVersionBytes {
		return fmt.Errorf("%w: version too long", ErrFrame)
	}
	if err := r.check(); err != nil {
		return err
	}
	b := make([]byte, 0, len(magic)+1+2+len(r.Version)+2+len(r.Agent)+4+len(r.Payload))
	b = append(b, magic...)
	var flags byte
	if r.FailOpen {
		flags |= flagFailOpen
	}
	b = append(b, flags)
	b = binary.BigEndian.AppendUint16(b, uint16(len(r.Version)))
	b = append(b, r.Version...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(r.Agent)))
	b = append(b, r.Agent...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.Payload)))
	b = append(b, r.Payload...)
	_, err := w.Write(b)
	return err
}

func readRequest(r *bufio.Reader) (request, error) {
	var req request
	if err := readMagic(r); err != nil {
		return req, err
	}
	flags, err := r.ReadByte()
	if err != nil {
		return req, fmt.Errorf("%w: flags: %w", ErrFrame, err)
	}
	if flags&^flagFailOpen != 0 {
		return req, fmt.Errorf("%w: unknown flags %#x", ErrFrame, flags)
	}
	v, err := readField(r, 2, maxVersionBytes, "version")
	if err != nil {
		return req, err
	}
	a, err := readField(r, 2, maxAgentBytes, "agent")
	if err != nil {
		return req, err
	}
	p, err := readField(r, 4, MaxPayloadBytes, "payload")
	if err != nil {
		return req, err
	}
	req.Version, req.Agent, req.Payload, req.FailOpen = string(v), string(a), p, flags&flagFailOpen != 0
	return req, req.check()
}

func writeResponse(w io.Writer, r response) error {
	if len(r.Answer.Stdout) > maxAnswerBytes || len(r.Answer.Stderr) > maxAnswerBytes {
		return fmt.Errorf("%w: answer too large", ErrFrame)
	}
	b := make([]byte, 0, len(magic)+1+4+4+len(r.Answer.Stdout)+4+len(r.Answer.Stderr))
	b = append(b, magic...)
	b = append(b, byte(r.Status))
	b = binary.BigEndian.AppendUint32(b, uint32(int32(r.Answer.Exit)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.Answer.Stdout)))
	b = append(b, r.Answer.Stdout...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.Answer.Stderr)))
	b = append(b, r.Answer.Stderr...)
	_, err := w.Write(b)
	return err
}

func readResponse(r *bufio.Reader) (response, error) {
	var resp response
	if err := readMagic(r); err != nil {
		return resp, err
	}
	st, err := r.ReadByte()
	if err != nil {
		return resp, fmt.Errorf("%w: status: %w", ErrFrame, err)
	}
	if Status(st) > StatusRefused {
		return resp, fmt.Errorf("%w: unknown status %d", ErrFrame, st)
	}
	var ex [4]byte
	if _, err := io.ReadFull(r, ex[:]); err != nil {
		return resp, fmt.Errorf("%w: exit: %w", ErrFrame, err)
	}
	out, err := readField(r, 4, maxAnswerBytes, "stdout")
	if err != nil {
		return resp, err
	}
	serr, err := readField(r, 4, maxAnswerBytes, "stderr")
	if err != nil {
		return resp, err
	}
	resp.Status = Status(st)
	resp.Answer = adapters.Answer{Stdout: out, Stderr: string(serr), Exit: int(int32(binary.BigEndian.Uint32(ex[:])))}
	return resp, nil
}

func readMagic(r *bufio.Reader) error {
	var m [len(magic)]byte
	if _, err := io.ReadFull(r, m[:]); err != nil {
		return fmt.Errorf("%w: header: %w", ErrFrame, err)
	}
	if string(m[:]) != magic {
		return fmt.Errorf("%w: bad magic %q", ErrFrame, m[:])
	}
	return nil
}

// readField reads a length-prefixed field (a 2- or 4-byte length) no longer
// than max, so a hostile length never allocates.
func readField(r *bufio.Reader, width, max int, name string) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:width]); err != nil {
		return nil, fmt.Errorf("%w: %s length: %w", ErrFrame, name, err)
	}
	n := int(binary.BigEndian.Uint16(l[:2]))
	if width == 4 {
		n = int(binary.BigEndian.Uint32(l[:]))
	}
	if n > max {
		return nil, fmt.Errorf("%w: %s of %d bytes exceeds %d", ErrFrame, name, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFrame, name, err)
	}
	return b, nil
}
