// Package edge is idstream's REST edge (API.md section 1): it authenticates integrators and
// SDKs, validates requests, stores uploads in the blob store, produces events to Kafka and
// answers from the session-state view. It never decides anything.
package edge

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/idstream/idstream/edge/pages"
	"github.com/idstream/idstream/internal/analytics"
	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
)

// Limits of request bodies.
const (
	DefaultMaxJSONBytes  = 64 << 10
	DefaultMaxImageBytes = 10 << 20
	DefaultMaxVideoBytes = 20 << 20
	DefaultMaxChipBytes  = 1 << 20 // per chip file
	// DefaultQualityBudget is how long an image step waits for the quality gate.
	DefaultQualityBudget = 1500 * time.Millisecond
)

// Config configures a Server. Tenants, Publisher, Encoder, Sessions, Blobs and TokenSecret
// are required.
type Config struct {
	Tenants        *tenant.Registry
	Publisher      Publisher
	Encoder        Encoder
	Sessions       Sessions
	QualityReplies QualityReplies // nil: image steps answer 202 pending
	Blobs          blob.Store
	Images         ImageInspector // nil: imagecheck.Inspect with default limits and MaxImageBytes
	// Decoded keeps the images the default Images decodes, for the groups of the same process
	// that read the same captures next (imagecheck.Decoded); nil: none kept.
	Decoded        *imagecheck.Decoded
	Flows          flow.Set       // zero Set: flow.Default()
	ConsentChecker ConsentChecker // nil: tenants that require consent cannot open sessions
	// Admission is the pipeline's backlog the edge sheds load on (admission.go); nil: the
	// edge never sheds. MaxPipelineWait: Session Init sheds beyond it (default
	// DefaultMaxPipelineWait; negative: never).
	Admission       Admission
	MaxPipelineWait time.Duration
	// TokenSecret keys the HMACs of sdk tokens, nonces, idempotent session ids and
	// blocklisted id numbers. At least 32 bytes.
	TokenSecret   []byte
	QualityBudget time.Duration // default DefaultQualityBudget
	// EdgeReplicas is how many edges share the traffic (default 1). Each edge keeps its own
	// token buckets, so it applies 1/EdgeReplicas of a tenant's rate_limit_per_second: with
	// the requests spread evenly (round robin), the tenant gets its rate across all of
	// them. A load balancer that pins a tenant to one edge gives it less.
	EdgeReplicas  int
	MaxImageBytes int // default DefaultMaxImageBytes
	MaxVideoBytes int // default DefaultMaxVideoBytes
	Clock         func() time.Time
	Logger        *slog.Logger
	// Registerer receives the edge's metrics (nil: they are dropped). The edge does not serve
	// them: its port is public; the process serves its registry on its own metrics address
	// (idstream --metrics-addr).
	Registerer  prometheus.Registerer
	Ready       func() bool // nil: always ready
	OpenAPIJSON []byte      // served on GET /openapi.json; nil: 404
	// PublicURL is the scheme and host people reach the edge at (https://verify.example.com),
	// for the links it makes: Session Init's capture_url and hand-off links. Empty: the
	// request's own scheme and Host.
	PublicURL string
	// CaptureAppURL is the deep link of the integrator's app that reads the chip, opened by a
	// hand-off link's phone page with base_url, session_id, token and nonce added
	// (default DefaultCaptureAppURL).
	CaptureAppURL string
	// Analytics computes the analyst views reviewers read on GET /v1/review/analytics (the
	// ClickHouse the sink writes). Nil: that endpoint answers 404.
	Analytics analytics.Source
}

// Server is the REST edge. It is safe for concurrent use.
type Server struct {
	cfg     Config
	app     *fiber.App
	log     *slog.Logger
	now     func() time.Time
	metrics *metrics
	limits  *rateLimiter
	assets  *pages.Assets
	appBase *url.URL // Config.CaptureAppURL, parsed
}

