package redact

import (
	"strings"
	"testing"
)

func TestRedactString(t *testing.T) {
	r, err := New(Config{Patterns: []string{`corp-[0-9]{6}`}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in string
		secret   string // must be gone
		keep     string // must stay
	}{
		{"authorization header", `curl -H "Authorization: Bearer abcdef0123456789xyz" x`, "abcdef0123456789xyz", "Authorization: Bearer"},
		{"bearer alone", "token is bearer eyJhbGciOiJIUzI1NiJ9abcdefgh", "eyJhbGciOiJIUzI1NiJ9abcdefgh", "bearer"},
		{"password pair", "mysql -u root password=hunter22 db", "hunter22", "password="},
		{"json token pair", `{"api_key": "k-12345678"}`, "k-12345678", `"api_key"`},
		{"aws access key", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID"},
		{"github token", "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github.com"},
		{"openai-style key", "OPENAI=sk-proj-abcdefghijklmnop1234abcdefghijklmnop1234", "sk-proj-abcdefghijklmnop1234abcdefghijklmnop1234", "OPENAI="},
		{"slack token", "xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij", ""},
		{"private key block", "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter", "b3BlbnNzaC1rZXktdjEAAAAA", "after"},
		{"url credentials", "postgres://admin:s3cr3tpw@db.internal:5432/app", "s3cr3tpw", "@db.internal"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "dozjgNryP4J3jVmNHl0w5N", ""},
		{"user pattern", "ticket corp-123456 leaked", "corp-123456", "ticket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.String(tt.in)
			if strings.Contains(got, tt.secret) {
				t.Errorf("secret survived: %q", got)
			}
			if !strings.Contains(got, Mask) {
				t.Errorf("no mask in %q", got)
			}
			if !strings.Contains(got, tt.keep) {
				t.Errorf("lost %q: %q", tt.keep, got)
			}
		})
	}
	for _, clean := range []string{
		"git push --force origin main",
		"Blocked `rm -rf /`: delete only what you need.",
		"read the password policy in docs/auth.md",
		"token: a", // too short to be a secret
	} {
		if got := r.String(clean); got != clean {
			t.Errorf("clean text changed: %q -> %q", clean, got)
		}
	}
}

func TestRedactValue(t *testing.T) {
	r, err := New(Config{Mask: []string{"tool.input.content"}, Drop: []string{"native"}})
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]any{
		"native": map[string]any{"raw": "x"},
		"tool": map[string]any{"name": "Write", "input": map[string]any{
			"file_path": "a.txt", "content": "whole file", "args": []any{"password=hunter22"},
		}},
	}
	got := r.Value(in, "").(map[string]any)
	if _, ok := got["native"]; ok {
		t.Error("dropped path kept")
	}
	input := got["tool"].(map[string]any)["input"].(map[string]any)
	if input["content"] != Mask || input["file_path"] != "a.txt" {
		t.Errorf("input = %v", input)
	}
	if s := input["args"].([]any)[0].(string); strings.Contains(s, "hunter22") {
		t.Errorf("secret in array survived: %q", s)
	}
	if in["tool"].(map[string]any)["input"].(map[string]any)["content"] != "whole file" {
		t.Error("Value changed its argument")
	}
}

func TestRedactBadPattern(t *testing.T) {
	if _, err := New(Config{Patterns: []string{"("}}); err == nil || !strings.Contains(err.Error(), `"("`) {
		t.Errorf("bad pattern: %v", err)
	}
}
