package bundles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
)

// Defaults of Options.
const (
	DefaultDebounce       = 200 * time.Millisecond
	DefaultRescanInterval = 5 * time.Second
)

// ErrNotReady is returned while no policy has been activated.
var ErrNotReady = errors.New("no policy has been activated yet")

// ErrTestsFailed is returned when --verify-tests refuses a policy.
var ErrTestsFailed = errors.New("policy tests failed")

// ErrDownload wraps the failures of a remote bundle's download, including
// a signature that does not verify.
var ErrDownload = errors.New("bundle download failed")

// downloaded takes one result of a bundle's downloader: it keeps a new
// bundle as the latest version and asks the builder to activate it. A
// failed download, or a bundle that does not verify, leaves the last good
// version in place.
func (r *Reloader) downloaded(name string, b *bundle.Bundle, err error) {
	source := "bundle " + name
	if err != nil {
		r.record(Event{Outcome: Failed, Source: source, Err: fmt.Errorf("bundle %s: %w: %w", name, ErrDownload, err)})
		return
	}
	if b == nil {
		return // 304 Not Modified
	}
	start := time.Now()
	p, err := fromBundle(name, b, nil, r.opts.VerifyTests, r.opts.Limits)
	if err != nil {
		r.record(Event{Outcome: Failed, Source: source, Revision: b.Manifest.Revision,
			Duration: time.Since(start), Err: err})
		return
	}
	r.mu.Lock()
	r.remoteParts[name] = p
	r.remoteGen++
	r.remoteFrom[name] = true
	r.status.Waiting = slices.DeleteFunc(r.status.Waiting, func(n string) bool { return n == name })
	r.mu.Unlock()
	r.trigger()
}

// Remote downloads bundles for a Reloader; package bundles/remote provides
// one from the services and bundles of an OPA configuration. It sits
// behind this interface so that programs serving local policies alone do
// not link OPA's plugin and download stacks.
type Remote interface {
	// Names lists the bundles; the first activation waits for each.
	Names() []string
	// Start begins downloading until ctx ends or Stop is called. Every
	// result for bundle name goes to deliver: a new version, a failure,
	// or neither when the bundle did not change.
	Start(ctx context.Context, deliver func(name string, b *bundle.Bundle, err error))
	Stop(ctx context.Context)
}

// Activator makes a policy the one that decides: it compiles it off the
// request path and swaps it in atomically, keeping the previous one when
// compilation fails. *engine.Engine implements it.
type Activator interface {
	Load(ctx context.Context, p *Policy) error
}

// Options configure a Reloader.
type Options struct {
	// Paths are the local sources: .rego files, directories, bundle
	// tarballs and bundle directories.
	Paths []string
	// Builtin serves the embedded library alongside the other sources.
	Builtin bool
	// OPA holds keys, signing, services and bundles in OPA's shapes. Its
	// bundles are downloaded by Remote, which they require.
	OPA OPAConfig
	// Remote downloads the remote bundles; nil when there are none.
	Remote Remote
	// VerifyTests activates a policy only if its own Rego tests pass.
	VerifyTests bool
	// Watch reloads the local sources when they change.
	Watch bool
	// WatchAfter delays watching by this long after Start, followed by
	// one rescan, so that a change made meanwhile is still seen. A
	// process that ends sooner, such as a per_event backend started for
	// one event, never creates a watch: on Linux an inotify instance
	// alone adds about 10 ms to the exit of the process that had it.
	// Zero watches from the start.
	WatchAfter time.Duration
	// Debounce is how long the files must stay quiet before a reload;
	// zero means DefaultDebounce.
	Debounce time.Duration
	// RescanInterval is how often the local sources are hashed in case
	// an event was missed (network file systems, Kubernetes volumes);
	// zero means DefaultRescanInterval, negative turns rescans off. It
	// applies with or without Watch.
	RescanInterval time.Duration
	// Prepare, when set, adjusts each merged policy before it is tested
	// and activated, e.g. to add configuration data; an error refuses it.
	Prepare func(*Policy) (*Policy, error)
	// Capabilities bound what the --verify-tests compiler accepts; nil
	// means OPA's.
	Capabilities *ast.Capabilities
	Logger       *slog.Logger
	// OnReload, when set, is called after every reload attempt, one call
	// at a time; it must not block.
	OnReload func(Event)
	// Limits bound what a load of the local sources reads, and the Rego
	// files of downloaded bundles; zero fields take the defaults.
	Limits Limits
}

