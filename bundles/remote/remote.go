// Package remote downloads OPA bundles from the services of an OPA
// configuration, with OPA's own downloader (polling or long polling,
// ETags, signature verification, OCI registries), for a bundles.Reloader;
// and gives HTTP clients for those services to other consumers such as
// decision-log shipping. It alone links OPA's plugin, download, OCI,
// metrics and tracing stacks, so a program that serves local policies
// does not initialise them at every start.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/download"
	"github.com/open-policy-agent/opa/v1/keys"
	"github.com/open-policy-agent/opa/v1/logging"
	"github.com/open-policy-agent/opa/v1/plugins"
	pluginbundle "github.com/open-policy-agent/opa/v1/plugins/bundle"
	"github.com/open-policy-agent/opa/v1/plugins/rest"

	"github.com/ahp-opa/ahp-opa/bundles"
)

// downloader is what OPA's HTTP and OCI downloaders have in common.
type downloader interface {
	Start(ctx context.Context)
	Stop(ctx context.Context)
}

// Bundles are the remote bundles of an OPA configuration (its `bundles`
// block). It implements bundles.Remote. Only the bundles it fetches reach
// the engine: OPA's decision path is not used.
type Bundles struct {
	lim     bundles.Limits
	names   []string
	sources map[string]*pluginbundle.Source
	clients map[string]rest.Client
	dls     []downloader
}

// New reads the services and bundles of cfg; it downloads nothing yet.
// It returns nil when no bundle is configured. log may be nil.
func New(cfg bundles.OPAConfig, log *slog.Logger, lim bundles.Limits) (*Bundles, error) {
	if bundles.IsEmptyJSON(cfg.Bundles) {
		return nil, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ks, err := cfg.KeyConfigs()
	if err != nil {
		return nil, err
	}
	services, err := parseServices(cfg.Services, ks, newOPALogger(log))
	if err != nil {
		return nil, err
	}
	sources, err := parseBundles(cfg.Bundles, services, ks)
	if err != nil {
		return nil, err
	}
	if len(sources) > 0 && len(services) == 0 {
		return nil, errors.New("bundles: no services configured to download them from")
	}
	return &Bundles{lim: lim.WithDefaults(), names: slices.Sorted(maps.Keys(sources)),
		sources: sources, clients: services}, nil
}

// Names lists the configured bundles, sorted.
func (b *Bundles) Names() []string { return slices.Clone(b.names) }

// Start starts a downloader per bundle; each result goes to deliver.
func (b *Bundles) Start(ctx context.Context, deliver func(name string, bu *bundle.Bundle, err error)) {
	popts := ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true}
	for _, name := range b.names {
		src := b.sources[name]
		if src.SizeLimitBytes == bundle.DefaultSizeLimitBytes {
			// Not set (OPA's 1 GB default): a downloaded file is held to
			// the same cap as a local one while it is read.
			src.SizeLimitBytes = b.lim.MaxFileBytes
		}
		client := b.clients[src.Service]
		callback := func(_ context.Context, u download.Update) error {
			deliver(name, u.Bundle, u.Error)
			return nil
		}
		var dl downloader
		if strings.EqualFold(client.Config().Type, "oci") {
			dl = download.NewOCI(src.Config, client, src.Resource, "").
				WithCallback(callback).
				WithBundleVerificationConfig(src.Signing).
				WithSizeLimitBytes(src.SizeLimitBytes).
				WithBundleParserOpts(popts)
		} else {
			dl = download.New(src.Config, client, src.Resource).
				WithCallback(callback).
				WithBundleVerificationConfig(src.Signing).
				WithSizeLimitBytes(src.SizeLimitBytes).
				WithBundleName(name).
				WithBundleParserOpts(popts)
		}
		b.dls = append(b.dls, dl)
		dl.Start(ctx)
	}
}

// Stop stops the downloaders.
func (b *Bundles) Stop(ctx context.Context) {
	for _, dl := range b.dls {
		dl.Stop(ctx)
	}
}

// Services returns an HTTP client per configured service (OPA's
// `services`, with its authentication and TLS settings), for other
// consumers of the same services such as decision-log shipping.
func Services(cfg bundles.OPAConfig, log *slog.Logger) (map[string]rest.Client, error) {
	ks, err := cfg.KeyConfigs()
	if err != nil {
		return nil, err
	}
	return parseServices(cfg.Services, ks, newOPALogger(log))
}

// parseServices builds a REST client per service, accepting a map by
// name or a list of objects with a name, as OPA does.
func parseServices(raw json.RawMessage, ks map[string]*keys.Config, log logging.Logger) (map[string]rest.Client, error) {
	out := map[string]rest.Client{}
	if bundles.IsEmptyJSON(raw) {
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
	if bundles.IsEmptyJSON(raw) {
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
