package indirect

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzResolve writes arbitrary definition files and resolves commands
// against them: no input may panic, loop or yield a step outside the
// workspace.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		sample["Makefile"], sample["justfile"], sample["Rakefile"], sample["Taskfile.yml"], sample["package.json"],
		"a: b\nb: a\n\techo $(A)\nA = $(B)\nB = $(A)\n", "x:\n    {{", "tasks: [1", `{"scripts":{"x":1}}`, `{"scripts":{"x":["@x","@y"],"y":"@x"}}`, `{"tasks":{"x":{"command":"a"}}}`,
	} {
		f.Add(s)
	}
	argvs := [][]string{{"make"}, {"make", "a"}, {"just"}, {"just", "x", "y"}, {"rake"}, {"task"}, {"npm", "run", "x"}, {"npm", "install"}, {"./s.sh", "a"}, {"composer", "x"}, {"deno", "task", "x"}}
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		for _, name := range []string{"Makefile", "justfile", "Rakefile", "Taskfile.yml", "package.json", "s.sh", "composer.json", "deno.json"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ws := Workspace{Dir: dir, Roots: []string{dir}}
		for _, argv := range argvs {
			res, _ := Resolve(argv, nil, ws)
			for _, st := range res.Steps {
				if !within(st.Dir, dir) {
					t.Fatalf("%q: step runs in %s, outside %s", argv, st.Dir, dir)
				}
			}
		}
	})
}
