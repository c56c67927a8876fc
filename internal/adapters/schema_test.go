package adapters_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// TestEventsMatchSchema: every tool.before, tool.after and session.end a
// fixture maps to is valid against the official draft schema. session.start
// is left out: its manifest is the harness's capability manifest, which a
// hook adapter cannot know.
func TestEventsMatchSchema(t *testing.T) {
	schemaDir := filepath.Join(testkit.AHP(t), "conformance", "schema", "draft")
	c := jsonschema.NewCompiler()
	entries, err := os.ReadDir(schemaDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		f, err := os.Open(filepath.Join(schemaDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if err := c.AddResource(id, doc); err != nil {
			t.Fatal(err)
		}
	}
	schemas := map[string]*jsonschema.Schema{}
	for typ, file := range map[string]string{
		ahp.EventToolBefore: "tool-before", ahp.EventToolAfter: "tool-after", ahp.EventSessionEnd: "session-end",
	} {
		if schemas[typ], err = c.Compile("https://agenthooksprotocol.org/schemas/draft/" + file + ".schema.json"); err != nil {
			t.Fatal(err)
		}
	}
	dir, fixtures := loadIndex(t)
	for _, f := range fixtures {
		if f.Kind != "input" {
			continue
		}
		ev, err := adapters.Parse(f.Agent, read(t, filepath.Join(dir, f.File)), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		s := schemas[ev.Type]
		if s == nil {
			continue
		}
		b, _ := json.Marshal(ev.Object)
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); err != nil {
			t.Errorf("%s: %v", f.File, err)
		}
	}
}
