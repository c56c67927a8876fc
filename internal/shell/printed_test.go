package shell

import "testing"

// TestPrinted: what a command prints, as one function serves both the
// static expansion of $(echo …) and the text a script writes to a file.
func TestPrinted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		script string
		want   string
		ok     bool
	}{
		{`echo hi there`, "hi there\n", true},
		{`echo -n hi`, "hi", true},
		{`echo -e 'a\tb'`, "a\tb\n", true},
		{`echo 'a\tb'`, `a\tb` + "\n", true},
		{`echo "export PATH=$HOME/bin:$PATH"`, "export PATH=$HOME/bin:$PATH\n", true},
		{`printf 'all:\n\tmake\n'`, "all:\n\tmake\n", true},
		{`printf '%s=%d%%\n' a 5`, "a=5%\n", true},
		{`printf '%s\n' a b`, "a\nb\n", true},
		{`printf '%x' 5`, "", false},
		{`printf -v v x`, "", false},
		{"cat <<EOF\nline\nEOF", "line\n", true},
		{`cat <<< word`, "word\n", true},
		{`cat file`, "", false},
		{`ls`, "", false},
	}
	for _, tt := range tests {
		a := Analyze(tt.script, DefaultLimits)
		if len(a.Commands) == 0 {
			t.Fatalf("%q: no command", tt.script)
		}
		got, ok := Printed(&a.Commands[0])
		if got != tt.want || ok != tt.ok {
			t.Errorf("Printed(%q) = %q, %v; want %q, %v", tt.script, got, ok, tt.want, tt.ok)
		}
	}
}
