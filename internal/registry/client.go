package registry

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idstream/idstream/internal/tlsfiles"
)

// Client defaults.
const (
	DefaultTimeout          = 2 * time.Second
	DefaultMaxAttempts      = 3
	DefaultBackoffBase      = 100 * time.Millisecond
	DefaultBackoffMax       = 1 * time.Second
	DefaultMaxRetryAfter    = 5 * time.Second
	DefaultBreakerThreshold = 5
	DefaultBreakerCooldown  = 30 * time.Second
	DefaultMaxResponseBytes = 64 << 10
)

// Sleeper waits for d or until ctx is done, whichever comes first, and returns ctx.Err() in
// the latter case. Client uses it between retries; tests inject a fake.
type Sleeper func(ctx context.Context, d time.Duration) error

// Client is a Registry backed by the registry JSON API (API.md) over HTTP(S).
//
// Each lookup is one POST; the lookups are read-only, so retrying them is safe. An attempt
// has its own timeout (WithTimeout). Network errors, timeouts, 429 and 5xx are retried up to
// WithMaxAttempts attempts with exponential backoff and jitter, waiting instead as long as a
// Retry-After header asks (up to WithMaxRetryAfter; longer, the call gives up at once). Other
// 4xx are not retried. Each lookup has its own circuit breaker: after WithBreaker's threshold
// of consecutive unavailable calls it opens, and calls fail at once with ErrCircuitOpen until
// the cool-down has passed on the client's clock; then one probe call is let through, whose
// success closes the breaker. Errors are *Error values wrapping the package's sentinels.
//
// Client is safe for concurrent use.
type Client struct {
	endpoint      *url.URL
	token         string
	http          *http.Client
	timeout       time.Duration
	maxAttempts   int
	backoffBase   time.Duration
	backoffMax    time.Duration
	maxRetryAfter time.Duration
	maxResponse   int64
	now           func() time.Time
	sleep         Sleeper
	logger        *slog.Logger
	breakers      map[Lookup]*breaker
}

var _ Registry = (*Client)(nil)

// clientConfig collects the options of NewClient.
type clientConfig struct {
	token            string
	timeout          time.Duration
	maxAttempts      int
	backoffBase      time.Duration
	backoffMax       time.Duration
	maxRetryAfter    time.Duration
	breakerThreshold int
	breakerCooldown  time.Duration
	maxResponse      int64
	now              func() time.Time
	sleep            Sleeper
	logger           *slog.Logger
	tlsConfig        *tls.Config
	certFile         string
	keyFile          string
	caFile           string
	transport        http.RoundTripper
}

// ClientOption configures a Client.
type ClientOption func(*clientConfig)

// WithBearerToken sends "Authorization: Bearer <token>" with every request.
func WithBearerToken(token string) ClientOption {
	return func(c *clientConfig) { c.token = token }
}

// WithTimeout bounds each HTTP attempt (connect, request, response body); default
// DefaultTimeout. The caller's context bounds the whole call, retries included.
func WithTimeout(d time.Duration) ClientOption {
	return func(c *clientConfig) { c.timeout = d }
}

// WithMaxAttempts sets how many HTTP attempts a call makes at most (1: no retries); default
// DefaultMaxAttempts.
func WithMaxAttempts(n int) ClientOption {
	return func(c *clientConfig) { c.maxAttempts = n }
}

// WithBackoff sets the exponential backoff between attempts: the n-th retry waits between
// half and all of min(base·2^(n-1), max); defaults DefaultBackoffBase, DefaultBackoffMax.
func WithBackoff(base, max time.Duration) ClientOption {
	return func(c *clientConfig) { c.backoffBase, c.backoffMax = base, max }
}

// WithMaxRetryAfter sets the longest Retry-After the client waits out; a registry asking for
// longer makes the call fail with ErrUnavailable at once. Default DefaultMaxRetryAfter.
func WithMaxRetryAfter(d time.Duration) ClientOption {
	return func(c *clientConfig) { c.maxRetryAfter = d }
}

// WithBreaker sets the circuit breaker: open after threshold consecutive unavailable calls,
// half-open after cooldown. Defaults DefaultBreakerThreshold, DefaultBreakerCooldown.
func WithBreaker(threshold int, cooldown time.Duration) ClientOption {
	return func(c *clientConfig) { c.breakerThreshold, c.breakerCooldown = threshold, cooldown }
}

