package rollout

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Defaults of ReplayOptions.
const (
	// DefaultMaxLineBytes bounds one audit line: a recorded input is at
	// most one stdio message (8 MiB) and the record around it is small.
	DefaultMaxLineBytes = 2 * transport.DefaultMaxMessageBytes
	// DefaultMaxChanged bounds the changed events a report lists; the rest
	// are counted.
	DefaultMaxChanged = 1000
	// DefaultMaxRules bounds the rules the per-rule table lists; the
	// changes of the rest are counted together.
	DefaultMaxRules = 1000
	// progressEvery is how many lines pass between two progress calls.
	progressEvery = 4096
	// maxRuleBytes, maxFieldBytes and maxReasonBytes bound what a report
	// keeps of one rule name, one recorded identifier (event id, source,
	// tool, decision) and one reason: a line of the log may be 16 MiB.
	maxRuleBytes   = 256
	maxFieldBytes  = 256
	maxReasonBytes = 1024
)

// ErrNoInputs is returned for a log whose decisions hold no recorded
// input: there is nothing to re-decide.
var ErrNoInputs = errors.New("the audit log records no inputs: start `ahp-opa serve` with audit.include_input: true " +
	"(config file) or AHP_OPA_AUDIT__INCLUDE_INPUT=true, then replay the log it writes")

// ReplayOptions configure Replay. Zero values take the defaults.
type ReplayOptions struct {
	// Facts, when set, is rebuilt from the log as it is read (decisions,
	// executed tool.after, session.end), so that the judge, which must
	// read its session facts from the same store, gives every event the
	// input.ahp.session it had. Use audit.NewReplayFacts.
	Facts        *audit.Facts
	MaxLineBytes int
	MaxChanged   int
	// MaxRules bounds the rules listed in Report.Rules, first come first
	// listed; the changes of the others are counted in RulesNotListed.
	MaxRules int
	// Redactor masks secrets in the reasons a report shows; nil uses the
	// default patterns.
	Redactor *audit.Redactor
	// Progress, when set, is called every few thousand lines.
	Progress func(Progress)
}

// Progress is how far a replay has got.
type Progress struct {
	Lines, Events int
	Bytes         int64
}

// Report is what a replay found. Its JSON form is what `replay --format
// json` prints.
type Report struct {
	Events        int `json:"events"` // tool.before decisions re-decided
	Unchanged     int `json:"unchanged"`
	NewlyDenied   int `json:"newly_denied"`
	NewlyAllowed  int `json:"newly_allowed"`
	ReasonChanged int `json:"reason_changed"`
	NowError      int `json:"now_error"`
	NoLongerError int `json:"no_longer_error"`
	// Changed lists changed events in log order, at most MaxChanged;
	// ChangedNotListed counts the rest.
	Changed          []ChangedEvent `json:"changed"`
	ChangedNotListed int            `json:"changed_not_listed"`
	// Rules counts changes by the rule they are about, for at most
	// MaxRules rules; RulesNotListed counts the changes of the others.
	Rules          map[string]*RuleCounts `json:"rules"`
	RulesNotListed RuleCounts             `json:"rules_not_listed"`
	Skipped        Skipped                `json:"skipped"`
	Lines          int                    `json:"lines"`
}

// Changes is the number of events whose decision changed.
func (r *Report) Changes() int {
	return r.NewlyDenied + r.NewlyAllowed + r.ReasonChanged + r.NowError + r.NoLongerError
}

// RuleCounts counts the changes one rule makes.
type RuleCounts struct {
	NewlyDenied   int `json:"newly_denied,omitempty"`
	NewlyAllowed  int `json:"newly_allowed,omitempty"`
	ReasonChanged int `json:"reason_changed,omitempty"`
	NowError      int `json:"now_error,omitempty"`
}

// Skipped counts lines that were not re-decided.
type Skipped struct {
	Malformed    int `json:"malformed"`     // not one JSON audit record (a truncated last line included)
	TooLong      int `json:"too_long"`      // longer than MaxLineBytes
	WithoutInput int `json:"without_input"` // a decision recorded without its input
}

