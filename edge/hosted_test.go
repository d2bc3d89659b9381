package edge

import (
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

func b64s(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// pagePath is the path and query of a capture_url.
func pagePath(t *testing.T, captureURL string) string {
	t.Helper()
	u, err := url.Parse(captureURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

func TestCaptureURLAndPage(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PublicURL = "https://verify.example.com/" })
	s := e.openSession(keyAcme, "id_card")
	want := "https://verify.example.com/v1/capture/" + s.SessionID + "?token=" + url.QueryEscape(s.SDKToken)
	if s.CaptureURL != want {
		t.Fatalf("capture_url = %q, want %q", s.CaptureURL, want)
	}
	r := e.do("GET", pagePath(t, s.CaptureURL), "", "", nil, "Accept", "text/html")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %s", r.status, r.header.Get("Content-Type"))
	}
	for h, want := range map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self';",
		"Cache-Control":           "no-store",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	} {
		if !strings.Contains(r.header.Get(h), want) {
			t.Errorf("%s = %q, want %q", h, r.header.Get(h), want)
		}
	}
	body := html.UnescapeString(string(r.body))
	for _, want := range []string{
		`data-session-id="` + s.SessionID + `"`,
		`data-nonce="` + s.Nonce + `"`,
		`data-steps="document_front document_back selfie"`,
		`<script src="/v1/capture/assets/capture.js" defer></script>`,
		`lang="vi"`, // the session's locale
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "style=") {
		t.Error("the page has inline script or style, which its CSP forbids")
	}
	if r := e.do("GET", pagePath(t, s.CaptureURL)+"&locale=en", "", "", nil); !strings.Contains(string(r.body), `lang="en"`) {
		t.Error("locale=en is not honoured")
	}
}

func TestCapturePageRefusesBadLinks(t *testing.T) {
	e := newEnv(t)
	s := e.openSession(keyAcme, "id_card")
	other := e.openSession(keyAcme, "id_card")
	limited := e.openSession(keyLimited, "id_card") // another tenant (1 request a second)
	// A browser gets a page with the API's status and code; other clients the problem.
	for _, tc := range []struct {
		name, path string
		status     int
		code       string
	}{
		{"no token", "/v1/capture/" + s.SessionID, 401, CodeUnauthorized},
		{"forged token", "/v1/capture/" + s.SessionID + "?token=" + url.QueryEscape(s.SDKToken+"x"), 401, CodeUnauthorized},
		{"api key as token", "/v1/capture/" + s.SessionID + "?token=" + keyAcme, 401, CodeUnauthorized},
		{"another session's token", "/v1/capture/" + s.SessionID + "?token=" + url.QueryEscape(other.SDKToken), 404, CodeSessionNotFound},
		{"another tenant's token", "/v1/capture/" + s.SessionID + "?token=" + url.QueryEscape(limited.SDKToken), 404, CodeSessionNotFound},
		{"malformed id", "/v1/capture/ses_x?token=" + url.QueryEscape(s.SDKToken), 404, CodeSessionNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.clock.Advance(time.Second)
			expectProblem(t, e.do("GET", tc.path, "", "", nil), tc.status, tc.code)
			e.clock.Advance(time.Second)
			r := e.do("GET", tc.path, "", "", nil, "Accept", "text/html,application/xhtml+xml")
			if r.status != tc.status || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
				!strings.Contains(string(r.body), `data-code="`+tc.code+`"`) {
				t.Errorf("browser: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			if r.header.Get("Content-Security-Policy") == "" {
				t.Error("error page without CSP")
			}
		})
	}
	e.clock.Advance(30 * time.Minute) // past the session's expiry, within the token's grace
	expectProblem(t, e.do("GET", pagePath(t, s.CaptureURL), "", "", nil), 410, CodeSessionExpired)
	r := e.do("GET", pagePath(t, s.CaptureURL), "", "", nil, "Accept", "text/html")
	if r.status != 410 || !strings.Contains(string(r.body), "hết hạn") {
		t.Errorf("expired link, browser: %d %s", r.status, r.body)
	}
}

