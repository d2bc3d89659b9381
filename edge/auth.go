package edge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/internal/tenant"
)

// principal is who is calling: a tenant's backend (API key) or one session's SDK.
type principal struct {
	tenant    *tenant.Tenant
	sdkSessID string    // set for an sdk_token: the only session it may touch
	sdkExpiry time.Time // the sdk_token's session expiry
	handoff   bool      // a hand-off token: the chip step of sdkSessID only
}

func (p principal) isSDK() bool { return p.sdkSessID != "" }

// bearer returns the bearer credential of c, or "".
func bearer(c *fiber.Ctx) string {
	h := strings.TrimSpace(c.Get(fiber.HeaderAuthorization))
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return ""
	}
	return strings.TrimSpace(h[7:])
}

// authenticate resolves the bearer credential to a principal (API key, or an sdk_token when
// allowSDK) and applies the tenant's rate limit. Missing or invalid → 401.
func (s *Server) authenticate(c *fiber.Ctx, allowSDK bool) (principal, error) {
	cred := bearer(c)
	if cred == "" {
		return principal{}, errUnauthorized()
	}
	if t, ok := s.cfg.Tenants.ByAPIKey(cred); ok {
		if err := s.rateLimit(t); err != nil {
			return principal{}, err
		}
		return principal{tenant: t}, nil
	}
	if !allowSDK {
		return principal{}, errUnauthorized()
	}
	return s.sdkPrincipal(cred)
}

// sdkPrincipal resolves an sdk_token (a bearer, or the capture page's query) to the
// principal of its session, and applies the tenant's rate limit. Invalid → 401.
func (s *Server) sdkPrincipal(tok string) (principal, error) {
	sessID, tenantID, exp, ok := s.verifySDKToken(tok)
	if !ok {
		return principal{}, errUnauthorized()
	}
	t, err := s.limitedTenant(tenantID)
	if err != nil {
		return principal{}, err
	}
	return principal{tenant: t, sdkSessID: sessID, sdkExpiry: exp}, nil
}

// limitedTenant returns the tenant a token names, its rate limit applied: 401 when the
// tenant is gone, 429 over its limit.
func (s *Server) limitedTenant(id string) (*tenant.Tenant, error) {
	t, ok := s.cfg.Tenants.Get(id)
	if !ok {
		return nil, errUnauthorized()
	}
	if err := s.rateLimit(t); err != nil {
		return nil, err
	}
	return t, nil
}

// authenticateAdmin resolves an admin key. A valid API key, sdk_token or reviewer key →
// 403; anything else → 401.
func (s *Server) authenticateAdmin(c *fiber.Ctx) (*tenant.Tenant, error) {
	cred := bearer(c)
	if cred == "" {
		return nil, errUnauthorized()
	}
	if t, ok := s.cfg.Tenants.ByAdminKey(cred); ok {
		if err := s.rateLimit(t); err != nil {
			return nil, err
		}
		return t, nil
	}
	_, isAPIKey := s.cfg.Tenants.ByAPIKey(cred)
	_, _, _, isSDK := s.verifySDKToken(cred)
	_, _, isReviewer := s.cfg.Tenants.ByReviewerKey(cred)
	if isAPIKey || isSDK || isReviewer {
		return nil, problem(fiber.StatusForbidden, CodeForbidden, "this endpoint requires an admin key")
	}
	return nil, errUnauthorized()
}

func (s *Server) rateLimit(t *tenant.Tenant) error {
	if ok, wait := s.limits.allow(t.ID, t.RateLimitPerSecond/float64(max(s.cfg.EdgeReplicas, 1))); !ok {
		e := problem(fiber.StatusTooManyRequests, CodeRateLimited, "rate limit exceeded, retry later")
		e.retryAfter = wait
		return e
	}
	return nil
}

// sdkTokenGrace keeps an sdk_token valid for a while after its session expired, so that the
// SDK is told 410 session_expired (and sees status "expired") rather than 401.
const sdkTokenGrace = time.Hour

