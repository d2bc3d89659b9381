package edge

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// Problem codes (API.md). Every error response carries one of them in "code".
const (
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeInternal             = "internal"
	CodeUnavailable          = "unavailable"
	CodeNotReady             = "not_ready"
	CodePayloadTooLarge      = "payload_too_large"
	CodeRateLimited          = "rate_limited"
	CodeUnsupportedMedia     = "unsupported_media_type"
	CodeInvalidJSON          = "invalid_json"
	CodeInvalidRequest       = "invalid_request"
	CodeBadRequest           = "bad_request"
	CodeUnauthorized         = "unauthorized"
	CodeForbidden            = "forbidden"
	CodeInvalidFlow          = "invalid_flow"
	CodeConsentRequired      = "consent_required"
	CodeIdempotencyKeyReused = "idempotency_key_reused"
	CodeSessionNotFound      = "session_not_found"
	CodeSessionExpired       = "session_expired"
	CodeSessionClosed        = "session_closed"
	CodeStepNotInFlow        = "step_not_in_flow"
	CodeInvalidImage         = "invalid_image"
	CodeInvalidChipData      = "invalid_chip_data"
	CodeRequestTimeout       = "request_timeout"
	CodeHeadersTooLarge      = "request_header_fields_too_large"
)

// ProblemTypeBase prefixes every problem "type" URI.
const ProblemTypeBase = "https://idstream.dev/problems/"

// Problem is an RFC 9457 problem document as the edge writes it.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
}

// apiError is an error a handler returns to answer with a problem document. Detail must
// never contain PII or internals.
type apiError struct {
	status     int
	code       string
	detail     string
	retryAfter int // seconds; 0: no Retry-After header
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.detail) }

func problem(status int, code, detail string) *apiError {
	return &apiError{status: status, code: code, detail: detail}
}

func problemf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, detail: fmt.Sprintf(format, args...)}
}

func errSessionNotFound() *apiError {
	return problem(http.StatusNotFound, CodeSessionNotFound, "no such session")
}

func errUnauthorized() *apiError {
	return problem(http.StatusUnauthorized, CodeUnauthorized, "missing or invalid credentials")
}

func errUnavailable() *apiError {
	return problem(http.StatusServiceUnavailable, CodeUnavailable, "the service is temporarily unavailable, retry later")
}

// toAPIError maps any error returned through the handler chain to a problem. Unknown errors
// become 500 internal without their text.
func toAPIError(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, true
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusNotFound:
			return problem(fe.Code, CodeNotFound, "no such resource"), true
		case fiber.StatusMethodNotAllowed:
			return problem(fe.Code, CodeMethodNotAllowed, "method not allowed on this resource"), true
		case fiber.StatusRequestEntityTooLarge:
			return problem(fe.Code, CodePayloadTooLarge, "request body too large"), true
		case fiber.StatusRequestTimeout:
			return problem(fe.Code, CodeRequestTimeout, "request timed out"), true
		case fiber.StatusRequestHeaderFieldsTooLarge:
			return problem(fe.Code, CodeHeadersTooLarge, "request headers too large"), true
		case fiber.StatusUnsupportedMediaType:
			return problem(fe.Code, CodeUnsupportedMedia, "unsupported content type"), true
		}
		if fe.Code >= 400 && fe.Code < 500 {
			return problem(fe.Code, CodeBadRequest, "malformed request"), true
		}
	}
	return problem(http.StatusInternalServerError, CodeInternal, "internal error"), false
}

// writeProblem writes p as application/problem+json.
func writeProblem(c *fiber.Ctx, e *apiError) error {
	title := http.StatusText(e.status)
	if title == "" {
		title = "Error"
	}
	if e.status == http.StatusUnauthorized {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="idstream"`)
	}
	if e.retryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(e.retryAfter))
	}
	body := Problem{
		Type:      ProblemTypeBase + e.code,
		Title:     title,
		Status:    e.status,
		Detail:    e.detail,
		Code:      e.code,
		RequestID: requestID(c),
	}
	c.Status(e.status)
	if err := c.JSON(body); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/problem+json")
	return nil
}