// Outcome is how a reload ended.
type Outcome string

// Outcomes of a reload.
const (
	// Activated: the new policy decides from now on.
	Activated Outcome = "activated"
	// Unchanged: the sources were touched but their content is the same.
	Unchanged Outcome = "unchanged"
	// Failed: the new version could not be read, verified, tested or
	// compiled; the previous policy keeps deciding.
	Failed Outcome = "failed"
)

// Event describes one reload attempt.
type Event struct {
	Outcome Outcome
	// Source says what changed: "local", "bundle NAME", or both;
	// "builtin" for the built-in library alone.
	Source string
	// Revision of the policy activated or refused; "" when it could not
	// be read.
	Revision string
	// Files lists the local files that changed.
	Files []string
	// Modules counts the modules of the policy.
	Modules  int
	Duration time.Duration
	Err      error
	// Recovered is set on the first load of the local sources that
	// succeeds after one failed (a deleted directory come back, a broken
	// file fixed), so that a recovery is reported as the failure was.
	Recovered bool
}

// Status is the state of the policy sources, for health and metrics
// endpoints.
type Status struct {
	// Revision of the active policy; "" until the first activation.
	Revision string
	// LastSuccess is when the active policy was activated.
	LastSuccess time.Time
	// LastError is the latest failure, kept after later successes;
	// LastErrorTime tells when it happened.
	LastError     error
	LastErrorTime time.Time
	// Reloads counts reload attempts by outcome.
	Reloads map[Outcome]uint64
	// Waiting lists the remote bundles not downloaded yet: the first
	// activation waits for all of them.
	Waiting []string
}

// Ready reports whether a policy is active.
func (s Status) Ready() bool { return s.Revision != "" }

// Reloader loads the policy sources into an Activator and keeps it up to
// date. A single builder goroutine does every reload; triggers that arrive
// while it works collapse into one more reload of the latest content.
type Reloader struct {
	target  Activator
	opts    Options
	log     *slog.Logger
	vc      *bundle.VerificationConfig // for local bundles
	builtin *Policy
	remotes []string // names of the remote bundles

	kick      chan struct{}
	ready     chan struct{}
	readyOnce sync.Once
	hookMu    sync.Mutex // OnReload calls, one at a time

	mu          sync.Mutex
	status      Status
	remoteParts map[string]*Policy // latest download of each remote bundle
	remoteGen   uint64             // bumped by every download
	remoteFrom  map[string]bool    // bundles downloaded since the last build
	quietStart  bool               // Start returns the failures it meets
	activations uint64

	// Owned by the builder.
	localFP      fingerprint
	localPart    *Policy
	localBroken  bool // the last read of the local sources failed
	seenGen      uint64
	activeDigest string
	failedDigest string // the content refused last, and why
	failedErr    error

	startOnce      sync.Once
	stop           context.CancelFunc
	remotesStarted bool
	wg             sync.WaitGroup
}