// New validates cfg and builds a Server. It returns an error when a required dependency is
// missing or the metrics cannot be registered.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Tenants == nil:
		return nil, errors.New("edge: Config.Tenants is required")
	case cfg.Publisher == nil:
		return nil, errors.New("edge: Config.Publisher is required")
	case cfg.Encoder == nil:
		return nil, errors.New("edge: Config.Encoder is required")
	case cfg.Sessions == nil:
		return nil, errors.New("edge: Config.Sessions is required")
	case cfg.Blobs == nil:
		return nil, errors.New("edge: Config.Blobs is required")
	case len(cfg.TokenSecret) < 32:
		return nil, errors.New("edge: Config.TokenSecret must hold at least 32 bytes")
	}
	if len(cfg.Flows.Names()) == 0 {
		cfg.Flows = flow.Default()
	}
	if cfg.QualityBudget <= 0 {
		cfg.QualityBudget = DefaultQualityBudget
	}
	if cfg.MaxPipelineWait == 0 {
		cfg.MaxPipelineWait = DefaultMaxPipelineWait
	}
	if cfg.MaxImageBytes <= 0 {
		cfg.MaxImageBytes = DefaultMaxImageBytes
	}
	if cfg.MaxVideoBytes <= 0 {
		cfg.MaxVideoBytes = DefaultMaxVideoBytes
	}
	if cfg.Images == nil {
		lim := imagecheck.DefaultLimits()
		lim.MaxBytes = cfg.MaxImageBytes
		decoded := cfg.Decoded
		cfg.Images = ImageInspectorFunc(func(data []byte) (string, error) {
			if decoded == nil {
				info, err := imagecheck.Inspect(data, lim)
				return info.MediaType, err
			}
			_, info, err := decoded.Decode(sha256.Sum256(data), data, lim)
			return info.MediaType, err
		})
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("edge: register metrics: %w", err)
	}
	if cfg.Admission != nil {
		if err := registerBacklog(cfg.Registerer, cfg.Admission); err != nil {
			return nil, fmt.Errorf("edge: register metrics: %w", err)
		}
	}
	if b, ok := cfg.Sessions.(ReviewBacklog); ok {
		if err := registerReviewBacklog(cfg.Registerer, b, cfg.Clock); err != nil {
			return nil, fmt.Errorf("edge: register metrics: %w", err)
		}
	}
	if err := checkPublicURL(cfg.PublicURL); err != nil {
		return nil, err
	}
	if cfg.CaptureAppURL == "" {
		cfg.CaptureAppURL = DefaultCaptureAppURL
	}
	appBase, err := pages.CheckAppURL(cfg.CaptureAppURL)
	if err != nil {
		return nil, fmt.Errorf("edge: CaptureAppURL: %w", err)
	}
	assets, err := pages.LoadAssets()
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		now:     cfg.Clock,
		metrics: m,
		limits:  newRateLimiter(cfg.Clock),
		assets:  assets,
		appBase: appBase,
	}
	s.app = fiber.New(fiber.Config{
		AppName: "idstream-edge",
		// Values the request context returns outlive the request: fasthttp reuses its
		// buffers, and a string kept from them (a metric's label, "GET" read "GETETE" after
		// a DELETE) changes under whoever kept it.
		Immutable:             true,
		BodyLimit:             s.maxBodyBytes(),
		ErrorHandler:          s.handleError,
		DisableStartupMessage: true,
		ReadTimeout:           60 * time.Second,
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
	})
	s.routes()
	return s, nil
}

// maxBodyBytes covers a multipart body of one image and one video plus form overhead, or a
// JSON body carrying one base64 image.
func (s *Server) maxBodyBytes() int {
	multipart := s.cfg.MaxImageBytes + s.cfg.MaxVideoBytes + 1<<20
	if j := s.maxImageJSONBytes(); j > multipart {
		return j
	}
	return multipart
}

