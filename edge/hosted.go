package edge

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/edge/pages"
	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
)

// The hosted capture page (package pages): GET /v1/capture/{session_id}?token=<sdk_token>
// serves the web SDK on a page that needs no integrator code (Session Init returns its
// address as capture_url); its SDK files are under /v1/capture/assets/. The chip step, which
// a browser cannot do, is handed off to a phone: POST /v1/ekyc/sessions/{id}/handoff makes a
// link (and its QR code) that opens GET /v1/capture/{session_id}/phone?token=<handoff token>,
// whose button opens the integrator's app (Config.CaptureAppURL) to read the chip and post
// /nfc with the hand-off token.

// DefaultCaptureAppURL is the deep link a phone page opens when Config.CaptureAppURL is
// empty: the mobile SDKs' scheme.
const DefaultCaptureAppURL = "idstream://nfc"

// HandoffTTL is how long a hand-off link is valid (never past its session's expiry).
const HandoffTTL = 15 * time.Minute

// HandoffResponse is the 201 body of POST /v1/ekyc/sessions/{id}/handoff.
type HandoffResponse struct {
	URL       string `json:"url"`
	AppURL    string `json:"app_url"`
	ExpiresAt string `json:"expires_at"`
	QRSVG     string `json:"qr_svg"`
}

// checkPublicURL accepts an empty PublicURL or an http(s) scheme and host, without path,
// query or fragment.
func checkPublicURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("edge: PublicURL %q must be http(s)://host[:port], without path or query", raw)
	}
	return nil
}

// publicBase is the scheme and host links are made with: Config.PublicURL, else the
// request's own.
func (s *Server) publicBase(c *fiber.Ctx) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	return c.Protocol() + "://" + c.Hostname()
}

// captureURL is the hosted page's address for a session and its sdk_token.
func (s *Server) captureURL(c *fiber.Ctx, sessionID, token string) string {
	return s.publicBase(c) + "/v1/capture/" + sessionID + "?token=" + url.QueryEscape(token)
}

// setPageHeaders sets the hosted pages' security headers.
func setPageHeaders(c *fiber.Ctx) {
	for k, v := range pages.PageHeaders() {
		c.Set(k, v)
	}
}

// wantsHTML reports whether the client asked for a page (a browser) rather than JSON.
func wantsHTML(c *fiber.Ctx) bool {
	return strings.Contains(c.Get(fiber.HeaderAccept), "text/html")
}

// pageError answers a page request that cannot be served: a browser gets a page in the
// person's language saying what to do, with the status and code the API would answer;
// other clients get the problem document.
func (s *Server) pageError(c *fiber.Ctx, err error, locale string) error {
	ae, _ := toAPIError(err)
	if !wantsHTML(c) || ae.status >= 500 && ae.code == CodeInternal {
		return err
	}
	var b bytes.Buffer
	if rerr := pages.RenderNotice(&b, pages.Notice{Locale: locale, Code: ae.code, RequestID: requestID(c)}); rerr != nil {
		return errors.Join(err, rerr)
	}
	if ae.retryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(ae.retryAfter))
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(ae.status).Send(b.Bytes())
}

// capturePage serves the hosted capture page of the session its token is for.
func (s *Server) capturePage(c *fiber.Ctx) error {
	setPageHeaders(c)
	locale := pages.Locale(c.Query("locale"))
	p, err := s.sdkPrincipal(c.Query("token"))
	if err != nil {
		return s.pageError(c, err, locale)
	}
	st, err := s.loadSession(c, p)
	if err != nil {
		return s.pageError(c, err, locale)
	}
	if c.Query("locale") == "" {
		locale = pages.Locale(st.Locale)
	}
	if readmodel.EffectiveStatus(st, s.now()) == schemas.StatusExpired {
		return s.pageError(c, problem(fiber.StatusGone, CodeSessionExpired, "the session has expired"), locale)
	}
	var b bytes.Buffer
	err = pages.RenderCapture(&b, pages.Capture{
		Locale: locale, SessionID: p.sdkSessID, Token: c.Query("token"),
		Nonce: base64.StdEncoding.EncodeToString(s.sessionNonce(p.sdkSessID)), Steps: st.Steps,
	})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(b.Bytes())
}

