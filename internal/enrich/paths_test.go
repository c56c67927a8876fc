package enrich

import "testing"

func TestResolveWorkdirPrefix(t *testing.T) {
	pc := newPathContext("/home/dev/repo", []string{"/home/dev/repo"}, "/home/dev")
	for _, tc := range []struct {
		raw, dir, abs string
		inside        bool
	}{
		{"$PWD/App/Info", "/home/dev/repo", "/home/dev/repo/App/Info", true},
		{"${PWD}", "/home/dev/repo", "/home/dev/repo", true},
		{"$(pwd)/build", "/home/dev/repo/sub", "/home/dev/repo/sub/build", true},
		{"$PWD/Documents", "/home/dev", "/home/dev/Documents", false},
		{"$PWDX/a", "/home/dev/repo", "/home/dev/repo/$PWDX/a", true},
	} {
		pi := pc.resolveIn(tc.raw, tc.dir)
		if pi.abs != tc.abs || pi.inside != tc.inside {
			t.Errorf("resolveIn(%q, %q) = %q inside=%v, want %q inside=%v", tc.raw, tc.dir, pi.abs, pi.inside, tc.abs, tc.inside)
		}
	}
}
