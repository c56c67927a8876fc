// Package config reads the configuration of ahp-opa: defaults, a YAML
// file, AHP_OPA_* environment variables and command-line flags, merged
// with strict checks so that a misspelt key is an error, not a default.
package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/pathread"
	"github.com/ahp-opa/ahp-opa/internal/state"
	"github.com/ahp-opa/ahp-opa/internal/suggest"
	"github.com/ahp-opa/ahp-opa/transport"
)

// EnvPrefix starts every environment variable that configures ahp-opa:
// AHP_OPA_LOG_LEVEL sets log_level.
const EnvPrefix = "AHP_OPA_"

// Config is the whole configuration. Sources apply in this order, later
// ones winning: defaults, the YAML file (--config), AHP_OPA_* environment
// variables, command-line flags.
type Config struct {
	Policy      []string `koanf:"policy"`
	WithBuiltin bool     `koanf:"with_builtin"`
	// Canary is a second policy serve evaluates beside the live one, off
	// the answer path, recording where the two disagree.
	Canary          []string         `koanf:"canary"`
	LogLevel        string           `koanf:"log_level"`
	LogFormat       string           `koanf:"log_format"`
	EvalTimeout     time.Duration    `koanf:"eval_timeout"`
	Stdio           bool             `koanf:"stdio"`
	MaxMessageBytes int              `koanf:"max_message_bytes"`
	MaxInputBytes   int              `koanf:"max_input_bytes"`
	Concurrency     int              `koanf:"concurrency"`
	Audit           audit.Config     `koanf:"audit"`
	DecisionLogs    audit.ShipConfig `koanf:"decision_logs"`
	// State is where session state lives: this process, or a store the
	// replicas of a fleet share.
	State state.Config `koanf:"state"`
	// Library configures the built-in library (data.ahp_opa.config):
	// disabled_rules, exceptions, protected_branches, mcp_allowlist…
	Library       map[string]any `koanf:"library"`
	Hook          HookConfig     `koanf:"hook"`
	HTTPConfig    `koanf:",squash"`
	PolicySources `koanf:",squash"`

	// OnRuleError is what a deny rule that fails means: deny, ignore or error.
	OnRuleError string `koanf:"on_rule_error"`
	// Shadow lists deny codes and packages evaluated but never answered.
	Shadow []string `koanf:"shadow"`

	// ConfigPath is the --config file this configuration came from, ""
	// for none: the guard protects it (service.WithGuardPaths).
	ConfigPath string `koanf:"-"`
}

// flagKeys maps flags whose configuration key is not their snake-case
// name.
var flagKeys = map[string]string{
	"audit-log": "audit.file.path",
	"fail-open": "hook.fail_open",
	"timeout":   "hook.timeout",
	"no-daemon": "hook.no_daemon",
}

// Default is the configuration before any source applies.
func Default() Config {
	return Config{
		LogLevel:        "info",
		LogFormat:       "auto",
		EvalTimeout:     engine.DefaultEvalTimeout,
		MaxMessageBytes: transport.DefaultMaxMessageBytes,
		MaxInputBytes:   transport.DefaultMaxInputBytes,
		Concurrency:     2,
		OnRuleError:     string(engine.RuleErrorDeny),
		HTTPConfig:      DefaultHTTP(),
		PolicySources:   DefaultPolicySources(),
		Hook:            DefaultHook(),
		State:           state.Default(),
	}
}

// Load merges the configuration sources for a command whose flags are fs
// (nil for none). configPath is the --config value ("" for none); environ
// lists the environment (os.Environ). Load can be called again to follow
// an edited file: it reads every source afresh.
func Load(fs *pflag.FlagSet, configPath string, environ func() []string) (Config, error) {
	k := koanf.New(".")
	lines := map[string]int{}      // config file key -> line
	fromEnv := map[string]string{} // key -> environment variable that set it
	var unknownEnv []string
	if configPath != "" {
		doc, err := ReadFile(configPath)
		if err != nil {
			if _, ok := errors.AsType[*pathread.Error](err); ok {
				return Config{}, fmt.Errorf("config file %w", err) // it names the path
			}
			return Config{}, fmt.Errorf("config file %s: %w", configPath, err)
		}
		if err := checkFileKeys(configPath, doc, lines); err != nil {
			return Config{}, err
		}
		if err := k.Load(bytesProvider(doc), yaml.Parser()); err != nil {
			return Config{}, fmt.Errorf("config file %s: %w", configPath, err)
		}
	}
	tokenVar := tokenEnvName(fs, k, environ)
	err := k.Load(env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: environ,
		TransformFunc: func(key, value string) (string, any) {
			if key == tokenVar {
				return "", nil // the bearer token itself, under a name token_env chose
			}
			// A double underscore nests: AHP_OPA_AUDIT__FILE__PATH is audit.file.path.
			name := key
			key = strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(key, EnvPrefix)), "__", ".")
			if key != "token" && !keyKnown(key) {
				unknownEnv = append(unknownEnv, name)
				return "", nil
			}
			fromEnv[key] = name
			if key == "policy" || key == "canary" {
				return key, strings.Split(value, ",")
			}
			if key == "token" {
				return "", nil // AHP_OPA_TOKEN is the bearer token itself (token_env), not a setting
			}
			return key, value
		},
	}), nil)
	if err != nil {
		return Config{}, fmt.Errorf("environment: %w", err)
	}
	if len(unknownEnv) > 0 {
		slices.Sort(unknownEnv)
		name := unknownEnv[0]
		leaves, _, _ := Keys()
		var names []string
		for _, l := range leaves {
			names = append(names, EnvKeyName(l))
		}
		return Config{}, fmt.Errorf("%w: environment variable %s is not a setting%s", ErrUnknownKey, name, suggest.DidYouMean(name, names))
	}
	if fs != nil {
		err = k.Load(posflag.ProviderWithFlag(fs, ".", k, func(f *pflag.Flag) (string, any) {
			if f.Name == "config" || f.Name == "help" {
				return "", nil
			}
			if key, ok := flagKeys[f.Name]; ok {
				return key, posflag.FlagVal(fs, f)
			}
			return strings.ReplaceAll(f.Name, "-", "_"), posflag.FlagVal(fs, f)
		}), nil)
		if err != nil {
			return Config{}, fmt.Errorf("flags: %w", err)
		}
	}
	cfg := Default()
	err = k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
		ErrorUnused:      true, // a misspelt key is an error, not a silent default
		WeaklyTypedInput: true, // environment values are strings
		Result:           &cfg,
		TagName:          "koanf",
	}})
	where := func(key string) string {
		if fs != nil {
			for name, f := range FlagNames(fs) {
				if f == key && fs.Changed(name) {
					return "flag --" + name
				}
			}
		}
		if name, ok := fromEnv[key]; ok {
			return "environment variable " + name
		}
		if line, ok := lines[key]; ok {
			return fmt.Sprintf("%s:%d", configPath, line)
		}
		return "default"
	}
	if err != nil {
		return Config{}, locateDecodeError(err, where, k.Get)
	}
	if err := checkLibrary(cfg.Library, where); err != nil {
		return Config{}, err
	}
	cfg.ConfigPath = configPath
	return cfg, cfg.Validate()
}

