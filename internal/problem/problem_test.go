package problem

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// custom is another package's error type carrying a problem.
type custom struct{}

func (custom) Error() string   { return "custom" }
func (custom) Problem() *Error { return New(409, "conflict_x", "conflicting") }

func newApp(opts ...Option) *fiber.App {
	h := NewHandler(opts...)
	app := fiber.New(fiber.Config{ErrorHandler: h.HandleError, BodyLimit: 16})
	app.Use(h.Middleware)
	app.Get("/problem", func(c *fiber.Ctx) error {
		return &Error{Status: 429, Code: CodeRateLimited, Detail: "slow down", RetryAfter: 3}
	})
	app.Get("/wrapped", func(c *fiber.Ctx) error { return fmt.Errorf("handler: %w", custom{}) })
	app.Get("/unauthorized", func(c *fiber.Ctx) error { return Unauthorized("missing key") })
	app.Get("/internal", func(c *fiber.Ctx) error { return errors.New("db password=hunter2 failed") })
	app.Get("/panic", func(c *fiber.Ctx) error { panic("secret panic text") })
	app.Post("/body", func(c *fiber.Ctx) error { return c.SendStatus(204) })
	return app
}

func call(t *testing.T, app *fiber.App, method, path, body string, hdr ...string) (int, map[string]string, Document) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	h := map[string]string{}
	for k := range resp.Header {
		h[k] = resp.Header.Get(k)
	}
	var d Document
	if len(data) > 0 {
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: not JSON: %s", path, data)
		}
	}
	if strings.Contains(string(data), "hunter2") || strings.Contains(string(data), "secret panic") {
		t.Errorf("%s leaks internals: %s", path, data)
	}
	return resp.StatusCode, h, d
}

func TestAnswers(t *testing.T) {
	app := newApp(WithAuthChallenge(`Bearer realm="idstream"`))
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"GET", "/problem", "", 429, CodeRateLimited},
		{"GET", "/wrapped", "", 409, "conflict_x"},
		{"GET", "/unauthorized", "", 401, CodeUnauthorized},
		{"GET", "/internal", "", 500, CodeInternal},
		{"GET", "/panic", "", 500, CodeInternal},
		{"GET", "/nope", "", 404, CodeNotFound},
		{"PUT", "/problem", "", 405, CodeMethodNotAllowed},
	}
	for _, c := range cases {
		status, h, d := call(t, app, c.method, c.path, c.body)
		if status != c.status || d.Status != c.status || d.Code != c.code || d.Type != TypeBase+c.code || d.Title == "" || d.Detail == "" {
			t.Errorf("%s %s: %d %+v", c.method, c.path, status, d)
		}
		if h["Content-Type"] != ContentType || d.RequestID == "" || h["X-Request-Id"] != d.RequestID {
			t.Errorf("%s %s: headers %v, request_id %q", c.method, c.path, h, d.RequestID)
		}
	}
	if _, h, _ := call(t, app, "GET", "/problem", ""); h["Retry-After"] != "3" {
		t.Errorf("Retry-After %q", h["Retry-After"])
	}
	if _, h, _ := call(t, app, "GET", "/unauthorized", ""); h["Www-Authenticate"] != `Bearer realm="idstream"` {
		t.Errorf("WWW-Authenticate %q", h["Www-Authenticate"])
	}
	if _, h, _ := call(t, newApp(), "GET", "/unauthorized", ""); h["Www-Authenticate"] != "" {
		t.Errorf("challenge without WithAuthChallenge: %q", h["Www-Authenticate"])
	}
}

func TestRequestID(t *testing.T) {
	app := newApp()
	if _, h, d := call(t, app, "GET", "/problem", "", HeaderRequestID, "abc-123"); h["X-Request-Id"] != "abc-123" || d.RequestID != "abc-123" {
		t.Errorf("sane id not kept: %q %q", h["X-Request-Id"], d.RequestID)
	}
	_, h, _ := call(t, app, "GET", "/problem", "", HeaderRequestID, "bad id <script>")
	if id := h["X-Request-Id"]; !strings.HasPrefix(id, "req_") || len(id) != 28 {
		t.Errorf("insane id replaced by %q", id)
	}
}
