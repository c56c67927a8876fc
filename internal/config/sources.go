package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
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

// DefaultPolicySources is the policy-source part of Default.
func DefaultPolicySources() PolicySources {
	return PolicySources{
		Watch:             true,
		RescanInterval:    bundles.DefaultRescanInterval,
		VerificationKeyID: "default",
	}
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

// OPAConfig turns the OPA-shaped blocks into JSON for bundles, adding the
// --verification-key.
func (s PolicySources) OPAConfig() (bundles.OPAConfig, error) {
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
