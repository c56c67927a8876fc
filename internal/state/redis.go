package state

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/pathread"
)

//go:embed facts.lua
var factsScript string

// errScriptLoaded asks for a batch to be sent again at once: the server
// did not know the script, and has just been given it.
var errScriptLoaded = errors.New("script loaded")

// ErrUnavailable is returned while no connection to the store is up.
var ErrUnavailable = errors.New("state store unavailable")

// Windows are how long each kind of entry lives: the auditor's retry
// window, outcome timeout and session TTL.
type Windows struct {
	Retry, Outcome, Session time.Duration
}

// Stats counts what the store did; monotonic.
type Stats struct {
	Dropped       uint64 // updates dropped on a full queue
	WriteFailures uint64 // updates the server refused (not retried)
	ReadErrors    uint64 // decision reads that failed or timed out
	ItemsEvicted  uint64 // fact entries and ids pushed out by the bounds
	// BehindReads are facts reads marked stale because a replica of the
	// fleet, this one included, was still writing updates it queued while
	// the store was away (the behind set).
	BehindReads uint64
}

// Redis is the shared store on a Redis (or Valkey) server. Reads on the
// answer path are one pipelined round trip; writes go through one ordered
// queue per shard of sessions, written in pipelined batches, retried
// while the server is down, so that what one replica learns reaches the
// others once the server is back.
type Redis struct {
	cfg    Config
	win    Windows
	log    *slog.Logger
	sha    string
	client atomic.Pointer[rueidis.Client] // nil until the first connection
	opt    rueidis.ClientOption

	shards []chan op
	// sendMu lets Close close the queues while a late Send is refused
	// rather than sent on a closed channel.
	sendMu sync.RWMutex
	closed bool
	seed   maphash.Seed
	// stopped ends once Close gives up waiting: it cancels the writes in
	// flight, so that no queued batch waits out its own write timeout.
	stopped    context.Context
	stopWrites context.CancelFunc
	wg         sync.WaitGroup // the writers
	watchD     chan struct{}  // closed when watch returns
	once       sync.Once

	dropped, writeFailures, readErrors, evicted, behindReads atomic.Uint64
	problem                                                  atomic.Pointer[string]
	// failedAt is when the server last failed (unix ns): for recoveryGrace
	// after it, facts read may miss updates replicas are still writing.
	failedAt atomic.Int64

	// behind is set when a write fails and cleared once what was queued
	// until the store came back is written: until then this replica holds
	// updates the store lacks, and says so to the fleet with its id in the
	// behind set (behindKey).
	behind   atomic.Bool
	failGen  atomic.Uint64 // counts failed writes: a drain that saw one more is void
	draining atomic.Bool   // a drainThenClear is under way
	replica  string        // this process's member of the behind set
}

// behindTTL bounds how long a replica's mark in the behind set lasts
// without being renewed: a replica killed while behind cannot hold the
// fleet's facts stale for longer. Every write of a backlog renews it.
const behindTTL = 3 * time.Second

// recoveryGrace is how long after the server failed the facts it returns
// are marked stale: the replicas' queued updates reach it within the
// writers' longest backoff plus the time to drain them.
const recoveryGrace = time.Second

// maxBackoff bounds the wait between two tries of a write.
const maxBackoff = 100 * time.Millisecond

// op is one entry of a write queue: an update, or a flush marker that is
// closed once everything queued before it is written.
type op struct {
	u     audit.Update
	flush chan struct{}
}

// writeShards spreads sessions over this many ordered write queues.
const writeShards = 4

// maxBatch bounds the updates one pipelined write carries.
const maxBatch = 128

// Open connects to the server cfg names. A server that is down at start
// is not fatal: the replica starts degraded and keeps trying, as it does
// when a connection drops later.
func Open(cfg Config, win Windows, log *slog.Logger) (*Redis, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	addr, err := cfg.redisURL()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opt := rueidis.ClientOption{
		InitAddress:      []string{addr.host},
		SelectDB:         addr.db,
		Username:         addr.user,
		DisableCache:     true, // facts change on every call; tracking would only add invalidations
		ConnWriteTimeout: time.Second,
		Dialer:           netDialer(),
		ClientName:       "ahp-opa",
	}
	if addr.tls {
		opt.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: hostOnly(addr.host)}
	}
	if cfg.PasswordFile != "" {
		b, err := pathread.Read(cfg.PasswordFile, pathread.Limits{MaxBytes: 4096})
		if err != nil {
			return nil, fmt.Errorf("state.password_file: %w", err)
		}
		opt.Password = strings.TrimRight(string(b), "\r\n")
	}
	r := &Redis{
		cfg: cfg, win: win, log: log, opt: opt,
		sha:  scriptSHA(factsScript),
		seed: maphash.MakeSeed(),
	}
	r.stopped, r.stopWrites = context.WithCancel(context.Background())
	var id [8]byte
	rand.Read(id[:])
	r.replica = hex.EncodeToString(id[:])
	r.setProblem("not connected yet")
	r.failedAt.Store(time.Now().Add(-recoveryGrace).UnixNano())
	per := max(cfg.QueueSize/writeShards, 1)
	for range writeShards {
		ch := make(chan op, per)
		r.shards = append(r.shards, ch)
		r.wg.Add(1)
		go r.writer(ch)
	}
	r.connect()
	r.watchD = make(chan struct{})
	go r.watch()
	return r, nil
}