// createHandoff makes a hand-off link for the session's chip step (sdk_token only).
func (s *Server) createHandoff(c *fiber.Ctx) error {
	p, st, err := s.stepSession(c, false)
	if err != nil {
		return err
	}
	if !p.isSDK() {
		return problem(fiber.StatusForbidden, CodeForbidden, "a hand-off link is made with the session's sdk_token")
	}
	if !s.stepAllowed(st, "nfc") {
		return problem(fiber.StatusUnprocessableEntity, CodeStepNotInFlow, "step nfc is not part of this session's flow")
	}
	if chipAccepted(st) {
		return problem(fiber.StatusConflict, CodeHandoffUsed, "the chip step of this session is done")
	}
	linkExp := s.now().Add(HandoffTTL).Truncate(time.Second)
	if st.ExpiresAt.Before(linkExp) {
		linkExp = st.ExpiresAt
	}
	tok := s.handoffToken(st.Envelope.SessionID, p.tenant.ID, st.ExpiresAt, linkExp)
	base := s.publicBase(c)
	link := base + "/v1/capture/" + st.Envelope.SessionID + "/phone?token=" + url.QueryEscape(tok) + "&locale=" + pages.Locale(st.Locale)
	qr, err := pages.QRSVG(link)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(HandoffResponse{
		URL: link, AppURL: s.appURL(base, st.Envelope.SessionID, tok), ExpiresAt: readmodel.Timestamp(linkExp), QRSVG: qr,
	})
}

// appURL is the deep link that opens the integrator's app on the chip step: the edge's
// base URL, the session, the hand-off token (the app's bearer for POST /nfc) and the session
// nonce (the challenge of the chip's active authentication), added to the app URL's own
// query (New checked it).
func (s *Server) appURL(base, sessionID, token string) string {
	u := *s.appBase
	add := url.Values{}
	add.Set("base_url", base)
	add.Set("session_id", sessionID)
	add.Set("token", token)
	add.Set("nonce", base64.StdEncoding.EncodeToString(s.sessionNonce(sessionID)))
	if u.RawQuery != "" {
		u.RawQuery += "&"
	}
	u.RawQuery += add.Encode()
	return u.String()
}

// phonePage serves the page a hand-off link opens on the phone.
func (s *Server) phonePage(c *fiber.Ctx) error {
	setPageHeaders(c)
	locale := pages.Locale(c.Query("locale"))
	tok := c.Query("token")
	p, err := s.handoffPrincipal(tok)
	if err != nil {
		return s.pageError(c, err, locale)
	}
	st, err := s.loadSession(c, p)
	if err != nil {
		return s.pageError(c, err, locale)
	}
	switch {
	case chipAccepted(st):
		return s.pageError(c, problem(fiber.StatusConflict, CodeHandoffUsed, "the chip step of this link is done"), locale)
	case readmodel.EffectiveStatus(st, s.now()) == schemas.StatusExpired:
		return s.pageError(c, problem(fiber.StatusGone, CodeSessionExpired, "the session has expired"), locale)
	case st.Decision != nil || st.Status == schemas.StatusCancelled:
		return s.pageError(c, problem(fiber.StatusConflict, CodeSessionClosed, "the session is decided or cancelled"), locale)
	}
	var b bytes.Buffer
	if err := pages.RenderPhone(&b, pages.Phone{Locale: locale, AppURL: s.appURL(s.publicBase(c), st.Envelope.SessionID, tok)}); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(b.Bytes())
}

// captureAsset serves one file of the web SDK (the hosted page's script and styles, and the
// SDK's bundles for integrators who load it from the edge).
func (s *Server) captureAsset(c *fiber.Ctx) error {
	a, ok := s.assets.Get(c.Params("name"))
	if !ok {
		return problem(fiber.StatusNotFound, CodeNotFound, "no such asset")
	}
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Cache-Control", "public, max-age=300")
	c.Set(fiber.HeaderETag, a.ETag)
	c.Set("Access-Control-Allow-Origin", "*")
	c.Set("Cross-Origin-Resource-Policy", "cross-origin")
	if slices.Contains(strings.Split(c.Get(fiber.HeaderIfNoneMatch), ", "), a.ETag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, a.ContentType)
	return c.Send(a.Body)
}

// chipAccepted reports whether the session's chip step is accepted.
func chipAccepted(st *schemas.SessionState) bool {
	return slices.ContainsFunc(st.Captures, func(cp schemas.StepCapture) bool {
		return cp.Step == "nfc" && cp.Status == schemas.CaptureAccepted
	})
}

// sdkCORS lets the web SDK on an integrator's own origin call the session's step and status
// endpoints with its sdk_token: any origin (the bearer token is the credential; no cookies),
// the Authorization and Content-Type headers, and the request id and Retry-After readable.
// Session Init and the admin endpoints get no CORS: API keys stay on backends.
func sdkCORS(c *fiber.Ctx) error {
	c.Set("Access-Control-Allow-Origin", "*")
	c.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After")
	if c.Method() == fiber.MethodOptions {
		c.Set("Access-Control-Allow-Methods", "GET, POST")
		c.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key")
		c.Set("Access-Control-Max-Age", "600")
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Next()
}