// WithMaxResponseBytes sets the largest response body accepted; a larger one fails with
// ErrBadResponse. Default DefaultMaxResponseBytes.
func WithMaxResponseBytes(n int64) ClientOption {
	return func(c *clientConfig) { c.maxResponse = n }
}

// WithClock sets the clock of the circuit breaker and of Retry-After dates (default
// time.Now).
func WithClock(now func() time.Time) ClientOption {
	return func(c *clientConfig) { c.now = now }
}

// WithSleeper sets how the client waits between attempts (default: a timer that stops when
// the context is done).
func WithSleeper(s Sleeper) ClientOption {
	return func(c *clientConfig) { c.sleep = s }
}

// WithLogger logs retries (debug) and circuit breaker changes (warn), without personal data.
// Default: no logging.
func WithLogger(l *slog.Logger) ClientOption {
	return func(c *clientConfig) { c.logger = l }
}

// WithTLSConfig sets the TLS configuration (cloned), e.g. for mTLS with certificates held in
// memory. WithClientCertificateFiles and WithRootCAFile add to it.
func WithTLSConfig(cfg *tls.Config) ClientOption {
	return func(c *clientConfig) {
		if cfg != nil {
			c.tlsConfig = cfg.Clone()
		}
	}
}

// WithClientCertificateFiles presents the PEM certificate chain and key in these files to the
// registry (mTLS). NewClient fails if they cannot be loaded.
func WithClientCertificateFiles(certFile, keyFile string) ClientOption {
	return func(c *clientConfig) { c.certFile, c.keyFile = certFile, keyFile }
}

// WithRootCAFile trusts only the PEM CA certificates in this file for the registry's server
// certificate. NewClient fails if it holds none.
func WithRootCAFile(caFile string) ClientOption {
	return func(c *clientConfig) { c.caFile = caFile }
}

// WithTransport replaces the HTTP transport (e.g. for instrumentation). The TLS options do
// not apply to a replaced transport; combining them is an error.
func WithTransport(rt http.RoundTripper) ClientOption {
	return func(c *clientConfig) { c.transport = rt }
}