// maxImageJSONBytes is the largest JSON body of an image step: base64 of one image plus room
// for the other fields.
func (s *Server) maxImageJSONBytes() int {
	return (s.cfg.MaxImageBytes+2)/3*4 + DefaultMaxJSONBytes
}

// maxChipJSONBytes is the largest JSON body of the nfc step (seven base64 chip files).
func (s *Server) maxChipJSONBytes() int {
	return 7*(DefaultMaxChipBytes+2)/3*4 + DefaultMaxJSONBytes
}

// App returns the fiber application, for tests and for mounting.
func (s *Server) App() *fiber.App { return s.app }

// Listen serves on addr until Shutdown.
func (s *Server) Listen(addr string) error { return s.app.Listen(addr) }

// Listener serves on ln until Shutdown.
func (s *Server) Listener(ln net.Listener) error { return s.app.Listener(ln) }

// Shutdown stops accepting connections and waits for in-flight requests until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.app.ShutdownWithContext(ctx)
}

func (s *Server) routes() {
	a := s.app
	a.Use(s.outermost)

	a.Get("/healthz", s.healthz)
	a.Get("/readyz", s.readyz)
	a.Get("/openapi.json", s.openapi)

	v1 := a.Group("/v1")
	v1.Post("/ekyc/sessions", s.createSession)
	v1.Get("/ekyc/sessions/:session_id", sdkCORS, s.getSession)
	v1.Delete("/ekyc/sessions/:session_id", s.deleteSession)
	v1.Post("/ekyc/sessions/:session_id/document", sdkCORS, s.documentStep)
	v1.Post("/ekyc/sessions/:session_id/selfie", sdkCORS, s.selfieStep)
	v1.Post("/ekyc/sessions/:session_id/nfc", sdkCORS, s.nfcStep)
	v1.Post("/ekyc/sessions/:session_id/handoff", sdkCORS, s.createHandoff)
	v1.Post("/ekyc/sessions/:session_id/sdk-token", s.renewSDKToken)
	for _, path := range []string{"", "/document", "/selfie", "/nfc", "/handoff"} {
		v1.Options("/ekyc/sessions/:session_id"+path, sdkCORS)
	}

	v1.Get("/capture/assets/:name", s.captureAsset)
	v1.Get("/capture/:session_id", s.capturePage)
	v1.Get("/capture/:session_id/phone", s.phonePage)

	v1.Get("/review/cases", s.listCases)
	v1.Get("/review/cases/:session_id", s.getCase)
	v1.Post("/review/cases/:session_id/claim", s.claimCase)
	v1.Post("/review/cases/:session_id/release", s.releaseCase)
	v1.Post("/review/cases/:session_id/decision", s.decideCase)
	v1.Post("/review/cases/:session_id/retake", s.retakeCase)
	v1.Get("/review/analytics", s.reviewAnalytics)
	v1.Get("/review/images/:token", s.caseImage)
	v1.Get("/review/ui", s.backOffice)

	v1.Post("/admin/blocklist", s.addBlocklist)
	v1.Delete("/admin/blocklist/:entry_id", s.deleteBlocklist)
	v1.Post("/admin/webhooks/replay", s.replayWebhooks)
}

// Spec is the edge: integrators' backends and people's apps call it; it produces sessions,
// captures, blocklist entries and webhook redeliveries, answers a capture with the quality
// gate's assessment of it, and serves Data Get from the session snapshots' view.
func Spec() topology.Node {
	return topology.Node{
		Name:    "edge",
		Kind:    topology.API,
		From:    []string{"integrators and apps"},
		Inputs:  []string{schemas.TopicQuality},
		Lookups: []string{schemas.TopicSessionState},
		Outputs: []string{schemas.TopicSessions, schemas.TopicCaptures, schemas.TopicBlocklist, schemas.TopicWebhookRetry, schemas.TopicReviews},
	}
}