// NewReloader checks the options, parsing OPA's configuration blocks; it
// reads no policy yet.
func NewReloader(target Activator, opts Options) (*Reloader, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.RescanInterval == 0 {
		opts.RescanInterval = DefaultRescanInterval
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Reloader{
		target:      target,
		opts:        opts,
		log:         log,
		kick:        make(chan struct{}, 1),
		ready:       make(chan struct{}),
		remoteParts: map[string]*Policy{},
		remoteFrom:  map[string]bool{},
		status:      Status{Reloads: map[Outcome]uint64{}},
	}
	ks, err := opts.OPA.KeyConfigs()
	if err != nil {
		return nil, err
	}
	if r.vc, err = localVerification(ks, opts.OPA.Signing); err != nil {
		return nil, err
	}
	switch {
	case opts.Remote != nil:
		r.remotes = opts.Remote.Names()
	case !IsEmptyJSON(opts.OPA.Bundles):
		return nil, errors.New("bundles: remote bundles are configured but nothing downloads them (Options.Remote)")
	}
	if len(opts.Paths) == 0 && len(r.remotes) == 0 && !opts.Builtin {
		return nil, fmt.Errorf("%w: no policy path, no remote bundle and no built-in library", ErrNoPolicy)
	}
	if opts.Builtin {
		if r.builtin, err = Builtin(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Remote reports whether remote bundles are configured.
func (r *Reloader) Remote() bool { return len(r.remotes) > 0 }

// Start loads the sources and activates the policy, then keeps it up to
// date until ctx ends or Stop is called. Without remote bundles, a policy
// that cannot be loaded is an error; with them, the first activation
// waits for every bundle's first download (see WaitReady).
func (r *Reloader) Start(ctx context.Context) error {
	err := errors.New("reloader already started")
	r.startOnce.Do(func() { err = r.start(ctx) })
	return err
}

func (r *Reloader) start(ctx context.Context) error {
	r.mu.Lock()
	r.status.Waiting = append(r.status.Waiting, r.remotes...)
	// Without remote bundles a startup failure is returned to the caller,
	// who reports it: log it at debug level only.
	r.quietStart = len(r.remotes) == 0
	r.mu.Unlock()
	ctx, r.stop = context.WithCancel(ctx)
	rescan := max(r.opts.RescanInterval, 0)
	var w *watcher
	watch := r.opts.Watch && len(r.opts.Paths) > 0
	if watch && r.opts.WatchAfter <= 0 {
		// Watch before the first load: a change made while it reads is
		// then seen afterwards.
		var err error
		if w, err = newWatcher(r.opts.Paths, r.opts.Debounce, rescan, func(string) { r.trigger() }, r.log); err != nil {
			r.stop()
			return err
		}
	}
	err := r.build(ctx)
	r.mu.Lock()
	r.quietStart = false
	r.mu.Unlock()
	if err != nil && len(r.remotes) == 0 {
		if w != nil {
			_ = w.fs.Close()
		}
		r.stop()
		return err
	}
	switch {
	case w != nil:
		r.wg.Go(func() { w.run(ctx) })
	case watch:
		r.wg.Go(func() { r.watchLater(ctx, rescan) })
	case len(r.opts.Paths) > 0 && rescan > 0:
		// Rescans alone, as on a file system without change events.
		r.wg.Go(func() { r.rescanEvery(ctx, rescan) })
	}
	r.wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-r.kick:
				_ = r.build(ctx) // failures are logged and kept in Status
			}
		}
	})
	if r.opts.Remote != nil {
		r.opts.Remote.Start(ctx, r.downloaded)
		r.remotesStarted = true
	}
	return nil
}

// watchLater starts watching after Options.WatchAfter, then rescans once
// for the changes made before the watch began. Without a watch (no
// inotify instance left, say) the rescans alone keep the policy current.
func (r *Reloader) watchLater(ctx context.Context, rescan time.Duration) {
	t := time.NewTimer(r.opts.WatchAfter)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	w, err := newWatcher(r.opts.Paths, r.opts.Debounce, rescan, func(string) { r.trigger() }, r.log)
	r.trigger()
	if err != nil {
		r.log.Error("policy files are not watched; changes are seen by rescans only", "err", err, "rescan_interval", rescan)
		if rescan > 0 {
			r.rescanEvery(ctx, rescan)
		}
		return
	}
	w.run(ctx)
}

// rescanEvery triggers a reload every d until ctx ends, as on a file
// system without change events; a reload of unchanged content is cheap.
func (r *Reloader) rescanEvery(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.trigger()
		}
	}
}

// Stop ends watching and downloading and waits for the goroutines.
func (r *Reloader) Stop() {
	if r.stop == nil {
		return
	}
	r.stop()
	if r.remotesStarted {
		r.opts.Remote.Stop(context.Background())
	}
	r.wg.Wait()
}