func TestHandoffLink(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CaptureAppURL = "https://app.example.com/nfc?src=web" })
	s := e.openSession(keyAcme, "chip_id_card")
	path := "/v1/ekyc/sessions/" + s.SessionID + "/handoff"
	expectProblem(t, e.do("POST", path, keyAcme, "", nil), 403, CodeForbidden)
	r := e.do("POST", path, s.SDKToken, "", nil)
	if r.status != http.StatusCreated {
		t.Fatalf("handoff: %d %s", r.status, r.body)
	}
	m := r.json(t)
	link, _ := url.Parse(m["url"].(string))
	if link == nil || link.Path != "/v1/capture/"+s.SessionID+"/phone" || link.Query().Get("token") == "" {
		t.Fatalf("url = %v", m["url"])
	}
	tok := link.Query().Get("token")
	app, _ := url.Parse(m["app_url"].(string))
	if app == nil || app.Host != "app.example.com" || app.Query().Get("src") != "web" || app.Query().Get("token") != tok ||
		app.Query().Get("session_id") != s.SessionID || app.Query().Get("nonce") != s.Nonce {
		t.Errorf("app_url = %v", m["app_url"])
	}
	if exp, err := time.Parse(time.RFC3339, m["expires_at"].(string)); err != nil || exp.After(e.clock.Now().Add(HandoffTTL)) {
		t.Errorf("expires_at = %v", m["expires_at"])
	}
	if svg := m["qr_svg"].(string); !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "M4 4h1v1h-1z") {
		t.Errorf("qr_svg = %.80s", svg)
	}

	// The phone page opens the app; the link's token is the chip step's bearer, nothing else's.
	r = e.do("GET", link.RequestURI(), "", "", nil, "Accept", "text/html")
	if r.status != 200 || !strings.Contains(string(r.body), `href="https://app.example.com/nfc?src=web&amp;base_url=`) {
		t.Fatalf("phone page: %d %s", r.status, r.body)
	}
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/"+s.SessionID, tok, "", nil), 401, CodeUnauthorized)
	expectProblem(t, e.do("POST", path, tok, "", nil), 401, CodeUnauthorized)
	for _, step := range []string{"document", "selfie"} {
		ct, body := multipartBody(t, map[string]string{"side": "front"}, part{field: "image", filename: "a.jpg", contentType: "image/jpeg", data: jpegBytes(t)})
		expectProblem(t, e.do("POST", "/v1/ekyc/sessions/"+s.SessionID+"/"+step, tok, ct, body), 401, CodeUnauthorized)
	}
	expectProblem(t, e.do("GET", "/v1/capture/"+s.SessionID+"?token="+url.QueryEscape(tok), "", "", nil), 401, CodeUnauthorized)
	expectProblem(t, e.do("GET", "/v1/capture/"+s.SessionID+"/phone?token="+url.QueryEscape(s.SDKToken), "", "", nil), 401, CodeUnauthorized)
	other := e.openSession(keyAcme, "chip_id_card")
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions/"+other.SessionID+"/nfc", tok, map[string]any{"sod": b64s("s"), "dg1": b64s("d")}), 404, CodeSessionNotFound)
	r = e.doJSON("POST", "/v1/ekyc/sessions/"+s.SessionID+"/nfc", tok, map[string]any{"sod": b64s("s"), "dg1": b64s("d")})
	if r.status != http.StatusAccepted {
		t.Fatalf("nfc with the hand-off token: %d %s", r.status, r.body)
	}

	// Once the chip step is accepted the link is used up.
	st := e.state(s.SessionID)
	st.Captures = append(st.Captures, schemas.StepCapture{Step: "nfc", Status: schemas.CaptureAccepted, CaptureID: "cap_x"})
	e.sessions.put(st)
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions/"+s.SessionID+"/nfc", tok, map[string]any{"sod": b64s("s"), "dg1": b64s("d")}), 409, CodeHandoffUsed)
	expectProblem(t, e.do("GET", link.RequestURI(), "", "", nil), 409, CodeHandoffUsed)
	expectProblem(t, e.do("POST", path, s.SDKToken, "", nil), 409, CodeHandoffUsed)

	// A link outlives neither its 15 minutes nor a flow without a chip step.
	e.clock.Advance(HandoffTTL + time.Second)
	expectProblem(t, e.do("GET", link.RequestURI(), "", "", nil), 401, CodeUnauthorized)
	idCard := e.openSession(keyAcme, "id_card")
	expectProblem(t, e.do("POST", "/v1/ekyc/sessions/"+idCard.SessionID+"/handoff", idCard.SDKToken, "", nil), 422, CodeStepNotInFlow)
}

func TestSDKAssetsAndCORS(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/v1/capture/assets/idstream.umd.js", "", "", nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") ||
		!strings.Contains(string(r.body), "root.IdStream = factory()") || r.header.Get("ETag") == "" {
		t.Fatalf("umd bundle: %d %s etag %q", r.status, r.header.Get("Content-Type"), r.header.Get("ETag"))
	}
	if r2 := e.do("GET", "/v1/capture/assets/idstream.umd.js", "", "", nil, "If-None-Match", r.header.Get("ETag")); r2.status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", r2.status)
	}
	if r := e.do("GET", "/v1/capture/assets/idstream.css", "", "", nil); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") {
		t.Errorf("css: %d %s", r.status, r.header.Get("Content-Type"))
	}
	expectProblem(t, e.do("GET", "/v1/capture/assets/..%2Fpages.go", "", "", nil), 404, CodeNotFound)
	expectProblem(t, e.do("GET", "/v1/capture/assets/secret.js", "", "", nil), 404, CodeNotFound)

	s := e.openSession(keyAcme, "id_card")
	r = e.do("OPTIONS", "/v1/ekyc/sessions/"+s.SessionID+"/document", "", "", nil,
		"Origin", "https://shop.example", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization")
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", r.status, r.header)
	}
	r = e.do("GET", "/v1/ekyc/sessions/"+s.SessionID, s.SDKToken, "", nil, "Origin", "https://shop.example")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("status read from another origin: %d %v", r.status, r.header)
	}
	// API keys stay on backends: Session Init and the admin endpoints have no CORS.
	r = e.do("OPTIONS", "/v1/ekyc/sessions", "", "", nil, "Origin", "https://shop.example", "Access-Control-Request-Method", "POST")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("Session Init preflight allowed: %v", r.header)
	}
}

func TestCaptureAppURLIsChecked(t *testing.T) {
	cfg := newEnv(t).srv.cfg
	for _, bad := range []string{"javascript:alert(1)", "http://app.example/nfc", "myapp://nfc#frag"} {
		c := cfg
		c.CaptureAppURL = bad
		c.Registerer = nil
		if _, err := New(c); err == nil {
			t.Errorf("CaptureAppURL %q accepted", bad)
		}
	}
	c := cfg
	c.CaptureAppURL, c.Registerer = "https://app.example/nfc?from=web", nil
	if _, err := New(c); err != nil {
		t.Errorf("an https app link: %v", err)
	}
}

func TestPublicURLIsChecked(t *testing.T) {
	for _, bad := range []string{"verify.example.com", "ftp://x", "https://x/path", "https://x?q=1", "https://u:p@x"} {
		if err := checkPublicURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, good := range []string{"", "https://verify.example.com", "http://127.0.0.1:8080/"} {
		if err := checkPublicURL(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}
