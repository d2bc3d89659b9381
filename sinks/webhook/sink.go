// Package webhook is the Standard Webhooks sink (standardwebhooks.com): it posts the signed
// session-completed webhook of every decided session to the integrator, retries failed
// deliveries through ekyc.webhook.retry.v1 without blocking any partition, dead-letters them
// to ekyc.webhook.dlq.v1 after the last attempt, and records every attempt on
// ekyc.webhook.attempts.v1.
//
// It runs as two consumer groups:
//
//   - the trigger group (Config.TriggerGroup, a stream.Group on the runtime) reads
//     ekyc.session-state.v1 and turns the snapshot that folds a Decision into a
//     WebhookDelivery attempt 0 on ekyc.webhook.retry.v1. It never talks HTTP, so a slow
//     endpoint cannot hold up the state topic.
//   - the delivery group (Config.DeliveryGroup, a stream.AsyncGroup) reads
//     ekyc.webhook.retry.v1: the trigger's records, its own retries and the admin replay's
//     attempt-0 records alike. The runtime's Runner does not fit: it handles a partition's
//     records in order and commits after each one, whereas a retry must wait (up to hours)
//     without holding back the records behind it. So each record is kept in an in-memory
//     timer heap until its not_before, attempts run concurrently (bounded globally and per
//     tenant), and the AsyncRunner keeps the committed offset of a partition at the lowest
//     record not finished yet. A record is finished once its attempt record and its
//     follow-up (the next WebhookDelivery, or the dead letter) are acknowledged by the
//     brokers; a restart or a rebalance therefore re-reads every record still pending, and
//     nothing is lost.
//
// Delivery is at least once: a crash between an attempt and its commit repeats the attempt,
// always with the same webhook-id (the receiver deduplicates on it, as the spec says). When
// a re-read record and its own follow-up are both pending, the follow-up supersedes it, so
// a restart does not fork a retry chain.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Defaults of Config.
const (
	DefaultTriggerGroup         = "webhook"
	DefaultDeliveryGroup        = "webhook-delivery"
	DefaultTimeout              = 10 * time.Second
	DefaultMaxResponseBytes     = 64 << 10
	DefaultConcurrency          = 64
	DefaultPerTenantConcurrency = 8
	DefaultCommitInterval       = time.Second
	DefaultUserAgent            = "idstream-webhooks/1"
)

// Config configures a Sink. Runtime, Tenants, Codec and Producer are required; zero values
// of the rest take the defaults above.
type Config struct {
	// Runtime are the runtime options of both groups: the brokers (stream.WithBrokers, which
	// Run requires), and the logger, metrics and client options that apply.
	Runtime  []stream.Option
	Tenants  *tenant.Registry // webhook_url, webhook_secrets, allow_private_webhooks
	Codec    *schemas.Codec   // encodes and decodes every record
	Producer *stream.Producer // produces retries, dead letters and attempt records
	Logger   *slog.Logger     // default: discard; never given bodies, URLs or secrets
	Now      func() time.Time // clock (default time.Now)
	Schedule Schedule         // retry schedule (default DefaultSchedule)

	TriggerGroup         string        // consumer group of the trigger (default "webhook")
	DeliveryGroup        string        // consumer group of the deliverer (default "webhook-delivery")
	Timeout              time.Duration // whole exchange of one attempt (default 10s)
	MaxResponseBytes     int64         // most of a response body read (default 64 KiB)
	Concurrency          int           // attempts in flight at once (default 64)
	PerTenantConcurrency int           // attempts in flight per tenant (default 8)
	CommitInterval       time.Duration // how often the deliverer commits (default 1s)
	UserAgent            string        // User-Agent of deliveries
	// Registerer receives idstream_webhook_attempts_total{outcome} and
	// idstream_webhook_attempt_seconds{outcome} (nil: not counted).
	Registerer prometheus.Registerer
}

// Sink is the webhook sink. Create it with NewSink and run it with Run.
type Sink struct {
	cfg      Config
	log      *slog.Logger
	sender   *sender
	attempts *prometheus.CounterVec   // by outcome
	duration *prometheus.HistogramVec // by outcome
}