// Reload asks for a reload of whatever changed, as a file event would.
func (r *Reloader) Reload() { r.trigger() }

func (r *Reloader) trigger() {
	select {
	case r.kick <- struct{}{}:
	default: // a reload is already due; it will read the latest content
	}
}

// WaitReady blocks until a policy is active or ctx ends.
func (r *Reloader) WaitReady(ctx context.Context) error {
	select {
	case <-r.ready:
		return nil
	case <-ctx.Done():
		st := r.Status()
		if st.LastError != nil {
			return fmt.Errorf("%w: %w", ErrNotReady, st.LastError)
		}
		if len(st.Waiting) > 0 {
			return fmt.Errorf("%w: waiting for bundles %s", ErrNotReady, strings.Join(st.Waiting, ", "))
		}
		return fmt.Errorf("%w: %w", ErrNotReady, ctx.Err())
	}
}

// Status returns a copy of the current status.
func (r *Reloader) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.status
	s.Reloads = maps.Clone(r.status.Reloads)
	s.Waiting = slices.Clone(r.status.Waiting)
	return s
}

// build reloads what changed since the last build: it rereads the local
// sources when their fingerprint differs, takes the latest download of
// each remote bundle, and activates the combination when its content is
// new. It runs on one goroutine at a time.
func (r *Reloader) build(ctx context.Context) error {
	start := time.Now()
	var sources []string
	var files []string
	localChanged, recovered := false, false
	var localErr error
	if len(r.opts.Paths) > 0 {
		fp := fingerprintPaths(r.opts.Paths, r.opts.VerifyTests, r.opts.Limits.WithDefaults().MaxFileBytes)
		if r.localFP == nil || !fp.equal(r.localFP) {
			files = fp.diff(r.localFP)
			r.localFP = fp
			p, err := LoadWith(r.opts.Paths, LoadOptions{Tests: r.opts.VerifyTests, Verification: r.vc, Limits: r.opts.Limits})
			if err != nil {
				// Keep the last local policy that loaded: a remote update
				// in the same build still goes through.
				localErr, r.localBroken = err, true
				r.record(Event{Outcome: Failed, Source: "local", Files: files, Duration: time.Since(start), Err: err})
				files = nil
			} else {
				r.localPart, localChanged = p, true
				sources = append(sources, "local")
				recovered, r.localBroken = r.localBroken, false
			}
		}
	}
	r.mu.Lock()
	gen := r.remoteGen
	remote := maps.Clone(r.remoteParts)
	for _, name := range slices.Sorted(maps.Keys(r.remoteFrom)) {
		sources = append(sources, "bundle "+name)
	}
	clear(r.remoteFrom)
	waiting := slices.Clone(r.status.Waiting)
	r.mu.Unlock()
	if !localChanged && gen == r.seenGen && r.activeDigest != "" {
		return localErr // nothing new: a rescan, or a touch that changed nothing
	}
	r.seenGen = gen
	if len(waiting) > 0 {
		r.log.Debug("policy not activated: waiting for the first download of bundles", "bundles", waiting)
		return fmt.Errorf("%w: waiting for bundles %s", ErrNotReady, strings.Join(waiting, ", "))
	}
	if len(r.opts.Paths) > 0 && r.localPart == nil {
		// The local sources never loaded; their error was reported.
		if localErr != nil {
			return localErr
		}
		return fmt.Errorf("%w: the local policy does not load", ErrNotReady)
	}
	parts := make([]*Policy, 0, 2+len(remote))
	if r.builtin != nil {
		parts = append(parts, r.builtin)
	}
	if r.localPart != nil {
		parts = append(parts, r.localPart)
	}
	for _, name := range slices.Sorted(maps.Keys(remote)) {
		parts = append(parts, remote[name])
	}
	if len(sources) == 0 && r.builtin != nil {
		sources = append(sources, "builtin")
	}
	ev := Event{Source: strings.Join(sources, "+"), Files: files, Recovered: recovered}
	fail := func(err error) error {
		ev.Outcome, ev.Err, ev.Duration = Failed, err, time.Since(start)
		r.record(ev)
		return err
	}
	p, err := Merge(parts...)
	if err == nil && r.opts.Prepare != nil {
		p, err = r.opts.Prepare(p)
	}
	if err != nil {
		return fail(err)
	}
	ev.Revision, ev.Modules = p.Revision, len(p.Modules)
	if p.Digest == r.activeDigest {
		ev.Outcome, ev.Duration = Unchanged, time.Since(start)
		r.record(ev)
		return nil
	}
	if p.Digest == r.failedDigest {
		return r.failedErr // refused already, and reported
	}
	fail = func(err error) error {
		r.failedDigest, r.failedErr = p.Digest, err
		ev.Outcome, ev.Err, ev.Duration = Failed, err, time.Since(start)
		r.record(ev)
		return err
	}
	if r.opts.VerifyTests {
		if err := runTests(ctx, p, r.opts.Capabilities); err != nil {
			return fail(err)
		}
	}
	if err := r.target.Load(ctx, p); err != nil {
		return fail(fmt.Errorf("policy revision %s: %w", p.Revision, err))
	}
	r.activeDigest = p.Digest
	ev.Outcome, ev.Duration = Activated, time.Since(start)
	r.record(ev)
	return nil
}

