package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a manually advanced clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeSleeper records the waits asked for and returns at once.
type fakeSleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *fakeSleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *fakeSleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newTestClient returns a client of url with a fake sleeper and clock, and the options given.
func newTestClient(t *testing.T, url string, opts ...ClientOption) (*Client, *fakeSleeper, *fakeClock) {
	t.Helper()
	sl, clk := &fakeSleeper{}, newFakeClock()
	all := append([]ClientOption{WithSleeper(sl.Sleep), WithClock(clk.Now)}, opts...)
	c, err := NewClient(url, all...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c, sl, clk
}

// sandboxServer serves a sandbox over HTTP for the test's duration.
func sandboxServer(t *testing.T, opts ...SandboxOption) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(NewSandbox(opts...))
	t.Cleanup(srv.Close)
	return srv
}

// checkAll runs the four lookups of r for q.
func checkAll(ctx context.Context, r Registry, q Query) (IdentityResult, map[Lookup]RecordResult, map[Lookup]error) {
	errs := map[Lookup]error{}
	records := map[Lookup]RecordResult{}
	id, err := r.CheckIdentity(ctx, q)
	errs[LookupIdentity] = err
	for l, f := range map[Lookup]func(context.Context, Query) (RecordResult, error){
		LookupTax:             r.CheckTax,
		LookupHealthInsurance: r.CheckHealthInsurance,
		LookupSocialInsurance: r.CheckSocialInsurance,
	} {
		res, err := f(ctx, q)
		records[l], errs[l] = res, err
	}
	return id, records, errs
}

func personaByKey(t *testing.T, key string) Persona {
	t.Helper()
	for _, p := range Personas() {
		if p.Key == key {
			return p
		}
	}
	t.Fatalf("no persona %q", key)
	return Persona{}
}

func expectedRecords(p Persona) map[Lookup]RecordOutcome {
	return map[Lookup]RecordOutcome{LookupTax: p.Tax, LookupHealthInsurance: p.HealthInsurance, LookupSocialInsurance: p.SocialInsurance}
}

// TestPersonasOverHTTPAndInProcess checks every persona's documented outcome through the
// HTTP client against the sandbox server, and through the sandbox's in-process Registry.
func TestPersonasOverHTTPAndInProcess(t *testing.T) {
	clk := newFakeClock()
	const token = "sandbox-test-token"
	sb := NewSandbox(WithSandboxToken(token), WithSlowDelay(20*time.Millisecond), WithSandboxClock(clk.Now))
	srv := httptest.NewServer(sb)
	defer srv.Close()
	client, _, _ := newTestClient(t, srv.URL, WithBearerToken(token), WithBreaker(100, time.Minute))
	registries := map[string]Registry{"http": client, "in-process": sb.Registry()}

	for name, reg := range registries {
		for _, p := range Personas() {
			t.Run(name+"/"+p.Key, func(t *testing.T) {
				id, records, errs := checkAll(context.Background(), reg, p.Query())
				if p.Behavior == BehaviorUnavailable {
					for l, err := range errs {
						if !errors.Is(err, ErrUnavailable) {
							t.Errorf("%s: err = %v, want ErrUnavailable", l, err)
						}
						assertNoPII(t, err, p.Query())
					}
					return
				}
				for l, err := range errs {
					if err != nil {
						t.Fatalf("%s: %v", l, err)
					}
				}
				if id.Outcome != p.Identity {
					t.Errorf("identity outcome = %s, want %s", id.Outcome, p.Identity)
				}
				if id.ReferenceID == "" || !id.CheckedAt.Equal(clk.Now()) {
					t.Errorf("identity reference %q checked at %v, want a reference and %v", id.ReferenceID, id.CheckedAt, clk.Now())
				}
				for l, want := range expectedRecords(p) {
					got := records[l]
					if got.Outcome != want || got.Lookup != l {
						t.Errorf("%s outcome = %s (%s), want %s", l, got.Outcome, got.Lookup, want)
					}
					if got.ReferenceID == "" || got.CheckedAt.IsZero() {
						t.Errorf("%s: missing reference id or checked-at", l)
					}
				}
			})
		}
	}
}

