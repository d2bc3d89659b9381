// Package problem answers HTTP errors as RFC 9457 problem documents
// (application/problem+json) for fiber applications, so that every idstream listener (the
// REST edge, the consent API) answers errors identically:
//
//	{"type": "https://idstream.dev/problems/<code>", "title": "...", "status": 4xx,
//	 "detail": "...", "code": "<code>", "request_id": "..."}
//
// It also owns the X-Request-Id convention: every response carries one, either the sane
// id the client sent or a fresh "req_<hex>". A 5xx never carries internals: errors that are
// not problems are logged (with the request id, never the request body) and answered
// 500 internal with a fixed text.
package problem

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// TypeBase prefixes every problem "type" URI; the code follows it.
const TypeBase = "https://idstream.dev/problems/"

// ContentType is the media type of problem documents.
const ContentType = "application/problem+json"

// HeaderRequestID is the request id header, read from requests and set on every response.
const HeaderRequestID = "X-Request-Id"

// Codes shared by every listener (API.md, openapi.yaml ProblemCode). Listeners add their own.
const (
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeInternal         = "internal"
	CodeUnavailable      = "unavailable"
	CodeNotReady         = "not_ready"
	CodePayloadTooLarge  = "payload_too_large"
	CodeRateLimited      = "rate_limited"
	CodeUnsupportedMedia = "unsupported_media_type"
	CodeInvalidJSON      = "invalid_json"
	CodeInvalidRequest   = "invalid_request"
	CodeBadRequest       = "bad_request"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeRequestTimeout   = "request_timeout"
	CodeHeadersTooLarge  = "request_header_fields_too_large"
)

// Document is an RFC 9457 problem document as idstream writes it.
type Document struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
}

// Error is an error a handler returns to be answered with a problem document. Detail is
// sent to the client as is: it must never hold PII or internals.
type Error struct {
	Status     int
	Code       string
	Detail     string
	RetryAfter int // seconds; > 0 sets the Retry-After header
}

// Error returns "<status> <code>: <detail>".
func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail) }

// Problem returns e itself (Error is a Problemer).
func (e *Error) Problem() *Error { return e }

// Problemer is implemented by error types of other packages that carry a problem; From
// finds them anywhere in an error chain.
type Problemer interface {
	error
	Problem() *Error
}

// New returns the problem status/code with detail.
func New(status int, code, detail string) *Error {
	return &Error{Status: status, Code: code, Detail: detail}
}

// Newf returns the problem status/code with a formatted detail.
func Newf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Unauthorized is the 401 of a missing or invalid credential.
func Unauthorized(detail string) *Error {
	return New(http.StatusUnauthorized, CodeUnauthorized, detail)
}

// Internal is the 500 answered for every failure that is not a problem.
func Internal() *Error {
	return New(http.StatusInternalServerError, CodeInternal, "internal error")
}

// From maps any error to the problem it is answered with, and reports whether err was a
// known problem (a Problemer, or a fiber error of a client-side status). Unknown errors map
// to 500 internal without their text.
func From(err error) (*Error, bool) {
	var p Problemer
	if errors.As(err, &p) {
		if pe := p.Problem(); pe != nil {
			return pe, true
		}
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusNotFound:
			return New(fe.Code, CodeNotFound, "no such resource"), true
		case fiber.StatusMethodNotAllowed:
			return New(fe.Code, CodeMethodNotAllowed, "method not allowed on this resource"), true
		case fiber.StatusRequestEntityTooLarge:
			return New(fe.Code, CodePayloadTooLarge, "request body too large"), true
		case fiber.StatusRequestTimeout:
			return New(fe.Code, CodeRequestTimeout, "request timed out"), true
		case fiber.StatusRequestHeaderFieldsTooLarge:
			return New(fe.Code, CodeHeadersTooLarge, "request headers too large"), true
		case fiber.StatusUnsupportedMediaType:
			return New(fe.Code, CodeUnsupportedMedia, "unsupported content type"), true
		}
		if fe.Code >= 400 && fe.Code < 500 {
			return New(fe.Code, CodeBadRequest, "malformed request"), true
		}
	}
	return Internal(), false
}

const localRequestID = "idstream.request_id"

// RequestID returns the request id of c, setting one (and the response header) if absent:
// the client's X-Request-Id when it is 1–128 characters of [A-Za-z0-9._:-], else a new
// "req_" + 24 hex digits.
func RequestID(c *fiber.Ctx) string {
	if id, ok := c.Locals(localRequestID).(string); ok && id != "" {
		return id
	}
	id := c.Get(HeaderRequestID)
	if !saneRequestID(id) {
		id = newRequestID()
	}
	c.Locals(localRequestID, id)
	c.Set(HeaderRequestID, id)
	return id
}

// saneRequestID accepts 1–128 characters of [A-Za-z0-9._:-].
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return "req_" + hex.EncodeToString(b)
}

// write writes e as application/problem+json, with Retry-After when set and
// WWW-Authenticate = challenge on a 401 when challenge is not empty.
func write(c *fiber.Ctx, e *Error, challenge string) error {
	title := http.StatusText(e.Status)
	if title == "" {
		title = "Error"
	}
	if e.Status == http.StatusUnauthorized && challenge != "" {
		c.Set(fiber.HeaderWWWAuthenticate, challenge)
	}
	if e.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.RetryAfter))
	}
	body := Document{
		Type:      TypeBase + e.Code,
		Title:     title,
		Status:    e.Status,
		Detail:    e.Detail,
		Code:      e.Code,
		RequestID: RequestID(c),
	}
	c.Status(e.Status)
	if err := c.JSON(body); err != nil {
		return fmt.Errorf("write problem %s: %w", e.Code, err)
	}
	c.Set(fiber.HeaderContentType, ContentType)
	return nil
}
