package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/consent"
	"github.com/idstream/idstream/edge"
	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/chserver"
	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/processors/facematch"
	"github.com/idstream/idstream/processors/fraud"
	"github.com/idstream/idstream/processors/liveness"
	"github.com/idstream/idstream/processors/ocr"
	"github.com/idstream/idstream/processors/quality"
	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Defaults of --topic-retention and --erasure-lag.
const (
	defaultTopicRetention = 7 * 24 * time.Hour
	defaultErasureLag     = 24 * time.Hour
)

// decodedImageBytes bounds the decoded images the process keeps for its other readers
// (imagecheck.Decoded): the captures of the sessions in flight, each read by the edge and up
// to five groups within seconds. A 2 MP photo decoded is 3 MB: about 20 of them.
const decodedImageBytes = 64 << 20

// foundImages bounds the captures whose faces the process keeps for its other groups
// (face.Found, which knows a capture by the decoded images' digests): a selfie is looked at
// by the gate, liveness, face match and fraud within seconds (a minute of selfies at 4
// sessions/s). An entry is a few KB.
const foundImages = 256

// foundAge is how long the faces found in a capture are kept for the process's other groups,
// as long as imagecheck.Decoded keeps its image: they look at it within seconds.
const foundAge = 3 * time.Minute

// imageReaders counts the parts of a process that decode captures: the edge (it checks
// every upload) and the groups that read them. Below two, nothing decoded would be read again
// in the process: it keeps none (separate processes each decode what they read).
func imageReaders(groups []string, edge bool) int {
	n := 0
	if edge {
		n++
	}
	for _, g := range groups {
		if slices.Contains([]string{quality.GroupName, ocr.GroupName, liveness.GroupName, facematch.GroupName, fraud.GroupName}, g) {
			n++
		}
	}
	return n
}

