package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runInstall(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := installCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestInstallCommand(t *testing.T) {
	proj := t.TempDir()
	settings := filepath.Join(proj, ".cursor", "hooks.json")
	base := []string{"cursor", "--scope", "project", "--project", proj, "--hook-cmd", "/bin/ahp-opa-hook"}

	out, err := runInstall(t, append(base, "--dry-run")...)
	if err != nil || !strings.Contains(out, "+") || !strings.Contains(out, "dry run") {
		t.Fatalf("dry run: %q, %v", out, err)
	}
	if _, err := os.Stat(settings); err == nil {
		t.Fatal("dry run wrote the settings file")
	}
	if out, err = runInstall(t, base...); err != nil || !strings.Contains(out, "installed in "+settings) {
		t.Fatalf("install: %q, %v", out, err)
	}
	if out, err = runInstall(t, base...); err != nil || !strings.Contains(out, "already installed") {
		t.Fatalf("second install: %q, %v", out, err)
	}
	if out, err = runInstall(t, append(base, "--uninstall")...); err != nil || !strings.Contains(out, "removed from") {
		t.Fatalf("uninstall: %q, %v", out, err)
	}
	if b, _ := os.ReadFile(settings); strings.Contains(string(b), "ahp-opa-hook") {
		t.Errorf("entry left after uninstall: %s", b)
	}

	os.WriteFile(settings, []byte("{nope"), 0o644)
	if _, err := runInstall(t, base...); err == nil || !strings.Contains(err.Error(), "cannot be parsed") {
		t.Errorf("unparsable file: %v", err)
	}
	if b, _ := os.ReadFile(settings); string(b) != "{nope" {
		t.Errorf("unparsable file changed: %q", b)
	}
	if _, err := runInstall(t, "vim", "--scope", "project", "--project", proj); err == nil {
		t.Error("unknown agent accepted")
	}
}
