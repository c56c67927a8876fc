package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/redact"
	"github.com/ahp-opa/ahp-opa/internal/suggest"
)

// ErrUnknownKey is wrapped by every error about a key that the
// configuration does not have, so callers and tests can tell a typo from a
// bad value.
var ErrUnknownKey = errors.New("unknown key")

// Keys lists every key of Config, dotted ("audit.file.path"), derived
// from the koanf tags so that a new field is a new key with no other change.
// open holds the keys whose contents are free-form (maps handed on as they
// are, such as bundles or library), which are not checked below themselves
// here.
func Keys() (leaves []string, sections, open map[string]bool) {
	sections, open = map[string]bool{}, map[string]bool{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("koanf")
			name, opts, _ := strings.Cut(tag, ",")
			if tag == "-" || !f.IsExported() {
				continue
			}
			if opts == "squash" {
				walk(f.Type, prefix)
				continue
			}
			if name == "" {
				continue
			}
			key := prefix + name
			switch {
			case f.Type.Kind() == reflect.Struct && f.Type.String() != "time.Time":
				sections[key] = true
				walk(f.Type, key+".")
			case f.Type.Kind() == reflect.Map || f.Type.Kind() == reflect.Interface:
				open[key] = true
				leaves = append(leaves, key)
			default:
				leaves = append(leaves, key)
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	sort.Strings(leaves)
	return leaves, sections, open
}

// keyKnown reports whether key is a key of Config or lies inside an open one.
func keyKnown(key string) bool {
	leaves, sections, open := Keys()
	if sections[key] {
		return true
	}
	for _, l := range leaves {
		if l == key || (open[l] && strings.HasPrefix(key, l+".")) {
			return true
		}
	}
	return false
}

// yamlKey is one key of a YAML document with the line it is on.
type yamlKey struct {
	path []string
	line int
}

// yamlKeys lists every mapping key in doc with its line, depth first.
func yamlKeys(doc []byte) ([]yamlKey, error) {
	var root yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(doc)).Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var out []yamlKey
	var walk func(n *yaml.Node, path []string)
	walk = func(n *yaml.Node, path []string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := append(append([]string(nil), path...), n.Content[i].Value)
				out = append(out, yamlKey{path: p, line: n.Content[i].Line})
				walk(n.Content[i+1], p)
			}
		}
	}
	walk(&root, nil)
	return out, nil
}

// checkFileKeys reports the first key of the configuration file that
// Config does not have, and the library keys and rule ids under library:
// that the built-in library does not know, naming the file and line.
// lines receives the line of every key, for later error messages.
func checkFileKeys(path string, doc []byte, lines map[string]int) error {
	keys, err := yamlKeys(doc)
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	leaves, sections, _ := Keys()
	all := append(append([]string(nil), leaves...), mapKeys(sections)...)
	for _, k := range keys {
		dotted := strings.Join(k.path, ".")
		lines[dotted] = k.line
		if !keyKnown(dotted) {
			return fmt.Errorf("%w %q at %s:%d%s", ErrUnknownKey, dotted, path, k.line, suggest.DidYouMean(dotted, all))
		}
	}
	return nil
}

// checkLibrary checks the library: section against the keys and rule ids
// of the built-in library; lines gives the file line of each key.
func checkLibrary(lib map[string]any, where func(key string) string) error {
	err := bundles.CheckLibraryConfig(lib)
	var le *bundles.LibraryConfigError
	if errors.As(err, &le) {
		return fmt.Errorf("%w at %s", err, where("library."+le.Key))
	}
	return err
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mapstructure names the offending field as 'a.b.c' in its messages.
var decodeKey = regexp.MustCompile(`'([A-Za-z0-9_.\[\]]+)'`)

// locateDecodeError adds where each key named by a decoding error came
// from (file and line, environment variable, or flag), and the value
// given (value returns it), unless the key's name says it is a secret.
func locateDecodeError(err error, where func(key string) string, value func(key string) any) error {
	msg := err.Error()
	loc := decodeKey.FindStringSubmatchIndex(msg)
	if loc == nil {
		return fmt.Errorf("configuration: %w", err)
	}
	key := msg[loc[2]:loc[3]]
	if i := strings.IndexByte(key, '['); i >= 0 {
		key = key[:i]
	}
	// What follows the key in mapstructure's report is the reason.
	reason, _, _ := strings.Cut(strings.TrimSpace(msg[loc[1]:]), "\n")
	// The decoder leaves the value out of its message; without it the user
	// cannot tell which of several sources (file, variable, flag) won.
	if v, ok := value(key).(string); ok && !redact.SecretName(key[strings.LastIndexByte(key, '.')+1:]) {
		reason = fmt.Sprintf("%s (got %q)", reason, v)
	}
	return fmt.Errorf("configuration: bad value for key %q at %s: %s", key, where(key), reason)
}

// EnvKeyName is the environment variable that sets key.
func EnvKeyName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

// FileOnlyKeysHelp lists, for a command's help, the configuration keys that
// have no flag: they are set in the --config file or as AHP_OPA_* variables.
func FileOnlyKeysHelp(fs *pflag.FlagSet) string {
	flagged := map[string]bool{}
	for _, key := range FlagNames(fs) {
		flagged[key] = true
	}
	var b strings.Builder
	b.WriteString("\n\nConfiguration keys without a flag (--config file, or AHP_OPA_* with __ for\neach dot; docs/configuration.md lists defaults):\n")
	leaves, _, _ := Keys()
	for _, key := range leaves {
		if !flagged[key] {
			fmt.Fprintf(&b, "  %-50s %s\n", key, EnvKeyName(key))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
