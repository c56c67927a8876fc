package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/bundles/remote"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/metrics"
	"github.com/ahp-opa/ahp-opa/internal/pathread"
)

// PolicySources configures where policies come from besides --policy, and
// how they reload. keys, signing, services and bundles take the shapes of
// OPA's configuration file, so an OPA setup can be copied over.
type PolicySources struct {
	Watch          bool          `koanf:"watch"`
	RescanInterval time.Duration `koanf:"rescan_interval"`
	VerifyTests    bool          `koanf:"verify_tests"`
	// VerificationKey is a PEM public key, or a file holding one, that
	// local bundles must be signed with (OPA's --verification-key).
	VerificationKey   string         `koanf:"verification_key"`
	VerificationKeyID string         `koanf:"verification_key_id"`
	Keys              map[string]any `koanf:"keys"`
	Signing           map[string]any `koanf:"signing"`
	Services          any            `koanf:"services"`
	Bundles           map[string]any `koanf:"bundles"`
	// PolicyLimits bound what a policy load reads (sizes, file count).
	PolicyLimits bundles.Limits `koanf:"policy_limits"`
}

func defaultPolicySources() PolicySources {
	return PolicySources{
		Watch:             true,
		RescanInterval:    bundles.DefaultRescanInterval,
		VerificationKeyID: "default",
	}
}

// addPolicySourceFlags declares the flags about policy sources that every
// command deciding shares.
func addPolicySourceFlags(fs *pflag.FlagSet) {
	fs.Bool("verify-tests", false, "activate a policy only if its own Rego tests (_test.rego) pass")
	fs.String("verification-key", "", "PEM public `key`, or a file holding it, that local bundles must be signed with")
	fs.String("verification-key-id", "default", "key id of --verification-key in bundle signatures")
}

// addWatchFlags declares the reload flags of serve.
func addWatchFlags(fs *pflag.FlagSet) {
	fs.Bool("watch", true, "reload local policy files when they change")
	fs.Duration("rescan-interval", bundles.DefaultRescanInterval, "also hash the local policy files this often, for changes file events miss (0: never)")
}

func (s PolicySources) validate() error {
	if s.RescanInterval < 0 {
		return fmt.Errorf("configuration: rescan_interval must not be negative, got %s", s.RescanInterval)
	}
	if l := s.PolicyLimits; l.MaxBytes < 0 || l.MaxFiles < 0 || l.MaxFileBytes < 0 || l.MaxRegoBytes < 0 {
		return fmt.Errorf("configuration: policy_limits must not be negative (0 takes the default), got %+v", l)
	}
	return nil
}

// opaConfig turns the OPA-shaped blocks into JSON for bundles, adding the
// --verification-key.
func (s PolicySources) opaConfig() (bundles.OPAConfig, error) {
	var out bundles.OPAConfig
	keys := s.Keys
	signing := s.Signing
	if s.VerificationKey != "" {
		key := s.VerificationKey
		if b, err := pathread.Read(key, pathread.Limits{}); err == nil {
			key = string(b)
		} else if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrInvalid) {
			return out, fmt.Errorf("verification_key: %w", err)
		}
		keys = make(map[string]any, len(s.Keys)+1)
		for k, v := range s.Keys {
			keys[k] = v
		}
		keys[s.VerificationKeyID] = map[string]any{"key": key, "algorithm": "RS256"}
		if len(signing) == 0 {
			signing = map[string]any{"keyid": s.VerificationKeyID}
		}
	}
	var err error
	for _, b := range []struct {
		name string
		v    any
		dst  *json.RawMessage
	}{
		{"keys", keys, &out.Keys},
		{"signing", signing, &out.Signing},
		{"services", s.Services, &out.Services},
		{"bundles", s.Bundles, &out.Bundles},
	} {
		if b.v == nil {
			continue
		}
		if *b.dst, err = json.Marshal(b.v); err != nil {
			return out, fmt.Errorf("configuration: %s: %w", b.name, err)
		}
	}
	return out, nil
}

// bundleWait bounds how long eval waits for remote bundles.
const bundleWait = 30 * time.Second

// watchAfter is how long a serving process runs before it watches its
// policy files (bundles.Options.WatchAfter): longer than a per_event
// start, which would pay for the watch at exit and never use it.
const watchAfter = time.Second

// startEngine builds the engine and the reloader that feeds it from the
// configured sources: the --policy paths, remote bundles, and the built-in
// library when there is nothing else or with with_builtin. With watch the
// reloader keeps the policy up to date until ctx ends or it is stopped;
// onReload, if set, sees every reload attempt; facts, if set, supplies
// input.ahp.session; counter, if set, counts rule errors and shadowed
// denies.
//
// Without remote bundles a policy that does not load is an error. With
// them, the engine answers backend_unavailable until the first bundle
// activates, unless wait is set: then startEngine waits for it.
func startEngine(ctx context.Context, cfg Config, log *slog.Logger, watch, wait bool, onReload func(bundles.Event), facts engine.SessionFacts, counter engine.RuleCounter) (*engine.Engine, *bundles.Reloader, error) {
	opa, err := cfg.PolicySources.opaConfig()
	if err != nil {
		return nil, nil, err
	}
	rescan := cfg.RescanInterval
	if !watch || !cfg.Watch || rescan == 0 {
		rescan = -1
	}
	var prepare func(*bundles.Policy) (*bundles.Policy, error)
	if len(cfg.Library) > 0 {
		prepare = func(p *bundles.Policy) (*bundles.Policy, error) { return bundles.WithLibraryConfig(p, cfg.Library) }
	}
	caps := engine.DefaultCapabilities()
	eng := engine.New(engine.Options{
		EvalTimeout: cfg.EvalTimeout, Capabilities: caps, Logger: log, Facts: facts,
		OnRuleError: engine.OnRuleError(cfg.OnRuleError), Shadow: cfg.Shadow, Counter: counter,
		MaxInputBytes: cfg.MaxInputBytes,
	})
	opts := bundles.Options{
		Paths:          cfg.Policy,
		Builtin:        cfg.WithBuiltin || len(cfg.Policy) == 0 && len(cfg.Bundles) == 0,
		OPA:            opa,
		VerifyTests:    cfg.VerifyTests,
		Watch:          watch && cfg.Watch,
		WatchAfter:     watchAfter,
		RescanInterval: rescan,
		Prepare:        prepare,
		Capabilities:   caps,
		Logger:         log,
		OnReload:       onReload,
		Limits:         cfg.PolicyLimits,
	}
	rb, err := remote.New(opa, log, cfg.PolicyLimits)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: %w", err)
	}
	if rb != nil {
		opts.Remote = rb
	}
	rl, err := bundles.NewReloader(eng, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: %w", err)
	}
	if err := rl.Start(ctx); err != nil {
		return nil, nil, err
	}
	if wait && rl.Remote() {
		wctx, cancel := context.WithTimeout(ctx, bundleWait)
		defer cancel()
		if err := rl.WaitReady(wctx); err != nil {
			rl.Stop()
			return nil, nil, err
		}
	}
	return eng, rl, nil
}

// reloadMetrics counts reloads in the metrics; a reload that found the
// same content is not an activation.
func reloadMetrics(met *metrics.Metrics) func(bundles.Event) {
	return func(ev bundles.Event) {
		switch ev.Outcome {
		case bundles.Activated:
			met.Reload(metrics.ReloadSuccess)
		case bundles.Failed:
			met.Reload(metrics.ReloadFailure)
		}
	}
}
