package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/lineage"
	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/rego"
)

type testOptions struct {
	verbose     bool
	run         string
	coverage    bool
	threshold   float64
	withBuiltin bool
	timeout     time.Duration
	format      string // pretty or json, as opa test --format
	explain     string // trace filter with -v: fails, full, notes ("" : notes and fails, as opa)
	varValues   bool   // show the failing line and its local variables
	skipZero    bool   // skipped tests do not change the exit status
	failOnEmpty bool   // finding no test is an error
}

func testCommand() *cobra.Command {
	var o testOptions
	cmd := &cobra.Command{
		Use:   "test [PATH]...",
		Short: "Run Rego unit tests, like `opa test`",
		Long: `Test runs the test_ rules of the Rego files in PATH (files or directories,
searched recursively like opa test: .rego files, test files included, and
JSON/YAML data documents placed at their directory's path).

Without PATH it runs the tests of the built-in library embedded in the
binary. With --with-builtin, the built-in library's rules are loaded next to
PATH, so tests of a user policy can check how it combines with them (a
disabled built-in rule, an exception).

The tests see only what they put in input: to test rules that read
input.ahp, give the enriched input, which ` + "`ahp-opa eval --print-input`" + ` prints.

Exit status, as opa test: 0 when every test passes; 2 when a test fails,
errors or is skipped (-z: skipped tests do not count) or coverage is below
--threshold; 1 when the tests cannot run (a file does not parse or
compile), or when no test was found with --fail-on-empty.

Output, as opa test: each outcome is PASS, FAIL, ERROR or SKIPPED; -v
prints every test with its duration and, for failures, the trace (notes
and failed expressions; --explain picks fails, full, notes or debug);
--format json prints opa's JSON results. The output has no colour.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch o.format {
			case "pretty", "json":
			default:
				return fmt.Errorf("--format %q: want pretty or json", o.format)
			}
			switch o.explain {
			case "", "fails", "full", "notes", "debug":
			default:
				return fmt.Errorf("--explain %q: want fails, full, notes or debug", o.explain)
			}
			return runTests(cmd.Context(), cmd.OutOrStdout(), args, o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print every test with its duration, and the trace of failing ones")
	f.StringVarP(&o.run, "run", "r", "", "run only the tests whose package.name matches this `regex`")
	f.BoolVarP(&o.coverage, "coverage", "c", false, "print a JSON coverage report instead of the results")
	f.Float64Var(&o.threshold, "threshold", 0, "with --coverage, fail when coverage is below this `percentage`")
	f.BoolVar(&o.withBuiltin, "with-builtin", false, "load the built-in library's rules next to PATH")
	f.StringVarP(&o.format, "format", "f", "pretty", "output `format`: pretty or json")
	f.StringVar(&o.explain, "explain", "", "with -v, the trace shown: fails, full, notes or debug (default: notes and fails)")
	f.BoolVar(&o.varValues, "var-values", false, "show the failing expression's line and local variables")
	f.BoolVarP(&o.skipZero, "exit-zero-on-skipped", "z", false, "skipped tests do not make the exit status non-zero")
	f.BoolVar(&o.failOnEmpty, "fail-on-empty", false, "exit 1 when no test was found")
	f.DurationVar(&o.timeout, "timeout", defaultTestTimeout, "deadline for each test")
	return cmd
}

// defaultTestTimeout bounds each test when no --timeout is given.
const defaultTestTimeout = 30 * time.Second

func runTests(ctx context.Context, out io.Writer, paths []string, o testOptions) error {
	if o.timeout <= 0 {
		o.timeout = defaultTestTimeout
	}
	modules, data, err := loadTestSources(paths, o.withBuiltin)
	if err != nil {
		return err
	}
	store := inmem.NewFromObject(data)
	txn, err := store.NewTransaction(ctx)
	if err != nil {
		return err
	}
	defer store.Abort(ctx, txn)

	compiler := ast.NewCompiler().
		WithCapabilities(engine.DefaultCapabilities()).
		WithEnablePrintStatements(true)
	var cov *cover.Cover
	runner := tester.NewRunner().
		SetCompiler(compiler).
		SetStore(store).
		SetModules(modules).
		SetTimeout(o.timeout).
		Filter(o.run).
		CapturePrintOutput(true).
		EnableTracing(o.verbose).
		RaiseBuiltinErrors(true)
	if o.coverage {
		cov = cover.New()
		runner.SetCoverageQueryTracer(cov)
	}
	ch, err := runner.RunTests(ctx, txn)
	if err != nil {
		return fmt.Errorf("running tests: %w", err)
	}

	var results []*tester.Result
	counted := make(chan *tester.Result)
	go func() {
		defer close(counted)
		for r := range ch {
			r.Trace = filterTrace(o, r.Trace)
			if r.Error != nil {
				// One outcome per test: an errored test reads ERROR on its
				// own line too, as it is counted in the summary.
				r.Fail = false
			}
			results = append(results, r)
			counted <- r
		}
	}()
	var rep tester.Reporter = tester.PrettyReporter{Output: out, Verbose: o.verbose,
		FailureLine: o.varValues || o.verbose, LocalVars: o.varValues || o.verbose}
	if o.format == "json" {
		rep = tester.JSONReporter{Output: out}
	}
	if o.coverage {
		for range counted {
		}
	} else if err := rep.Report(counted); err != nil {
		return err
	}

	if len(results) == 0 {
		if o.failOnEmpty {
			fmt.Fprintln(out, "no tests were run")
			return exitError{code: 1}
		}
		return nil
	}
	failed := false
	for _, r := range results {
		if !r.Pass() && !(r.Skip && o.skipZero) {
			failed = true
		}
	}
	if o.coverage {
		report := cov.Report(modules)
		b, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
		if report.Coverage < o.threshold {
			fmt.Fprintf(out, "coverage %.2f%% is below the threshold of %.2f%%\n", report.Coverage, o.threshold)
			failed = true
		}
	}
	if failed {
		return exitError{code: 2}
	}
	return nil
}

// filterTrace keeps the trace events that -v and --explain ask for, as
// opa test does: notes and failures by default.
func filterTrace(o testOptions, trace []*topdown.Event) []*topdown.Event {
	switch o.explain {
	case "notes":
		return lineage.Notes(trace)
	case "full":
		return lineage.Full(trace)
	case "fails":
		return lineage.Fails(trace)
	case "debug":
		return lineage.Debug(trace)
	}
	return lineage.Filter(trace, func(e *topdown.Event) bool {
		return e.Op == topdown.NoteOp || e.Op == topdown.FailOp
	})
}

// loadTestSources loads Rego modules (tests included) and data documents
// the way opa test does; without paths, the embedded library.
func loadTestSources(paths []string, withBuiltin bool) (map[string]*ast.Module, map[string]any, error) {
	modules := map[string]*ast.Module{}
	data := map[string]any{}
	add := func(res *loader.Result, prefix string, tests bool) error {
		for _, f := range res.Modules {
			if !tests && strings.HasSuffix(f.Name, "_test.rego") {
				continue
			}
			modules[prefix+f.Name] = f.Parsed
		}
		return mergeDocuments(data, res.Documents, "data")
	}
	load := func(fl loader.FileLoader, ps []string) (*loader.Result, error) {
		return fl.WithRegoVersion(ast.RegoV1).WithProcessAnnotation(true).Filtered(ps, hiddenFiles)
	}
	if len(paths) == 0 || withBuiltin {
		res, err := load(loader.NewFileLoader().WithFS(rego.FS), []string{"."})
		if err != nil {
			return nil, nil, fmt.Errorf("built-in library: %w", err)
		}
		// The library's own tests run only when it is what is tested.
		if err := add(res, bundles.BuiltinPrefix, len(paths) == 0); err != nil {
			return nil, nil, err
		}
	}
	if len(paths) > 0 {
		res, err := load(loader.NewFileLoader(), paths)
		if err != nil {
			return nil, nil, fmt.Errorf("loading %s: %w", strings.Join(paths, ", "), err)
		}
		if err := add(res, "", true); err != nil {
			return nil, nil, err
		}
	}
	if len(modules) == 0 {
		return nil, nil, errors.New("no Rego files found")
	}
	return modules, data, nil
}

// hiddenFiles is a loader filter that skips dot files and directories below
// the given paths (.git, editor files), as opa test does.
func hiddenFiles(_ string, info fs.FileInfo, depth int) bool {
	return depth > 0 && strings.HasPrefix(info.Name(), ".")
}

// mergeDocuments merges src into dst key by key; a value other than an
// object may be set only once.
func mergeDocuments(dst, src map[string]any, path string) error {
	for k, v := range src {
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		a, ok1 := old.(map[string]any)
		b, ok2 := v.(map[string]any)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s.%s is set by more than one data document", path, k)
		}
		if err := mergeDocuments(a, b, path+"."+k); err != nil {
			return err
		}
	}
	return nil
}
