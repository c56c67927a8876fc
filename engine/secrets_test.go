package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport/ahp"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport"
)

// bigText returns about n bytes of plain code, ending with a newline.
func bigText(n int) string {
	const line = "export function add(a, b) { return a + b } // plain code\n"
	return strings.Repeat(line, n/len(line)+1)
}

// TestWriteSecretInLargeContent runs large writes through the enrichment
// and the built-in library together: a secret is found wherever it sits,
// in every field and tool shape that carries written text.
func TestWriteSecretInLargeContent(t *testing.T) {
	t.Parallel()
	e := builtinEngine(t)
	const (
		key  = "AKIAQWERTYUIOPASDFGH"
		code = "dev.ahp-opa.secrets.write-secret"
	)
	big := bigText(4 << 20)
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEpAIBAAKCAQEAw0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH\n", 2000) + "-----END RSA PRIVATE KEY-----"
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		want  string
	}{
		{"end of 4 MB content", "Write", map[string]any{"file_path": "/home/dev/repo/a.js", "content": big + key}, code},
		{"start of 4 MB content", "Write", map[string]any{"file_path": "/home/dev/repo/a.js", "content": key + "\n" + big}, code},
		{"4 MB content, no secret", "Write", map[string]any{"file_path": "/home/dev/repo/a.js", "content": big}, ""},
		{"key block from first to last line", "Write", map[string]any{"file_path": "/home/dev/repo/id", "content": pem}, code},
		{"first and last line", "write_file", map[string]any{"file_path": "/home/dev/repo/a.txt", "content": key + "\n" + big + "t=ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, code},
		{"edit new_string end", "Edit", map[string]any{"file_path": "/home/dev/repo/a.js", "old_string": "x", "new_string": big + key}, code},
		{"multi-edit, last edit", "MultiEdit", map[string]any{"file_path": "/home/dev/repo/a.js", "edits": []any{
			map[string]any{"old_string": "a", "new_string": big},
			map[string]any{"old_string": "b", "new_string": "k = '" + key + "'"},
		}}, code},
		{"4 MB into .env", "Write", map[string]any{"file_path": "/home/dev/repo/.env", "content": big + key}, ""},
		{"here-doc end of 100 KB", "Bash", cmd("cat > a.js <<'EOF'\n" + bigText(100<<10) + key + "\nEOF"), code},
		{"here-doc, key block", "Bash", cmd("cat > id <<'EOF'\n" + pem + "\nEOF"), code},
		{"here-doc 100 KB, no secret", "Bash", cmd("cat > a.js <<'EOF'\n" + bigText(100<<10) + "EOF"), ""},
		{"here-doc read, not written", "Bash", cmd("python3 - <<'EOF'\nprint('" + key + "')\nEOF"), ""},
	}
	// Each 4 MB case takes seconds under -race; the quick run keeps one
	// per outcome, the long run every shape.
	long := map[string]bool{"start of 4 MB content": true, "first and last line": true, "edit new_string end": true, "multi-edit, last edit": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if long[tt.name] {
				testkit.RequireLong(t)
			}
			d, err := judge(t, e, testkit.ToolEvent(map[string]any{"name": tt.tool, "origin": "native", "input": tt.input}))
			if err != nil {
				t.Fatal(err)
			}
			var codes []string
			for _, m := range d.Matches {
				codes = append(codes, m.Code)
			}
			if tt.want == "" && len(codes) > 0 || tt.want != "" && !slices.Equal(codes, []string{tt.want}) {
				t.Errorf("codes %v, want [%s]", codes, tt.want)
			}
		})
	}
}

