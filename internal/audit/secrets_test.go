package audit

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport"
)

// TestRecordedInputMasksSecretFields: with include_input, a structured
// tool input is masked by field name in the audit record and in the
// decision shipped to a fleet service, the same way.
func TestRecordedInputMasksSecretFields(t *testing.T) {
	tests := []struct {
		name    string
		input   string // the tool input
		want    string // the recorded tool input
		secrets []string
	}{
		{"password and env map",
			`{"command":"psql","password":"correct horse","env":{"AWS_SECRET_ACCESS_KEY":"wJalrXUtnFEMI","AWS_REGION":"eu-west-1"}}`,
			`{"command":"psql","env":{"AWS_REGION":"eu-west-1","AWS_SECRET_ACCESS_KEY":"[REDACTED]"},"password":"[REDACTED]"}`,
			[]string{"correct horse", "wJalrXUtnFEMI"}},
		{"env array and headers",
			`{"url":"https://api.example.com","headers":{"Authorization":"Bearer abc","X-Api-Key":"k-1"},"env":["GITHUB_TOKEN=t0k3n-value","HOME=/root"]}`,
			`{"env":["GITHUB_TOKEN=[REDACTED]","HOME=/root"],"headers":{"Authorization":"[REDACTED]","X-Api-Key":"[REDACTED]"},"url":"https://api.example.com"}`,
			[]string{"Bearer abc", "k-1", "t0k3n-value"}},
		{"look-alikes kept",
			`{"max_tokens":4096,"token_count":3,"keyboard":"us","primary_key":"id"}`,
			`{"keyboard":"us","max_tokens":4096,"primary_key":"id","token_count":3}`,
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := &logServer{got: make(chan struct{}, 1)}
			srv := httptest.NewServer(ls)
			defer srv.Close()
			w := &memWriter{}
			a := newAuditor(t, Config{IncludeInput: true}, w)
			s := NewShipper(ShipConfig{}, httpUpload(srv.URL), nil, nil)
			a.ShipTo(s)
			a.Interceptor(&fakeJudge{deny: true}).Intercept(context.Background(), reqWithInput(t, "e1", tt.input))
			flush(t, a)
			s.Close()

			rec, _ := json.Marshal(w.recs[0].Input["tool"].(map[string]any)["input"])
			if string(rec) != tt.want {
				t.Errorf("recorded input\n got %s\nwant %s", rec, tt.want)
			}
			if len(ls.events) != 1 {
				t.Fatalf("shipped %d events", len(ls.events))
			}
			shipped, _ := json.Marshal(ls.events[0]["input"].(map[string]any)["tool"].(map[string]any)["input"])
			if string(shipped) != tt.want {
				t.Errorf("shipped input\n got %s\nwant %s", shipped, tt.want)
			}
			all, _ := json.Marshal(w.recs)
			for _, sec := range tt.secrets {
				if strings.Contains(string(all), sec) || strings.Contains(string(shipped), sec) {
					t.Errorf("%q left the process", sec)
				}
			}
		})
	}
}

// reqWithInput is newReq with a tool input given as JSON.
func reqWithInput(t *testing.T, id, input string) *transport.InterceptRequest {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		t.Fatal(err)
	}
	req := newReq(id, "mcp__db__query", "")
	ev := req.Event.Map()
	ev["tool"].(map[string]any)["input"] = in
	req.Event.Object = ast.MustInterfaceToValue(ev).(ast.Object)
	return req
}
