package state

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// FuzzDecodeFacts: whatever a store holds under a facts key (another
// program's value, a cut write), decoding it is an error or the
// documented object, never a panic.
func FuzzDecodeFacts(f *testing.F) {
	f.Add([]byte(`{"calls":{"shell":2},"denied":1,"files_read":["/repo/.env"],"secret_paths":["/repo/.env"],"recent":[{"f":"shell","t":"1767323045000000000"}]}`))
	f.Add([]byte(`{"calls":{},"denied":0}`))
	f.Add([]byte(`{"recent":[{"f":"x","t":"1e3"}]}`))
	f.Add([]byte(`{"files_read":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeFacts(b)
		if err != nil {
			return
		}
		obj, ok := v.(ast.Object)
		if !ok {
			t.Fatalf("facts are %T", v)
		}
		for _, k := range []string{"calls", "total_calls", "denied", "files_read", "files_written", "hosts_fetched", "secrets_touched", "secret_paths", "recent"} {
			if obj.Get(ast.StringTerm(k)) == nil {
				t.Fatalf("facts lack %s: %v", k, obj)
			}
		}
	})
}

// TestDecodeFactsShape: the stored form becomes the object the in-process
// store builds, time_ns a number and secrets_touched derived.
func TestDecodeFactsShape(t *testing.T) {
	v, err := decodeFacts([]byte(`{"calls":{"shell":2,"file_read":1},"denied":1,"files_read":["/repo/.env"],"files_written":["/repo/Makefile"],"secret_paths":["/repo/.env"],"recent":[{"f":"shell","t":"1767323045000000001"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := ast.MustParseTerm(`{"calls":{"shell":2,"file_read":1},"total_calls":3,"denied":1,"files_read":["/repo/.env"],
		"files_written":["/repo/Makefile"],"hosts_fetched":[],"secrets_touched":true,"secret_paths":["/repo/.env"],"recent":[{"family":"shell","time_ns":1767323045000000001}]}`)
	if v.Compare(want.Value) != 0 {
		t.Errorf("facts = %v\nwant    %v", v, want)
	}
	for _, bad := range []string{`{"recent":[{"f":"x","t":"soon"}]}`, `[1]`, `{"calls":{"a":"b"}}`} {
		if _, err := decodeFacts([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
