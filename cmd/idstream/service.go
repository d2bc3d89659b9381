package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kgo"

	idstream "github.com/idstream/idstream"
	"github.com/idstream/idstream/consent"
	"github.com/idstream/idstream/edge"
	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/chserver"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/internal/imagequality"
	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/ocr"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/processors"
	"github.com/idstream/idstream/processors/chip"
	"github.com/idstream/idstream/processors/decision"
	"github.com/idstream/idstream/processors/erasure"
	"github.com/idstream/idstream/processors/facematch"
	"github.com/idstream/idstream/processors/fraud"
	"github.com/idstream/idstream/processors/liveness"
	ocrproc "github.com/idstream/idstream/processors/ocr"
	"github.com/idstream/idstream/processors/quality"
	"github.com/idstream/idstream/processors/session"
	"github.com/idstream/idstream/schemas"
	chsink "github.com/idstream/idstream/sinks/clickhouse"
	"github.com/idstream/idstream/sinks/webhook"
)

// allGroups is every processor group this binary can run, in start order.
var allGroups = []string{"session", "decision", "quality", "ocr", "chip", "liveness", "facematch", "fraud", erasure.IndexGroupName, erasure.GroupName, erasure.DeleterGroupName}

// allSinks is every sink this binary can run.
var allSinks = []string{"webhook", "clickhouse"}

// topicRetention is the retention of the event topics that are not compacted.
const topicRetention = 7 * 24 * time.Hour

// Service is a running idstream process: any subset of the processor groups, optionally the
// edge, on an embedded broker or an external cluster. It is what `idstream dev` runs and what
// the end-to-end tests start, so both exercise the same wiring.
type Service struct {
	cfg     Config
	log     *slog.Logger
	broker  *processors.Embedded
	brokers []string
	codec   *schemas.Codec
	reg     *prometheus.Registry
	metrics *processors.Metrics
	kgoOpts []kgo.Opt

	producer *processors.Producer
	tenants  *tenant.Registry
	edge     *edge.Server
	edgeLn   net.Listener
	edgeAddr string

	faces      map[string]*face.Engine // per group that looks at faces (faceEngine)
	ocrReader  *ocr.Reader             // the ocr group's Tesseract clients, closed after the groups stop
	clickhouse *chserver.Server        // the local ClickHouse dev starts
	chAddr     string

	consents    *consent.Index
	consent     *consent.Server
	consentLn   net.Listener
	consentAddr string
	registryURL string
	states      *stateView
	secrets     *tenant.Secrets

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errMu  sync.Mutex
	err    error
}

// serviceOptions adjust what Start runs; the zero value runs everything of cfg.Groups.
type serviceOptions struct {
	withEdge     bool
	withConsent  bool      // the consent API on cfg.ConsentAddr
	withRegistry bool      // the sandbox registry on cfg.RegistryAddr (dev)
	kgoOpts      []kgo.Opt // extra client options (tests: a short FetchMaxWait)
}

