package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/idstream/idstream"
	"github.com/idstream/idstream/consent"
	"github.com/idstream/idstream/edge"
	"github.com/idstream/idstream/internal/analytics"
	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/processors/liveness"
	"github.com/idstream/idstream/processors/ocr"
	"github.com/idstream/idstream/processors/quality"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/readmodel"
	chsink "github.com/idstream/idstream/sinks/clickhouse"
	"github.com/idstream/idstream/stream"
)

// startConsent starts the consent API over the consent index.
func (s *Service) startConsent(topology.Node) error {
	cmp, err := consent.LoadConfig(s.cfg.ConsentConfig)
	if err != nil {
		return fmt.Errorf("consent config: %w", err)
	}
	tenants, producer, err := s.shared()
	if err != nil {
		return err
	}
	consents, err := s.consentIndex()
	if err != nil {
		return err
	}
	s.consent, err = consent.New(consent.Config{
		Tenants:   tenants,
		Publisher: producer,
		Encoder:   s.codec,
		Index:     consents,
		CMP:       cmp,
		Logger:    s.log.With("component", "consent"),
	})
	if err != nil {
		return fmt.Errorf("consent: %w", err)
	}
	if s.consentLn, err = net.Listen("tcp", s.cfg.ConsentAddr); err != nil {
		return fmt.Errorf("consent listen: %w", err)
	}
	s.consentAddr = s.consentLn.Addr().String()
	s.spawn("consent", func(context.Context) error { return s.consent.Listener(s.consentLn) })
	return nil
}

// startEdge starts the REST edge with its views of the session state and of quality replies.
func (s *Service) startEdge(topology.Node) error {
	secret, err := s.tokenSecret()
	if err != nil {
		return err
	}
	tenants, producer, err := s.shared()
	if err != nil {
		return err
	}
	consents, err := s.consentIndex()
	if err != nil {
		return err
	}
	if s.states, err = readmodel.NewStates(s.codec, s.runtimeOpts("edge-view")...); err != nil {
		return err
	}
	s.spawn("session-state view", s.states.Run)
	replies, err := readmodel.NewGateReplies(s.codec, s.runtimeOpts("edge-replies")...)
	if err != nil {
		return err
	}
	s.spawn("quality replies", replies.Run)
	admission, err := s.admission()
	if err != nil {
		return err
	}
	spec, err := idstream.OpenAPIJSON()
	if err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	var source analytics.Source // nil: the edge answers 404
	if s.cfg.EdgeAnalytics {
		s.analytics = &clickHouseAnalytics{s: s}
		source = s.analytics
	}
	s.edge, err = edge.New(edge.Config{
		Tenants:        tenants,
		Publisher:      producer,
		Encoder:        s.codec,
		Sessions:       s.states,
		QualityReplies: replies,
		Blobs:          s.blobs,
		Decoded:        s.decoded,
		Flows:          s.flows,
		TokenSecret:    secret,
		QualityBudget:  s.cfg.QualityBudget,
		EdgeReplicas:   s.cfg.EdgeReplicas,
		Admission:      admission,
		// A zero --max-pipeline-wait means no shedding, for which admission is nil.
		MaxPipelineWait: s.cfg.MaxPipelineWait,
		Logger:          s.log.With("component", "edge"),
		Registerer:      s.reg,
		// Ready once the session view and the consent index have caught up with their
		// topics: before, Session Init for a consent-requiring tenant answers 503.
		Ready:          func() bool { return s.states.Ready() && consents.Ready() },
		OpenAPIJSON:    spec,
		ConsentChecker: consent.NewChecker(consents),
		PublicURL:      s.cfg.PublicURL,
		CaptureAppURL:  s.cfg.CaptureAppURL,
		Analytics:      source,
	})
	if err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	ln, err := net.Listen("tcp", s.cfg.EdgeAddr)
	if err != nil {
		return fmt.Errorf("edge listen: %w", err)
	}
	s.edgeLn, s.edgeAddr = ln, ln.Addr().String()
	s.spawn("edge", func(context.Context) error { return s.edge.Listener(ln) })
	return nil
}

// admission is the backlog the edge sheds on (edge.Admission): the consumer-group lag of
// the groups a capture goes through, from Kafka, whichever processes run them. Nil when
// --max-pipeline-wait is 0.
func (s *Service) admission() (edge.Admission, error) {
	if s.cfg.MaxPipelineWait <= 0 {
		return nil, nil
	}
	groups := append([]string{quality.GroupName}, checkGroups...)
	b, err := stream.NewBacklog(groups, backlogInterval, s.runtimeOpts("edge-backlog")...)
	if err != nil {
		return nil, err
	}
	s.spawn("backlog", b.Run)
	return pipelineBacklog{b}, nil
}

// backlogInterval is how often the edge reads the groups' lag.
const backlogInterval = 500 * time.Millisecond

// checkGroups are the groups that take a capture after the gate, side by side, whose backlog
// the edge weighs. Face match and fraud are left out: they read the session-state topic,
// which is written in transactions (stream.Backlog cannot count its lag), and they are light
// (0.01 and 0.05–0.08 CPU-s per id_card session against OCR's 0.55–0.65 in `make
// bench-e2e`). So is chip (0.002–0.004 CPU-s per chip_id_card session): it reads every
// capture in order and works on one of four, which waits for a background turn behind the
// other groups' work, so its lag read as a backlog of its own (at 4 chip_id_card sessions in
// flight the edge shed 24 requests while decisions took 2.6 s at p99, below the 5 s allowed).
var checkGroups = []string{ocr.GroupName, liveness.GroupName}