// tokenEnvName is the variable token_env names, from the sources that
// can set it (the file already in k, the environment, a flag), so that a
// name chosen under AHP_OPA_ is not taken for an unknown setting.
func tokenEnvName(fs *pflag.FlagSet, k *koanf.Koanf, environ func() []string) string {
	if fs != nil {
		if f := fs.Lookup("token-env"); f != nil && f.Changed {
			return f.Value.String()
		}
	}
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, EnvKeyName("token_env")+"="); ok {
			return v
		}
	}
	if v := k.String("token_env"); v != "" {
		return v
	}
	return DefaultTokenEnv
}

// FlagNames maps each flag of fs to its configuration key.
func FlagNames(fs *pflag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if key, ok := flagKeys[f.Name]; ok {
			out[f.Name] = key
		} else {
			out[f.Name] = strings.ReplaceAll(f.Name, "-", "_")
		}
	})
	return out
}

// bytesProvider hands koanf a configuration document already read.
type bytesProvider []byte

func (b bytesProvider) ReadBytes() ([]byte, error) { return b, nil }
func (b bytesProvider) Read() (map[string]any, error) {
	return nil, errors.New("bytesProvider needs a parser")
}

// Validate checks the values that no type expresses: ranges, choices, and
// settings that go together.
func (c Config) Validate() error {
	switch {
	case c.EvalTimeout <= 0:
		return fmt.Errorf("configuration: eval_timeout must be positive, got %s", c.EvalTimeout)
	case c.MaxMessageBytes < 1024:
		return fmt.Errorf("configuration: max_message_bytes must be at least 1024, got %d", c.MaxMessageBytes)
	case c.MaxInputBytes < 1024:
		return fmt.Errorf("configuration: max_input_bytes must be at least 1024, got %d", c.MaxInputBytes)
	case c.Concurrency < 1:
		return fmt.Errorf("configuration: concurrency must be at least 1, got %d", c.Concurrency)
	}
	if err := c.Hook.validate(); err != nil {
		return err
	}
	if _, err := engine.ParseOnRuleError(c.OnRuleError); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if err := c.State.Validate(); err != nil {
		return err
	}
	if err := c.PolicySources.validate(); err != nil {
		return err
	}
	return c.HTTPConfig.validate()
}

// ReadFile reads the --config file with bounds: a FIFO or device named by
// mistake is refused rather than waited on, and a huge file is refused
// rather than read whole.
func ReadFile(path string) ([]byte, error) {
	return pathread.Read(path, pathread.Limits{})
}

// Source is where a configuration comes from: a command's flags, its
// --config file and the environment. Load reads them all again, so that a
// service can follow an edited file with the flags and variables it
// started with.
type Source struct {
	Flags   *pflag.FlagSet
	Path    string          // the --config file; "" for none
	Environ func() []string // nil: no environment variables
}

// Load merges the sources (see Load).
func (s Source) Load() (Config, error) {
	environ := s.Environ
	if environ == nil {
		environ = func() []string { return nil }
	}
	return Load(s.Flags, s.Path, environ)
}

// LibraryOn reports whether the built-in library is served: asked for
// with with_builtin, or because no policy of the team's own is given.
func (c Config) LibraryOn() bool {
	return c.WithBuiltin || len(c.Policy) == 0 && len(c.Bundles) == 0
}

// PolicyNotice says in one sentence which policies are active and how to
// change that. warn is true when the team's own policy replaces the
// library, which drops its every rule without a word otherwise.
func (c Config) PolicyNotice() (msg string, warn bool) {
	own := len(c.Policy) > 0 || len(c.Bundles) > 0
	switch {
	case !own:
		return "policies: the built-in library only; add your own rules with --policy PATH --with-builtin", false
	case c.WithBuiltin:
		return "policies: your own rules and the built-in library", false
	default:
		return "policies: your own rules only, the built-in library is off (force pushes, secret reads, rm -rf … are not checked); add --with-builtin (with_builtin: true) to keep it", true
	}
}
