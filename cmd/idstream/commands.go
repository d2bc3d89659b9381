package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/internal/tlsfiles"
	chsink "github.com/idstream/idstream/sinks/clickhouse"
	"github.com/idstream/idstream/stream"
)

// runDev is `make run`: every group, the edge and an embedded broker persisted under
// --data-dir, in one process. With no --tenants it creates a sandbox tenant and writes its
// secrets into the data dir.
func runDev(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	var cfg Config
	if err := parse(flagSet("dev", &cfg), args); err != nil {
		return err
	}
	cfg.Groups, cfg.Sinks, cfg.StartClickHouse, cfg.EdgeAnalytics = allGroups, allSinks, true, true
	if cfg.MetricsAddr == "" {
		cfg.MetricsAddr = devMetricsAddr
	}
	s, err := Start(ctx, cfg, serviceOptions{withEdge: true, withConsent: true, withRegistry: cfg.IdentityURL == "", cores: spareProcessor()}, log)
	if err != nil {
		return err
	}
	defer s.Close()
	printBanner(stdout, s)
	return waitStop(ctx, s)
}

// devMetricsAddr is where dev serves /metrics, /healthz and /readyz unless --metrics-addr
// says otherwise.
const devMetricsAddr = "127.0.0.1:9464"

// spareProcessor gives the Go runtime one processor more than the cores it found, unless
// GOMAXPROCS says otherwise, and returns the cores. For a process where the gate and the
// background groups share the cores (dev): the background's turns, one per core
// (stream.Background), can then never hold every processor, and the goroutines on a
// capture's way to the gate's answer (edge, broker, quality) find one free instead of
// waiting out 10 ms scheduler slices behind OCR's Go code; the kernel, told by the nice
// value, gives their thread the core. Measured on 2 cores against the same process without
// either (README, Sessions under load; `8b6a36b` against `b114fb3`), id_card: one session at
// a time the gate's p50 71 → 46–52 ms, p99 164–230 → 115–135 ms; four in flight p50 82–107 →
// 43–51 ms, p99 318–412 → 204–279 ms, the same sessions/s and CPU per session.
//
// Setting GOMAXPROCS stops the runtime from following a container's CPU limit as it changes
// (Go 1.25): dev runs on a machine or under a fixed limit; separate deployments of the groups
// (idstream process) keep the runtime's own setting.
func spareProcessor() (cores int) {
	cores = runtime.GOMAXPROCS(0)
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(cores + 1)
	}
	return cores
}

func printBanner(w io.Writer, s *Service) {
	fmt.Fprintf(w, "idstream dev is running\n")
	fmt.Fprintf(w, "  edge (verification API): http://%s/v1   (OpenAPI: http://%s/openapi.json)\n", s.edgeAddr, s.edgeAddr)
	if s.broker != nil {
		fmt.Fprintf(w, "  kafka (embedded broker):  %s   data in %s\n", s.brokers[0], filepath.Join(s.cfg.DataDir, "kafka"))
	} else {
		fmt.Fprintf(w, "  kafka: %v\n", s.brokers)
	}
	if s.consent != nil {
		fmt.Fprintf(w, "  consent (CMP) API:        http://%s/v1\n", s.consentAddr)
	}
	if s.registryURL != "" {
		fmt.Fprintf(w, "  identity registry:        %s (personas: internal/registry/README.md)\n", s.registryURL)
	}
	if s.chAddr != "" {
		fmt.Fprintf(w, "  clickhouse (native):      %s   database idstream (queries: deploy/clickhouse/README.md)\n", s.chAddr)
	}
	fmt.Fprintf(w, "  groups: %v, sinks: %v\n", s.cfg.Groups, s.cfg.Sinks)
	if s.secrets != nil {
		fmt.Fprintf(w, "  sandbox tenant %q, API key: %s\n", "sandbox", s.secrets.APIKey)
		fmt.Fprintf(w, "  secrets (one file each): %s/sandbox-api-key, sandbox-admin-key, sandbox-cmp-api-key, sandbox-webhook-secret, sandbox-reviewer-key\n", s.cfg.DataDir)
	}
	if s.opsAddr != "" {
		fmt.Fprintf(w, "  metrics: http://%s/metrics (and /healthz, /readyz)\n", s.opsAddr)
	}
}

