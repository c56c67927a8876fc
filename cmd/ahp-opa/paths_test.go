package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/pathread"
	"github.com/ahp-opa/ahp-opa/internal/service"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestUserPathsAreBounded: every path a user names is refused at once
// when it is not a regular file or is too large, with an error naming the
// path and the reason; nothing blocks on a FIFO or grows on /dev/zero,
// and nothing in the directory changes.
func TestUserPathsAreBounded(t *testing.T) {
	log, _ := testLogger()
	cases := []struct {
		name string
		// run uses the prepared path; it returns the error.
		run  func(path string) error
		make string // "fifo", "dir", "big" (70 KiB) or a device path
		want string // DIR stands for the directory, PATH for the path
		is   error
	}{
		{"token file is a FIFO", tokenFrom, "fifo", "token file: PATH: is a named pipe (FIFO), not a regular file", pathread.ErrNotRegular},
		{"token file is /dev/zero", tokenFrom, "/dev/zero", "token file: /dev/zero: is a character device, not a regular file", pathread.ErrNotRegular},
		{"token file is a directory", tokenFrom, "dir", "token file: PATH: is a directory, not a regular file", pathread.ErrNotRegular},
		{"token file is huge", tokenFrom, "big", "token file: PATH: is 71680 bytes, over the 65536 bytes limit", pathread.ErrTooLarge},
		{"config file is a FIFO", configFrom, "fifo", "config file PATH: is a named pipe (FIFO), not a regular file", pathread.ErrNotRegular},
		{"config file is /dev/zero", configFrom, "/dev/zero", "config file /dev/zero: is a character device, not a regular file", pathread.ErrNotRegular},
		{"TLS certificate is a FIFO", func(p string) error {
			cfg := config.DefaultHTTP()
			cfg.HTTP, cfg.TLSCert, cfg.TLSKey = "127.0.0.1:0", p, p
			b, err := prepareHTTP(cfg, func(string) string { return "" }, log)
			if err == nil {
				b.Close()
			}
			return err
		}, "fifo", "tls: PATH: is a named pipe (FIFO), not a regular file", pathread.ErrNotRegular},
		{"verification key is a FIFO", func(p string) error {
			s := config.DefaultPolicySources()
			s.VerificationKey = p
			_, err := s.OPAConfig()
			return err
		}, "fifo", "verification_key: PATH: is a named pipe (FIFO), not a regular file", pathread.ErrNotRegular},
		{"audit log is a directory", auditTo, "dir", "audit log PATH: not an ahp-opa audit log: it is a directory", audit.ErrNotAuditLog},
		{"audit log is a FIFO", auditTo, "fifo", "audit log PATH: not an ahp-opa audit log: it is a named pipe (FIFO)", audit.ErrNotAuditLog},
		{"audit log is /dev/null", auditTo, "/dev/null", "audit log /dev/null: not an ahp-opa audit log: it is a character device", audit.ErrNotAuditLog},
		{"audit log is someone's file", auditTo, "big", "audit log PATH: not an ahp-opa audit log: its first line is not an audit record", audit.ErrNotAuditLog},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "target")
			switch c.make {
			case "fifo":
				if err := syscall.Mkfifo(path, 0o600); err != nil {
					t.Fatal(err)
				}
			case "dir":
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(path, "keep"), []byte("keep"), 0o600)
			case "big":
				os.WriteFile(path, []byte(strings.Repeat("x\n", 35<<10)), 0o600)
			default:
				path = c.make
			}
			before := testkit.SnapshotTree(t, dir)
			err := c.run(path)
			want := strings.ReplaceAll(c.want, "PATH", path)
			if err == nil || err.Error() != want || !errors.Is(err, c.is) {
				t.Errorf("err = %v\nwant  %s", err, want)
			}
			testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir))
		})
	}
}

func tokenFrom(path string) error {
	log, _ := testLogger()
	cfg := config.DefaultHTTP()
	cfg.TokenFile = path
	_, err := loadToken(cfg, func(string) string { return "" }, log)
	return err
}

func configFrom(path string) error {
	_, err := config.Load(pflag.NewFlagSet("t", pflag.ContinueOnError), path, func() []string { return nil })
	return err
}

func auditTo(path string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log, _ := testLogger()
	cfg := config.Default()
	cfg.Audit.File.Path = path
	// Lazy: the auditor opens its file, the policy is never loaded.
	svc, err := service.New(ctx, cfg, service.Options{Logger: log, Lazy: true, AuditLog: true})
	if err == nil {
		svc.Close()
	}
	return errors.Unwrap(err)
}
