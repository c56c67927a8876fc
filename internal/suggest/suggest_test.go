package suggest

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	t.Parallel()
	keys := []string{"bundles", "log_level", "log_format", "audit.file.path", "protected_branches"}
	tests := []struct {
		name, s    string
		candidates []string
		want       string
	}{
		{"one deletion", "bundels", keys, "bundles"},
		{"one substitution", "log_levle", keys, "log_level"},
		{"missing letter", "audit.file.pth", keys, "audit.file.path"},
		{"exact", "bundles", keys, "bundles"},
		{"nothing near", "zzzzzzzzzzzz", keys, ""},
		{"no candidates", "bundles", nil, ""},
		{"empty input", "", []string{"ab", "abc"}, ""},
		// The limit is max(2, len/3): two edits for short names ...
		{"short, two edits", "ab", []string{"ba"}, "ba"},
		{"short, three edits", "xyz", []string{"abc"}, ""},
		// ... and a third of the length for long ones (12 runes: 4 edits).
		{"long, four edits", "abcdefghijkl", []string{"abcdefghWXYZ"}, "abcdefghWXYZ"},
		{"long, five edits", "abcdefghijkl", []string{"abcdefgVWXYZ"}, ""},
		{"ties go to the first", "cat", []string{"bat", "cab"}, "bat"},
		{"closer wins over first", "cat", []string{"dog", "cut", "cat"}, "cat"},
		{"runes, not bytes", "protégé", []string{"protege"}, "protege"},
		{"a huge value", strings.Repeat("a", 1<<20), keys, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Nearest(tt.s, tt.candidates); got != tt.want {
				t.Errorf("Nearest(%.40q, %q) = %q, want %q", tt.s, tt.candidates, got, tt.want)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	t.Parallel()
	if got, want := DidYouMean("bundels", []string{"bundles"}), `; did you mean "bundles"?`; got != want {
		t.Errorf("DidYouMean = %q, want %q", got, want)
	}
	if got := DidYouMean("zzzzzzzz", []string{"bundles"}); got != "" {
		t.Errorf("DidYouMean with nothing near = %q, want \"\"", got)
	}
}

func BenchmarkNearest(b *testing.B) {
	keys := make([]string, 0, 300)
	for i := range 300 {
		keys = append(keys, "dev.ahp-opa.rule-"+strings.Repeat("x", i%40))
	}
	for b.Loop() {
		Nearest("dev.ahp-opa.rule-xxxxxxxxxy", keys)
	}
}