// NewClient returns a Client of the registry API at baseURL (scheme http or https, e.g.
// "https://registry.example:8443"; paths of API.md are appended to its path). It returns an
// error if baseURL or an option is invalid, or if TLS files cannot be loaded. TLS options
// require an https URL.
func NewClient(baseURL string, opts ...ClientOption) (*Client, error) {
	cfg := clientConfig{
		timeout:          DefaultTimeout,
		maxAttempts:      DefaultMaxAttempts,
		backoffBase:      DefaultBackoffBase,
		backoffMax:       DefaultBackoffMax,
		maxRetryAfter:    DefaultMaxRetryAfter,
		breakerThreshold: DefaultBreakerThreshold,
		breakerCooldown:  DefaultBreakerCooldown,
		maxResponse:      DefaultMaxResponseBytes,
		now:              time.Now,
		sleep:            sleepContext,
	}
	for _, o := range opts {
		o(&cfg)
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("registry: new client: base URL must be an absolute http(s) URL without query, fragment or credentials")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	switch {
	case cfg.timeout <= 0:
		return nil, errors.New("registry: new client: timeout must be positive")
	case cfg.maxAttempts < 1:
		return nil, errors.New("registry: new client: max attempts must be at least 1")
	case cfg.backoffBase <= 0 || cfg.backoffMax < cfg.backoffBase:
		return nil, errors.New("registry: new client: backoff base must be positive and at most max")
	case cfg.maxRetryAfter < 0:
		return nil, errors.New("registry: new client: max Retry-After must not be negative")
	case cfg.breakerThreshold < 1 || cfg.breakerCooldown <= 0:
		return nil, errors.New("registry: new client: breaker threshold must be at least 1 and cool-down positive")
	case cfg.maxResponse < 1:
		return nil, errors.New("registry: new client: max response bytes must be positive")
	case cfg.now == nil || cfg.sleep == nil:
		return nil, errors.New("registry: new client: clock and sleeper must not be nil")
	case (cfg.certFile == "") != (cfg.keyFile == ""):
		return nil, errors.New("registry: new client: client certificate and key files go together")
	}
	if strings.ContainsAny(cfg.token, "\r\n") {
		return nil, errors.New("registry: new client: bearer token must not contain line breaks")
	}
	useTLS := cfg.tlsConfig != nil || cfg.certFile != "" || cfg.caFile != ""
	if useTLS && u.Scheme != "https" {
		return nil, errors.New("registry: new client: TLS options need an https base URL")
	}
	transport := cfg.transport
	if transport != nil && useTLS {
		return nil, errors.New("registry: new client: TLS options do not apply to a replaced transport")
	}
	if transport == nil {
		tlsConfig, err := cfg.buildTLS()
		if err != nil {
			return nil, err
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tlsConfig
		t.MaxIdleConnsPerHost = 16
		transport = t
	}
	logger := cfg.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		endpoint: u,
		token:    cfg.token,
		http: &http.Client{
			Transport: transport,
			// Lookups are POSTs: a redirect is a misconfiguration, reported, not followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		timeout:       cfg.timeout,
		maxAttempts:   cfg.maxAttempts,
		backoffBase:   cfg.backoffBase,
		backoffMax:    cfg.backoffMax,
		maxRetryAfter: cfg.maxRetryAfter,
		maxResponse:   cfg.maxResponse,
		now:           cfg.now,
		sleep:         cfg.sleep,
		logger:        logger,
		breakers:      make(map[Lookup]*breaker),
	}
	for _, l := range Lookups() {
		c.breakers[l] = &breaker{
			threshold: cfg.breakerThreshold,
			cooldown:  cfg.breakerCooldown,
			now:       cfg.now,
			onChange: func(from, to breakerState) {
				logger.Warn("registry circuit breaker changed state", "lookup", string(l),
					"from", from.String(), "to", to.String())
			},
		}
	}
	return c, nil
}

// buildTLS returns the client TLS configuration, nil when no TLS option was given: the
// WithTLSConfig one (copied) with the files' CA and client certificate added.
func (cfg *clientConfig) buildTLS() (*tls.Config, error) {
	files := tlsfiles.Files{CA: cfg.caFile, Cert: cfg.certFile, Key: cfg.keyFile}
	if cfg.tlsConfig == nil && files == (tlsfiles.Files{}) {
		return nil, nil
	}
	fromFiles, err := files.Config()
	if err != nil {
		return nil, fmt.Errorf("registry: new client: %w", err)
	}
	if cfg.tlsConfig == nil {
		return fromFiles, nil
	}
	tc := cfg.tlsConfig.Clone()
	if tc.MinVersion == 0 {
		tc.MinVersion = tls.VersionTLS12
	}
	tc.Certificates = append(tc.Certificates, fromFiles.Certificates...)
	if fromFiles.RootCAs != nil {
		tc.RootCAs = fromFiles.RootCAs
	}
	return tc, nil
}

// CheckIdentity implements Registry.
func (c *Client) CheckIdentity(ctx context.Context, q Query) (IdentityResult, error) {
	resp, err := c.call(ctx, LookupIdentity, q)
	if err != nil {
		return IdentityResult{}, err
	}
	return IdentityResult{
		Outcome:          IdentityOutcome(resp.Outcome),
		MismatchedFields: resp.MismatchedFields,
		ReferenceID:      resp.ReferenceID,
		CheckedAt:        resp.CheckedAt,
	}, nil
}

// CheckTax implements Registry.
func (c *Client) CheckTax(ctx context.Context, q Query) (RecordResult, error) {
	return c.record(ctx, LookupTax, q)
}

// CheckHealthInsurance implements Registry.
func (c *Client) CheckHealthInsurance(ctx context.Context, q Query) (RecordResult, error) {
	return c.record(ctx, LookupHealthInsurance, q)
}

// CheckSocialInsurance implements Registry.
func (c *Client) CheckSocialInsurance(ctx context.Context, q Query) (RecordResult, error) {
	return c.record(ctx, LookupSocialInsurance, q)
}

func (c *Client) record(ctx context.Context, l Lookup, q Query) (RecordResult, error) {
	resp, err := c.call(ctx, l, q)
	if err != nil {
		return RecordResult{}, err
	}
	return RecordResult{
		Lookup:           l,
		Outcome:          RecordOutcome(resp.Outcome),
		MismatchedFields: resp.MismatchedFields,
		ReferenceID:      resp.ReferenceID,
		CheckedAt:        resp.CheckedAt,
	}, nil
}

// attemptClass says what an attempt's result means for retries and the breaker.
type attemptClass int

const (
	attemptOK        attemptClass = iota // a valid answer
	attemptRefused                       // a 4xx: the registry is up, the request is wrong
	attemptBad                           // an invalid answer: not retried, counts as a failure
	attemptRetryable                     // 5xx, 429, network error, timeout
	attemptFatal                         // e.g. a TLS failure: unavailable, not retried
	attemptCanceled                      // the caller's context is done
)

// attemptResult is the outcome of one HTTP attempt.
type attemptResult struct {
	class      attemptClass
	status     int
	code       string
	retryAfter time.Duration
	resp       checkResponse
	err        error // wraps a sentinel, or the context's error for attemptCanceled
}

// call runs one lookup: validation, breaker, attempts with retries.
func (c *Client) call(ctx context.Context, l Lookup, q Query) (checkResponse, error) {
	if err := q.Validate(); err != nil {
		return checkResponse{}, &Error{Lookup: l, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return checkResponse{}, &Error{Lookup: l, Err: contextError(err)}
	}
	body, err := json.Marshal(newCheckRequest(l, q))
	if err != nil {
		return checkResponse{}, &Error{Lookup: l, Err: fmt.Errorf("%w: encode request: %w", ErrInvalidQuery, err)}
	}
	br := c.breakers[l]
	pm, ok := br.allow()
	if !ok {
		return checkResponse{}, &Error{Lookup: l, Err: ErrCircuitOpen}
	}
	e := &Error{Lookup: l}
	for attempt := 1; ; attempt++ {
		e.Attempts = attempt
		r := c.attempt(ctx, l, body)
		e.StatusCode, e.Code, e.RetryAfter, e.Err = r.status, r.code, r.retryAfter, r.err
		switch r.class {
		case attemptOK:
			br.success(pm)
			return r.resp, nil
		case attemptRefused:
			br.success(pm)
			return checkResponse{}, e
		case attemptBad, attemptFatal:
			br.failure(pm)
			return checkResponse{}, e
		case attemptCanceled:
			endCanceled(ctx, br, pm)
			return checkResponse{}, e
		}
		// Retryable.
		if attempt >= c.maxAttempts {
			br.failure(pm)
			return checkResponse{}, e
		}
		wait := c.backoff(attempt)
		if r.retryAfter > 0 {
			if r.retryAfter > c.maxRetryAfter {
				br.failure(pm)
				return checkResponse{}, e
			}
			wait = r.retryAfter
		}
		c.logger.Debug("registry lookup retrying", "lookup", string(l), "attempt", attempt,
			"status", r.status, "wait", wait)
		if err := c.sleep(ctx, wait); err != nil {
			e.Err = contextError(ctx.Err())
			endCanceled(ctx, br, pm)
			return checkResponse{}, e
		}
	}
}

// endCanceled ends an allowed call cut short by the caller's context: a deadline says the
// registry was too slow (a failure), a cancellation says nothing about it.
func endCanceled(ctx context.Context, br *breaker, pm permit) {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		br.failure(pm)
		return
	}
	br.release(pm)
}

// contextError maps the caller's context error: a passed deadline means the registry did not
// answer in time (ErrUnavailable); a cancellation is returned as is.
func contextError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err == nil {
		err = context.Canceled
	}
	return fmt.Errorf("lookup abandoned: %w", err)
}

// backoff is the wait before retry number attempt (1-based): equal jitter over an
// exponentially growing, capped interval.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.backoffBase
	for i := 1; i < attempt && d < c.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.backoffMax)
	half := d / 2
	return half + rand.N(d-half+1)
}

