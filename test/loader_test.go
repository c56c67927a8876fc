package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// overLimit is the refusal of a policy over policy_limits, up to the end
// of the line (the error names the file and the key).
var overLimit = regexp.MustCompile(`policy over the size limits: [^"\n]*\(policy_limits\.[a-z_]+\)`)

// TestPolicyCommandsShareLimits: serve, eval and test load policies with
// the one loader, so a policy over policy_limits (from the configuration
// file, the environment or the defaults) is refused by each of them with
// the same error, naming the file and the key.
func TestPolicyCommandsShareLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	many := filepath.Join(dir, "many")
	for i := range 3 {
		writeFile(t, many, fmt.Sprintf("p%d.rego", i), fmt.Sprintf("package ahp.tool.before.p%d\n\ndeny contains \"no\" if input.tool.name == \"P\"\n", i))
	}
	maxFiles := writeFile(t, dir, "ahp-opa.yaml", "policy_limits:\n  max_files: 2\n")

	// A data document one byte over the default max_file_bytes (128 MiB):
	// sparse, and refused from its size before anything reads it.
	huge := filepath.Join(dir, "huge")
	writeFile(t, huge, "p.rego", dangerPolicy)
	if err := os.Truncate(writeFile(t, huge, "data.json", ""), 128<<20+1); err != nil {
		t.Fatal(err)
	}

	event := writeFile(t, dir, "event.json", interceptLine("evt-l1", "ls"))
	cases := []struct {
		name   string
		env    []string
		config []string
		policy string
		want   string
	}{
		{"max_files from the configuration file", nil, []string{"--config", maxFiles}, many, "more than 2 files (policy_limits.max_files)"},
		{"max_files from the environment", []string{"AHP_OPA_POLICY_LIMITS__MAX_FILES=2"}, nil, many, "more than 2 files (policy_limits.max_files)"},
		{"default max_file_bytes", nil, nil, huge, "data.json: file of 134217729 bytes, over 128 MiB (policy_limits.max_file_bytes)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runs := map[string][]string{
				"serve": append([]string{"serve", "--stdio", "--policy", c.policy}, c.config...),
				"eval":  append([]string{"eval", "--policy", c.policy, event}, c.config...),
				"test":  append([]string{"test", c.policy}, c.config...),
			}
			refusals := map[string]string{}
			for name, args := range runs {
				res := runOnceEnv(t, c.env, "", args...)
				refusals[name] = overLimit.FindString(res.stderr)
				if res.status == 0 || refusals[name] == "" {
					t.Errorf("%s: exit %d, stderr %q: want a refusal over policy_limits", name, res.status, res.stderr)
				}
			}
			if refusals["test"] != refusals["serve"] || refusals["eval"] != refusals["serve"] {
				t.Errorf("different refusals:\n serve %s\n eval  %s\n test  %s", refusals["serve"], refusals["eval"], refusals["test"])
			}
			if want := regexp.MustCompile(regexp.QuoteMeta(c.want) + `$`); !want.MatchString(refusals["test"]) {
				t.Errorf("test refused with %q, want it to end in %q", refusals["test"], c.want)
			}
		})
	}
}