// TestSecretsNeverHoldTheSecret: input.ahp.secrets says kind and place,
// and no value of it is a piece of the secret.
func TestSecretsNeverHoldTheSecret(t *testing.T) {
	t.Parallel()
	const key = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	for _, input := range []map[string]any{
		{"name": "Write", "input": map[string]any{"file_path": "a", "content": "line\nt = '" + key + "'"}},
		{"name": "Bash", "input": cmd("echo '" + key + "' > t.txt")},
		{"name": "Bash", "input": cmd("cat > t <<EOF\n" + key + "\nEOF")},
	} {
		ahp := enrich.Enrich(typed(t, testkit.ToolEvent(input)), enrich.Options{Home: "/home/dev"}, enrich.All).Object
		s := ahp.Get(ast.StringTerm("secrets"))
		if s == nil {
			t.Fatalf("%v: no input.ahp.secrets", input)
		}
		if strings.Contains(s.String(), "abcdefghij") {
			t.Errorf("input.ahp.secrets holds the secret: %v", s)
		}
		arr := s.Value.(*ast.Array)
		if arr.Len() != 1 {
			t.Errorf("%v: %d findings, want 1", input, arr.Len())
		}
	}
}

// TestContentKeysMatchLibrary: the fields scanned for secrets are the
// library's tools._content_keys.
func TestContentKeysMatchLibrary(t *testing.T) {
	t.Parallel()
	s := builtinEngine(t).Snapshot()
	var lib []string
	for _, x := range evalLib(t, s, "data.ahp.lib.tools._content_keys", nil).([]any) {
		lib = append(lib, x.(string))
	}
	if !slices.Equal(lib, enrich.ContentKeys) {
		t.Errorf("enrich.ContentKeys = %v, library = %v", enrich.ContentKeys, lib)
	}
}

// TestTooLargeIsDenied: a request over MaxInputBytes is not evaluated and
// gets a deny that says why; one at the limit is decided by the policy.
func TestTooLargeIsDenied(t *testing.T) {
	t.Parallel()
	e := New(Options{Home: "/home/dev", MaxInputBytes: 2048, EvalTimeout: testEvalTimeout})
	e.Activate(builtinSnapshot(t, nil, CompileOptions{}))
	ev := testkit.ToolEvent(map[string]any{"name": "Bash", "input": cmd("ls")})
	req := func(size int, effects ...string) *transport.InterceptRequest {
		return &transport.InterceptRequest{ID: transport.StringID("e1"), Event: transport.Event{ID: "e1", Object: ast.MustInterfaceToValue(ev).(ast.Object)}, Effects: effects, Size: size}
	}
	v := e.Judge(context.Background(), req(2048, "deny"))
	if v.Err != nil || len(v.Result.Effects) != 0 || v.Input == nil {
		t.Errorf("at the limit: %+v, want evaluated and allowed", v)
	}
	v = e.Judge(context.Background(), req(2049, "deny"))
	if v.Err != nil || len(v.Result.Effects) != 1 || v.Input != nil {
		t.Fatalf("over the limit: %+v, want one deny without evaluation", v)
	}
	eff := v.Result.Effects[0]
	if eff.Code != TooLargeCode || !strings.Contains(eff.Reason, "2049 bytes") || !strings.Contains(eff.Reason, "2048") || v.Decision.Revision == "" {
		t.Errorf("deny %+v (revision %q)", eff, v.Decision.Revision)
	}
	// B-INT-6 as for any deny: not advertised, an error.
	if v := e.Judge(context.Background(), req(4096)); v.Err == nil || v.Err.Code != ahp.CodeInvalidParams {
		t.Errorf("deny not advertised: %+v", v)
	}
}

// TestSecretsPlaceholdersCannotCrowdOut: stand-ins past the limit in one
// field do not hide a live token in another.
func TestSecretsPlaceholdersCannotCrowdOut(t *testing.T) {
	t.Parallel()
	stand := strings.Repeat("echo ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; ", 100)
	d, err := judge(t, builtinEngine(t), testkit.ToolEvent(map[string]any{"name": "Bash",
		"input": cmd(stand + "cat > t.txt <<EOF\nAKIAQWERTYUIOPASDFGH\nEOF")}))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Denied() || d.Matches[0].Code != "dev.ahp-opa.secrets.write-secret" {
		t.Errorf("matches %+v, want write-secret", d.Matches)
	}
}
