package bundles

import (
	"encoding/json"
	"fmt"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/keys"
)

// OPAConfig holds the parts of an OPA configuration file that ahp-opa
// reads, as JSON, in OPA's own shapes: users copy them from an OPA setup.
type OPAConfig struct {
	// Keys are the verification keys, by key id (OPA's `keys`).
	Keys json.RawMessage
	// Signing turns on signature verification for local bundles: OPA's
	// per-bundle `signing` block (keyid, scope, exclude_files). Without
	// it, keys alone verify a local bundle's signature when it has one.
	Signing json.RawMessage
	// Services are the bundle servers (OPA's `services`, a map or a list).
	Services json.RawMessage
	// Bundles are the remote bundles (OPA's `bundles` map).
	Bundles json.RawMessage
}

// IsEmptyJSON reports whether a configuration block is absent or empty.
func IsEmptyJSON(raw json.RawMessage) bool {
	switch string(raw) {
	case "", "null", "{}", "[]":
		return true
	}
	return false
}

// KeyConfigs reads OPA's `keys` block.
func (c OPAConfig) KeyConfigs() (map[string]*keys.Config, error) {
	if IsEmptyJSON(c.Keys) {
		return nil, nil
	}
	ks, err := keys.ParseKeysConfig(c.Keys)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return ks, nil
}

// localVerification returns how to verify local bundles, nil when no key
// is configured.
func localVerification(ks map[string]*keys.Config, signing json.RawMessage) (*bundle.VerificationConfig, error) {
	if IsEmptyJSON(signing) {
		if len(ks) == 0 {
			return nil, nil
		}
		// OPA's rule for a bundle with keys but no signing block: a
		// signature is verified when present, not required.
		return bundle.NewVerificationConfig(ks, "", "", nil).WithOptionalSignature(), nil
	}
	var vc bundle.VerificationConfig
	if err := json.Unmarshal(signing, &vc); err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	if err := vc.ValidateAndInjectDefaults(ks); err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return &vc, nil
}