// ChangedEvent is one event the candidate decides otherwise.
type ChangedEvent struct {
	ID      string    `json:"id"`
	Source  string    `json:"source,omitempty"`
	Time    time.Time `json:"time"`
	Tool    string    `json:"tool,omitempty"`
	Subject string    `json:"subject,omitempty"` // the command, path or URL the call is about
	Change  Change    `json:"change"`
	Before  string    `json:"before"`
	After   string    `json:"after"`
	Rule    string    `json:"rule,omitempty"`
	Reason  string    `json:"reason,omitempty"`
}

// Replay re-decides every tool.before decision recorded in log with judge
// and compares each answer with the one recorded. It reads the log once,
// line by line, and keeps nothing per event beyond the listed changes, so
// a log of any size replays in bounded memory. Lines that are not whole
// records are skipped and counted. It fails only when log cannot be read,
// ctx ends, or no decision in the log carries its input (ErrNoInputs).
func Replay(ctx context.Context, log io.Reader, judge Judge, opts ReplayOptions) (*Report, error) {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.MaxChanged <= 0 {
		opts.MaxChanged = DefaultMaxChanged
	}
	if opts.MaxRules <= 0 {
		opts.MaxRules = DefaultMaxRules
	}
	if opts.Redactor == nil {
		var err error
		if opts.Redactor, err = audit.NewRedactor(audit.RedactConfig{}); err != nil {
			return nil, err
		}
	}
	rep := &Report{Rules: map[string]*RuleCounts{}, Changed: []ChangedEvent{}}
	br := bufio.NewReaderSize(log, 64<<10)
	var (
		buf  []byte
		read int64
	)
	for {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		line, tooLong, n, err := readLine(br, opts.MaxLineBytes, buf[:0])
		buf = line
		read += int64(n)
		if n > 0 {
			rep.Lines++
			switch {
			case tooLong:
				rep.Skipped.TooLong++
			default:
				replayLine(ctx, line, judge, &opts, rep)
			}
			if opts.Progress != nil && rep.Lines%progressEvery == 0 {
				opts.Progress(Progress{Lines: rep.Lines, Events: rep.Events, Bytes: read})
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rep, fmt.Errorf("reading the audit log: %w", err)
		}
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Lines: rep.Lines, Events: rep.Events, Bytes: read})
	}
	if rep.Events == 0 && rep.Skipped.WithoutInput > 0 {
		return rep, ErrNoInputs
	}
	return rep, nil
}

// readLine reads one line into buf, without its newline. A line longer
// than max is consumed but not kept (tooLong). n is the number of bytes
// consumed.
func readLine(r *bufio.Reader, max int, buf []byte) (line []byte, tooLong bool, n int, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if !tooLong && len(buf)+len(chunk) <= max+1 {
			buf = append(buf, chunk...)
		} else {
			tooLong = true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		if tooLong {
			buf = buf[:0]
		}
		return buf, tooLong, n, err
	}
}