// runBroker runs the embedded broker (franz-go's kfake, the one dev runs) as a process of its
// own, persisted under --data-dir/kafka and listening on --kafka-addr, with the contract's
// topics created: the broker of `idstream chaos`, which kills and restarts it like any other
// process. It is a development broker, one node without replication: production runs Kafka
// or Redpanda.
func runBroker(ctx context.Context, args []string, stdout io.Writer) error {
	var cfg Config
	if err := parse(flagSet("broker", &cfg), args); err != nil {
		return err
	}
	b, err := stream.StartEmbedded(
		stream.WithDataDir(filepath.Join(cfg.DataDir, "kafka")),
		stream.WithListenAddr(cfg.KafkaAddr),
		stream.WithPartitionsDefault(cfg.Partitions),
	)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := stream.EnsureTopics(ctx, b.Addrs(), topicSpecs(cfg)); err != nil {
		return fmt.Errorf("topics: %w", err)
	}
	fmt.Fprintf(stdout, "idstream broker listening on %s, data in %s (%d abort markers written for transactions a crash left open)\n", b.Addrs()[0], filepath.Join(cfg.DataDir, "kafka"), b.CrashAborted())
	<-ctx.Done()
	return nil
}

// runEdge runs the edge alone against KAFKA_BROKERS.
func runEdge(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	var cfg Config
	if err := parse(flagSet("edge", &cfg), args); err != nil {
		return err
	}
	if len(cfg.Brokers) == 0 {
		return errors.New("KAFKA_BROKERS is required (idstream dev runs an embedded broker)")
	}
	if cfg.TenantsFile == "" {
		return errors.New("--tenants is required outside dev")
	}
	if cfg.TokenSecret == "" {
		return errors.New("IDSTREAM_TOKEN_SECRET is required outside dev: every edge replica must share it")
	}
	s, err := Start(ctx, cfg, serviceOptions{withEdge: true}, log)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdout, "idstream edge listening on http://%s\n", s.edgeAddr)
	return waitStop(ctx, s)
}

// runProcess runs one processor group against KAFKA_BROKERS.
func runProcess(ctx context.Context, args []string, log *slog.Logger) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: idstream process <group>", errUsage)
	}
	var cfg Config
	if err := parse(flagSet("process", &cfg), args[1:]); err != nil {
		return err
	}
	if err := known("group", args[:1], allGroups); err != nil {
		return err
	}
	if len(cfg.Brokers) == 0 {
		return errors.New("KAFKA_BROKERS is required (idstream dev runs an embedded broker)")
	}
	cfg.Groups = args[:1]
	s, err := Start(ctx, cfg, serviceOptions{}, log)
	if err != nil {
		return err
	}
	defer s.Close()
	return waitStop(ctx, s)
}

// runSink runs one sink against KAFKA_BROKERS.
func runSink(ctx context.Context, args []string, log *slog.Logger) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: idstream sink <name>", errUsage)
	}
	var cfg Config
	if err := parse(flagSet("sink", &cfg), args[1:]); err != nil {
		return err
	}
	if err := known("sink", args[:1], allSinks); err != nil {
		return err
	}
	if len(cfg.Brokers) == 0 {
		return errors.New("KAFKA_BROKERS is required (idstream dev runs an embedded broker)")
	}
	switch {
	case args[0] == "webhook" && cfg.TenantsFile == "":
		return errors.New("--tenants is required: the webhook sink signs with the tenants' secrets")
	case args[0] == "clickhouse" && cfg.TokenSecret == "":
		return errors.New("IDSTREAM_TOKEN_SECRET is required: id numbers are hashed with the edge's key")
	}
	cfg.Sinks = []string{args[0]}
	s, err := Start(ctx, cfg, serviceOptions{}, log)
	if err != nil {
		return err
	}
	defer s.Close()
	return waitStop(ctx, s)
}

// runConsent runs the consent API alone against KAFKA_BROKERS.
func runConsent(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	var cfg Config
	if err := parse(flagSet("consent", &cfg), args); err != nil {
		return err
	}
	if len(cfg.Brokers) == 0 {
		return errors.New("KAFKA_BROKERS is required (idstream dev runs an embedded broker)")
	}
	if cfg.TenantsFile == "" {
		return errors.New("--tenants is required outside dev")
	}
	s, err := Start(ctx, cfg, serviceOptions{withConsent: true}, log)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdout, "idstream consent listening on http://%s\n", s.consentAddr)
	return waitStop(ctx, s)
}

