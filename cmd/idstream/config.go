package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idstream/idstream/edge"
	"github.com/idstream/idstream/sinks/webhook"
	"github.com/idstream/idstream/stream"
)

// errUsage is returned after a flag set has printed its own usage.
var errUsage = errors.New("usage")

// Config is everything a service process needs; flags and IDSTREAM_* variables fill it.
type Config struct {
	DataDir         string          // --data-dir: broker log, blobs, sandbox secrets
	EdgeAddr        string          // --edge-addr: REST edge listener
	ConsentAddr     string          // --consent-addr: consent API listener (consent issue)
	KafkaAddr       string          // --kafka-addr: where the embedded broker listens
	ClickHouseAddr  string          // --clickhouse-addr: native port of the local ClickHouse (sinks issue)
	TenantsFile     string          // --tenants: YAML tenants file; empty in dev = sandbox tenant
	FlowsFile       string          // --flows: YAML flows overriding the defaults
	PolicyFile      string          // --policy: YAML decision policy overriding the default
	CSCADir         string          // --csca-dir: CSCA certificates and master lists for passive authentication
	ModelsDir       string          // --models-dir: face models and OCR-B data (make deps fetches them)
	ConsentConfig   string          // --consent-config: CMP configuration YAML (default: embedded)
	RegistryAddr    string          // --registry-addr: where dev's sandbox registry listens
	IdentityURL     string          // --registry-url: the national identity registry API (dev: the sandbox)
	IdentityToken   string          // IDSTREAM_REGISTRY_TOKEN: bearer token for the registry API
	Partitions      int             // --partitions: partition count of every topic
	QualityBudget   time.Duration   // --quality-budget: how long a step request waits for the gate
	MaxPipelineWait time.Duration   // --max-pipeline-wait: the edge sheds beyond it; 0 never sheds
	PprofAddr       string          // --pprof-addr: Go's profiles of the process (empty: off)
	MetricsAddr     string          // --metrics-addr: /metrics, /healthz, /readyz of the process (empty: off)
	Brokers         []string        // KAFKA_BROKERS: external cluster instead of the embedded broker
	RegistryURL     string          // SCHEMA_REGISTRY_URL: Confluent wire format through a registry
	TokenSecret     string          // IDSTREAM_TOKEN_SECRET: HMAC key for sdk tokens (dev: generated)
	Groups          []string        // processor groups to run in this process (dev: all)
	Sinks           []string        // sinks to run in this process (dev: all)
	InstanceID      string          // --instance-id: stable per replica; names its Kafka transactions
	WebhookRetries  []time.Duration // --webhook-retries: the webhook sink's waits between attempts
	StartClickHouse bool            // dev: run a local clickhouse-server at ClickHouseAddr
	Conn            Connections     // TLS, SASL and credentials of Kafka, ClickHouse, the schema registry
	Blobs           BlobStore       // --blob-store and the S3 settings
	EdgeReplicas    int             // --edge-replicas: edges sharing the traffic; each applies 1/N of a tenant's rate limit
	TopicRetention  time.Duration   // --topic-retention: how long the event topics keep records
	ErasureLag      time.Duration   // --erasure-lag: longest an erased record stays in a compacted topic's log
	PublicURL       string          // --public-url: where people reach the edge, for capture_url and hand-off links
	CaptureAppURL   string          // --capture-app-url: the deep link of the app that reads the chip
	EdgeAnalytics   bool            // --edge-analytics: the edge serves reviewers' analytics from ClickHouse (dev: on)
}