func TestIdentityComparison(t *testing.T) {
	srv := sandboxServer(t)
	client, _, _ := newTestClient(t, srv.URL)
	base := validQuery() // the match persona
	tests := []struct {
		name       string
		edit       func(*Query)
		want       IdentityOutcome
		mismatched []string
	}{
		{"exact", func(*Query) {}, IdentityMatch, nil},
		{"case and spacing", func(q *Query) { q.FullName = "  nguyễn   văn an " }, IdentityMatch, nil},
		{"with document number", func(q *Query) { q.DocumentNumber = "090012345" }, IdentityMatch, nil},
		{"no sex given", func(q *Query) { q.Sex = "" }, IdentityMatch, nil},
		{"diacritics dropped", func(q *Query) { q.FullName = "NGUYEN VAN AN" }, IdentityNameMismatch, []string{FieldFullName}},
		{"other date", func(q *Query) { q.DateOfBirth = "1990-03-16" }, IdentityDOBMismatch, []string{FieldDateOfBirth}},
		{"other sex", func(q *Query) { q.Sex = SexFemale }, IdentitySexMismatch, []string{FieldSex}},
		{"name and date", func(q *Query) { q.FullName = "NGUYỄN VĂN BÌNH"; q.DateOfBirth = "1991-01-01" },
			IdentityNameMismatch, []string{FieldFullName, FieldDateOfBirth}},
		{"unlisted id", func(q *Query) { q.IDNumber = "001090999999" }, IdentityNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := base
			tt.edit(&q)
			got, err := client.CheckIdentity(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if got.Outcome != tt.want || strings.Join(got.MismatchedFields, ",") != strings.Join(tt.mismatched, ",") {
				t.Errorf("got %s %v, want %s %v", got.Outcome, got.MismatchedFields, tt.want, tt.mismatched)
			}
		})
	}
	// A record lookup with another name is a mismatch.
	q := base
	q.FullName = "NGUYỄN VĂN ANH"
	got, err := client.CheckTax(context.Background(), q)
	if err != nil || got.Outcome != RecordMismatch {
		t.Errorf("tax with another name = %+v, %v; want mismatch", got, err)
	}
}

func TestInvalidQueryNeverReachesTheRegistry(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	client, _, _ := newTestClient(t, srv.URL)
	q := validQuery()
	q.DateOfBirth = "1990-13-01"
	_, err := client.CheckIdentity(context.Background(), q)
	var re *Error
	if !errors.Is(err, ErrInvalidQuery) || !errors.As(err, &re) || re.Lookup != LookupIdentity || re.Attempts != 0 {
		t.Fatalf("err = %#v, want an *Error wrapping ErrInvalidQuery with no attempt", err)
	}
	if hits.Load() != 0 {
		t.Errorf("registry hit %d times", hits.Load())
	}
	assertNoPII(t, err, q)
}

// flakyHandler answers the first failures requests with status (and headers), then serves
// the sandbox.
type flakyHandler struct {
	failures int32
	status   int
	header   http.Header
	calls    atomic.Int32
	next     http.Handler
}

func (h *flakyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if n := h.calls.Add(1); n <= h.failures {
		for k, v := range h.header {
			w.Header()[k] = v
		}
		writeProblem(w, h.status, "test_failure", "failing on purpose")
		return
	}
	h.next.ServeHTTP(w, r)
}

func TestRetriesServerErrorsThenSucceeds(t *testing.T) {
	for _, status := range []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			h := &flakyHandler{failures: 2, status: status, next: NewSandbox()}
			srv := httptest.NewServer(h)
			defer srv.Close()
			client, sleeper, _ := newTestClient(t, srv.URL, WithMaxAttempts(3), WithBackoff(100*time.Millisecond, 150*time.Millisecond))
			got, err := client.CheckIdentity(context.Background(), validQuery())
			if err != nil || got.Outcome != IdentityMatch {
				t.Fatalf("CheckIdentity = %+v, %v; want match", got, err)
			}
			if h.calls.Load() != 3 {
				t.Errorf("requests = %d, want 3", h.calls.Load())
			}
			waits := sleeper.Waits()
			if len(waits) != 2 {
				t.Fatalf("waits = %v, want 2", waits)
			}
			// Equal jitter: retry n waits between half and all of min(base·2^(n-1), max).
			for i, bound := range []time.Duration{100 * time.Millisecond, 150 * time.Millisecond} {
				if waits[i] < bound/2 || waits[i] > bound {
					t.Errorf("wait %d = %v, want within [%v, %v]", i+1, waits[i], bound/2, bound)
				}
			}
		})
	}
}

