package registry

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Every error returned by a Registry of this package wraps exactly one of
// ErrUnavailable, ErrInvalidQuery, ErrRejected or ErrBadResponse, or else the caller's own
// context.Canceled.
var (
	// ErrUnavailable: no answer could be had in time — network error, timeout, HTTP 5xx or
	// 429 after the retries, TLS handshake failure, or the circuit breaker is open. Callers
	// report the check as warn/skipped; the subject is not at fault.
	ErrUnavailable = errors.New("registry unavailable")
	// ErrCircuitOpen wraps ErrUnavailable: the circuit breaker is open (or a half-open probe is
	// already in flight) and the call was refused without touching the network.
	ErrCircuitOpen = fmt.Errorf("%w: circuit breaker open", ErrUnavailable)
	// ErrInvalidQuery: the query is malformed (checked locally, or HTTP 400/422 from the
	// registry). Not retried.
	ErrInvalidQuery = errors.New("invalid registry query")
	// ErrRejected: the registry refused the request for another reason — 401/403 (credentials),
	// 404/405 (wrong base URL), 413 or another 4xx. A configuration problem; not retried.
	ErrRejected = errors.New("registry rejected the request")
	// ErrBadResponse: the registry answered 2xx with a body that is not a valid answer
	// (malformed JSON, unknown outcome, too large) or with an unexpected status (1xx/3xx).
	ErrBadResponse = errors.New("bad registry response")
)

// Error is the error type Client (and the sandbox's in-process Registry) return for a lookup
// that produced no result. It carries no personal data.
type Error struct {
	// Lookup is the lookup that failed.
	Lookup Lookup
	// StatusCode is the last HTTP status received, 0 when none was.
	StatusCode int
	// Code is the problem code the registry sent (API.md), when it sent one.
	Code string
	// Attempts is how many HTTP requests were made (0 when refused before any).
	Attempts int
	// RetryAfter is the last Retry-After the registry asked for, 0 when none.
	RetryAfter time.Duration
	// Err wraps one of the package's sentinel errors and the underlying cause.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("registry: ")
	b.WriteString(string(e.Lookup))
	b.WriteString(" lookup: ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("failed")
	}
	var details []string
	if e.StatusCode != 0 {
		details = append(details, fmt.Sprintf("status %d", e.StatusCode))
	}
	if e.Code != "" {
		details = append(details, "code "+e.Code)
	}
	if e.Attempts > 0 {
		details = append(details, fmt.Sprintf("attempts %d", e.Attempts))
	}
	if len(details) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(details, ", "))
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the wrapped cause, so errors.Is(err, ErrUnavailable) works.
func (e *Error) Unwrap() error { return e.Err }
