package edge

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const (
	headerRequestID = "X-Request-Id"
	localRequestID  = "idstream.request_id"
)

// requestID returns the request id of c, setting one (and the response header) if absent.
func requestID(c *fiber.Ctx) string {
	if id, ok := c.Locals(localRequestID).(string); ok && id != "" {
		return id
	}
	id := c.Get(headerRequestID)
	if !saneRequestID(id) {
		id = newRequestID()
	}
	c.Locals(localRequestID, id)
	c.Set(headerRequestID, id)
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

// outermost sets the request id, turns panics and errors into problem documents, and
// records request metrics.
func (s *Server) outermost(c *fiber.Ctx) (err error) {
	start := time.Now()
	requestID(c)
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("edge: panic in handler", "request_id", requestID(c), "route", c.Route().Path, "panic_type", fmt.Sprintf("%T", r))
			err = s.handleError(c, problem(fiber.StatusInternalServerError, CodeInternal, "internal error"))
		}
		s.metrics.observe(c, time.Since(start))
	}()
	if err := c.Next(); err != nil {
		return s.handleError(c, err)
	}
	return nil
}

// handleError is the fiber error handler: every error becomes a problem document. It is
// also called by fiber for errors raised before routing (body too large, bad headers).
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	ae, known := toAPIError(err)
	if !known {
		// The error text may hold internals; it is logged, never returned. It must not
		// hold PII: handlers wrap errors with ids and operation names only.
		s.log.Error("edge: request failed", "request_id", requestID(c), "method", c.Method(), "route", c.Route().Path, "err", err)
	}
	if werr := writeProblem(c, ae); werr != nil {
		s.log.Error("edge: write problem", "request_id", requestID(c), "err", werr)
	}
	return nil
}

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "idstream", Subsystem: "edge", Name: "requests_total",
			Help: "HTTP requests answered by the edge, by route, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "idstream", Subsystem: "edge", Name: "request_duration_seconds",
			Help:    "HTTP request latency at the edge, by route, method and status.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 1.5, 2.5, 5, 10},
		}, []string{"route", "method", "status"}),
	}
	for _, col := range []prometheus.Collector{m.requests, m.latency} {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observe(c *fiber.Ctx, d time.Duration) {
	route := c.Route().Path
	status := c.Response().StatusCode()
	if status == fiber.StatusNotFound && (route == "/" || route == "") {
		route = "unmatched" // keep label cardinality bounded
	}
	labels := prometheus.Labels{"route": route, "method": c.Method(), "status": strconv.Itoa(status)}
	m.requests.With(labels).Inc()
	m.latency.With(labels).Observe(d.Seconds())
}

// rateLimiter keeps one token bucket per tenant: rate tokens per second, burst = rate
// (at least 1). It is safe for concurrent use.
type rateLimiter struct {
	now     func() time.Time
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter(now func() time.Time) *rateLimiter {
	return &rateLimiter{now: now, buckets: make(map[string]*bucket)}
}

// allow takes one token from key's bucket. When none is left it returns false and the
// seconds until one is available (at least 1). rate ≤ 0 means unlimited.
func (r *rateLimiter) allow(key string, rate float64) (bool, int) {
	if rate <= 0 {
		return true, 0
	}
	burst := math.Max(1, rate)
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.buckets[key]
	if !ok {
		b = &bucket{tokens: burst, last: now}
		r.buckets[key] = b
	}
	if elapsed := now.Sub(b.last).Seconds(); elapsed > 0 {
		b.tokens = math.Min(burst, b.tokens+elapsed*rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := int(math.Ceil((1 - b.tokens) / rate))
	return false, max(wait, 1)
}

func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

func (s *Server) readyz(c *fiber.Ctx) error {
	if s.cfg.Ready != nil && !s.cfg.Ready() {
		return problem(fiber.StatusServiceUnavailable, CodeNotReady, "the service is starting or its dependencies are unavailable")
	}
	return c.JSON(fiber.Map{"status": "ready"})
}

func (s *Server) metricsHandler() fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(s.cfg.Gatherer, promhttp.HandlerOpts{}))
}

func (s *Server) openapi(c *fiber.Ctx) error {
	if len(s.cfg.OpenAPIJSON) == 0 {
		return fiber.ErrNotFound
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(s.cfg.OpenAPIJSON)
}