func TestRetriesExhaustedIsUnavailable(t *testing.T) {
	h := &flakyHandler{failures: 100, status: http.StatusServiceUnavailable, next: NewSandbox()}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client, _, _ := newTestClient(t, srv.URL, WithMaxAttempts(4))
	_, err := client.CheckHealthInsurance(context.Background(), validQuery())
	var re *Error
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &re) {
		t.Fatalf("err = %v, want *Error wrapping ErrUnavailable", err)
	}
	if re.Attempts != 4 || h.calls.Load() != 4 || re.StatusCode != http.StatusServiceUnavailable || re.Code != "test_failure" {
		t.Errorf("error = %+v after %d requests; want 4 attempts, status 503, code test_failure", re, h.calls.Load())
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	tests := []struct {
		status int
		want   error
	}{
		{http.StatusBadRequest, ErrInvalidQuery},
		{http.StatusUnprocessableEntity, ErrInvalidQuery},
		{http.StatusUnauthorized, ErrRejected},
		{http.StatusForbidden, ErrRejected},
		{http.StatusNotFound, ErrRejected},
		{http.StatusRequestEntityTooLarge, ErrRejected},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			h := &flakyHandler{failures: 100, status: tt.status, next: NewSandbox()}
			srv := httptest.NewServer(h)
			defer srv.Close()
			client, sleeper, _ := newTestClient(t, srv.URL, WithBreaker(1, time.Minute))
			for i := 0; i < 3; i++ {
				_, err := client.CheckTax(context.Background(), validQuery())
				if !errors.Is(err, tt.want) || errors.Is(err, ErrUnavailable) {
					t.Fatalf("call %d: err = %v, want %v", i, err, tt.want)
				}
			}
			// One request per call, no waits, and the breaker (threshold 1) stayed closed.
			if h.calls.Load() != 3 || len(sleeper.Waits()) != 0 {
				t.Errorf("requests = %d, waits = %v; want 3 and none", h.calls.Load(), sleeper.Waits())
			}
		})
	}
}