func hostOnly(hostport string) string {
	if i := strings.LastIndexByte(hostport, ':'); i > 0 {
		return strings.Trim(hostport[:i], "[]")
	}
	return hostport
}

// connect makes the client once the server answers; rueidis reconnects
// by itself after that.
func (r *Redis) connect() bool {
	if r.client.Load() != nil {
		return true
	}
	c, err := rueidis.NewClient(r.opt)
	if err != nil {
		r.setProblem("cannot connect: " + errText(err))
		r.failedAt.Store(time.Now().UnixNano())
		return false
	}
	r.client.Store(&c)
	r.setProblem("")
	return true
}

// watch connects when the server was down at start and checks the
// connection every second, so that health shows a server that went away
// while there was no traffic.
func (r *Redis) watch() {
	defer close(r.watchD)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-r.stopped.Done():
			return
		case <-t.C:
		}
		if !r.connect() {
			continue
		}
		c := *r.client.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Do(ctx, c.B().Ping().Build()).Error()
		cancel()
		r.noteErr(err)
	}
}

func (r *Redis) noteErr(err error) {
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		// A read past its deadline says the server is slow, not that
		// updates went missing.
		r.failedAt.Store(time.Now().UnixNano())
	}
	if err == nil {
		if r.problem.Load() != nil {
			r.setProblem("")
			r.log.Info("state store reachable again")
		}
		return
	}
	if r.problem.Load() == nil {
		r.log.Warn("state store unreachable: decisions use this replica's facts, marked stale", "err", errText(err))
	}
	r.setProblem(errText(err))
}

func (r *Redis) setProblem(p string) {
	if p == "" {
		r.problem.Store(nil)
		return
	}
	r.problem.Store(&p)
}

// errText is an error's text for logs and health: the client's errors
// name addresses and commands, never the password.
func errText(err error) string { return err.Error() }

// Health names the store's problem, "" when it answers.
func (r *Redis) Health() string {
	if p := r.problem.Load(); p != nil {
		return "state store (redis): " + *p
	}
	return ""
}

// Stats returns the counters.
func (r *Redis) Stats() Stats {
	return Stats{Dropped: r.dropped.Load(), WriteFailures: r.writeFailures.Load(),
		ReadErrors: r.readErrors.Load(), ItemsEvicted: r.evicted.Load(), BehindReads: r.behindReads.Load()}
}

// Behind reports whether this replica holds updates the store lacks: a
// write failed, and what was queued until the store came back is not all
// written yet. Meanwhile every replica reads facts as stale.
func (r *Redis) Behind() bool { return r.behind.Load() }

// Close writes what is queued, waiting at most timeout for a server that
// does not answer, and disconnects.
func (r *Redis) Close(timeout time.Duration) {
	r.once.Do(func() {
		r.sendMu.Lock()
		r.closed = true
		for _, ch := range r.shards {
			close(ch)
		}
		r.sendMu.Unlock()
		done := make(chan struct{})
		go func() { r.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(timeout):
		}
		r.stopWrites() // a writer still writing or retrying gives up and counts its batch
		<-done
		<-r.watchD
		if c := r.client.Load(); c != nil {
			(*c).Close()
		}
	})
}

// Keys: KIND:len(source):source:session[:call]. The length keeps any
// source and id apart without escaping.
func (r *Redis) key(kind, source, id string, more ...string) string {
	var b strings.Builder
	b.Grow(len(r.cfg.KeyPrefix) + len(kind) + len(source) + len(id) + 16)
	b.WriteString(r.cfg.KeyPrefix)
	b.WriteString(kind)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(len(source)))
	b.WriteByte(':')
	b.WriteString(source)
	b.WriteByte(':')
	b.WriteString(id)
	for _, m := range more {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(len(m)))
		b.WriteByte(':')
		b.WriteString(m)
	}
	return b.String()
}

