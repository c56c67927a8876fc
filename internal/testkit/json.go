package testkit

import (
	"bytes"
	"encoding/json"
	"testing"
)

// SameJSON fails tb unless got holds exactly one JSON value (surrounding
// white space aside) equal in value to the document want: key order,
// spacing and number spelling do not matter.
func SameJSON(tb testing.TB, got, want []byte) {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(got))
	var g, w any
	if err := dec.Decode(&g); err != nil {
		tb.Fatalf("not JSON (%v): %q", err, got)
	}
	if rest := bytes.TrimSpace(got[dec.InputOffset():]); len(rest) != 0 {
		tb.Fatalf("more than one JSON value: %q", got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		tb.Fatalf("the wanted document is not JSON (%v): %q", err, want)
	}
	// Marshalling sorts object keys, so equal values give equal bytes.
	gb, err := json.Marshal(g)
	if err != nil {
		tb.Fatal(err)
	}
	wb, err := json.Marshal(w)
	if err != nil {
		tb.Fatal(err)
	}
	if !bytes.Equal(gb, wb) {
		tb.Fatalf("JSON differs\n got  %s\n want %s", gb, wb)
	}
}