// Service is a running idstream process: any subset of the processor groups, optionally the
// edge, on an embedded broker or an external cluster. It is what `idstream dev` runs and what
// the end-to-end tests start, so both exercise the same wiring.
type Service struct {
	cfg     Config
	log     *slog.Logger
	broker  *stream.Embedded
	brokers []string
	codec   *schemas.Codec
	reg     *prometheus.Registry
	metrics *stream.Metrics
	kgoOpts []kgo.Opt
	// kafkaOpts are the connection's options (TLS, SASL) of every client.
	kafkaOpts []stream.Option

	blobs      blob.Store
	decoded    *imagecheck.Decoded // the images decoded lately, shared by the edge and the groups
	found      *face.Found         // the faces the groups' engines found lately, shared by them
	cores      int                 // the cores the groups use: the CPU-bound ones' records at once, the background's turns
	background *stream.Background  // the threads the background groups share, closed after the groups stop
	flows      flow.Set
	producer   *stream.Producer // shared by the APIs and sinks (shared)
	tenants    *tenant.Registry // loaded once (shared)
	edge       *edge.Server
	analytics  *clickHouseAnalytics // the edge's analyst views (startEdge)
	edgeLn     net.Listener
	edgeAddr   string

	pprofAddr string // where --pprof-addr serves (startPprof)
	opsAddr   string // where --metrics-addr serves (startOps)
	// health follows this process's Kafka clients (every one gets it); started is set once
	// Start has started every component, before which the ops /readyz reads nothing else.
	health  *stream.Health
	started atomic.Bool

	faces      map[string]*face.Engine // per group that looks at faces (faceEngine)
	ocrReader  *docread.Reader         // the ocr group's Tesseract clients, closed after the groups stop
	clickhouse *chserver.Server        // the local ClickHouse dev starts
	chAddr     string

	consents    *consent.Index // filled by its follower once an API needs it (consentIndex)
	consent     *consent.Server
	consentLn   net.Listener
	consentAddr string
	registryURL string
	states      *readmodel.States
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
	cores        int       // the cores the groups use (0: GOMAXPROCS); dev gives the Go runtime one more
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
	s.metrics = stream.NewMetrics(s.reg)
	if cfg.PprofAddr != "" {
		if err := s.startPprof(cfg.PprofAddr); err != nil {
			return s, err
		}
	}
	s.health = stream.NewHealth()
	if cfg.MetricsAddr != "" {
		if err := s.startOps(cfg.MetricsAddr); err != nil {
			return s, err
		}
	}

	if s.kafkaOpts, err = cfg.Conn.kafkaOptions(); err != nil {
		return s, err
	}
	s.brokers = cfg.Brokers
	if len(s.brokers) == 0 {
		s.broker, err = stream.StartEmbedded(
			stream.WithDataDir(filepath.Join(cfg.DataDir, "kafka")),
			stream.WithListenAddr(cfg.KafkaAddr),
			stream.WithPartitionsDefault(cfg.Partitions),
		)
		if err != nil {
			return s, fmt.Errorf("embedded broker: %w", err)
		}
		s.brokers = s.broker.Addrs()
	}
	if err := ensureTopics(ctx, s.brokers, topicSpecs(cfg), log, s.kafkaOpts...); err != nil {
		return s, fmt.Errorf("topics: %w", err)
	}
	var codecOpts []schemas.CodecOption
	if cfg.RegistryURL != "" {
		regOpts, err := cfg.Conn.registryOptions()
		if err != nil {
			return s, err
		}
		codecOpts = append(codecOpts, schemas.WithRegistry(cfg.RegistryURL, regOpts...))
	}
	if s.codec, err = schemas.NewCodec(codecOpts...); err != nil {
		return s, fmt.Errorf("codec: %w", err)
	}
	if s.blobs, err = cfg.Blobs.open(ctx, cfg.DataDir); err != nil {
		return s, fmt.Errorf("blob store: %w", err)
	}
	s.cores = opts.cores
	if s.cores <= 0 {
		s.cores = runtime.GOMAXPROCS(0)
	}
	if slices.ContainsFunc(cfg.Groups, func(g string) bool { return slices.Contains(background, g) }) {
		s.background = stream.NewBackground(s.cores, backgroundNice)
	}
	if imageReaders(cfg.Groups, opts.withEdge) > 1 {
		s.decoded = imagecheck.NewDecoded(decodedImageBytes)
	}
	if s.decoded != nil && imageReaders(cfg.Groups, false) > 1 {
		s.found = face.NewFound(s.decoded.Sum, foundImages, foundAge)
	}
	if s.flows, err = loadFlows(cfg.FlowsFile); err != nil {
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
	run, err := selected(cfg, opts)
	if err != nil {
		return s, err
	}
	for _, c := range run {
		if err := c.start(s, c.node); err != nil {
			return s, fmt.Errorf("%s %s: %w", c.name, c.node.Kind, err)
		}
	}
	s.started.Store(true)
	return s, nil
}

// shared loads the tenants and creates the producer on first use: the APIs and sinks
// share them.
func (s *Service) shared() (*tenant.Registry, *stream.Producer, error) {
	if s.tenants == nil {
		t, err := s.loadTenants()
		if err != nil {
			return nil, nil, err
		}
		s.tenants = t
	}
	if s.producer == nil {
		p, err := stream.NewProducer(s.runtimeOpts("producer")...)
		if err != nil {
			return nil, nil, fmt.Errorf("producer: %w", err)
		}
		s.producer = p
	}
	return s.tenants, s.producer, nil
}

// consentIndex starts on first use the index of cmp.consents.v1 the consent API answers
// from and the edge checks consents against.
func (s *Service) consentIndex() (*consent.Index, error) {
	if s.consents != nil {
		return s.consents, nil
	}
	history, err := stream.NewHistory(schemas.TopicConsents, s.runtimeOpts("consent-index")...)
	if err != nil {
		return nil, fmt.Errorf("consent index: %w", err)
	}
	ix := consent.NewIndex()
	follower, err := consent.NewFollower(history, ix, s.codec, consent.WithFollowerLogger(s.log.With("component", "consent-index")))
	if err != nil {
		return nil, fmt.Errorf("consent index: %w", err)
	}
	s.spawn("consent index", follower.Run)
	s.consents = ix
	return ix, nil
}

// brokerWait is how long a process that starts while the brokers do not answer waits for
// them before it gives up.
const brokerWait = 2 * time.Minute

// ensureTopics creates or checks the topics, waiting up to brokerWait for brokers that do
// not answer yet (a process started with, or just after, a broker that restarts: it waits
// instead of exiting, as a Kafka client does once running). A topic that exists with
// another partition count, or brokers that refuse the client for good (a wrong password, an
// untrusted certificate), fail at once. opts are the connection's (TLS, SASL).
func ensureTopics(ctx context.Context, brokers []string, specs []stream.TopicSpec, log *slog.Logger, opts ...stream.Option) error {
	permanent := func(err error) bool {
		return errors.Is(err, stream.ErrPartitionMismatch) || stream.IsConnectionRefused(err)
	}
	return awaitServer(ctx, brokerWait, log, "the brokers", permanent,
		func() error { return stream.EnsureTopics(ctx, brokers, specs, opts...) }, "brokers", brokers)
}

// awaitServer calls try every second until it returns nil or an error permanent says no
// wait fixes, wait has passed or ctx ends, and returns try's last error: how a process
// starting beside a server that does not answer yet (a broker, ClickHouse, S3) waits for
// it. Every 10 s of waiting it logs what it waits for, with attrs (log nil: silent).
func awaitServer(ctx context.Context, wait time.Duration, log *slog.Logger, what string, permanent func(error) bool, try func() error, attrs ...any) error {
	give := time.Now().Add(wait)
	var warned time.Time
	for {
		err := try()
		if err == nil || permanent(err) || time.Now().After(give) || ctx.Err() != nil {
			return err
		}
		if log != nil && time.Since(warned) > 10*time.Second {
			log.Warn("waiting for "+what, append(attrs, "err", err)...)
			warned = time.Now()
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// topicSpecs lists every topic of the contract and a dead-letter topic for each, with cfg's
// partitions, retention and erasure lag.
//
// Where personal data lives in Kafka, and how long: the compacted topics (session states,
// decisions, the erasure index) hold one record per session, which an erasure (DELETE, a
// withdrawn consent) replaces with a tombstone; --erasure-lag bounds how long the replaced
// record stays in the log (max.compaction.lag.ms, and segments roll as often). The event
// topics (captures, OCR and chip results, ...) cannot drop one session's records: they hold
// them for --topic-retention, their dead-letter topics four times as long. The consent and
// erasure records are the controller's evidence and are kept.
func topicSpecs(cfg Config) []stream.TopicSpec {
	retention, lag := cfg.TopicRetention, max(cfg.ErasureLag, 0) // lag 0: the broker's settings
	if retention <= 0 {
		retention = defaultTopicRetention
	}
	partitions := int32(cfg.Partitions)
	var specs []stream.TopicSpec
	for _, t := range schemas.Topics() {
		spec := stream.TopicSpec{Name: t.Name, Partitions: partitions, Compacted: t.Compacted}
		switch {
		case t.Name == schemas.TopicConsents, t.Name == schemas.TopicErasures:
			spec.Retention = -1 // the controller's evidence; the consent index is rebuilt from it
		case t.Compacted:
			spec.MaxCompactionLag = lag
		default:
			spec.Retention = retention
		}
		specs = append(specs, spec,
			stream.TopicSpec{Name: t.Name + ".dlq", Partitions: partitions, Retention: 4 * retention})
	}
	return specs
}

func (s *Service) runtimeOpts(group string) []stream.Option {
	return append([]stream.Option{
		stream.WithBrokers(s.brokers),
		stream.WithLogger(s.log),
		stream.WithMetrics(s.metrics),
		stream.WithClientID("idstream-" + group),
		stream.WithKgoOpts(s.kgoOpts...),
		stream.WithHealth(s.health),
	}, s.kafkaOpts...)
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

// Restarts of a runner that failed (spawnRestarting): at most restartBudget within
// restartWindow, restartPause apart.
const (
	restartBudget = 5
	restartWindow = 10 * time.Minute
	restartPause  = time.Second
)

// spawnRestarting creates a group's runner with start (returning its error, as a
// configuration error at start-up) and runs it like spawn, but when it fails (its broker
// restarted under an end of transaction, a produce that kept failing) it starts a new runner
// from start instead of stopping the process: a new client, its table restored from its
// changelog, its transactional id fencing what the failed one left open — what a restart of
// the process would do, without reloading the models. Found by idstream chaos: the session
// and erasure groups exited when their broker restarted during EndTxn. After restartBudget
// failures within restartWindow the failure stops the service, as spawn's do.
func (s *Service) spawnRestarting(name string, start func() (func(context.Context) error, error)) error {
	run, err := start()
	if err != nil {
		return err
	}
	s.spawn(name, func(ctx context.Context) error {
		var failures []time.Time
		for {
			err := run(ctx)
			if err == nil || ctx.Err() != nil || errors.Is(err, stream.ErrKilled) {
				return err
			}
			now := time.Now()
			failures = append(failures, now)
			for len(failures) > 0 && now.Sub(failures[0]) > restartWindow {
				failures = failures[1:]
			}
			if len(failures) > restartBudget {
				return err
			}
			s.log.Warn("component failed; starting it again", "component", name, "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(restartPause):
			}
			if run, err = start(); err != nil {
				return err
			}
		}
	})
	return nil
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
	if s.background != nil {
		s.background.Close()
	}
	if s.producer != nil {
		s.producer.Close()
	}
	if s.analytics != nil {
		s.analytics.Close()
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
