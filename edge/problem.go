package edge

import (
	"errors"
	"fmt"
	"net/http"

	prob "github.com/idstream/idstream/internal/problem"
)

// Problem codes (API.md). Every error response carries one of them in "code". The codes
// shared with the consent API come from internal/problem.
const (
	CodeNotFound             = prob.CodeNotFound
	CodeMethodNotAllowed     = prob.CodeMethodNotAllowed
	CodeInternal             = prob.CodeInternal
	CodeUnavailable          = prob.CodeUnavailable
	CodeNotReady             = prob.CodeNotReady
	CodePayloadTooLarge      = prob.CodePayloadTooLarge
	CodeRateLimited          = prob.CodeRateLimited
	CodeUnsupportedMedia     = prob.CodeUnsupportedMedia
	CodeInvalidJSON          = prob.CodeInvalidJSON
	CodeInvalidRequest       = prob.CodeInvalidRequest
	CodeBadRequest           = prob.CodeBadRequest
	CodeUnauthorized         = prob.CodeUnauthorized
	CodeForbidden            = prob.CodeForbidden
	CodeRequestTimeout       = prob.CodeRequestTimeout
	CodeHeadersTooLarge      = prob.CodeHeadersTooLarge
	CodeInvalidFlow          = "invalid_flow"
	CodeConsentRequired      = "consent_required"
	CodeIdempotencyKeyReused = "idempotency_key_reused"
	CodeSessionNotFound      = "session_not_found"
	CodeSessionExpired       = "session_expired"
	CodeSessionClosed        = "session_closed"
	CodeStepNotInFlow        = "step_not_in_flow"
	CodeInvalidImage         = "invalid_image"
	CodeInvalidChipData      = "invalid_chip_data"
	CodeOverloaded           = "overloaded"
	CodeHandoffUsed          = "handoff_used"
)

// ProblemTypeBase prefixes every problem "type" URI.
const ProblemTypeBase = prob.TypeBase

// Problem is an RFC 9457 problem document as the edge writes it.
type Problem = prob.Document

// authChallenge is the WWW-Authenticate header of the edge's 401 answers.
const authChallenge = `Bearer realm="idstream"`

// apiError is an error a handler returns to answer with a problem document. Detail must
// never contain PII or internals.
type apiError struct {
	status     int
	code       string
	detail     string
	retryAfter int // seconds; 0: no Retry-After header
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.detail) }

// Problem makes apiError a problem.Problemer: the shared handler answers it.
func (e *apiError) Problem() *prob.Error {
	return &prob.Error{Status: e.status, Code: e.code, Detail: e.detail, RetryAfter: e.retryAfter}
}

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

// toAPIError maps any error returned through the handler chain to a problem (see
// problem.From). Unknown errors become 500 internal without their text.
func toAPIError(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, true
	}
	p, known := prob.From(err)
	return &apiError{status: p.Status, code: p.Code, detail: p.Detail, retryAfter: p.RetryAfter}, known
}