func (r *Redis) factsKey(source, session string) string   { return r.key("f", source, session) }
func (r *Redis) appliedKey(source, session string) string { return r.key("i", source, session) }
func (r *Redis) answerKey(source, event string) string    { return r.key("a", source, event) }
func (r *Redis) pendingKey(source, session, call string) string {
	return r.key("p", source, session, call)
}

// Load implements audit.Shared: one pipelined round trip.
func (r *Redis) Load(ctx context.Context, q audit.Query) (audit.Loaded, error) {
	var l audit.Loaded
	cp := r.client.Load()
	if cp == nil {
		r.readErrors.Add(1)
		return l, ErrUnavailable
	}
	c := *cp
	cmds := make(rueidis.Commands, 0, 2)
	if q.EventID != "" {
		cmds = append(cmds, c.B().Get().Key(r.answerKey(q.Source, q.EventID)).Build())
	}
	if q.Facts {
		cmds = append(cmds, c.B().Get().Key(r.factsKey(q.Source, q.SessionID)).Build())
		// Last, so the loop below sees it apart: how many replicas still
		// write updates queued while the store was away.
		cmds = append(cmds, c.B().Zcount().Key(r.behindKey()).Min(strconv.FormatInt(time.Now().UnixMilli(), 10)).Max("+inf").Build())
	}
	if len(cmds) == 0 {
		return l, nil
	}
	res := c.DoMulti(ctx, cmds...)
	othersBehind := false
	if q.Facts {
		last := res[len(res)-1]
		res = res[:len(res)-1]
		n, err := last.AsInt64()
		if err != nil {
			r.readErrors.Add(1)
			r.noteErr(err)
			return audit.Loaded{}, fmt.Errorf("reading session state: %w", err)
		}
		othersBehind = n > 0
	}
	for i, rr := range res {
		b, err := rr.AsBytes()
		if rueidis.IsRedisNil(err) {
			continue
		}
		if err != nil {
			r.readErrors.Add(1)
			r.noteErr(err)
			return audit.Loaded{}, fmt.Errorf("reading session state: %w", err)
		}
		if i == 0 && q.EventID != "" {
			var a audit.SharedAnswer
			if json.Unmarshal(b, &a) == nil {
				l.Answer = &a
			}
			continue
		}
		if l.Facts, err = decodeFacts(b); err != nil {
			r.readErrors.Add(1)
			return audit.Loaded{}, err
		}
	}
	if q.Facts {
		behind := othersBehind || r.behind.Load()
		if behind {
			r.behindReads.Add(1)
		}
		l.Stale = behind || time.Since(time.Unix(0, r.failedAt.Load())) < recoveryGrace
	}
	return l, nil
}

// TakePending implements audit.Shared: GETDEL, so that exactly one
// replica correlates a call.
func (r *Redis) TakePending(ctx context.Context, source, session, call string) (audit.SharedPending, bool, error) {
	var p audit.SharedPending
	cp := r.client.Load()
	if cp == nil {
		return p, false, ErrUnavailable
	}
	c := *cp
	b, err := c.Do(ctx, c.B().Getdel().Key(r.pendingKey(source, session, call)).Build()).AsBytes()
	if rueidis.IsRedisNil(err) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, false, fmt.Errorf("pending decision: %w", err)
	}
	return p, true, nil
}

// Send implements audit.Shared: the update joins its session's queue.
func (r *Redis) Send(u audit.Update) {
	h := maphash.String(r.seed, u.Source+"\x00"+u.SessionID)
	r.sendMu.RLock()
	defer r.sendMu.RUnlock()
	if r.closed {
		r.dropped.Add(1)
		return
	}
	select {
	case r.shards[h%uint64(len(r.shards))] <- op{u: u}:
	default:
		r.dropped.Add(1)
	}
}