// attempt makes one HTTP request.
func (c *Client) attempt(ctx context.Context, l Lookup, body []byte) attemptResult {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := *c.endpoint
	u.Path += l.path()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return attemptResult{class: attemptFatal, err: fmt.Errorf("%w: build request: %w", ErrUnavailable, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "idstream-registry-client")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportFailure(ctx, err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, c.maxResponse))
		_ = resp.Body.Close()
	}()
	r := attemptResult{status: resp.StatusCode}
	if resp.ContentLength > c.maxResponse {
		r.class = attemptBad
		r.err = fmt.Errorf("%w: response of %d bytes exceeds the limit of %d", ErrBadResponse, resp.ContentLength, c.maxResponse)
		return r
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxResponse+1))
	if err != nil {
		f := c.transportFailure(ctx, err)
		f.status = resp.StatusCode
		return f
	}
	if int64(len(data)) > c.maxResponse {
		r.class = attemptBad
		r.err = fmt.Errorf("%w: response exceeds the limit of %d bytes", ErrBadResponse, c.maxResponse)
		return r
	}
	switch s := resp.StatusCode; {
	case s == http.StatusOK:
		out, err := decodeCheckResponse(l, data)
		if err != nil {
			r.class, r.err = attemptBad, err
			return r
		}
		r.class, r.resp = attemptOK, out
	case s == http.StatusTooManyRequests || s >= 500:
		r.class = attemptRetryable
		r.code = problemCode(data)
		r.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
		r.err = fmt.Errorf("%w: HTTP %d", ErrUnavailable, s)
	case s == http.StatusBadRequest || s == http.StatusUnprocessableEntity:
		r.class, r.code = attemptRefused, problemCode(data)
		r.err = fmt.Errorf("%w: refused by the registry (HTTP %d)", ErrInvalidQuery, s)
	case s >= 400:
		r.class, r.code = attemptRefused, problemCode(data)
		r.err = fmt.Errorf("%w: HTTP %d", ErrRejected, s)
	default:
		r.class = attemptBad
		r.err = fmt.Errorf("%w: unexpected HTTP %d", ErrBadResponse, s)
	}
	return r
}

