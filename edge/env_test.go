package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/schemas"
)

const (
	keyAcme      = "sk_acme_key"
	keyAcmeAdmin = "ak_acme_admin"
	keyBeta      = "sk_beta_key"
	keyBetaAdmin = "ak_beta_admin"
	keyLimited   = "sk_limited_key"
)

type env struct {
	t        *testing.T
	srv      *Server
	pub      *fakePublisher
	sessions *fakeSessions
	quality  *fakeQuality
	blobs    *memBlobs
	clock    *testClock
	ready    bool
	registry *prometheus.Registry // the edge's metrics
}

type envOption func(*Config)

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	reg := tenant.NewRegistry(
		&tenant.Tenant{ID: "acme", APIKeyHashes: []string{tenant.HashKey(keyAcme)}, AdminKeyHashes: []string{tenant.HashKey(keyAcmeAdmin)},
			WebhookURL: "https://acme.example/hook"},
		&tenant.Tenant{ID: "beta", APIKeyHashes: []string{tenant.HashKey(keyBeta)}, AdminKeyHashes: []string{tenant.HashKey(keyBetaAdmin)},
			AllowedFlows: []string{"id_card"}, RequireConsent: true},
		&tenant.Tenant{ID: "limited", APIKeyHashes: []string{tenant.HashKey(keyLimited)}, RateLimitPerSecond: 1},
	)
	e := &env{t: t, pub: &fakePublisher{}, sessions: newFakeSessions(), blobs: newMemBlobs(),
		clock: &testClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}, ready: true}
	e.quality = &fakeQuality{replies: map[string]*schemas.QualityAssessed{}, pub: e.pub}
	promReg := prometheus.NewRegistry()
	cfg := Config{
		Tenants: reg, Publisher: e.pub, Encoder: jsonEncoder{}, Sessions: e.sessions,
		QualityReplies: e.quality, Blobs: e.blobs, TokenSecret: bytes.Repeat([]byte("k"), 32),
		QualityBudget: 20 * time.Millisecond, Clock: e.clock.Now,
		Registerer: promReg, Ready: func() bool { return e.ready },
		OpenAPIJSON: []byte(`{"openapi":"3.1.0"}`),
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.srv, e.registry = srv, promReg
	t.Cleanup(func() { _ = srv.App().Shutdown() })
	return e
}

// listen serves the app on a free 127.0.0.1 port until the test ends; it returns the base URL.
func (e *env) listen() string {
	e.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.srv.Listener(ln) }()
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.srv.Shutdown(ctx); err != nil {
			e.t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			e.t.Errorf("listener: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON (%d): %q", r.status, r.body)
	}
	return m
}

// do sends a request; contentType "" sends none.
func (e *env) do(method, path, auth, contentType string, body []byte, headers ...string) response {
	e.t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.App().Test(req, -1)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if res.Header.Get("X-Request-Id") == "" {
		e.t.Errorf("%s %s: no X-Request-Id", method, path)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func (e *env) doJSON(method, path, auth string, v any, headers ...string) response {
	e.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do(method, path, auth, "application/json", b, headers...)
}

// expectProblem asserts a problem+json answer with status and code.
func expectProblem(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d (body %s)", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("content type %q, want application/problem+json", ct)
	}
	m := r.json(t)
	if m["code"] != code || m["type"] != ProblemTypeBase+code || m["status"] != float64(status) {
		t.Errorf("problem %v, want code %s", m, code)
	}
	if m["request_id"] == "" || m["request_id"] != r.header.Get("X-Request-Id") {
		t.Errorf("problem request_id %v does not match header %q", m["request_id"], r.header.Get("X-Request-Id"))
	}
	if m["title"] == "" || m["detail"] == nil {
		t.Errorf("problem lacks title or detail: %v", m)
	}
}

// openSession opens a session of flow for the API key and returns the 201 body.
func (e *env) openSession(key, flow string) SessionInitResponse {
	e.t.Helper()
	r := e.doJSON("POST", "/v1/ekyc/sessions", key, map[string]any{"flow": flow})
	if r.status != http.StatusCreated {
		e.t.Fatalf("open session: %d %s", r.status, r.body)
	}
	var out SessionInitResponse
	if err := json.Unmarshal(r.body, &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) state(id string) *schemas.SessionState {
	st, ok, _ := e.sessions.Get(context.Background(), id)
	if !ok {
		e.t.Fatalf("session %s not in view", id)
	}
	return st
}

func testImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x + y), 255})
		}
	}
	return img
}

func pngBytes(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(64, 48)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t *testing.T) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(64, 48), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type part struct {
	field, filename, contentType string
	data                         []byte
}

// multipartBody builds a multipart form of fields and file parts.
func multipartBody(t *testing.T, fields map[string]string, parts ...part) (string, []byte) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range parts {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{`form-data; name="` + p.field + `"; filename="` + p.filename + `"`}
		h["Content-Type"] = []string{p.contentType}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pw.Write(p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), b.Bytes()
}

// metrics renders the edge's metrics in the Prometheus text format, as a scrape reads them.
func (e *env) metrics() string {
	e.t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		e.t.Fatalf("metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}
