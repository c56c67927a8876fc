package config

import (
	"fmt"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// HookConfig configures `ahp-opa hook`.
type HookConfig struct {
	// FailOpen answers "no decision" instead of a deny when no decision
	// can be made.
	FailOpen bool `koanf:"fail_open"`
	// Timeout bounds one answer, policy loading included.
	Timeout time.Duration `koanf:"timeout"`
	// NoDaemon makes ahp-opa-hook decide in a process of its own instead
	// of asking the decision daemon; `ahp-opa hook` always decides in
	// process.
	NoDaemon bool `koanf:"no_daemon"`
}

// DefaultHook is the hook part of Default.
func DefaultHook() HookConfig { return HookConfig{Timeout: adapters.DefaultTimeout} }

func (h HookConfig) validate() error {
	if h.Timeout <= 0 {
		return fmt.Errorf("configuration: hook.timeout must be positive, got %s", h.Timeout)
	}
	return nil
}
