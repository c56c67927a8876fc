package service

import (
	"bytes"
	"strings"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/metrics"
)

// liveKeys are the settings a reload applies to a running service, by key
// or by section prefix: everything the decision stack is built from.
// Every other key keeps the value the service started with until a
// restart, because what it configures (a listener, the auditor with its
// retry and outcome windows, the log) holds state a swap would lose.
var liveKeys = []string{
	"policy", "with_builtin", "canary", "library", "on_rule_error", "shadow",
	"eval_timeout", "max_input_bytes",
	"watch", "rescan_interval", "verify_tests", "verification_key", "verification_key_id",
	"keys", "signing", "services", "bundles", "policy_limits",
}

// Live reports whether a change of key takes effect without a restart.
func Live(key string) bool {
	for _, k := range liveKeys {
		if key == k || strings.HasPrefix(key, k+".") {
			return true
		}
	}
	return false
}

// watchConfig follows the configuration file with the debounce and
// rescans of the policy files, after watchAfter as they are, until the
// service closes; watch: false turns both off.
func (s *Service) watchConfig() {
	t := time.NewTimer(watchAfter)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return
	case <-t.C:
	}
	path := s.opts.Source.Path
	var last []byte
	changed := func() {
		// A rescan of the same bytes, or an event that left them alone,
		// costs one bounded read, not a parse.
		doc, err := config.ReadFile(path)
		if err == nil && last != nil && bytes.Equal(doc, last) && s.reloadFail.Load() == nil {
			return
		}
		last = doc
		s.ReloadConfig()
	}
	// An edit made before the watch began is seen by this first look.
	changed()
	if err := bundles.Watch(s.ctx, []string{path}, 0, s.Config().RescanInterval, changed, s.log); err != nil {
		s.log.Error("the configuration file is not watched; edits need a restart", "file", path, "err", err)
	}
}

// ReloadConfig reads the configuration again and applies what changed, as
// an edit of the file does: the settings that can change live are
// applied by building a new decision stack and swapping it in once its
// policy is active; the others are logged as needing a restart. A
// configuration that does not load, or whose policy does not, leaves the
// running one in force and is reported in the log, the
// config_reloads_total{outcome="failure"} metric and Health.
func (s *Service) ReloadConfig() {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	next, err := s.opts.Source.Load()
	if err != nil {
		s.reloadFailed(err)
		return
	}
	s.mu.Lock()
	prev, cfg, closed := s.loaded, s.cfg, s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	changed := config.Changed(prev, next)
	var live, restart []string
	for _, k := range changed {
		if Live(k) {
			live = append(live, k)
		} else {
			restart = append(restart, k)
		}
	}
	if len(changed) == 0 {
		s.reloadSucceeded(nil) // an edit back to the configuration in force
		return
	}
	if len(restart) > 0 {
		s.log.Warn("configuration changed settings that need a restart; they keep their values until then",
			"file", s.opts.Source.Path, "keys", restart)
	}
	config.Apply(&cfg, next, live)
	if len(live) > 0 && s.cur.Load() != nil {
		// A new stack is built beside the running one, which answers
		// meanwhile; remote bundles are waited for, so that the swap
		// never leaves a request without a policy.
		st, err := s.newStack(cfg, true)
		if err != nil {
			s.reloadFailed(err)
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			st.stop()
			return
		}
		old := s.swapStack(st)
		s.cfg, s.loaded = cfg, next
		s.mu.Unlock()
		if old != nil {
			s.stopRetired(old)
		}
	} else {
		// Not started yet (Options.Lazy): the first start builds from it.
		s.mu.Lock()
		s.cfg, s.loaded = cfg, next
		s.mu.Unlock()
	}
	s.reloadSucceeded(live)
	if len(restart) > 0 && s.opts.Restart != nil {
		s.opts.Restart(restart)
	}
}

func (s *Service) reloadSucceeded(applied []string) {
	recovered := s.reloadFail.Swap(nil) != nil
	if len(applied) == 0 && !recovered {
		return // nothing changed: a rescan, or an edit of restart-only keys
	}
	s.Metrics.ConfigReload(metrics.ReloadSuccess)
	s.log.Info("configuration reloaded", "file", s.opts.Source.Path, "applied", applied)
}

// reloadFailed reports a configuration that was refused, once per
// distinct failure: rescans of the same broken file stay quiet.
func (s *Service) reloadFailed(err error) {
	msg := err.Error()
	if f := s.reloadFail.Load(); f != nil && f.msg == msg {
		return
	}
	s.reloadFail.Store(&failure{msg: msg, since: time.Now()})
	s.Metrics.ConfigReload(metrics.ReloadFailure)
	s.log.Error("configuration reload failed; the last good configuration stays in force",
		"file", s.opts.Source.Path, "err", err)
}