// NewSink validates cfg and applies its defaults. It returns an error naming the first
// missing or invalid setting (runtime options without brokers are refused by Run); it does
// not contact the brokers.
func NewSink(cfg Config) (*Sink, error) {
	switch {
	case len(cfg.Runtime) == 0:
		return nil, errors.New("webhook sink: no runtime options (the brokers are required)")
	case cfg.Tenants == nil:
		return nil, errors.New("webhook sink: no tenant registry")
	case cfg.Codec == nil:
		return nil, errors.New("webhook sink: no codec")
	case cfg.Producer == nil:
		return nil, errors.New("webhook sink: no producer")
	case cfg.Timeout < 0, cfg.MaxResponseBytes < 0, cfg.Concurrency < 0, cfg.PerTenantConcurrency < 0, cfg.CommitInterval < 0:
		return nil, errors.New("webhook sink: negative timeout, size, concurrency or interval")
	}
	if cfg.Schedule == nil {
		cfg.Schedule = DefaultSchedule()
	}
	if err := cfg.Schedule.validate(); err != nil {
		return nil, fmt.Errorf("webhook sink: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	setDefault(&cfg.TriggerGroup, DefaultTriggerGroup)
	setDefault(&cfg.DeliveryGroup, DefaultDeliveryGroup)
	setDefault(&cfg.Timeout, DefaultTimeout)
	setDefault(&cfg.MaxResponseBytes, DefaultMaxResponseBytes)
	setDefault(&cfg.Concurrency, DefaultConcurrency)
	setDefault(&cfg.PerTenantConcurrency, DefaultPerTenantConcurrency)
	setDefault(&cfg.CommitInterval, DefaultCommitInterval)
	setDefault(&cfg.UserAgent, DefaultUserAgent)
	s := &Sink{
		cfg:    cfg,
		log:    cfg.Logger,
		sender: newSender(cfg.Timeout, cfg.MaxResponseBytes, cfg.UserAgent),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idstream_webhook_attempts_total", Help: "Webhook delivery attempts by outcome (delivered, retry, dead_lettered, refused).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "idstream_webhook_attempt_seconds", Help: "Duration of a webhook delivery attempt's HTTP exchange, by outcome.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"outcome"}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{s.attempts, s.duration} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("webhook sink: metrics: %w", err)
			}
		}
	}
	return s, nil
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// TriggerGroupSpec declares the trigger as a runtime group: ekyc.session-state.v1 in,
// ekyc.webhook.retry.v1 out, handler Trigger.
func (s *Sink) TriggerGroupSpec() stream.Group {
	return stream.Group{
		Name:    s.cfg.TriggerGroup,
		Inputs:  []string{schemas.TopicSessionState},
		Outputs: []string{schemas.TopicWebhookRetry},
		Handler: s.Trigger,
	}
}

// Topics lists every topic the sink reads or writes (for bootstrap checks).
func Topics() []string {
	return []string{schemas.TopicSessionState, schemas.TopicWebhookRetry, schemas.TopicWebhookDLQ, schemas.TopicWebhookAttempts}
}

// Run runs the trigger group and the delivery group until ctx ends (it then finishes the
// attempts in flight, commits and returns nil) or one of them fails (it stops the other and
// returns the error).
func (s *Sink) Run(ctx context.Context) error {
	runner, err := stream.NewRunner(s.TriggerGroupSpec(), s.cfg.Runtime...)
	if err != nil {
		return fmt.Errorf("webhook sink: %w", err)
	}
	d, err := newDeliverer(s, append(slices.Clone(s.cfg.Runtime), stream.WithClientID("idstream-"+s.cfg.DeliveryGroup))...)
	if err != nil {
		return fmt.Errorf("webhook sink: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	run := func(name string, fn func(context.Context) error) {
		defer wg.Done()
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("webhook sink %s: %w", name, err))
			mu.Unlock()
		}
		cancel()
	}
	wg.Add(2)
	go run("trigger", runner.Run)
	go run("delivery", d.run)
	wg.Wait()
	return errors.Join(errs...)
}

// Spec is the webhook sink: its trigger group turns each decided session's snapshot into the
// first delivery of its webhook, and its delivery group posts deliveries to the integrators'
// receivers, scheduling retries and recording every attempt.
func Spec() topology.Node {
	return topology.Node{
		Name:    DefaultTriggerGroup,
		Kind:    topology.Sink,
		Inputs:  []string{schemas.TopicSessionState, schemas.TopicWebhookRetry},
		Outputs: []string{schemas.TopicWebhookRetry, schemas.TopicWebhookDLQ, schemas.TopicWebhookAttempts},
		To:      []string{"webhook receivers"},
	}
}
