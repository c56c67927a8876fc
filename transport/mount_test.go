package transport

import (
	"context"
	"io"
	"net/http"
	"testing"
)

// echoMount answers with what the binding gave it.
type echoMount struct{ env MountEnv }

func (m *echoMount) ServeMount(w http.ResponseWriter, r *http.Request, env MountEnv) {
	m.env = env
	if r.URL.Path == "/x/teapot" {
		w.WriteHeader(http.StatusTeapot)
		return
	}
	io.WriteString(w, "ok") // an implicit 200
}

// TestMount: a mounted endpoint sits behind the binding's token (B-HTTP-7)
// and POST check, every answer is recorded, and it decides through the
// binding's evaluation slots with the binding's body limit.
func TestMount(t *testing.T) {
	m := &echoMount{}
	rec := newRecorder()
	h := &HTTP{Server: &Server{Interceptor: statelessInterceptor{}}, Token: testToken, MaxBodyBytes: 777, Recorder: rec,
		Mounts: map[string]Mount{"/x/": m}}
	url, c := startHTTPTest(t, h)
	auth := []string{"Authorization", "Bearer " + testToken}
	if got := post(t, c, url+"/x/a", "{}"); got.status != http.StatusUnauthorized || m.env.Server != nil {
		t.Fatalf("without the token: %d, mount reached: %v", got.status, m.env.Server != nil)
	}
	req, _ := http.NewRequest(http.MethodGet, url+"/x/a", nil)
	req.Header.Set(auth[0], auth[1])
	if got := do(t, c, req); got.status != http.StatusMethodNotAllowed || m.env.Server != nil {
		t.Fatalf("GET: %d", got.status)
	}
	if got := post(t, c, url+"/x/a", "{}", auth...); got.status != http.StatusOK || string(got.body) != "ok" {
		t.Fatalf("POST: %d %q", got.status, got.body)
	}
	if got := post(t, c, url+"/x/teapot", "{}", auth...); got.status != http.StatusTeapot {
		t.Fatalf("POST teapot: %d", got.status)
	}
	for _, status := range []int{http.StatusUnauthorized, http.StatusMethodNotAllowed, http.StatusOK, http.StatusTeapot} {
		if n, _ := rec.get(status, 0); n != 1 {
			t.Errorf("recorder saw %d answers with status %d, want 1", n, status)
		}
	}
	if m.env.MaxBodyBytes != 777 || m.env.Logger == nil {
		t.Errorf("env = %+v", m.env)
	}
	if _, ok := m.env.Server.Interceptor.(*limiter); !ok {
		t.Errorf("the mount decides around the evaluation slots: %T", m.env.Server.Interceptor)
	}
	if _, err := m.env.Server.Interceptor.Intercept(context.Background(), &InterceptRequest{}); err != nil {
		t.Errorf("intercept through the mount's server: %v", err)
	}
}
