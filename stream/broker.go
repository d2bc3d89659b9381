package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Embedded is an in-process, single-broker Kafka-protocol cluster (franz-go's kfake) for
// development and tests. It supports consumer groups, transactions and, with WithDataDir,
// persistence across restarts. Its methods are safe for concurrent use.
type Embedded struct {
	cluster *kfake.Cluster
	aborted int
}

// EmbeddedOption configures StartEmbedded.
type EmbeddedOption func(*embeddedConfig)

type embeddedConfig struct {
	dataDir    string
	listenAddr string
	partitions int
}

// WithDataDir persists every topic, committed offset and transaction state under dir; a
// broker started again on the same dir resumes where the previous one stopped. A broker
// that was killed with transactions open writes their ABORT markers before it lets any
// client in (see abortCrashedTransactions).
func WithDataDir(dir string) EmbeddedOption { return func(c *embeddedConfig) { c.dataDir = dir } }

// WithListenAddr sets the listen address (default "127.0.0.1:0": a free port).
func WithListenAddr(addr string) EmbeddedOption {
	return func(c *embeddedConfig) { c.listenAddr = addr }
}

// WithPartitionsDefault sets the partition count of auto-created topics and of topics
// created with -1 partitions (default 10).
func WithPartitionsDefault(n int) EmbeddedOption {
	return func(c *embeddedConfig) { c.partitions = n }
}

// StartEmbedded starts the broker. It allows automatic topic creation and accepts group
// session timeouts down to 100ms (so tests can detect dead members quickly). Returns an
// error when the address cannot be bound or the data dir cannot be loaded.
func StartEmbedded(opts ...EmbeddedOption) (*Embedded, error) {
	cfg := embeddedConfig{listenAddr: "127.0.0.1:0", partitions: 10}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.partitions < 1 {
		return nil, fmt.Errorf("embedded broker: default partitions must be >= 1, got %d", cfg.partitions)
	}
	if _, _, err := net.SplitHostPort(cfg.listenAddr); err != nil {
		return nil, fmt.Errorf("embedded broker: listen address %q: %w", cfg.listenAddr, err)
	}
	addr := cfg.listenAddr
	var gate *gatedListener // with a data dir: other clients wait until crashed transactions are marked
	kopts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(cfg.partitions),
		kfake.GroupMinSessionTimeout(100 * time.Millisecond),
		// kfake picks "127.0.0.1:<port>"; we listen where we were told to instead.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			ln, err := net.Listen(network, addr)
			if err != nil || cfg.dataDir == "" {
				return ln, err
			}
			gate = newGatedListener(ln)
			return gate, nil
		}),
	}
	if cfg.dataDir != "" {
		if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
			return nil, fmt.Errorf("embedded broker: data dir: %w", err)
		}
		kopts = append(kopts, kfake.DataDir(cfg.dataDir))
	}
	c, err := kfake.NewCluster(kopts...)
	if err != nil {
		return nil, fmt.Errorf("embedded broker: start on %s: %w", addr, err)
	}
	aborted := 0
	if gate != nil {
		ctx, cancel := context.WithTimeout(context.Background(), repairTimeout)
		aborted, err = abortCrashedTransactions(ctx, c.ListenAddrs()[0], gate)
		cancel()
		gate.Open()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("embedded broker: marking the transactions a crash left open: %w", err)
		}
	}
	return &Embedded{cluster: c, aborted: aborted}, nil
}

// CrashAborted returns how many ABORT markers the broker wrote at start, one per partition
// of each transaction a crash had left open on its data dir.
func (e *Embedded) CrashAborted() int { return e.aborted }

// Addrs returns the broker addresses to give clients (WithBrokers).
func (e *Embedded) Addrs() []string { return e.cluster.ListenAddrs() }

// Close stops the broker, flushing persisted state. Safe to call more than once.
func (e *Embedded) Close() { e.cluster.Close() }

// Compact runs log compaction on every compacted topic at once (tests).
func (e *Embedded) Compact() { e.cluster.Compact() }

// BrokersFromEnv returns the brokers listed, comma-separated, in KAFKA_BROKERS, or nil when
// it is unset or empty.
func BrokersFromEnv() []string {
	v := strings.TrimSpace(os.Getenv("KAFKA_BROKERS"))
	if v == "" {
		return nil
	}
	var out []string
	for _, b := range strings.Split(v, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

var errNoBrokers = errors.New("no brokers given")
