package edge

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestUnknownRouteAndMethod(t *testing.T) {
	e := newEnv(t)
	expectProblem(t, e.do("GET", "/v1/nope", keyAcme, "", nil), 404, CodeNotFound)
	expectProblem(t, e.do("PUT", "/v1/ekyc/sessions", keyAcme, "application/json", []byte(`{}`)), 405, CodeMethodNotAllowed)
}

func TestRequestID(t *testing.T) {
	e := newEnv(t)
	if r := e.do("GET", "/healthz", "", "", nil, "X-Request-Id", "abc-123"); r.header.Get("X-Request-Id") != "abc-123" {
		t.Errorf("sane incoming request id not kept: %q", r.header.Get("X-Request-Id"))
	}
	if r := e.do("GET", "/healthz", "", "", nil, "X-Request-Id", "bad id <script>"); strings.Contains(r.header.Get("X-Request-Id"), "script") {
		t.Error("insane request id echoed")
	}
}

func TestPanicIs500WithoutInternals(t *testing.T) {
	e := newEnv(t)
	s := e.openSession(keyAcme, "id_card")
	e.sessions.panic = true
	r := e.do("GET", "/v1/ekyc/sessions/"+s.SessionID, keyAcme, "", nil)
	expectProblem(t, r, 500, CodeInternal)
	if strings.Contains(string(r.body), "boom") {
		t.Error("panic text leaked")
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t)
	if r := e.do("GET", "/v1/ekyc/sessions/ses_aaaaaaaaaaaaaaaaaaaaaaaaaa", keyLimited, "", nil); r.status != 404 {
		t.Fatalf("first request: %d", r.status)
	}
	r := e.do("GET", "/v1/ekyc/sessions/ses_aaaaaaaaaaaaaaaaaaaaaaaaaa", keyLimited, "", nil)
	expectProblem(t, r, 429, CodeRateLimited)
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// Other tenants are not affected; time refills the bucket.
	if r := e.do("GET", "/v1/ekyc/sessions/ses_aaaaaaaaaaaaaaaaaaaaaaaaaa", keyAcme, "", nil); r.status != 404 {
		t.Errorf("unlimited tenant got %d", r.status)
	}
	e.clock.Advance(time.Second)
	if r := e.do("GET", "/v1/ekyc/sessions/ses_aaaaaaaaaaaaaaaaaaaaaaaaaa", keyLimited, "", nil); r.status != 404 {
		t.Errorf("after refill: %d", r.status)
	}
}

// TestRateLimitSharedByEdges: one of two edges applies half of a tenant's rate (1/s): a
// request every 2 s.
func TestRateLimitSharedByEdges(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.EdgeReplicas = 2 })
	get := func() response {
		return e.do("GET", "/v1/ekyc/sessions/ses_aaaaaaaaaaaaaaaaaaaaaaaaaa", keyLimited, "", nil)
	}
	if r := get(); r.status != 404 {
		t.Fatalf("first request: %d", r.status)
	}
	e.clock.Advance(time.Second)
	r := get()
	expectProblem(t, r, 429, CodeRateLimited)
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q, want 1 (half a token refilled at 0.5/s)", r.header.Get("Retry-After"))
	}
	e.clock.Advance(time.Second)
	if r := get(); r.status != 404 {
		t.Errorf("after 2 s: %d", r.status)
	}
}

func TestOperationalEndpoints(t *testing.T) {
	e := newEnv(t)
	if r := e.do("GET", "/healthz", "", "", nil); r.status != 200 {
		t.Errorf("healthz %d", r.status)
	}
	if r := e.do("GET", "/readyz", "", "", nil); r.status != 200 {
		t.Errorf("readyz %d", r.status)
	}
	e.ready = false
	expectProblem(t, e.do("GET", "/readyz", "", "", nil), 503, CodeNotReady)
	r := e.do("GET", "/openapi.json", "", "", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || string(r.body) != `{"openapi":"3.1.0"}` {
		t.Errorf("openapi: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	if m := e.metrics(); !strings.Contains(m, `idstream_edge_requests_total{method="GET",route="/openapi.json",status="200"} 1`) {
		t.Errorf("metrics: %s", m)
	}
	// The edge's port is public: its metrics are served on the process's metrics address.
	if r := e.do("GET", "/metrics", "", "", nil); r.status != http.StatusNotFound {
		t.Errorf("GET /metrics on the edge: %d, want 404", r.status)
	}
}

// TestMetricsLabelsOutliveTheirRequests: the request metrics keep the method and route of
// each request as it was, after the server has reused the request's buffers for others, so
// /metrics keeps answering (a label aliasing a buffer read "GETT" once a POST had been
// through it, and the registry refused to gather two series of one name and labels).
func TestMetricsLabelsOutliveTheirRequests(t *testing.T) {
	e := newEnv(t)
	for range 20 {
		e.openSession(keyAcme, "id_card")
		e.do("GET", "/v1/ekyc/sessions/ses_aaaaaaaaaaaaaaaaaaaaaaaaaa", keyAcme, "", nil)
		e.do("DELETE", "/v1/ekyc/sessions/ses_aaaaaaaaaaaaaaaaaaaaaaaaaa", keyAcme, "", nil)
	}
	for _, line := range strings.Split(e.metrics(), "\n") {
		_, rest, ok := strings.Cut(line, `method="`)
		if !strings.HasPrefix(line, "idstream_edge_requests_total") || !ok {
			continue
		}
		method, _, _ := strings.Cut(rest, `"`)
		if method != "GET" && method != "POST" && method != "DELETE" {
			t.Errorf("a request counted under method %q: %s", method, line)
		}
	}
}