// Start brings up the broker (embedded unless cfg.Brokers is set), the topics, the groups
// named in cfg.Groups and, when opts.withEdge, the edge. It returns once every component is
// started; Close stops them.
func Start(ctx context.Context, cfg Config, opts serviceOptions, log *slog.Logger) (s *Service, err error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	s = &Service{cfg: cfg, log: log, reg: prometheus.NewRegistry(), kgoOpts: opts.kgoOpts}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.metrics = processors.NewMetrics(s.reg)

	s.brokers = cfg.Brokers
	if len(s.brokers) == 0 {
		s.broker, err = processors.StartEmbedded(
			processors.WithDataDir(filepath.Join(cfg.DataDir, "kafka")),
			processors.WithListenAddr(cfg.KafkaAddr),
			processors.WithPartitionsDefault(cfg.Partitions),
		)
		if err != nil {
			return s, fmt.Errorf("embedded broker: %w", err)
		}
		s.brokers = s.broker.Addrs()
	}
	if err := processors.EnsureTopics(ctx, s.brokers, topicSpecs(cfg.Partitions)); err != nil {
		return s, fmt.Errorf("topics: %w", err)
	}
	var codecOpts []schemas.CodecOption
	if cfg.RegistryURL != "" {
		codecOpts = append(codecOpts, schemas.WithRegistry(cfg.RegistryURL))
	}
	if s.codec, err = schemas.NewCodec(codecOpts...); err != nil {
		return s, fmt.Errorf("codec: %w", err)
	}
	blobs, err := blob.NewFS(filepath.Join(cfg.DataDir, "blobs"))
	if err != nil {
		return s, fmt.Errorf("blob store: %w", err)
	}
	flows, err := loadFlows(cfg.FlowsFile)
	if err != nil {
		return s, err
	}
	if opts.withRegistry {
		sandbox := registry.NewSandbox(registry.WithSandboxToken(cfg.IdentityToken), registry.WithSandboxLogger(log.With("component", "registry-sandbox")))
		addr, err := sandbox.Serve(s.ctx, cfg.RegistryAddr)
		if err != nil {
			return s, fmt.Errorf("sandbox registry: %w", err)
		}
		s.registryURL = "http://" + addr
	}
	if cfg.IdentityURL != "" {
		s.registryURL = cfg.IdentityURL
	}
	for _, g := range cfg.Groups {
		if err := s.startGroup(g, blobs, flows); err != nil {
			return s, err
		}
	}
	if opts.withEdge || opts.withConsent || len(cfg.Sinks) > 0 {
		if s.tenants, err = s.loadTenants(); err != nil {
			return s, err
		}
		if s.producer, err = processors.NewProducer(s.runtimeOpts("producer")...); err != nil {
			return s, fmt.Errorf("producer: %w", err)
		}
	}
	if opts.withEdge || opts.withConsent {
		s.consents = consent.NewIndex()
		follower, err := consent.NewFollower(s.brokers, s.consents, s.codec)
		if err != nil {
			return s, fmt.Errorf("consent index: %w", err)
		}
		s.spawn("consent index", follower.Run)
	}
	if opts.withConsent {
		if err := s.startConsent(); err != nil {
			return s, err
		}
	}
	for _, name := range cfg.Sinks {
		if err := s.startSink(name); err != nil {
			return s, err
		}
	}
	if opts.withEdge {
		if err := s.startEdge(blobs, flows); err != nil {
			return s, err
		}
	}
	return s, nil
}

// topicSpecs lists every topic of the contract and a dead-letter topic for each.
func topicSpecs(partitions int) []processors.TopicSpec {
	var specs []processors.TopicSpec
	for _, t := range schemas.Topics() {
		spec := processors.TopicSpec{Name: t.Name, Partitions: int32(partitions), Compacted: t.Compacted}
		switch {
		case t.Name == schemas.TopicConsents, t.Name == schemas.TopicErasures:
			spec.Retention = -1 // the controller's evidence; the consent index is rebuilt from it
		case !t.Compacted:
			spec.Retention = topicRetention
		}
		specs = append(specs, spec,
			processors.TopicSpec{Name: t.Name + ".dlq", Partitions: int32(partitions), Retention: 4 * topicRetention})
	}
	return append(specs, fraud.TopicSpecs(int32(partitions))...)
}

