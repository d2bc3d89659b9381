package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// sender posts signed webhooks. It holds two HTTP clients: one that refuses non-public
// addresses at connect time, one for tenants that allow private webhooks. Neither uses a
// proxy (a proxy would connect on our behalf, past the address check) nor follows redirects.
type sender struct {
	public, private *http.Client
	timeout         time.Duration
	maxBody         int64
	userAgent       string
}

func newSender(timeout time.Duration, maxBody int64, userAgent string) *sender {
	return &sender{
		public:    newHTTPClient(false),
		private:   newHTTPClient(true),
		timeout:   timeout,
		maxBody:   maxBody,
		userAgent: userAgent,
	}
}

func newHTTPClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = publicOnlyControl
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 0, // the per-attempt context bounds the whole exchange
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// sendResult is what one attempt observed.
type sendResult struct {
	status   *int  // nil when no response arrived
	err      error // nil on 2xx; wraps ErrRefusedTarget when the target is not allowed
	duration time.Duration
}

// send posts body to target with the Standard Webhooks headers, within the per-attempt
// timeout, and reads at most maxBody bytes of the answer. Any 2xx acknowledges.
func (s *sender) send(ctx context.Context, target string, allowPrivate bool, id string, ts time.Time, keys [][]byte, body []byte) sendResult {
	start := time.Now()
	res := s.do(ctx, target, allowPrivate, id, ts, keys, body)
	res.duration = time.Since(start)
	return res
}

func (s *sender) do(ctx context.Context, target string, allowPrivate bool, id string, ts time.Time, keys [][]byte, body []byte) sendResult {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return sendResult{err: fmt.Errorf("%w: not an absolute http(s) URL without credentials", ErrRefusedTarget)}
	}
	sig, err := Signature(keys, id, ts.Unix(), body)
	if err != nil {
		return sendResult{err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return sendResult{err: fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.userAgent)
	req.Header.Set(HeaderID, id)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	client := s.public
	if allowPrivate {
		client = s.private
	}
	resp, err := client.Do(req)
	if err != nil {
		return sendResult{err: scrub(err)}
	}
	defer resp.Body.Close()
	_, rerr := io.Copy(io.Discard, io.LimitReader(resp.Body, s.maxBody))
	status := resp.StatusCode
	if status >= 200 && status < 300 {
		return sendResult{status: &status}
	}
	if rerr != nil {
		return sendResult{status: &status, err: fmt.Errorf("http status %d (reading body: %w)", status, scrub(rerr))}
	}
	return sendResult{status: &status, err: fmt.Errorf("http status %d", status)}
}

// scrub drops the URL from a client error: URLs may carry tokens in their query, and
// attempt errors are logged and stored.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
