package transport

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
)

// stdDecode is what Decode did with encoding/json before parseJSON: the
// oracle parseJSON must agree with.
func stdDecode(data []byte) (any, string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "invalid"
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) != 0 {
		return nil, "trailing"
	}
	return v, ""
}

func fastDecode(data []byte) (any, string) {
	v, end, err := parseJSON(data)
	if err != nil {
		return nil, "invalid"
	}
	if len(bytes.TrimSpace(data[end:])) != 0 {
		return nil, "trailing"
	}
	g, err := ast.JSON(v)
	if err != nil {
		return nil, "unconvertible: " + err.Error()
	}
	return g, ""
}

func checkSameAsStd(t *testing.T, data []byte) {
	t.Helper()
	if !utf8.Valid(data) {
		return // Decode refuses it before parsing
	}
	want, wantErr := stdDecode(data)
	got, gotErr := fastDecode(data)
	if gotErr != wantErr || !reflect.DeepEqual(got, want) {
		t.Errorf("%.200q: got %#v (%s), encoding/json %#v (%s)", data, got, gotErr, want, wantErr)
	}
}

var jsonCases = []string{
	`{}`, `[]`, `{"a":1}`, ` {"a" : [1, -2.5e+3, 0, true, false, null, "x"]} `, `"str"`, `12`, `-0`, `0.5`, `1E9`,
	`{"a":{"b":{"c":[[],{}]}}}`, `{"a":1,"a":2}`, `{"s":"a\"b\\c\/d\b\f\n\r\t"}`, `{"u":"\u00e9\u20AC\ud83d\ude00"}`,
	`{"u":"\ud83d"}`, `{"u":"\ud83dx"}`, `{"u":"\ud83d\u0041"}`, `{"u":"\ude00\ud83d"}`, `{"u":"\uD83D\uDE00"}`,
	`{"e":""}`, `{"k":"é ü 日本"}`,
	// invalid
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{a:1}`, `"abc`, `"a\x"`, `"\u12"`,
	`"\uZZZZ"`, "\"a\tb\"", "\"a\nb\"", `tru`, `nul`, `falsey`, `-`, `01`, `1.`, `1e`, `1e+`, `.5`, `+1`, `--1`,
	`{"a":1}x`, `{"a":1} {"b":2}`, `{"a":1}` + "\f", `123abc`, `[1]]`, "\ufeff{}", `{"a":"b"`, `[`, `[[`,
}

func TestParseJSONMatchesEncodingJSON(t *testing.T) {
	for _, c := range jsonCases {
		checkSameAsStd(t, []byte(c))
	}
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	checkSameAsStd(t, []byte(deep))
	checkSameAsStd(t, []byte("["+deep+"]"))
	big := `{"content":"` + strings.Repeat(`line with \"quotes\" and a tab\t\n`, 10000) + `"}`
	checkSameAsStd(t, []byte(big))
}

func FuzzParseJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameAsStd(t, data)
	})
}

// BenchmarkDecodeLarge compares Decode with encoding/json on a message
// carrying a 1 MB file.
func BenchmarkDecodeLarge(b *testing.B) {
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "params": map[string]any{
		"content": strings.Repeat("export function add(a, b) { return \"a\" + b }\n", 21276),
	}})
	if err != nil {
		b.Fatal(err)
	}
	for name, decode := range map[string]func([]byte) (any, string){"parseJSON": fastDecode, "encoding-json": stdDecode} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if _, e := decode(msg); e != "" {
					b.Fatal(e)
				}
			}
		})
	}
}