// pipelineBacklog estimates the edge's waits from the groups' backlogs: the gate's is the
// quality group's; the pipeline's is the gate's plus the longest of the checks after it.
type pipelineBacklog struct{ b *stream.Backlog }

func (p pipelineBacklog) GateWait() time.Duration { return p.b.Wait(quality.GroupName) }

// Admitted counts a session's steps as records each check will get (every capture reaches
// the checks as one record after the gate). The gate's own estimate is left to what it has:
// a person takes the pictures at a person's pace, and captures shed for work that has not
// come yet would keep it from coming.
func (p pipelineBacklog) Admitted(steps int) {
	for _, g := range checkGroups {
		p.b.Expect(g, steps)
	}
}

func (p pipelineBacklog) PipelineWait() time.Duration {
	var longest time.Duration
	for _, g := range checkGroups {
		longest = max(longest, p.b.Wait(g))
	}
	return p.GateWait() + longest
}

// loadTenants reads --tenants, or in dev creates (once) the sandbox tenant.
func (s *Service) loadTenants() (*tenant.Registry, error) {
	if s.cfg.TenantsFile != "" {
		reg, err := tenant.Load(s.cfg.TenantsFile)
		if err != nil {
			return nil, fmt.Errorf("tenants: %w", err)
		}
		return reg, nil
	}
	t, secrets, err := tenant.Sandbox(s.cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("sandbox tenant: %w", err)
	}
	s.secrets = &secrets
	return tenant.NewRegistry(t), nil
}

// tokenSecret is IDSTREAM_TOKEN_SECRET, or a random key kept in the data dir so that sdk
// tokens and idempotent session ids survive a restart.
func (s *Service) tokenSecret() ([]byte, error) {
	if s.cfg.TokenSecret != "" {
		return []byte(s.cfg.TokenSecret), nil
	}
	path := filepath.Join(s.cfg.DataDir, "edge-token-secret")
	if b, err := os.ReadFile(path); err == nil {
		return hex.DecodeString(strings.TrimSpace(string(b)))
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("token secret: %w", err)
	}
	return key, nil
}

// clickHouseAnalytics is the edge's analytics.Source over the ClickHouse the sink writes
// (--edge-analytics). It connects on first use, once the service has started (the edge
// starts before the sink, which in dev starts the server): at the address the sink uses in
// this process, else at --clickhouse-addr, with the same credentials. One request dials,
// outside the lock, while the others wait for it (or their own deadline); a failed dial is
// answered at once for analyticsRetry before the next try, so an edge without ClickHouse
// credentials does not dial on every page load. Safe for concurrent use.
type clickHouseAnalytics struct {
	s       *Service
	connect func() (driver.Conn, *chsink.Analyst, error) // nil: dial (tests replace it)
	mu      sync.Mutex
	conn    driver.Conn
	a       *chsink.Analyst
	dialing chan struct{} // closed when the dial in flight ends
	failed  error         // the last dial's error, until retryAt
	retryAt time.Time
	closed  bool
}

// analyticsRetry is how long a failed dial is answered before the next try.
const analyticsRetry = 30 * time.Second

// analyticsDialTimeout bounds one dial and its ping.
const analyticsDialTimeout = 10 * time.Second

var errAnalyticsClosed = errors.New("analytics: closed")

func (c *clickHouseAnalytics) Report(ctx context.Context, tenantID string, from, to time.Time) (*analytics.Report, error) {
	a, err := c.analyst(ctx)
	if err != nil {
		return nil, err
	}
	return a.Report(ctx, tenantID, from, to)
}

func (c *clickHouseAnalytics) analyst(ctx context.Context) (*chsink.Analyst, error) {
	if !c.s.started.Load() {
		return nil, errors.New("analytics: the service is starting")
	}
	for {
		c.mu.Lock()
		switch {
		case c.closed:
			c.mu.Unlock()
			return nil, errAnalyticsClosed
		case c.a != nil:
			a := c.a
			c.mu.Unlock()
			return a, nil
		case c.failed != nil && time.Now().Before(c.retryAt):
			err := c.failed
			c.mu.Unlock()
			return nil, err
		case c.dialing != nil:
			wait := c.dialing
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.dialing = done
		c.mu.Unlock()
		connect := c.connect
		if connect == nil {
			connect = c.dial
		}
		conn, a, err := connect()
		c.mu.Lock()
		c.dialing = nil
		close(done)
		switch {
		case err != nil:
			c.failed, c.retryAt = err, time.Now().Add(analyticsRetry)
		case c.closed:
			conn.Close()
			a, err = nil, errAnalyticsClosed
		default:
			c.conn, c.a, c.failed = conn, a, nil
		}
		c.mu.Unlock()
		return a, err
	}
}

// dial connects to ClickHouse (see clickHouseAnalytics).
func (c *clickHouseAnalytics) dial() (driver.Conn, *chsink.Analyst, error) {
	addr := c.s.chAddr // written before started
	if addr == "" {
		addr = c.s.cfg.ClickHouseAddr
	}
	opts, err := c.s.cfg.Conn.clickHouseOptions()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(c.s.ctx, analyticsDialTimeout)
	defer cancel()
	conn, err := chsink.Dial(ctx, addr, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("analytics: %w", err)
	}
	a, err := chsink.NewAnalyst(conn, "")
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, a, nil
}

// Close closes the connection, if one was made; later reports fail.
func (c *clickHouseAnalytics) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.a = nil, nil
	}
}
