package shell

import (
	"slices"
	"testing"
)

// TestVariableProgramWords pins how a program word made of one unknown
// variable is read: a tool's conventional variable is that tool, and any
// other is a prefix whose command, read as if the variable were empty,
// is listed too.
func TestVariableProgramWords(t *testing.T) {
	tests := []struct {
		script string
		want   string
	}{
		{"$(MAKE) destroy ENV=prod", "make: make destroy ENV=prod"},
		{"${MAKE} -C infra deploy", "make: make -C infra deploy"},
		{"$(KUBECTL_BIN) delete ns staging", "kubectl: kubectl delete ns staging"},
		{"$SUDO rm -rf /srv/data", "rm: rm -rf /srv/data <variable-prefix>"},
		{"${DRY} git push --force", "git: git push --force <variable-prefix>"},
		{"ls dist | xargs $maybe gh release upload v1", "gh: gh release upload v1 <variable-prefix>"},
		{"$(SUDO) $(DOCKER) push acme/app", "docker: docker push acme/app <variable-prefix>"},
		{"${SUDO:-} rm -rf /opt/app", "rm: rm -rf /opt/app <variable-prefix>"},
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

// TestVariableProgramWordsLookalikes checks that a variable followed by
// options or assignments reads no command, and that the variable as
// written stays: it may hold any program.
func TestVariableProgramWordsLookalikes(t *testing.T) {
	for _, script := range []string{"$(CC) -O2 -o app main.c", "$PYTHON -m pytest", "$X FOO=1", `"$(curl -s x.example)" run`} {
		a := Analyze(script, DefaultLimits)
		for _, c := range a.Commands {
			if c.Via == ViaVariable {
				t.Errorf("%q: read a command after the variable: %q", script, describe(a))
			}
		}
	}
	a := Analyze("$TOOL publish", DefaultLimits)
	if len(a.Commands) == 0 || !a.Commands[0].DynamicCode {
		t.Errorf("the variable program word is no longer dynamic: %q", describe(a))
	}
}
