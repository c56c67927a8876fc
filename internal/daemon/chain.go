package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// Chain answers a hook by the fastest way that works: the warm daemon, then
// a full in-process decision, then the agent's fail-closed deny (or, with
// FailOpen, no objection).
type Chain struct {
	// Daemon is nil when the user chose no daemon (--no-daemon) or none
	// can be used; Unavailable then says why not, and is empty for the
	// user's own choice, which is not worth a note.
	Daemon      *Client
	Unavailable string
	InProcess   func(ctx context.Context, agent string, payload []byte) (adapters.Answer, error)
	// Refuse gives the agent's deny answer for a call nobody could decide.
	Refuse   func(agent, reason string) (adapters.Answer, error)
	FailOpen bool
	// Noted is a marker file: the user is told once, not on every call, that
	// hooks decide in-process.
	Noted string
}

// Answer never fails: whatever goes wrong ends in an answer the agent
// understands.
func (c *Chain) Answer(ctx context.Context, agent string, payload []byte) adapters.Answer {
	var whyNot []string
	if c.Daemon != nil {
		ans, err := c.Daemon.Hook(ctx, Request{Agent: agent, Payload: payload, FailOpen: c.FailOpen})
		if err == nil {
			outageOver(c.Noted)
			return ans
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "daemon: ") {
			msg = "daemon: " + msg
		}
		whyNot = append(whyNot, msg)
	} else if c.Unavailable != "" {
		whyNot = append(whyNot, "daemon: "+strings.TrimPrefix(c.Unavailable, "daemon: "))
	}
	if c.InProcess != nil {
		ans, err := c.InProcess(ctx, agent, payload)
		if err == nil {
			if len(whyNot) > 0 && noteOnce(c.Noted) {
				ans.Stderr = joinLine(ans.Stderr, "ahp-opa: the decision daemon is unavailable, deciding in-process (slower): "+whyNot[0])
			}
			return ans
		}
		whyNot = append(whyNot, "in-process: "+err.Error())
	}
	reason := "ahp-opa: could not decide (" + strings.Join(whyNot, "; ") + ")"
	if c.FailOpen {
		return adapters.Answer{Stdout: []byte("{}\n"), Stderr: reason + "; allowed to proceed because of --fail-open"}
	}
	ans, err := c.Refuse(agent, reason+"; blocked because hooks fail closed (see 'ahp-opa hook --no-daemon "+agent+"' or pass --fail-open)")
	if err != nil {
		// An agent we do not know: exit 2 blocks in most agents.
		return adapters.Answer{Stderr: reason + ": " + err.Error(), Exit: 2}
	}
	return ans
}

// outageOver clears the marker once the daemon answers again, so that the
// next time it cannot be used is told too.
func outageOver(marker string) {
	if marker != "" {
		os.Remove(marker)
	}
}

// noteOnce reports whether the note marked by the file marker is due: the
// first time in an outage only, or every time without a marker.
func noteOnce(marker string) bool {
	if marker == "" {
		return true
	}
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

func joinLine(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// maxInProcessOutput bounds what is read from an in-process hook.
const maxInProcessOutput = 1 << 20

// ExecHook runs `exe args... agent` with the payload on stdin and returns
// its answer. Anything but a clean exit 0 is an error: the in-process hook
// answers a deny at exit 0 itself, so a non-zero exit means it broke.
func ExecHook(exe string, args []string) func(ctx context.Context, agent string, payload []byte) (adapters.Answer, error) {
	return func(ctx context.Context, agent string, payload []byte) (adapters.Answer, error) {
		cmd := exec.CommandContext(ctx, exe, append(append([]string(nil), args...), agent)...)
		cmd.Stdin = bytes.NewReader(payload)
		var out, serr limited
		out.max, serr.max = maxInProcessOutput, 64<<10
		cmd.Stdout, cmd.Stderr = &out, &serr
		err := cmd.Run()
		msg := strings.TrimSpace(serr.b.String())
		if err != nil {
			if msg != "" {
				return adapters.Answer{}, fmt.Errorf("%s: %w: %s", filepath.Base(exe), err, firstLine(msg))
			}
			return adapters.Answer{}, fmt.Errorf("%s: %w", filepath.Base(exe), err)
		}
		if out.over {
			return adapters.Answer{}, errors.New("in-process answer too large")
		}
		return adapters.Answer{Stdout: out.b.Bytes(), Stderr: msg}, nil
	}
}

type limited struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); len(p) > room {
		l.over = true
		l.b.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return l.b.Write(p)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// ReadPayload reads stdin up to MaxPayloadBytes; a larger payload is an
// error rather than a truncated decision.
func ReadPayload(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxPayloadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the payload: %w", err)
	}
	if len(b) > MaxPayloadBytes {
		return nil, fmt.Errorf("payload larger than %d bytes", MaxPayloadBytes)
	}
	return b, nil
}