// Flush returns once every update sent before it is written, or ctx ends.
func (r *Redis) Flush(ctx context.Context) error {
	marks := make([]chan struct{}, len(r.shards))
	r.sendMu.RLock()
	if r.closed {
		r.sendMu.RUnlock()
		return ErrUnavailable
	}
	for i, ch := range r.shards {
		marks[i] = make(chan struct{})
		select {
		case ch <- op{flush: marks[i]}:
		case <-ctx.Done():
			r.sendMu.RUnlock()
			return ctx.Err()
		}
	}
	r.sendMu.RUnlock()
	for _, m := range marks {
		select {
		case <-m:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// writer drains one queue in order, in pipelined batches. A batch the
// server could not take is retried until it is: every update is
// idempotent (the script applies an id once; the rest are SETs and DELs).
func (r *Redis) writer(ch chan op) {
	defer r.wg.Done()
	batch := make([]audit.Update, 0, maxBatch)
	var flushes []chan struct{}
	for o := range ch {
		batch, flushes = batch[:0], flushes[:0]
		next := o
		for ok := true; ok; {
			if next.flush != nil {
				flushes = append(flushes, next.flush)
			} else {
				batch = append(batch, next.u)
			}
			if len(batch) == maxBatch {
				break
			}
			select {
			case next, ok = <-ch:
			default:
				ok = false
			}
		}
		if len(batch) > 0 {
			r.writeBatch(batch)
		}
		for _, f := range flushes {
			close(f)
		}
	}
}

func (r *Redis) behindKey() string { return r.cfg.KeyPrefix + "behind" }

// drainThenClear takes this replica out of the behind set once every
// update queued before the store came back is written (a flush through
// every queue) with no write failing meanwhile: the store then holds all
// this replica made. Updates queued later need not wait; they are written
// as promptly as in a store that never failed.
//
// Batches carry the mark while the replica is behind, and the writers go
// on writing during the drain: a batch built before the flag is cleared
// would put the mark back after its removal, leaving every replica's
// facts stale for behindTTL more. So the flag is cleared first, a second
// flush waits for the batches that may still carry the mark, and only
// then is the mark removed.
func (r *Redis) drainThenClear(gen uint64) {
	defer r.draining.Store(false)
	ctx, cancel := context.WithTimeout(r.stopped, 30*time.Second)
	defer cancel()
	if r.Flush(ctx) != nil || r.failGen.Load() != gen {
		return
	}
	r.behind.Store(false)
	stillBehind := func() {
		r.behind.Store(true) // the next batch carries the mark again, and the next success drains again
	}
	if r.failGen.Load() != gen || r.Flush(ctx) != nil || r.failGen.Load() != gen {
		// A write failed after the backlog was in (its writer set the flag
		// again, unless this cleared it after), or the replica stops.
		stillBehind()
		return
	}
	cp := r.client.Load()
	if cp == nil {
		stillBehind()
		return
	}
	c := *cp
	if err := c.Do(ctx, c.B().Zrem().Key(r.behindKey()).Member(r.replica).Build()).Error(); err != nil {
		stillBehind()
		return
	}
	if r.failGen.Load() != gen {
		return // behind again: the failing writer set the flag, and its retries carry the mark
	}
	r.log.Info("state store holds every update queued while it was away")
}

func (r *Redis) writeBatch(batch []audit.Update) {
	backoff := 20 * time.Millisecond
	for {
		err := r.tryWrite(batch)
		if err == nil {
			return
		}
		if errors.Is(err, errScriptLoaded) {
			continue // a server that restarted empty has the script again
		}
		r.failGen.Add(1)
		r.behind.Store(true)
		r.noteErr(err)
		select {
		case <-r.stopped.Done():
			r.writeFailures.Add(uint64(len(batch)))
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// tryWrite sends a batch; it returns an error only for what a retry can
// cure (no connection, a server that restarted without the script).
func (r *Redis) tryWrite(batch []audit.Update) error {
	cp := r.client.Load()
	if cp == nil {
		return ErrUnavailable
	}
	c := *cp
	cmds := make(rueidis.Commands, 0, len(batch)*3+2)
	marks := 0 // leading commands that are the behind mark, not updates
	if r.behind.Load() {
		// Every batch of a backlog renews this replica's mark, in the
		// same round trip: other replicas read its facts as stale until
		// drainThenClear removes it, or behindTTL after a crash.
		until := time.Now().Add(behindTTL).UnixMilli()
		cmds = append(cmds,
			c.B().Zadd().Key(r.behindKey()).ScoreMember().ScoreMember(float64(until), r.replica).Build(),
			c.B().Pexpire().Key(r.behindKey()).Milliseconds(behindTTL.Milliseconds()).Build())
		marks = len(cmds)
	}
	for i := range batch {
		cmds = r.appendCommands(c, cmds, &batch[i])
	}
	if len(cmds) == marks {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.stopped, 2*time.Second)
	defer cancel()
	var retry error
	for i, rr := range c.DoMulti(ctx, cmds...) {
		err := rr.Error()
		if i < marks {
			if err != nil && !rueidis.IsRedisNil(err) {
				if _, refused := rueidis.IsRedisErr(err); !refused {
					retry = err
				}
			}
			continue
		}
		if err == nil {
			if n, _ := rr.AsInt64(); n > 0 {
				r.evicted.Add(uint64(n))
			}
			continue
		}
		if rerr, ok := rueidis.IsRedisErr(err); ok {
			if rerr.IsNoScript() {
				if lerr := c.Do(ctx, c.B().ScriptLoad().Script(factsScript).Build()).Error(); lerr != nil {
					return lerr
				}
				retry = errScriptLoaded
				continue
			}
			if !rueidis.IsRedisNil(err) {
				r.writeFailures.Add(1) // refused by the server (memory full, …): not curable by retrying now
				r.log.Warn("state store refused an update", "err", errText(err))
			}
			continue
		}
		retry = err
	}
	if retry == nil || errors.Is(retry, errScriptLoaded) {
		r.noteErr(nil)
	}
	if retry == nil && r.behind.Load() && r.draining.CompareAndSwap(false, true) {
		// The store answers again: clear the mark once the backlog is in.
		go r.drainThenClear(r.failGen.Load())
	}
	return retry
}

// appendCommands adds what u changes.
func (r *Redis) appendCommands(c rueidis.Client, cmds rueidis.Commands, u *audit.Update) rueidis.Commands {
	switch u.Kind {
	case audit.UpdateDecision:
		if u.Answer != nil && u.EventID != "" {
			if b, err := json.Marshal(u.Answer); err == nil {
				cmds = append(cmds, c.B().Set().Key(r.answerKey(u.Source, u.EventID)).Value(string(b)).
					Px(r.win.Retry).Build())
			}
		}
		if u.Pending != nil && u.CallID != "" {
			if b, err := json.Marshal(u.Pending); err == nil {
				cmds = append(cmds, c.B().Set().Key(r.pendingKey(u.Source, u.SessionID, u.CallID)).Value(string(b)).
					Px(r.win.Outcome).Build())
			}
		}
		if u.SessionID == "" {
			return cmds
		}
		if u.Decision == audit.DecisionDeny {
			return append(cmds, r.script(c, u, "deny", "d:"+u.EventID))
		}
		return append(cmds, r.script(c, u, "count", countID(u)))
	case audit.UpdateExecuted:
		if u.SessionID == "" {
			return cmds
		}
		return append(cmds, r.script(c, u, "count", countID(u)))
	case audit.UpdateEnd:
		if u.SessionID == "" {
			return cmds
		}
		// Kept, not deleted, as the in-process store does (audit.Facts):
		// an end may be forged from inside the session.
		ttl := r.win.Session.Milliseconds()
		return append(cmds,
			c.B().Pexpire().Key(r.factsKey(u.Source, u.SessionID)).Milliseconds(ttl).Build(),
			c.B().Pexpire().Key(r.appliedKey(u.Source, u.SessionID)).Milliseconds(ttl).Build())
	}
	return cmds
}

// countID makes a call count once, whether its decision, its tool.after
// or both report it, as the in-process store does; a call without an id
// counts once per event.
func countID(u *audit.Update) string {
	if u.CallID != "" {
		return "c:" + u.CallID
	}
	return "e:" + u.EventID
}

func (r *Redis) script(c rueidis.Client, u *audit.Update, op, id string) rueidis.Completed {
	secret := "0"
	if u.Call.Secret {
		secret = "1"
	}
	family := u.Call.Family
	if family == "" {
		family = "other"
	}
	args := make([]string, 0, 8+len(u.Call.Reads)+len(u.Call.Writes)+len(u.Call.Hosts))
	args = append(args, op, id, strconv.FormatInt(r.win.Session.Milliseconds(), 10), family,
		strconv.FormatInt(u.Time.UnixNano(), 10), secret, strconv.Itoa(len(u.Call.Reads)))
	for _, p := range u.Call.Reads {
		args = append(args, audit.CutFactItem(p))
	}
	args = append(args, strconv.Itoa(len(u.Call.Writes)))
	for _, p := range u.Call.Writes {
		args = append(args, audit.CutFactItem(p))
	}
	for _, h := range u.Call.Hosts {
		args = append(args, audit.CutFactItem(h))
	}
	return c.B().Evalsha().Sha1(r.sha).Numkeys(2).
		Key(r.factsKey(u.Source, u.SessionID), r.appliedKey(u.Source, u.SessionID)).
		Arg(args...).Build()
}

var _ audit.Shared = (*Redis)(nil)
