package bundles

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/keys"
	"github.com/open-policy-agent/opa/v1/logging"
	"github.com/open-policy-agent/opa/v1/plugins"
	pluginbundle "github.com/open-policy-agent/opa/v1/plugins/bundle"
	"github.com/open-policy-agent/opa/v1/plugins/rest"
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

func isEmptyJSON(raw json.RawMessage) bool {
	switch string(raw) {
	case "", "null", "{}", "[]":
		return true
	}
	return false
}

// parseKeys reads OPA's `keys` block.
func parseKeys(raw json.RawMessage) (map[string]*keys.Config, error) {
	if isEmptyJSON(raw) {
		return nil, nil
	}
	ks, err := keys.ParseKeysConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return ks, nil
}

// localVerification returns how to verify local bundles, nil when no key
// is configured.
func localVerification(ks map[string]*keys.Config, signing json.RawMessage) (*bundle.VerificationConfig, error) {
	if isEmptyJSON(signing) {
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

// parseServices builds a REST client per service, accepting a map by
// name or a list of objects with a name, as OPA does.
func parseServices(raw json.RawMessage, ks map[string]*keys.Config, log logging.Logger) (map[string]rest.Client, error) {
	out := map[string]rest.Client{}
	if isEmptyJSON(raw) {
		return out, nil
	}
	add := func(cfg json.RawMessage, opts ...func(*rest.Client)) error {
		c, err := rest.New(cfg, ks, append(opts, rest.Logger(log))...)
		if err != nil {
			return err
		}
		if c.Service() == "" {
			return errors.New("a service has no name")
		}
		out[c.Service()] = c
		return nil
	}
	var list []json.RawMessage
	var byName map[string]json.RawMessage
	switch {
	case json.Unmarshal(raw, &list) == nil:
		for _, cfg := range list {
			if err := add(cfg); err != nil {
				return nil, fmt.Errorf("services: %w", err)
			}
		}
	case json.Unmarshal(raw, &byName) == nil:
		for _, name := range slices.Sorted(maps.Keys(byName)) {
			if err := add(byName[name], rest.Name(name)); err != nil {
				return nil, fmt.Errorf("services: %s: %w", name, err)
			}
		}
	default:
		return nil, errors.New("services: want a map of services by name or a list of services")
	}
	return out, nil
}

// parseBundles reads OPA's `bundles` block against the services.
func parseBundles(raw json.RawMessage, services map[string]rest.Client, ks map[string]*keys.Config) (map[string]*pluginbundle.Source, error) {
	if isEmptyJSON(raw) {
		return nil, nil
	}
	trigger := plugins.TriggerPeriodic
	cfg, err := pluginbundle.NewConfigBuilder().
		WithBytes(raw).
		WithServices(slices.Sorted(maps.Keys(services))).
		WithKeyConfigs(ks).
		WithTriggerMode(&trigger).
		Parse()
	if err != nil {
		return nil, fmt.Errorf("bundles: %w", err)
	}
	for name, src := range cfg.Bundles {
		if strings.HasPrefix(src.Resource, "file://") {
			return nil, fmt.Errorf("bundles: %s: a file:// resource is not supported; give the path with --policy", name)
		}
		if src.Persist {
			return nil, fmt.Errorf("bundles: %s: persist is not supported", name)
		}
	}
	return cfg.Bundles, nil
}

// Services returns an HTTP client per configured service (OPA's
// `services`, with its authentication and TLS settings), for other
// consumers of the same services such as decision-log shipping.
func Services(cfg OPAConfig, log *slog.Logger) (map[string]rest.Client, error) {
	ks, err := parseKeys(cfg.Keys)
	if err != nil {
		return nil, err
	}
	return parseServices(cfg.Services, ks, newOPALogger(log))
}