func TestSandboxUnauthorizedThroughClient(t *testing.T) {
	srv := sandboxServer(t, WithSandboxToken("right"))
	client, _, _ := newTestClient(t, srv.URL, WithBearerToken("wrong"))
	_, err := client.CheckIdentity(context.Background(), validQuery())
	var re *Error
	if !errors.Is(err, ErrRejected) || !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized || re.Code != codeUnauthorized {
		t.Fatalf("err = %v, want ErrRejected with 401 unauthorized", err)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Run("seconds", func(t *testing.T) {
		h := &flakyHandler{failures: 1, status: http.StatusTooManyRequests,
			header: http.Header{"Retry-After": {"3"}}, next: NewSandbox()}
		srv := httptest.NewServer(h)
		defer srv.Close()
		client, sleeper, _ := newTestClient(t, srv.URL, WithMaxRetryAfter(5*time.Second))
		if _, err := client.CheckSocialInsurance(context.Background(), validQuery()); err != nil {
			t.Fatal(err)
		}
		if w := sleeper.Waits(); len(w) != 1 || w[0] != 3*time.Second {
			t.Errorf("waits = %v, want [3s]", w)
		}
	})
	t.Run("http date", func(t *testing.T) {
		clk := newFakeClock()
		h := &flakyHandler{failures: 1, status: http.StatusServiceUnavailable,
			header: http.Header{"Retry-After": {clk.Now().Add(2 * time.Second).Format(http.TimeFormat)}}, next: NewSandbox()}
		srv := httptest.NewServer(h)
		defer srv.Close()
		client, sleeper, _ := newTestClient(t, srv.URL, WithClock(clk.Now))
		if _, err := client.CheckTax(context.Background(), validQuery()); err != nil {
			t.Fatal(err)
		}
		if w := sleeper.Waits(); len(w) != 1 || w[0] != 2*time.Second {
			t.Errorf("waits = %v, want [2s]", w)
		}
	})
	t.Run("longer than allowed gives up", func(t *testing.T) {
		h := &flakyHandler{failures: 1, status: http.StatusTooManyRequests,
			header: http.Header{"Retry-After": {"120"}}, next: NewSandbox()}
		srv := httptest.NewServer(h)
		defer srv.Close()
		client, sleeper, _ := newTestClient(t, srv.URL, WithMaxRetryAfter(5*time.Second))
		_, err := client.CheckTax(context.Background(), validQuery())
		var re *Error
		if !errors.Is(err, ErrUnavailable) || !errors.As(err, &re) || re.RetryAfter != 120*time.Second || re.Attempts != 1 {
			t.Fatalf("err = %#v, want ErrUnavailable after 1 attempt with RetryAfter 120s", err)
		}
		if len(sleeper.Waits()) != 0 {
			t.Errorf("waited %v, want no wait", sleeper.Waits())
		}
	})
}

// switchHandler fails with 503 while failing is set, else serves the sandbox; it counts
// requests, and blocks each request while gate is non-nil.
type switchHandler struct {
	failing atomic.Bool
	calls   atomic.Int32
	next    http.Handler

	mu      sync.Mutex
	entered chan struct{}
	gate    chan struct{}
}

// setGate makes the following requests announce themselves on entered and wait for gate to
// close; nil channels turn that off.
func (h *switchHandler) setGate(entered, gate chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entered, h.gate = entered, gate
}

func (h *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.calls.Add(1)
	h.mu.Lock()
	entered, gate := h.entered, h.gate
	h.mu.Unlock()
	if gate != nil {
		entered <- struct{}{}
		<-gate
	}
	if h.failing.Load() {
		writeProblem(w, http.StatusServiceUnavailable, codeUnavailable, "down")
		return
	}
	h.next.ServeHTTP(w, r)
}

func TestCircuitBreaker(t *testing.T) {
	h := &switchHandler{next: NewSandbox()}
	h.failing.Store(true)
	srv := httptest.NewServer(h)
	defer srv.Close()
	client, _, clk := newTestClient(t, srv.URL, WithMaxAttempts(2), WithBreaker(3, 30*time.Second))
	ctx, q := context.Background(), validQuery()

	// Three unavailable calls (two requests each) open the identity breaker.
	for i := 0; i < 3; i++ {
		if _, err := client.CheckIdentity(ctx, q); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("call %d: err = %v, want ErrUnavailable from the registry", i, err)
		}
	}
	if h.calls.Load() != 6 {
		t.Fatalf("requests = %d, want 6", h.calls.Load())
	}
	// Open: refused at once, without a request.
	_, err := client.CheckIdentity(ctx, q)
	var re *Error
	if !errors.Is(err, ErrCircuitOpen) || !errors.Is(err, ErrUnavailable) || !errors.As(err, &re) || re.Attempts != 0 {
		t.Fatalf("open breaker: err = %v, want ErrCircuitOpen (an ErrUnavailable) with no attempt", err)
	}
	if h.calls.Load() != 6 {
		t.Fatalf("open breaker let a request through")
	}
	// Other lookups have their own breaker.
	if _, err := client.CheckTax(ctx, q); errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("tax refused by the identity breaker")
	}
	calls := h.calls.Load()

	// Before the cool-down: still open.
	clk.Advance(29 * time.Second)
	if _, err := client.CheckIdentity(ctx, q); !errors.Is(err, ErrCircuitOpen) || h.calls.Load() != calls {
		t.Fatalf("before cool-down: err = %v, want ErrCircuitOpen and no request", err)
	}
	// After it: one probe goes through; it fails, so the breaker opens again.
	clk.Advance(2 * time.Second)
	if _, err := client.CheckIdentity(ctx, q); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("half-open probe: err = %v, want the registry's ErrUnavailable", err)
	}
	if h.calls.Load() != calls+2 {
		t.Fatalf("half-open probe made %d requests, want 2", h.calls.Load()-calls)
	}
	if _, err := client.CheckIdentity(ctx, q); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("after failed probe: err = %v, want ErrCircuitOpen", err)
	}

	// Registry back: after the cool-down, a single probe is in flight at a time; its success
	// closes the breaker.
	h.failing.Store(false)
	clk.Advance(31 * time.Second)
	entered, gate := make(chan struct{}), make(chan struct{})
	h.setGate(entered, gate)
	probe := make(chan error, 1)
	go func() {
		_, err := client.CheckIdentity(ctx, q)
		probe <- err
	}()
	<-entered
	if _, err := client.CheckIdentity(ctx, q); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("second call during the probe: err = %v, want ErrCircuitOpen", err)
	}
	h.setGate(nil, nil)
	close(gate)
	if err := <-probe; err != nil {
		t.Fatalf("probe: %v", err)
	}
	for i := 0; i < 3; i++ {
		if res, err := client.CheckIdentity(ctx, q); err != nil || res.Outcome != IdentityMatch {
			t.Fatalf("closed breaker: %+v, %v", res, err)
		}
	}
}