// record logs a reload attempt, counts it in the status and passes it to
// OnReload.
func (r *Reloader) record(ev Event) {
	attrs := []any{"outcome", ev.Outcome, "source", ev.Source, "duration", ev.Duration.Round(time.Microsecond)}
	if ev.Revision != "" {
		attrs = append(attrs, "revision", ev.Revision, "modules", ev.Modules)
	}
	if len(ev.Files) > 0 {
		attrs = append(attrs, "files", logFiles(ev.Files))
	}
	if ev.Recovered {
		attrs = append(attrs, "recovered", true)
	}
	now := time.Now()
	r.mu.Lock()
	r.status.Reloads[ev.Outcome]++
	switch ev.Outcome {
	case Activated:
		r.status.Revision, r.status.LastSuccess = ev.Revision, now
		r.activations++
	case Failed:
		r.status.LastError, r.status.LastErrorTime = ev.Err, now
	}
	first, quiet, ready := r.activations == 1, r.quietStart, r.status.Revision != ""
	r.mu.Unlock()
	switch {
	case ev.Outcome == Activated && first:
		r.log.Info("policy loaded", attrs...)
		r.readyOnce.Do(func() { close(r.ready) })
	case ev.Outcome == Activated:
		r.log.Info("policy reloaded", attrs...)
	case ev.Outcome == Unchanged && ev.Recovered:
		r.log.Info("policy readable again, unchanged", attrs...)
	case ev.Outcome == Unchanged:
		r.log.Debug("policy reload found no change", attrs...)
	case quiet:
		r.log.Debug("policy load failed", append(attrs, "err", ev.Err)...)
	case errors.Is(ev.Err, ErrDownload):
		// Outages are routine for a poller: the downloader retries.
		msg := "bundle download failed, keeping the last good policy"
		if !ready {
			msg = "bundle download failed, no policy is active yet"
		}
		r.log.Warn(msg, append(attrs, "err", ev.Err)...)
	case ready:
		// The error carries file:line; the previous policy keeps deciding.
		r.log.Error("policy reload failed, keeping the last good policy", append(attrs, "err", ev.Err)...)
	default:
		r.log.Error("policy load failed, no policy is active", append(attrs, "err", ev.Err)...)
	}
	if r.opts.OnReload != nil {
		r.hookMu.Lock()
		defer r.hookMu.Unlock()
		r.opts.OnReload(ev)
	}
}

// logFiles bounds the file list of a log line.
func logFiles(files []string) []string {
	const maxFiles = 10
	if len(files) <= maxFiles {
		return files
	}
	out := slices.Clone(files[:maxFiles])
	return append(out, fmt.Sprintf("… %d more", len(files)-maxFiles))
}
