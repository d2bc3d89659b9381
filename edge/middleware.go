package edge

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	prob "github.com/idstream/idstream/internal/problem"
)

// requestID returns the request id of c, setting one (and the response header) if absent.
func requestID(c *fiber.Ctx) string { return prob.RequestID(c) }

// outermost sets the request id, turns panics and errors into problem documents (the
// shared internal/problem handler, so the edge and the consent API answer identically),
// and records request metrics.
func (s *Server) outermost(c *fiber.Ctx) error {
	start := time.Now()
	defer func() { s.metrics.observe(c, time.Since(start)) }()
	return s.problems().Middleware(c)
}

// handleError is the fiber error handler: every error becomes a problem document. It is
// also called by fiber for errors raised before routing (body too large, bad headers).
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	return s.problems().HandleError(c, err)
}

// problems returns the shared problem handler configured for the edge: its logger, and
// the Bearer challenge on 401. (Built per call: it is three words, and Server's fields
// live in server.go.)
func (s *Server) problems() *prob.Handler {
	return prob.NewHandler(prob.WithLogger(s.log), prob.WithComponent("edge"), prob.WithAuthChallenge(authChallenge))
}

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	gate     *prometheus.HistogramVec // the wait for the quality gate's answer, by step and answer
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
		gate: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "idstream", Subsystem: "edge", Name: "gate_wait_seconds",
			Help:    "How long a capture request waited for the quality gate, by step and answer (accepted, retake, pending: no answer within the budget).",
			Buckets: []float64{.025, .05, .1, .15, .25, .5, .75, 1, 1.5, 2, 3, 5},
		}, []string{"step", "answer"}),
	}
	for _, col := range []prometheus.Collector{m.requests, m.latency, m.gate} {
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

func (s *Server) openapi(c *fiber.Ctx) error {
	if len(s.cfg.OpenAPIJSON) == 0 {
		return fiber.ErrNotFound
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(s.cfg.OpenAPIJSON)
}
