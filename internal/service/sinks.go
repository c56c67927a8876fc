package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/ahp-opa/ahp-opa/bundles/remote"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/config"
)

// startAudit starts the auditor, with its log file when one is configured
// and write is set. SIGHUP reopens the file for external log rotation
// until ctx ends. The caller closes the auditor, then the file.
func startAudit(ctx context.Context, cfg audit.Config, write bool, facts *audit.Facts, log *slog.Logger) (*audit.Auditor, *audit.File, error) {
	var (
		out  audit.Writer
		file *audit.File
	)
	switch {
	case !write, cfg.File.Path == "":
	case cfg.File.Path == audit.Stdout:
		out = audit.NewStream(os.Stdout)
	default:
		var err error
		if file, err = audit.OpenFile(cfg.File); err != nil {
			return nil, nil, err
		}
		out = file
	}
	aud, err := audit.New(cfg, out, facts, log)
	if err != nil {
		if file != nil {
			file.Close()
		}
		return nil, nil, err
	}
	if file != nil {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		go func() {
			defer signal.Stop(hup)
			for {
				select {
				case <-hup:
					if err := file.Reopen(); err != nil {
						log.Error("reopening the audit log", "err", err)
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return aud, file, nil
}

// startShipper sends decisions to an OPA-compatible decision-log service
// when decision_logs names one of the configured services.
func startShipper(cfg config.Config, log *slog.Logger) (*audit.Shipper, error) {
	name := cfg.DecisionLogs.Service
	if name == "" {
		return nil, nil
	}
	opa, err := cfg.PolicySources.OPAConfig()
	if err != nil {
		return nil, err
	}
	services, err := remote.Services(opa, log)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	client, ok := services[name]
	if !ok {
		return nil, fmt.Errorf("configuration: decision_logs.service %q is not among the configured services", name)
	}
	upload := func(ctx context.Context, body []byte) error {
		resp, err := client.WithHeader("Content-Type", "application/json").
			WithHeader("Content-Encoding", "gzip").WithBytes(body).Do(ctx, http.MethodPost, "/logs")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("decision log service answered %s", resp.Status)
		}
		return nil
	}
	host, _ := os.Hostname()
	return audit.NewShipper(cfg.DecisionLogs, upload, map[string]string{"id": host, "app": "ahp-opa"}, log), nil
}
