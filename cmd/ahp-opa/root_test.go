package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestRootEdges (issue 30): --version works like `version`, help shows a
// boolean flag as --x (not --x[=true|false]) on every command, and such a
// flag still turns on when given alone.
func TestRootEdges(t *testing.T) {
	run := func(args ...string) string {
		t.Helper()
		root := rootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	if got, want := run("--version"), run("version"); got != want || !strings.HasPrefix(got, "ahp-opa ") {
		t.Errorf("--version printed %q, version %q", got, want)
	}
	for _, c := range rootCommand().Commands() {
		help := run(c.Name(), "--help")
		if strings.Contains(help, "[=true|false]") {
			t.Errorf("ahp-opa %s --help shows [=true|false]:\n%s", c.Name(), help)
		}
		if strings.Contains(help, "--with-builtin") && strings.Contains(help, "serve the built-in library") {
			t.Errorf("ahp-opa %s --help says --with-builtin serves:\n%s", c.Name(), help)
		}
	}
	root := rootCommand()
	eval, _, err := root.Find([]string{"eval"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eval.ParseFlags([]string{"--with-builtin", "--print-input"}); err != nil {
		t.Fatal(err)
	}
	if on, err := eval.Flags().GetBool("with-builtin"); err != nil || !on {
		t.Errorf("--with-builtin alone: %v, %v", on, err)
	}
}

// TestLogDurationsReadable: JSON logs carry a duration as "218ms", not as
// nanoseconds.
func TestLogDurationsReadable(t *testing.T) {
	var out bytes.Buffer
	log, err := newLogger(&out, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("policy loaded", "duration", 218*time.Millisecond)
	if !strings.Contains(out.String(), `"duration":"218ms"`) {
		t.Errorf("log line %s", out.String())
	}
}