func TestBreakerCountsConsecutiveFailuresOnly(t *testing.T) {
	h := &switchHandler{next: NewSandbox()}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client, _, _ := newTestClient(t, srv.URL, WithMaxAttempts(1), WithBreaker(2, time.Minute))
	ctx, q := context.Background(), validQuery()
	for i := 0; i < 3; i++ {
		h.failing.Store(true)
		if _, err := client.CheckTax(ctx, q); errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("round %d: breaker opened after one failure", i)
		}
		h.failing.Store(false)
		if _, err := client.CheckTax(ctx, q); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}

func TestSlowRegistryTimesOutAsUnavailable(t *testing.T) {
	// The slow persona sleeps far longer than the client waits; the server's handler stops
	// when the client goes away, so Close does not wait for it either.
	srv := sandboxServer(t, WithSlowDelay(time.Minute))
	client, _, _ := newTestClient(t, srv.URL, WithTimeout(50*time.Millisecond), WithMaxAttempts(2))
	q := personaByKey(t, "slow").Query()
	_, err := client.CheckIdentity(context.Background(), q)
	var re *Error
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &re) || re.Attempts != 2 {
		t.Fatalf("err = %v, want ErrUnavailable after 2 attempts", err)
	}
	assertNoPII(t, err, q)
}

func TestCallerContext(t *testing.T) {
	srv := sandboxServer(t, WithSlowDelay(time.Minute))
	slow := personaByKey(t, "slow").Query()

	t.Run("cancelled", func(t *testing.T) {
		client, _, _ := newTestClient(t, srv.URL, WithTimeout(time.Minute), WithBreaker(1, time.Minute))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := client.CheckIdentity(ctx, slow)
			done <- err
		}()
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want context.Canceled and not ErrUnavailable", err)
		}
		// A cancellation is not the registry's failure: the breaker (threshold 1) is closed.
		if _, err := client.CheckIdentity(context.Background(), validQuery()); err != nil {
			t.Fatalf("after a cancellation: %v", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		client, _, _ := newTestClient(t, srv.URL, WithTimeout(time.Minute))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := client.CheckIdentity(ctx, slow)
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrUnavailable wrapping the deadline", err)
		}
	})
	t.Run("already done", func(t *testing.T) {
		client, _, _ := newTestClient(t, srv.URL)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := client.CheckTax(ctx, validQuery()); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestBadResponses(t *testing.T) {
	valid := `{"lookup":"identity","outcome":"match","mismatched_fields":[],"reference_id":"r1","checked_at":"2026-11-22T10:00:00Z"}`
	tests := []struct {
		name    string
		status  int
		body    string
		chunked bool
		wantMsg string
	}{
		{"malformed JSON", 200, `{"outcome": "match",`, false, "malformed JSON"},
		{"not an object", 200, `[1,2]`, false, "malformed JSON"},
		{"unknown outcome", 200, strings.Replace(valid, `"match"`, `"probably"`, 1), false, "unknown identity outcome"},
		{"record outcome for identity", 200, strings.Replace(valid, `"match"`, `"found"`, 1), false, "unknown identity outcome"},
		{"no reference", 200, strings.Replace(valid, `"r1"`, `""`, 1), false, "reference_id"},
		{"no checked_at", 200, strings.Replace(valid, `,"checked_at":"2026-11-22T10:00:00Z"`, "", 1), false, "checked_at"},
		{"another lookup", 200, strings.Replace(valid, `"identity"`, `"tax"`, 1), false, "lookup"},
		{"oversized", 200, `{"outcome":"match","pad":"` + strings.Repeat("x", 4096) + `"}`, false, "exceeds"},
		{"oversized chunked", 200, `{"outcome":"match","pad":"` + strings.Repeat("x", 4096) + `"}`, true, "exceeds"},
		{"redirect", http.StatusFound, ``, false, "unexpected HTTP 302"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.Header().Set("Content-Type", "application/json")
				if tt.status == http.StatusFound {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.status)
				if tt.chunked {
					half := len(tt.body) / 2
					_, _ = io.WriteString(w, tt.body[:half])
					w.(http.Flusher).Flush()
					_, _ = io.WriteString(w, tt.body[half:])
					return
				}
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			client, _, _ := newTestClient(t, srv.URL, WithMaxResponseBytes(1024))
			_, err := client.CheckIdentity(context.Background(), validQuery())
			if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("err = %v, want ErrBadResponse mentioning %q", err, tt.wantMsg)
			}
			if calls.Load() != 1 {
				t.Errorf("requests = %d, want 1 (bad answers are not retried)", calls.Load())
			}
		})
	}
}