func loadFlows(path string) (flow.Set, error) {
	if path == "" {
		return flow.Default(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return flow.Set{}, fmt.Errorf("flows: %w", err)
	}
	set, err := flow.Parse(b)
	if err != nil {
		return flow.Set{}, fmt.Errorf("flows %s: %w", path, err)
	}
	return set, nil
}

func loadPolicy(path string, flows flow.Set) (decision.Policy, error) {
	if path == "" {
		return decision.DefaultPolicy(flows), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return decision.Policy{}, fmt.Errorf("policy: %w", err)
	}
	p, err := decision.ParsePolicy(b)
	if err != nil {
		return decision.Policy{}, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

func (s *Service) runtimeOpts(group string) []processors.Option {
	return []processors.Option{
		processors.WithBrokers(s.brokers),
		processors.WithLogger(s.log),
		processors.WithMetrics(s.metrics),
		processors.WithClientID("idstream-" + group),
		processors.WithKgoOpts(s.kgoOpts...),
	}
}

// startGroup declares the processor group named name, checks it against its node in the
// pipeline's topology and starts it.
func (s *Service) startGroup(name string, blobs blob.Store, flows flow.Set) error {
	opts := s.runtimeOpts(name)
	if s.cfg.InstanceID != "" {
		opts = append(opts, processors.WithTransactionalID(name+"-"+s.cfg.InstanceID))
	}
	var (
		g        processors.Group         // a stateless group, or
		stateful processors.StatefulGroup // a stateful one
		err      error
	)
	switch name {
	case "session":
		stateful = session.NewGroup(s.codec)
	case "decision":
		var p decision.Policy
		if p, err = loadPolicy(s.cfg.PolicyFile, flows); err == nil {
			stateful = decision.NewGroup(s.codec, p)
		}
	case "quality":
		var faces *face.Engine
		if faces, err = s.faceEngine(name); err == nil {
			gate := imagequality.NewGate(imagequality.DefaultThresholds())
			g = quality.NewGroup(s.codec, blobs, gate, quality.WithFaceDetector(faces, quality.DefaultSelfieFraming()))
		}
	case "ocr":
		g, err = s.ocrGroup(blobs)
	case "chip":
		g, err = s.chipGroup(blobs)
	case "liveness", "facematch":
		var faces *face.Engine
		if faces, err = s.faceEngine(name); err != nil {
			break
		}
		if name == "liveness" {
			g, err = liveness.NewGroup(s.codec, blobs, faces, liveness.WithLogger(s.log.With("group", name)))
		} else {
			g, err = facematch.NewGroup(s.codec, blobs, faces, facematch.WithLogger(s.log.With("group", name)))
		}
	case "fraud":
		g, err = s.fraudGroup(blobs)
	case erasure.IndexGroupName:
		g = erasure.IndexGroup(s.codec)
	case erasure.GroupName:
		stateful = erasure.Group(s.codec)
	case erasure.DeleterGroupName:
		g = erasure.DeleterGroup(s.codec, blobs)
	default:
		return fmt.Errorf("unknown group %q (known: %s)", name, strings.Join(allGroups, ", "))
	}
	if err != nil {
		return fmt.Errorf("%s group: %w", name, err)
	}
	var run func(context.Context) error
	if stateful.Handler != nil {
		err = checkSpec(name, stateful.Inputs, stateful.Outputs, stateful.Table)
		if err == nil {
			var r *processors.StatefulRunner
			r, err = processors.NewStatefulRunner(stateful, opts...)
			run = func(ctx context.Context) error { return r.Run(ctx) }
		}
	} else {
		err = checkSpec(name, g.Inputs, g.Outputs, "")
		if err == nil {
			var r *processors.Runner
			r, err = processors.NewRunner(g, opts...)
			run = func(ctx context.Context) error { return r.Run(ctx) }
		}
	}
	if err != nil {
		return fmt.Errorf("%s group: %w", name, err)
	}
	s.spawn("group "+name, run)
	return nil
}

// startSink starts one sink by name.
func (s *Service) startSink(name string) error {
	switch name {
	case "webhook":
		sink, err := webhook.NewSink(webhook.Config{
			Brokers:  s.brokers,
			Tenants:  s.tenants,
			Codec:    s.codec,
			Producer: s.producer,
			Logger:   s.log.With("sink", "webhook"),
			Metrics:  s.metrics,
			KgoOpts:  s.kgoOpts,
		})
		if err != nil {
			return fmt.Errorf("webhook sink: %w", err)
		}
		s.spawn("sink webhook", sink.Run)
	case "clickhouse":
		if err := s.startClickHouseSink(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown sink %q (known: %s)", name, strings.Join(allSinks, ", "))
	}
	return nil
}

// faceEngine loads the face models of --models-dir for group, once. Each group gets its own
// engine: an engine runs each network for one image at a time, so one engine shared by the
// quality gate, OCR, liveness, face matching and fraud would queue the gate's real-time
// answers behind the other groups' work. The models are small (about 9 MB together).
func (s *Service) faceEngine(group string) (*face.Engine, error) {
	if e, ok := s.faces[group]; ok {
		return e, nil
	}
	e, err := face.Load(face.DefaultModels(s.cfg.ModelsDir))
	if err != nil {
		return nil, fmt.Errorf("face models (make deps fetches them): %w", err)
	}
	if s.faces == nil {
		s.faces = make(map[string]*face.Engine)
	}
	s.faces[group] = e
	return e, nil
}

// ocrGroup declares the ocr group: Tesseract clients reading with the MRZ model of
// --models-dir, and the face engine cropping the document's photo.
func (s *Service) ocrGroup(blobs blob.Store) (processors.Group, error) {
	faces, err := s.faceEngine("ocr")
	if err != nil {
		return processors.Group{}, err
	}
	if s.ocrReader == nil {
		reader, err := ocr.New(ocr.Config{MRZModelDir: s.cfg.ModelsDir, PoolSize: 2})
		if err != nil {
			return processors.Group{}, fmt.Errorf("ocr models (make deps fetches them): %w", err)
		}
		s.ocrReader = reader
	}
	return ocrproc.NewGroup(s.codec, blobs, s.ocrReader, faces, ocrproc.WithLogger(s.log.With("group", "ocr"))), nil
}

// chipGroup declares the chip group with the CSCA trust anchors and the identity registry.
func (s *Service) chipGroup(blobs blob.Store) (processors.Group, error) {
	trust, err := s.loadTrust()
	if err != nil {
		return processors.Group{}, err
	}
	reg, err := s.registryClient()
	if err != nil {
		return processors.Group{}, err
	}
	return chip.NewGroup(s.codec, blobs, trust, reg, chip.WithLogger(s.log.With("group", "chip"))), nil
}

// registryClient is the client of the identity registry API (dev: the sandbox), or nil when
// none is configured: the registry checks are then skipped.
func (s *Service) registryClient() (registry.Registry, error) {
	if s.registryURL == "" {
		return nil, nil
	}
	client, err := registry.NewClient(s.registryURL, registry.WithBearerToken(s.cfg.IdentityToken), registry.WithLogger(s.log.With("component", "registry")))
	if err != nil {
		return nil, fmt.Errorf("identity registry: %w", err)
	}
	return client, nil
}

// fraudGroup declares the fraud group and starts the views it looks up (fraud.Spec's
// lookups): the blocklist (id numbers and faces), the capture index and the face index, each
// a view of a compacted topic.
func (s *Service) fraudGroup(blobs blob.Store) (processors.Group, error) {
	key, err := s.tokenSecret()
	if err != nil {
		return processors.Group{}, err
	}
	reg, err := s.registryClient()
	if err != nil {
		return processors.Group{}, err
	}
	blocklist, err := fraud.NewBlocklist(s.codec, s.runtimeOpts("fraud-blocklist")...)
	if err != nil {
		return processors.Group{}, err
	}
	s.spawn("fraud blocklist", blocklist.Run)
	sightings, err := fraud.NewCaptureIndex(s.runtimeOpts("fraud-captures")...)
	if err != nil {
		return processors.Group{}, err
	}
	s.spawn("fraud capture index", sightings.Run)
	faces, err := s.faceEngine("fraud")
	if err != nil {
		return processors.Group{}, err
	}
	faceIndex, err := fraud.NewFaceIndex(s.codec, s.runtimeOpts("fraud-faces")...)
	if err != nil {
		return processors.Group{}, err
	}
	s.spawn("fraud face index", faceIndex.Run)
	return fraud.NewGroup(s.codec, key, blocklist, sightings,
		fraud.WithRegistry(reg), fraud.WithBlobs(blobs), fraud.WithFaces(faces, faceIndex, blocklist),
		fraud.WithLogger(s.log.With("group", "fraud")))
}

// loadTrust reads the CSCA trust anchors of --csca-dir. Without one, every chip's chain
// check fails with csca_untrusted: nothing is trusted by default.
func (s *Service) loadTrust() (*mrtd.Trust, error) {
	if s.cfg.CSCADir == "" {
		s.log.Warn("no --csca-dir: chip passive authentication will fail with csca_untrusted")
		return nil, nil
	}
	trust, err := mrtd.LoadTrust(s.cfg.CSCADir)
	if errors.Is(err, mrtd.ErrNoAnchors) {
		s.log.Warn("--csca-dir holds no certificate: chip passive authentication will fail with csca_untrusted")
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("csca dir: %w", err)
	}
	return trust, nil
}

// startClickHouseSink connects to ClickHouse at --clickhouse-addr (in dev, a server this
// process starts under the data dir), applies the migrations, and runs the sink.
func (s *Service) startClickHouseSink() error {
	secret, err := s.tokenSecret()
	if err != nil {
		return err
	}
	addr := s.cfg.ClickHouseAddr
	if s.cfg.StartClickHouse {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("--clickhouse-addr: %w", err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return fmt.Errorf("--clickhouse-addr: %w", err)
		}
		if s.clickhouse, err = chserver.Start(s.ctx, chserver.WithDataDir(filepath.Join(s.cfg.DataDir, "clickhouse")), chserver.WithTCPPort(p)); err != nil {
			return fmt.Errorf("clickhouse server: %w", err)
		}
		addr = s.clickhouse.Addr()
	}
	conn, err := chsink.Dial(s.ctx, addr)
	if err != nil {
		return fmt.Errorf("clickhouse: %w", err)
	}
	if err := chsink.Migrate(s.ctx, conn); err != nil {
		return fmt.Errorf("clickhouse migrations: %w", err)
	}
	sink, err := chsink.New(conn, s.codec, chsink.WithIDHashKey(secret), chsink.WithLogger(s.log.With("sink", "clickhouse")))
	if err != nil {
		return fmt.Errorf("clickhouse sink: %w", err)
	}
	r, err := processors.NewBatchRunner(sink.Group(), s.runtimeOpts("clickhouse")...)
	if err != nil {
		return fmt.Errorf("clickhouse sink: %w", err)
	}
	s.spawn("sink clickhouse", r.Run)
	s.chAddr = addr
	return nil
}

// startConsent starts the consent API over the consent index.
func (s *Service) startConsent() error {
	cmp, err := consent.LoadConfig(s.cfg.ConsentConfig)
	if err != nil {
		return fmt.Errorf("consent config: %w", err)
	}
	s.consent, err = consent.New(consent.Config{
		Tenants:   s.tenants,
		Publisher: s.producer,
		Encoder:   s.codec,
		Index:     s.consents,
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
func (s *Service) startEdge(blobs blob.Store, flows flow.Set) error {
	secret, err := s.tokenSecret()
	if err != nil {
		return err
	}
	if s.states, err = newStateView(s.codec, s.runtimeOpts("edge-view")...); err != nil {
		return err
	}
	s.spawn("session-state view", s.states.Run)
	replies, err := newQualityReplies(s.codec, s.runtimeOpts("edge-replies")...)
	if err != nil {
		return err
	}
	s.spawn("quality replies", replies.Run)
	spec, err := idstream.OpenAPIJSON()
	if err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	s.edge, err = edge.New(edge.Config{
		Tenants:        s.tenants,
		Publisher:      s.producer,
		Encoder:        s.codec,
		Sessions:       s.states,
		QualityReplies: replies,
		Blobs:          blobs,
		Flows:          flows,
		TokenSecret:    secret,
		QualityBudget:  s.cfg.QualityBudget,
		Logger:         s.log.With("component", "edge"),
		Registerer:     s.reg,
		Gatherer:       s.reg,
		Ready:          s.states.Ready,
		OpenAPIJSON:    spec,
		ConsentChecker: consent.NewChecker(s.consents),
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

// spawn runs fn until the service stops; an error other than cancellation stops the service.
func (s *Service) spawn(name string, fn func(context.Context) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := fn(s.ctx)
		if err != nil && !errors.Is(err, context.Canceled) && s.ctx.Err() == nil {
			s.log.Error("component stopped", "component", name, "err", err)
			s.errMu.Lock()
			if s.err == nil {
				s.err = fmt.Errorf("%s: %w", name, err)
			}
			s.errMu.Unlock()
			s.cancel()
		}
	}()
}

// Done is closed when the service stops, by Close or because a component failed.
func (s *Service) Done() <-chan struct{} { return s.ctx.Done() }

// Err is the first component failure, if any.
func (s *Service) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Close stops every component gracefully and then the embedded broker.
func (s *Service) Close() {
	if s.edge != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.edge.Shutdown(ctx)
		cancel()
		_ = s.edgeLn.Close() // in case Shutdown ran before the server started serving
	}
	if s.consent != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.consent.Shutdown(ctx)
		cancel()
		_ = s.consentLn.Close()
	}
	s.cancel()
	s.wg.Wait()
	if s.producer != nil {
		s.producer.Close()
	}
	if s.clickhouse != nil {
		_ = s.clickhouse.Close()
	}
	if s.ocrReader != nil {
		_ = s.ocrReader.Close()
	}
	for _, e := range s.faces {
		e.Close()
	}
	if s.broker != nil {
		s.broker.Close()
	}
}

// groupsFor validates a list of group names.
func groupsFor(names []string) ([]string, error) {
	for _, n := range names {
		if !slices.Contains(allGroups, n) {
			return nil, fmt.Errorf("unknown group %q (known: %s)", n, strings.Join(allGroups, ", "))
		}
	}
	return names, nil
}