// transportFailure classifies an error of the request or of reading the response.
func (c *Client) transportFailure(ctx context.Context, err error) attemptResult {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return attemptResult{class: attemptCanceled, err: contextError(ctxErr)}
	}
	if isTLSFailure(err) {
		return attemptResult{class: attemptFatal, err: fmt.Errorf("%w: TLS: %w", ErrUnavailable, stripURL(err))}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return attemptResult{class: attemptRetryable, err: fmt.Errorf("%w: no answer within %s", ErrUnavailable, c.timeout)}
	}
	return attemptResult{class: attemptRetryable, err: fmt.Errorf("%w: %w", ErrUnavailable, stripURL(err))}
}

// stripURL drops the *url.Error wrapper (its text repeats the method and URL).
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// isTLSFailure reports whether err is a TLS handshake or certificate failure, which a retry
// does not fix.
func isTLSFailure(err error) bool {
	var (
		header tls.RecordHeaderError
		op     *net.OpError
	)
	switch {
	case tlsfiles.IsCertificateError(err), errors.As(err, &header):
		return true
	case errors.As(err, &op) && op.Op == "remote error": // a TLS alert from the server
		return true
	}
	return false
}

// decodeCheckResponse parses and checks a 200 body.
func decodeCheckResponse(l Lookup, data []byte) (checkResponse, error) {
	var out checkResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return checkResponse{}, fmt.Errorf("%w: malformed JSON: %w", ErrBadResponse, err)
	}
	if out.Lookup != "" && out.Lookup != l {
		return checkResponse{}, fmt.Errorf("%w: answer is for lookup %q", ErrBadResponse, out.Lookup)
	}
	if l == LookupIdentity {
		if !IdentityOutcome(out.Outcome).Valid() {
			return checkResponse{}, fmt.Errorf("%w: unknown identity outcome %q", ErrBadResponse, truncate(out.Outcome))
		}
	} else if !RecordOutcome(out.Outcome).Valid() {
		return checkResponse{}, fmt.Errorf("%w: unknown record outcome %q", ErrBadResponse, truncate(out.Outcome))
	}
	if out.ReferenceID == "" {
		return checkResponse{}, fmt.Errorf("%w: missing reference_id", ErrBadResponse)
	}
	if out.CheckedAt.IsZero() {
		return checkResponse{}, fmt.Errorf("%w: missing checked_at", ErrBadResponse)
	}
	for _, f := range out.MismatchedFields {
		if f != FieldFullName && f != FieldDateOfBirth && f != FieldSex {
			return checkResponse{}, fmt.Errorf("%w: unknown mismatched field %q", ErrBadResponse, truncate(f))
		}
	}
	return out, nil
}

func truncate(s string) string {
	const n = 32
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// problemCode extracts the code of a problem body, "" if there is none.
func problemCode(data []byte) string {
	var p problem
	if json.Unmarshal(data, &p) != nil {
		return ""
	}
	for _, r := range p.Code {
		if !(r == '_' || r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')) {
			return ""
		}
	}
	return truncate(p.Code)
}

// parseRetryAfter reads a Retry-After header (delta-seconds or an HTTP date); 0 if absent or
// invalid.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// sleepContext is the default Sleeper.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
