package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/lineage"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/config"
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
	limits      bundles.Limits
}

func testCommand() *cobra.Command {
	var o testOptions
	var configPath string
	cmd := &cobra.Command{
		Use:   "test [PATH]...",
		Short: "Run Rego unit tests, like `opa test`",
		Long: `Test runs the test_ rules of the Rego files in PATH, read as serve reads
them: .rego files and directories searched recursively (test files
included, hidden entries skipped, data.json and data.yaml documents placed
at their directory's path) and OPA bundles, under the same policy_limits
(from --config or AHP_OPA_POLICY_LIMITS__*), so a policy that serve would
refuse fails here too.

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
			// Only the configuration's policy_limits apply: the tests
			// are held to the limits serve would load the policy with.
			cfg, err := config.Load(pflag.NewFlagSet("test", pflag.ContinueOnError), configPath, os.Environ)
			if err != nil {
				return err
			}
			o.limits = cfg.PolicyLimits
			return runTests(cmd.Context(), cmd.OutOrStdout(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "YAML configuration `file` whose policy_limits apply")
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
	modules, data, err := loadTestSources(paths, o.withBuiltin, o.limits)
	if err != nil {
		return err
	}
	needsLibrary := !o.withBuiltin && len(paths) > 0 && readsLibrary(modules)
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
		// Silence would read as success: say that nothing was tested.
		fmt.Fprintf(out, "no tests found in %s (tests are rules named test_* in the .rego files)\n", describePaths(paths))
		if o.failOnEmpty {
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
	if failed && needsLibrary {
		fmt.Fprintf(out, "%s refers to the built-in library (data.ahp.tool.before.builtin or data.ahp.lib), which is loaded only with --with-builtin: run ahp-opa test --with-builtin %s\n",
			describePaths(paths), strings.Join(paths, " "))
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
// with the loader serve uses, under the same limits; without paths, the
// embedded library.
func loadTestSources(paths []string, withBuiltin bool, lim bundles.Limits) (map[string]*ast.Module, map[string]any, error) {
	var parts []*bundles.Policy
	if len(paths) == 0 || withBuiltin {
		// The library's own tests run only when it is what is tested.
		load := bundles.Builtin
		if len(paths) == 0 {
			load = bundles.BuiltinWithTests
		}
		p, err := load()
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, p)
	}
	if len(paths) > 0 {
		p, err := bundles.LoadTests(paths, bundles.LoadOptions{Limits: lim})
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, p)
	}
	p, err := bundles.Merge(parts...)
	if err != nil {
		return nil, nil, err
	}
	modules := make(map[string]*ast.Module, len(p.Modules)+len(p.Tests))
	maps.Copy(modules, p.Modules)
	maps.Copy(modules, p.Tests)
	data := p.Data
	if data == nil {
		data = map[string]any{}
	}
	return modules, data, nil
}

// describePaths names what was tested, for messages.
func describePaths(paths []string) string {
	if len(paths) == 0 {
		return "the built-in library"
	}
	return strings.Join(paths, ", ")
}

// libraryRoots are the packages of the built-in library a user's tests
// can refer to.
var libraryRoots = []ast.Ref{
	ast.MustParseRef("data.ahp.tool.before.builtin"),
	ast.MustParseRef("data.ahp.lib"),
}

// readsLibrary reports whether a module other than the library's own
// refers to one of its packages: its tests cannot pass without it.
func readsLibrary(modules map[string]*ast.Module) bool {
	found := false
	for _, m := range modules {
		if slices.ContainsFunc(libraryRoots, m.Package.Path.HasPrefix) {
			continue // the library itself, loaded with --with-builtin
		}
		ast.WalkRefs(m, func(r ast.Ref) bool {
			found = found || slices.ContainsFunc(libraryRoots, r.HasPrefix)
			return found
		})
		if found {
			return true
		}
	}
	return false
}
