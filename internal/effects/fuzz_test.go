package effects

import (
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/shell"
	"github.com/ahp-opa/ahp-opa/rego"
)

// FuzzParse: any table document parses to a table or an ErrTable, and a
// table that compiles matches any command without panicking.
func FuzzParse(f *testing.F) {
	f.Add(rego.EffectsTable[:min(len(rego.EffectsTable), 4096)], "kubectl delete pod x")
	f.Add([]byte(`{"programs":{"x":{"launches":"first","rows":[{"path":"* a","effect":"publish","args":"^b"}],"local":[{"operand":"last","loopback":true,"why":"w"}]}},"verbs":{"go":{"effect":"publish"}}}`), "x y a b")
	f.Add([]byte(`{"programs":{"x":{"alias":"x"}}}`), "x x x x")
	f.Add([]byte(`{"programs":{"x":{"rows":[{"path":"up","effect":"remote.change","env":{"X_ENV":"^prod"},"stdin":true}]}}}`), "X_ENV=prod x up < a.sql")
	f.Fuzz(func(t *testing.T, doc []byte, line string) {
		tab, err := Parse(doc)
		if err != nil {
			return
		}
		m, err := Compile(tab)
		if err != nil {
			return
		}
		a := shell.Analyze(line, shell.DefaultLimits)
		var out []Effect
		for i := range a.Commands {
			out = m.Command(&a.Commands[i], i, workspace{}, out)
		}
		_ = m.Tool(line, []string{line}, nil)
	})
}
