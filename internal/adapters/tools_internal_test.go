package adapters

import "testing"

// TestShellShapesCoverShellTools: every shell tool of an agent says which
// field it runs, and only shell tools do, so that no agent's own shell
// tool falls back to being read at every candidate field.
func TestShellShapesCoverShellTools(t *testing.T) {
	for agent, tools := range toolShapes {
		for name, shape := range tools {
			s, ok := ShellOf(agent, name)
			if (shape.kind == kindShell) != ok {
				t.Errorf("%s %s: kind %s, shell shape listed %v", agent, name, shape.kind, ok)
				continue
			}
			if ok && (len(s.Command) == 0 || shape.key != s.Command[len(s.Command)-1][0]) {
				t.Errorf("%s %s: runs %v, but the tool table names %q", agent, name, s.Command, shape.key)
			}
		}
	}
	for agent, tools := range shellShapes {
		for name := range tools {
			if toolShapes[agent][name].kind != kindShell {
				t.Errorf("%s %s has a shell shape but is not a shell tool", agent, name)
			}
		}
	}
}
