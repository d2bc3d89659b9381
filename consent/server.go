// Package consent is idstream's consent interface (API.md section 2) for a consent
// management platform (CMP): GET /v1/config serves the versioned consent configuration
// (controller, notice versions in every language, purposes), POST /v1/consents appends
// consent records to cmp.consents.v1, and GET /v1/consents answers a tracking id's records
// and the current status of each purpose (its latest record) from an in-memory Index that
// a Follower fills from that topic. Callers authenticate with the x-cmp-api-key header; a
// key sees only its tenant's tracking ids. Checker answers the edge's consent gate from the
// same Index.
package consent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/internal/problem"
	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// HeaderCMPKey carries the CMP API key.
const HeaderCMPKey = "x-cmp-api-key"

// DefaultMaxBodyBytes is the JSON body limit (API.md: 64 KiB).
const DefaultMaxBodyBytes = 64 << 10

// MaxDecisions bounds the decisions of one POST.
const MaxDecisions = 64

// Problem codes of the consent interface, beside the shared ones of internal/problem.
const (
	CodeInvalidPurpose       = "invalid_purpose"
	CodeInvalidNoticeVersion = "invalid_notice_version"
	CodeTrackingIDRequired   = "tracking_id_required"
)

// Publisher produces records and returns once every one is acknowledged by the brokers
// (stream.Producer satisfies it).
type Publisher interface {
	Produce(ctx context.Context, outs ...stream.Output) error
}

// Encoder encodes an event for a topic (schemas.Codec satisfies it).
type Encoder interface {
	Encode(topic string, v any) ([]byte, error)
}

// Config configures a Server. Tenants, Publisher, Encoder and Index are required.
type Config struct {
	Tenants   *tenant.Registry
	Publisher Publisher
	Encoder   Encoder
	// Index answers reads; a Follower must fill it from cmp.consents.v1 (the Server adds
	// the records it writes at once, for read-your-writes).
	Index *Index
	// CMP is the consent configuration; nil: DefaultConfig().
	CMP          *CMPConfig
	MaxBodyBytes int // default DefaultMaxBodyBytes
	Clock        func() time.Time
	Logger       *slog.Logger
	// Ready reports readiness beside the Index's (e.g. the producer's brokers); nil: the
	// Index alone decides.
	Ready func() bool
}

// Server is the consent API. It is safe for concurrent use.
type Server struct {
	cfg        Config
	app        *fiber.App
	log        *slog.Logger
	problems   *problem.Handler
	configJSON []byte

	mu   sync.Mutex
	last time.Time // latest recorded_at issued: recorded_at is strictly increasing per Server
}

// New validates cfg and builds a Server.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Tenants == nil:
		return nil, errors.New("consent: Config.Tenants is required")
	case cfg.Publisher == nil:
		return nil, errors.New("consent: Config.Publisher is required")
	case cfg.Encoder == nil:
		return nil, errors.New("consent: Config.Encoder is required")
	case cfg.Index == nil:
		return nil, errors.New("consent: Config.Index is required")
	}
	if cfg.CMP == nil {
		c, err := DefaultConfig()
		if err != nil {
			return nil, err
		}
		cfg.CMP = c
	} else if err := cfg.CMP.Validate(); err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	configJSON, err := json.Marshal(configView(cfg.CMP))
	if err != nil {
		return nil, fmt.Errorf("consent: encode configuration: %w", err)
	}
	s := &Server{
		cfg:        cfg,
		log:        cfg.Logger,
		problems:   problem.NewHandler(problem.WithLogger(cfg.Logger), problem.WithComponent("consent")),
		configJSON: configJSON,
	}
	s.app = fiber.New(fiber.Config{
		AppName: "idstream-consent",
		// Values the request context returns outlive the request: fasthttp reuses its
		// buffers, and a string kept from them (a metric's label, "GET" read "GETETE" after
		// a DELETE) changes under whoever kept it.
		Immutable:             true,
		BodyLimit:             cfg.MaxBodyBytes,
		ErrorHandler:          s.problems.HandleError,
		DisableStartupMessage: true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           120 * time.Second,
	})
	s.routes()
	return s, nil
}

// App returns the fiber application, for tests and for mounting.
func (s *Server) App() *fiber.App { return s.app }

// Listener serves on ln until Shutdown.
func (s *Server) Listener(ln net.Listener) error { return s.app.Listener(ln) }

// Listen serves on addr until Shutdown.
func (s *Server) Listen(addr string) error { return s.app.Listen(addr) }

// Shutdown stops accepting connections and waits for in-flight requests until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.app.ShutdownWithContext(ctx) }

func (s *Server) routes() {
	a := s.app
	a.Use(s.problems.Middleware)
	a.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	a.Get("/readyz", s.readyz)
	v1 := a.Group("/v1")
	v1.Get("/config", s.getConfig)
	v1.Get("/consents", s.getConsents)
	v1.Post("/consents", s.postConsents)
}

func (s *Server) ready() bool {
	return s.cfg.Index.Ready() && (s.cfg.Ready == nil || s.cfg.Ready())
}

func (s *Server) readyz(c *fiber.Ctx) error {
	if !s.ready() {
		return problem.New(fiber.StatusServiceUnavailable, problem.CodeNotReady, "the consent index is catching up or its dependencies are unavailable")
	}
	return c.JSON(fiber.Map{"status": "ready"})
}

// authenticate resolves x-cmp-api-key to its tenant (constant-time hash comparison in the
// registry). Missing or invalid → 401 unauthorized.
func (s *Server) authenticate(c *fiber.Ctx) (*tenant.Tenant, error) {
	key := c.Get(HeaderCMPKey)
	if key == "" {
		return nil, problem.Unauthorized("missing or invalid x-cmp-api-key")
	}
	t, ok := s.cfg.Tenants.ByCMPKey(key)
	if !ok {
		return nil, problem.Unauthorized("missing or invalid x-cmp-api-key")
	}
	return t, nil
}

func errUnavailable() *problem.Error {
	return problem.New(fiber.StatusServiceUnavailable, problem.CodeUnavailable, "the service is temporarily unavailable, retry later")
}

// Spec is the consent interface: the consent platform records consents and withdrawals (a
// withdrawal that covers biometric data also asks for their erasure), and reads them back
// from the consents' view.
func Spec() topology.Node {
	return topology.Node{
		Name:    "consent",
		Kind:    topology.API,
		From:    []string{"consent platform"},
		Lookups: []string{schemas.TopicConsents},
		Outputs: []string{schemas.TopicConsents, schemas.TopicErasures},
	}
}