// flagSet builds the flags shared by the service commands, with defaults taken from the
// matching IDSTREAM_* environment variable when it is set.
func flagSet(name string, cfg *Config) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	str := func(p *string, flagName, def, help string) { stringFlag(fs, p, flagName, def, help) }
	str(&cfg.DataDir, "data-dir", ".data", "data directory")
	str(&cfg.EdgeAddr, "edge-addr", "127.0.0.1:8080", "REST edge listen address")
	str(&cfg.ConsentAddr, "consent-addr", "127.0.0.1:8081", "consent API listen address")
	str(&cfg.KafkaAddr, "kafka-addr", "127.0.0.1:9092", "embedded broker listen address")
	str(&cfg.ClickHouseAddr, "clickhouse-addr", "127.0.0.1:9000", "ClickHouse native protocol address")
	str(&cfg.TenantsFile, "tenants", "", "tenants YAML file (dev: a sandbox tenant when empty)")
	str(&cfg.FlowsFile, "flows", "", "flows YAML file overriding the default flows")
	str(&cfg.PolicyFile, "policy", "", "decision policy YAML file overriding the default policy")
	str(&cfg.CSCADir, "csca-dir", "", "directory of CSCA certificates and master lists")
	str(&cfg.ModelsDir, "models-dir", "models", "directory of the face models and OCR data that make deps fetches")
	str(&cfg.ConsentConfig, "consent-config", "", "consent (CMP) configuration YAML (default: the embedded one)")
	str(&cfg.RegistryAddr, "registry-addr", "127.0.0.1:8082", "sandbox registry listen address (dev, registry-sandbox)")
	str(&cfg.IdentityURL, "registry-url", "", "base URL of the identity registry API (dev: its sandbox)")
	str(&cfg.PprofAddr, "pprof-addr", "", "serve Go's profiles (net/http/pprof) on this address, e.g. 127.0.0.1:6060; unauthenticated, keep it private; empty: off")
	str(&cfg.MetricsAddr, "metrics-addr", "", "serve the process's Prometheus /metrics, /healthz and /readyz on this address, apart from the public ports (dev: 127.0.0.1:9464 unless set); unauthenticated, keep it private; empty: off")
	str(&cfg.PublicURL, "public-url", "", "scheme and host people reach the edge at (https://verify.example.com), for Session Init's capture_url and the chip hand-off links; empty: the request's own")
	str(&cfg.CaptureAppURL, "capture-app-url", edge.DefaultCaptureAppURL, "deep link of your app that reads the ID chip, opened by a hand-off link's phone page with base_url, session_id, token and nonce added")
	boolFlag(fs, &cfg.EdgeAnalytics, "edge-analytics", "the edge serves the reviewers' analytics (GET /v1/review/analytics) from the ClickHouse at --clickhouse-addr, with --clickhouse-user and IDSTREAM_CLICKHOUSE_PASSWORD (give it a read-only user); dev: on")
	host, _ := os.Hostname()
	str(&cfg.InstanceID, "instance-id", host, "stable id of this replica, unique among the replicas of a group; a restarted replica with the same id fences its crashed predecessor's open transaction at once")
	replicas, _ := strconv.Atoi(envOr("edge-replicas", "1"))
	fs.IntVar(&cfg.EdgeReplicas, "edge-replicas", replicas, "how many edges share the traffic: each applies 1/N of a tenant's rate_limit_per_second, the tenant's rate across all of them when the load balancer spreads requests evenly (env IDSTREAM_EDGE_REPLICAS)")
	parts, _ := strconv.Atoi(envOr("partitions", "6"))
	fs.IntVar(&cfg.Partitions, "partitions", parts, "partitions per topic (env IDSTREAM_PARTITIONS)")
	budget, err := time.ParseDuration(envOr("quality-budget", "1500ms"))
	if err != nil {
		budget = 1500 * time.Millisecond
	}
	fs.DurationVar(&cfg.QualityBudget, "quality-budget", budget, "how long a step waits for the quality gate (env IDSTREAM_QUALITY_BUDGET)")
	dur := func(p *time.Duration, name string, def time.Duration, help string) {
		d, err := time.ParseDuration(envOr(name, def.String()))
		if err != nil {
			d = def
		}
		fs.DurationVar(p, name, d, help+" (env "+envName(name)+")")
	}
	dur(&cfg.TopicRetention, "topic-retention", defaultTopicRetention, "how long the event topics (captures, OCR and chip results, ...: personal data no erasure reaches) keep their records; dead-letter topics four times as long; set by idstream topics")
	dur(&cfg.ErasureLag, "erasure-lag", defaultErasureLag, "longest a record an erasure replaced stays in a compacted topic (session states, decisions: max.compaction.lag.ms and segment.ms); 0 leaves the broker's settings (a broker that refuses those properties); set by idstream topics")
	maxWait, err := time.ParseDuration(envOr("max-pipeline-wait", edge.DefaultMaxPipelineWait.String()))
	if err != nil {
		maxWait = edge.DefaultMaxPipelineWait
	}
	fs.DurationVar(&cfg.MaxPipelineWait, "max-pipeline-wait", maxWait, "the edge answers Session Init 429 overloaded while the pipeline's estimated wait exceeds this, and a capture while the gate's exceeds --quality-budget; 0 never sheds (env IDSTREAM_MAX_PIPELINE_WAIT)")
	fs.Func("webhook-retries", "the webhook sink's waits between attempts, comma-separated (a delivery gets one attempt more than waits; default "+scheduleString(webhook.DefaultSchedule())+") (env "+envName("webhook-retries")+")", func(v string) error {
		return parseSchedule(v, &cfg.WebhookRetries)
	})
	if v, ok := os.LookupEnv(envName("webhook-retries")); ok {
		if err := parseSchedule(v, &cfg.WebhookRetries); err != nil {
			fmt.Fprintf(fs.Output(), "%s: %v (default schedule used)\n", envName("webhook-retries"), err)
		}
	}
	connectionFlags(fs, &cfg.Conn)
	blobStoreFlags(fs, &cfg.Blobs)
	cfg.Brokers = stream.BrokersFromEnv()
	cfg.RegistryURL = os.Getenv("SCHEMA_REGISTRY_URL")
	cfg.TokenSecret = os.Getenv("IDSTREAM_TOKEN_SECRET")
	cfg.IdentityToken = os.Getenv("IDSTREAM_REGISTRY_TOKEN")
	return fs
}

// parseSchedule parses comma-separated durations ("30s,2m,10m") into *out.
func parseSchedule(v string, out *[]time.Duration) error {
	var s []time.Duration
	for _, f := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			return fmt.Errorf("webhook retries %q: want positive durations separated by commas", v)
		}
		s = append(s, d)
	}
	*out = s
	return nil
}

func scheduleString(s webhook.Schedule) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errUsage
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

func envName(flagName string) string {
	return "IDSTREAM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// stringFlag defines a string flag on fs whose default is its IDSTREAM_* variable, when set,
// else def.
func stringFlag(fs *flag.FlagSet, p *string, name, def, help string) {
	fs.StringVar(p, name, envOr(name, def), help+" (env "+envName(name)+")")
}

// boolFlag defines a boolean flag on fs, true by default when its IDSTREAM_* variable is "1"
// or "true".
func boolFlag(fs *flag.FlagSet, p *bool, name, help string) {
	v := envOr(name, "")
	fs.BoolVar(p, name, v == "1" || strings.EqualFold(v, "true"), help+" (env "+envName(name)+")")
}

func envOr(flagName, def string) string {
	if v, ok := os.LookupEnv(envName(flagName)); ok {
		return v
	}
	return def
}
