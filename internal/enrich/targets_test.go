package enrich

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTargetVerbsOnlyWhenUnread: a runner's target speaks by its name
// only when its definition could not be read; a Makefile that is read is
// judged by what its recipe runs.
func TestTargetVerbsOnlyWhenUnread(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("deploy:\n\techo deployed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sources := func(ahp map[string]any) []string {
		var kinds []string
		effs, _ := ahp["effects"].([]any)
		for _, e := range effs {
			kinds = append(kinds, e.(map[string]any)["source"].(map[string]any)["kind"].(string))
		}
		return kinds
	}
	if got := sources(ahpOf(t, shellEvent("make deploy", dir))); len(got) != 0 {
		t.Errorf("make deploy with a Makefile whose recipe echoes: effects from %v, want none", got)
	}
	if got := sources(ahpOf(t, shellEvent("make -f other.mk deploy", dir))); len(got) != 1 || got[0] != "target-verb" {
		t.Errorf("make deploy from a file that is not there: effects from %v, want one target-verb", got)
	}
}