// runRegistrySandbox serves the sandbox identity registry and its deterministic personas.
func runRegistrySandbox(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	var cfg Config
	if err := parse(flagSet("registry-sandbox", &cfg), args); err != nil {
		return err
	}
	sandbox := registry.NewSandbox(registry.WithSandboxToken(cfg.IdentityToken), registry.WithSandboxLogger(log))
	addr, err := sandbox.Serve(ctx, cfg.RegistryAddr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sandbox registry listening on http://%s\n", addr)
	<-ctx.Done()
	return nil
}

// runMigrate applies the ClickHouse migrations at --clickhouse-addr, waiting up to
// clickHouseWait for a server that does not answer yet (a migrate job started beside
// ClickHouse).
func runMigrate(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	var cfg Config
	if err := parse(flagSet("migrate", &cfg), args); err != nil {
		return err
	}
	conn, err := dialClickHouse(ctx, cfg.ClickHouseAddr, cfg.Conn, clickHouseWait, log)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := chsink.Migrate(ctx, conn); err != nil {
		return err
	}
	versions, err := chsink.AppliedVersions(ctx, conn, chsink.DefaultDatabase)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "clickhouse %s: migrations applied %v\n", cfg.ClickHouseAddr, versions)
	return nil
}

// clickHouseWait is how long migrate and the ClickHouse sink wait for a server that does not
// answer when they start.
const clickHouseWait = 2 * time.Minute

// dialClickHouse connects to the ClickHouse at addr with c's credentials, trying again every
// second for up to wait while the server does not answer. A refused login or an untrusted
// server certificate fails at once.
func dialClickHouse(ctx context.Context, addr string, c Connections, wait time.Duration, log *slog.Logger) (driver.Conn, error) {
	opts, err := c.clickHouseOptions()
	if err != nil {
		return nil, err
	}
	var conn driver.Conn
	permanent := func(err error) bool { return chsink.IsAuthError(err) || tlsfiles.IsCertificateError(err) }
	err = awaitServer(ctx, wait, log, "ClickHouse", permanent, func() (err error) {
		conn, err = chsink.Dial(ctx, addr, opts...)
		return err
	}, "addr", addr)
	return conn, err
}

// runProbe GETs one URL and succeeds when it answers 2xx within probeTimeout: the health
// check of the image, which has no curl (docker compose, Kubernetes exec probes).
func runProbe(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("%w: probe takes one URL", errUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("probe %s: HTTP %d", args[0], res.StatusCode)
	}
	fmt.Fprintf(stdout, "%s: HTTP %d\n", args[0], res.StatusCode)
	return nil
}

// probeTimeout bounds a probe.
const probeTimeout = 3 * time.Second

// runTopics creates the topics of the contract on KAFKA_BROKERS, or checks them, waiting
// for brokers that do not answer yet as a service process does, and sets the retention and
// compaction lag of --topic-retention and --erasure-lag on the topics that exist (the
// service processes only create missing topics).
func runTopics(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	var cfg Config
	if err := parse(flagSet("topics", &cfg), args); err != nil {
		return err
	}
	if len(cfg.Brokers) == 0 {
		return errors.New("KAFKA_BROKERS is required")
	}
	specs := topicSpecs(cfg)
	kafkaOpts, err := cfg.Conn.kafkaOptions()
	if err != nil {
		return err
	}
	if err := ensureTopics(ctx, cfg.Brokers, specs, log, kafkaOpts...); err != nil {
		return err
	}
	changed, err := stream.AlignTopicConfigs(ctx, cfg.Brokers, specs, kafkaOpts...)
	if err != nil {
		return err
	}
	if len(changed) > 0 {
		fmt.Fprintf(stdout, "retention or compaction lag set on %d existing topics: %v\n", len(changed), changed)
	}
	fmt.Fprintf(stdout, "%d topics present with %d partitions\n", len(specs), cfg.Partitions)
	return nil
}

// waitStop blocks until a signal or a component failure, and reports the latter.
func waitStop(ctx context.Context, s *Service) error {
	select {
	case <-ctx.Done():
		return nil
	case <-s.Done():
		return s.Err()
	}
}