// Tokens are stateless: base64url(field|field|...) "." base64url(HMAC-SHA256 over the
// token's kind, "|" and the payload), keyed by TokenSecret. Two kinds:
//   - sdk: session_id|tenant_id|session_expiry_unix — one session's SDK (Session Init).
//   - handoff: session_id|tenant_id|session_expiry_unix|link_expiry_unix — the chip step of
//     one session on another device (POST .../handoff), refused once the chip is read.
const (
	tokenSDK     = "sdk"
	tokenHandoff = "handoff"
)

// signToken returns a token of kind holding fields (which must not contain "|").
func (s *Server) signToken(kind string, fields ...string) string {
	payload := strings.Join(fields, "|")
	mac := hmac.New(sha256.New, s.cfg.TokenSecret)
	mac.Write([]byte(kind + "|" + payload))
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." +
		base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// openToken checks tok's MAC for kind in constant time and returns its n fields.
func (s *Server) openToken(kind, tok string, n int) ([]string, bool) {
	p, m, found := strings.Cut(tok, ".")
	if !found || len(tok) > 512 {
		return nil, false
	}
	// Strict: one token has one spelling (the trailing bits of its last character count).
	payload, err := base64.RawURLEncoding.Strict().DecodeString(p)
	if err != nil {
		return nil, false
	}
	got, err := base64.RawURLEncoding.Strict().DecodeString(m)
	if err != nil {
		return nil, false
	}
	mac := hmac.New(sha256.New, s.cfg.TokenSecret)
	mac.Write([]byte(kind + "|"))
	mac.Write(payload)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return nil, false
	}
	fields := strings.Split(string(payload), "|")
	if len(fields) != n {
		return nil, false
	}
	return fields, true
}

func unixField(f string) (time.Time, bool) {
	v, err := strconv.ParseInt(f, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(v, 0), true
}

// sdkToken returns the stateless token scoped to one session until expires.
func (s *Server) sdkToken(sessionID, tenantID string, expires time.Time) string {
	return s.signToken(tokenSDK, sessionID, tenantID, strconv.FormatInt(expires.Unix(), 10))
}

// verifySDKToken checks the token's MAC in constant time and its expiry.
func (s *Server) verifySDKToken(tok string) (sessionID, tenantID string, expiry time.Time, ok bool) {
	f, ok := s.openToken(tokenSDK, tok, 3)
	if !ok {
		return "", "", time.Time{}, false
	}
	exp, ok := unixField(f[2])
	if !ok || !s.now().Before(exp.Add(sdkTokenGrace)) {
		return "", "", time.Time{}, false
	}
	return f[0], f[1], exp, true
}

// handoffToken returns the token of a hand-off link of one session, valid until linkExpiry.
func (s *Server) handoffToken(sessionID, tenantID string, sessionExpiry, linkExpiry time.Time) string {
	return s.signToken(tokenHandoff, sessionID, tenantID,
		strconv.FormatInt(sessionExpiry.Unix(), 10), strconv.FormatInt(linkExpiry.Unix(), 10))
}

// handoffPrincipal resolves a hand-off token (MAC, link expiry, tenant) to the principal of
// its session's chip step, and applies the tenant's rate limit. Invalid or expired → 401.
func (s *Server) handoffPrincipal(tok string) (principal, error) {
	f, ok := s.openToken(tokenHandoff, tok, 4)
	if !ok {
		return principal{}, errUnauthorized()
	}
	sessExp, ok1 := unixField(f[2])
	linkExp, ok2 := unixField(f[3])
	if !ok1 || !ok2 || !s.now().Before(linkExp) {
		return principal{}, errUnauthorized()
	}
	t, err := s.limitedTenant(f[1])
	if err != nil {
		return principal{}, err
	}
	return principal{tenant: t, sdkSessID: f[0], sdkExpiry: sessExp, handoff: true}, nil
}
