package bundles

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/download"
	"github.com/open-policy-agent/opa/v1/keys"
)

// downloader is what OPA's HTTP and OCI downloaders have in common.
type downloader interface {
	Start(ctx context.Context)
	Stop(ctx context.Context)
}

// remoteBundle is one entry of the `bundles` configuration, downloaded by
// OPA's own downloader (polling or long polling, ETags, signature
// verification). Only the bundles it fetches reach the engine: OPA's
// decision path is not used.
type remoteBundle struct {
	name string
	dl   downloader
}

func (rb *remoteBundle) start(ctx context.Context) { rb.dl.Start(ctx) }
func (rb *remoteBundle) stop(ctx context.Context)  { rb.dl.Stop(ctx) }

// configureRemote builds a downloader per configured bundle.
func (r *Reloader) configureRemote(ks map[string]*keys.Config) error {
	opaLog := newOPALogger(r.log)
	services, err := parseServices(r.opts.OPA.Services, ks, opaLog)
	if err != nil {
		return err
	}
	sources, err := parseBundles(r.opts.OPA.Bundles, services, ks)
	if err != nil {
		return err
	}
	if len(sources) > 0 && len(services) == 0 {
		return fmt.Errorf("bundles: no services configured to download them from")
	}
	popts := ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true}
	lim := r.opts.Limits.WithDefaults()
	for _, name := range slices.Sorted(maps.Keys(sources)) {
		src := sources[name]
		if src.SizeLimitBytes == bundle.DefaultSizeLimitBytes {
			// Not set (OPA's 1 GB default): a downloaded file is held to
			// the same cap as a local one while it is read.
			src.SizeLimitBytes = lim.MaxFileBytes
		}
		client := services[src.Service]
		callback := func(_ context.Context, u download.Update) error {
			return r.downloaded(name, u)
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
		r.remotes = append(r.remotes, &remoteBundle{name: name, dl: dl})
	}
	return nil
}

// downloaded takes one result of a bundle's downloader: it keeps a new
// bundle as the latest version and asks the builder to activate it. A
// failed download, or a bundle that does not verify, leaves the last good
// version in place.
func (r *Reloader) downloaded(name string, u download.Update) error {
	source := "bundle " + name
	if u.Error != nil {
		r.record(Event{Outcome: Failed, Source: source, Err: fmt.Errorf("bundle %s: %w: %w", name, ErrDownload, u.Error)})
		return nil
	}
	if u.Bundle == nil {
		return nil // 304 Not Modified
	}
	start := time.Now()
	p, err := fromBundle(name, u.Bundle, nil, r.opts.VerifyTests, r.opts.Limits)
	if err != nil {
		r.record(Event{Outcome: Failed, Source: source, Revision: u.Bundle.Manifest.Revision,
			Duration: time.Since(start), Err: err})
		return nil
	}
	r.mu.Lock()
	r.remoteParts[name] = p
	r.remoteGen++
	r.remoteFrom[name] = true
	r.status.Waiting = slices.DeleteFunc(r.status.Waiting, func(n string) bool { return n == name })
	r.mu.Unlock()
	r.trigger()
	return nil
}
