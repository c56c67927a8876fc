package engine

import (
	"os"
	"testing"
)

// withoutPrefilterEnv marks a test process that must start with OPA's own
// regex.match (TestRegexPrefilterInstall runs one).
const withoutPrefilterEnv = "AHP_TEST_WITHOUT_REGEX_PREFILTER"

// TestMain installs the regex prefilter as the command does, before any
// test evaluates, so the tests and benchmarks run what production runs.
func TestMain(m *testing.M) {
	if os.Getenv(withoutPrefilterEnv) != "1" {
		InstallRegexPrefilter()
	}
	os.Exit(m.Run())
}