func TestUnreachableRegistry(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	client, sleeper, _ := newTestClient(t, url, WithMaxAttempts(3))
	_, err := client.CheckIdentity(context.Background(), validQuery())
	var re *Error
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &re) || re.Attempts != 3 || len(sleeper.Waits()) != 2 {
		t.Fatalf("err = %v (waits %v), want ErrUnavailable after 3 attempts", err, sleeper.Waits())
	}
}

func TestNewClientRejectsBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		url  string
		opts []ClientOption
	}{
		{"relative URL", "/registry", nil},
		{"ftp URL", "ftp://registry.example", nil},
		{"URL with query", "https://registry.example/?a=1", nil},
		{"URL with credentials", "https://u:p@registry.example", nil},
		{"zero timeout", "https://registry.example", []ClientOption{WithTimeout(0)}},
		{"zero attempts", "https://registry.example", []ClientOption{WithMaxAttempts(0)}},
		{"backoff max below base", "https://registry.example", []ClientOption{WithBackoff(time.Second, time.Millisecond)}},
		{"zero breaker threshold", "https://registry.example", []ClientOption{WithBreaker(0, time.Second)}},
		{"zero response limit", "https://registry.example", []ClientOption{WithMaxResponseBytes(0)}},
		{"token with newline", "https://registry.example", []ClientOption{WithBearerToken("a\nb")}},
		{"TLS over http", "http://registry.example", []ClientOption{WithRootCAFile(dir + "/ca.pem")}},
		{"cert without key", "https://registry.example", []ClientOption{WithClientCertificateFiles(dir+"/c.pem", "")}},
		{"missing CA file", "https://registry.example", []ClientOption{WithRootCAFile(dir + "/missing.pem")}},
		{"missing cert files", "https://registry.example", []ClientOption{WithClientCertificateFiles(dir+"/c.pem", dir+"/k.pem")}},
		{"TLS with own transport", "https://registry.example", []ClientOption{WithTransport(http.DefaultTransport), WithRootCAFile(dir + "/ca.pem")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, err := NewClient(tt.url, tt.opts...); err == nil {
				t.Fatalf("NewClient = %v, want an error", c)
			}
		})
	}
	if _, err := NewClient("https://registry.example/base/"); err != nil {
		t.Fatalf("NewClient with a path: %v", err)
	}
}

func TestBaseURLPathIsKept(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/registry/", http.StripPrefix("/registry", NewSandbox()))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client, _, _ := newTestClient(t, srv.URL+"/registry/")
	if res, err := client.CheckHealthInsurance(context.Background(), validQuery()); err != nil || res.Outcome != RecordFound {
		t.Fatalf("CheckHealthInsurance = %+v, %v", res, err)
	}
}

func TestClientConcurrentUse(t *testing.T) {
	srv := sandboxServer(t, WithSlowDelay(0))
	client, _, _ := newTestClient(t, srv.URL)
	personas := Personas()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(p Persona) {
			defer wg.Done()
			if p.Behavior == BehaviorUnavailable {
				return
			}
			res, err := client.CheckIdentity(context.Background(), p.Query())
			if err != nil {
				errs <- err
			} else if res.Outcome != p.Identity {
				errs <- fmt.Errorf("%s: outcome %s, want %s", p.Key, res.Outcome, p.Identity)
			}
		}(personas[i%len(personas)])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
