package enrich

import "testing"

// TestNamedSecrets: outbound text with a secret no token shape knows.
func TestNamedSecrets(t *testing.T) {
	tests := []struct {
		text  string
		kind  string // "" for no finding
		value string
		stand bool
	}{
		{"error connecting postgres://admin:Xk9#mP2vL8q@db.acme.io/prod", "url-password", "Xk9#mP2vL8q", false},
		{"why does DB_PASSWORD=Tr0ub4dor&3x fail", "named-secret", "Tr0ub4dor", false},
		{`{"client_secret": "Zq81kLpW0vX3nB"}`, "named-secret", "Zq81kLpW0vX3nB", false},
		{"use --token 9fK2mQ8zLx0pT4 here", "named-secret", "9fK2mQ8zLx0pT4", false},
		{"postgres://user:password@localhost/db", "url-password", "password", true},
		{"API_KEY=YOUR_API_KEY_HERE", "named-secret", "YOUR_API_KEY_HERE", true},
		{"how to set DB_PASSWORD in compose", "", "", false},
		{"export API_TOKEN=$API_TOKEN", "", "", false},
		{"password: please", "", "", false},
		{"token_count=12345678", "", "", false},
	}
	for _, tt := range tests {
		got := namedSecrets(tt.text)
		if tt.kind == "" {
			if len(got) != 0 {
				t.Errorf("%q: found %+v, want none", tt.text, got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%q: found %+v, want one %s", tt.text, got, tt.kind)
			continue
		}
		f := got[0]
		if f.Kind != tt.kind || tt.text[f.Offset:f.Offset+f.Length] != tt.value || f.Placeholder != tt.stand {
			t.Errorf("%q: found %s %q placeholder=%v, want %s %q placeholder=%v", tt.text, f.Kind, tt.text[f.Offset:f.Offset+f.Length], f.Placeholder, tt.kind, tt.value, tt.stand)
		}
	}
}