// replayLine handles one audit line.
func replayLine(ctx context.Context, line []byte, judge Judge, opts *ReplayOptions, rep *Report) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	rec, ok := decodeRecord(line)
	if !ok {
		rep.Skipped.Malformed++
		return
	}
	if rec.Kind != audit.KindDecision || rec.EventType != ahp.EventToolBefore {
		if opts.Facts != nil {
			opts.Facts.Apply(rec, describeObserved(rec))
		}
		return
	}
	if rec.Input == nil {
		rep.Skipped.WithoutInput++
		if opts.Facts != nil {
			opts.Facts.Apply(rec, audit.Call{})
		}
		return
	}
	if opts.Facts != nil {
		opts.Facts.Tick(rec.Time) // the facts as of this event: sessions idle past their TTL are gone
	}
	req := requestOf(rec)
	v := judge.Judge(ctx, req)
	// What happened then shapes the session from here on, whatever the
	// candidate says now.
	if opts.Facts != nil {
		call := enrich.DescribeCall(v.Input)
		if !v.Enriched.Has(enrich.Describe) && req.Event.Object != nil {
			call = enrich.DescribeEvent(&req.Event) // the candidate read too little to tell
		}
		opts.Facts.Apply(rec, call)
	}
	rep.Events++
	before, after := RecordOutcome(rec), verdictOutcome(v)
	after.Reason = opts.Redactor.String(after.Reason)
	ch := Compare(before, after)
	if ch == Unchanged {
		rep.Unchanged++
		return
	}
	rule := cut(ruleOf(ch, before, after), maxRuleBytes)
	if rule == "" {
		rule = noRule
	}
	rc := &RuleCounts{} // an error that went away is no rule's change
	if ch != NoLongerError {
		if rc = rep.Rules[rule]; rc == nil {
			if len(rep.Rules) < opts.MaxRules {
				rc = &RuleCounts{}
				rep.Rules[rule] = rc
			} else {
				rc = &rep.RulesNotListed
			}
		}
	}
	switch ch {
	case NewlyDenied:
		rep.NewlyDenied++
		rc.NewlyDenied++
	case NewlyAllowed:
		rep.NewlyAllowed++
		rc.NewlyAllowed++
	case ReasonChanged:
		rep.ReasonChanged++
		rc.ReasonChanged++
	case NowError:
		rep.NowError++
		rc.NowError++
	case NoLongerError:
		rep.NoLongerError++
	}
	if len(rep.Changed) >= opts.MaxChanged {
		rep.ChangedNotListed++
		return
	}
	toolName := ""
	if rec.Tool != nil {
		toolName = rec.Tool.Name
	}
	rep.Changed = append(rep.Changed, ChangedEvent{
		ID: cut(rec.EventID, maxFieldBytes), Source: cut(rec.Source, maxFieldBytes), Time: rec.Time,
		Tool: cut(toolName, maxFieldBytes), Subject: subjectOf(rec.Input), Change: ch,
		Before: cut(before.Decision, maxFieldBytes), After: after.Decision, Rule: rule,
		Reason: cut(reasonOf(before, after), maxReasonBytes),
	})
}

// decodeRecord parses one audit line, numbers kept as json.Number as the
// live server keeps them.
func decodeRecord(line []byte) (*audit.Record, bool) {
	if !utf8.Valid(line) || line[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var rec audit.Record
	if err := dec.Decode(&rec); err != nil || dec.More() {
		return nil, false
	}
	if rec.Kind == "" || rec.Time.IsZero() {
		return nil, false
	}
	return &rec, true
}

// requestOf rebuilds the intercept request of a decision record: the
// recorded (redacted) event, advertising deny so that the policy's deny is
// what comes back.
func requestOf(rec *audit.Record) *transport.InterceptRequest {
	ev, _ := transport.EventOfMap(rec.Input) // no Object when it cannot be evaluated
	// The record's own fields are what the live server parsed; the
	// recorded input may have lost some of them to redaction.
	ev.ID, ev.Source, ev.Type, ev.Time = rec.EventID, rec.Source, rec.EventType, rec.Time
	ev.CallID, ev.Session.ID = rec.CallID, rec.SessionID
	if rec.Tool != nil {
		ev.Tool.Name = rec.Tool.Name
	}
	return &transport.InterceptRequest{Event: ev, Effects: []string{ahp.EffectDeny}}
}

// describeObserved classifies the call of an observation, for the session
// facts; without a recorded input nothing is known but the call.
func describeObserved(rec *audit.Record) audit.Call {
	if rec.Input == nil || rec.Kind != audit.KindObservation || rec.EventType != ahp.EventToolAfter {
		return audit.Call{}
	}
	ev, err := transport.EventOfMap(rec.Input)
	if err != nil {
		return audit.Call{}
	}
	return enrich.DescribeEvent(&ev)
}

// maxSubjectBytes bounds the command or path a changed event shows.
const maxSubjectBytes = 160

// subjectOf returns what a call is about: its command, path or URL.
func subjectOf(event map[string]any) string {
	t, _ := event["tool"].(map[string]any)
	in, _ := t["input"].(map[string]any)
	for _, k := range []string{"command", "file_path", "path", "notebook_path", "url", "pattern", "query"} {
		if s, ok := in[k].(string); ok && s != "" {
			return shorten(s, maxSubjectBytes)
		}
	}
	return ""
}

// shorten cuts s to n bytes on a rune boundary and keeps it on one line.
func shorten(s string, n int) string {
	return cut(string(bytes.Join(bytes.Fields([]byte(s)), []byte(" "))), n)
}

// cut cuts s to n bytes on a rune boundary, marking the cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// sortedRules returns the rule names of a report in order.
func (r *Report) sortedRules() []string {
	names := make([]string, 0, len(r.Rules))
	for k := range r.Rules {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
