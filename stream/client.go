package stream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
)

// ErrKilled is returned by Run after Kill simulated a crash.
var ErrKilled = errors.New("processors: member killed")

// Default retry policy for handler errors.
const (
	defaultAttempts   = 5
	defaultBackoff    = 100 * time.Millisecond
	maxBackoffFactor  = 32
	absoluteMaxBackof = 10 * time.Second
)

// Option configures a Producer, Runner, StatefulRunner, View or Tail.
type Option func(*config)

type config struct {
	brokers    []string
	logger     *slog.Logger
	metrics    *Metrics
	attempts   int
	backoff    time.Duration
	kgoOpts    []kgo.Opt
	clientID   string
	onUpdate   func(key string, value []byte)
	txnID      string
	unordered  int            // records a Runner handles at once in any order (WithUnordered); 0: in order
	background *Background    // the threads of a runner's handler calls (WithBackground); nil: its own
	tls        *tls.Config    // WithTLS; nil: plaintext
	sasl       sasl.Mechanism // WithSASL; nil: none
	health     *Health        // WithHealth; nil: none
}

func newConfig(opts []Option) (config, error) {
	c := config{
		logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		attempts: defaultAttempts,
		backoff:  defaultBackoff,
		clientID: "idstream",
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if len(c.brokers) == 0 {
		return c, errors.New("processors: no brokers configured (use WithBrokers)")
	}
	if c.attempts < 1 {
		return c, fmt.Errorf("processors: retry attempts must be >= 1, got %d", c.attempts)
	}
	if c.backoff < 0 {
		return c, fmt.Errorf("processors: retry backoff must be >= 0, got %v", c.backoff)
	}
	return c, nil
}

// WithBrokers sets the seed brokers ("host:port"). Required.
func WithBrokers(brokers []string) Option {
	return func(c *config) { c.brokers = append([]string(nil), brokers...) }
}

// WithLogger sets the logger (default: discard). The runtime never logs record keys or values.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithMetrics records metrics into m (default: none).
func WithMetrics(m *Metrics) Option { return func(c *config) { c.metrics = m } }

// WithRetry sets how often a failing handler is tried (attempts >= 1, default 5) and the
// first backoff between tries (default 100ms), doubling each time and capped at 32× the
// initial backoff (at most 10s).
func WithRetry(attempts int, initialBackoff time.Duration) Option {
	return func(c *config) { c.attempts, c.backoff = attempts, initialBackoff }
}

// WithKgoOpts appends raw franz-go options (tests pass kgo.FetchMaxWait(250ms)). They are
// applied after the runtime's own options and may override them; do not override the
// partitioner.
func WithKgoOpts(opts ...kgo.Opt) Option {
	return func(c *config) { c.kgoOpts = append(c.kgoOpts, opts...) }
}

// WithClientID sets the Kafka client id (default "idstream").
func WithClientID(id string) Option { return func(c *config) { c.clientID = id } }

// KeyPartitioner is the partitioner every client of the project uses: murmur2 of the key,
// modulo the partition count (Kafka's default), so that records with the same key land on
// the same partition number in every topic with the same partition count.
func KeyPartitioner() kgo.Partitioner { return kgo.StickyKeyPartitioner(nil) }

// groupSessionTimeout is how long the group coordinator waits for a member's heartbeat
// before it hands the member's partitions to the others: a replica that dies without
// leaving (SIGKILL, OOM, a lost node) holds its partitions this long, and a rebalance meanwhile
// waits for it. kgo's default, 45 s, stalled a group that long after every kill in
// `idstream chaos` (and a survivor's commit behind the rebalance); with 10 s a restarted
// session or decision replica's group still waited up to 10 s for its dead predecessor
// (the next decision 7.6–13.7 s after such a restart). 6 s is the least a stock Kafka broker
// accepts (group.min.session.timeout.ms). Heartbeats go every second, from a goroutine of
// their own.
const groupSessionTimeout = 6 * time.Second

// groupLiveness returns the options of every consumer-group client: the session timeout and
// heartbeat interval above.
func groupLiveness() []kgo.Opt {
	return []kgo.Opt{kgo.SessionTimeout(groupSessionTimeout), kgo.HeartbeatInterval(time.Second)}
}

// baseOpts returns the kgo options shared by every client, followed by extra and the user's.
func (c *config) baseOpts(extra ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.brokers...),
		kgo.ClientID(c.clientID),
		kgo.RecordPartitioner(KeyPartitioner()),
	}
	opts = append(opts, c.securityOpts()...)
	if c.health != nil {
		opts = append(opts, kgo.WithHooks(c.health))
	}
	opts = append(opts, extra...)
	return append(opts, c.kgoOpts...)
}

// backoffFor returns the wait before try number attempt+1 (attempt counts from 1).
func (c *config) backoffFor(attempt int) time.Duration {
	d := c.backoff
	limit := c.backoff * maxBackoffFactor
	if limit > absoluteMaxBackof {
		limit = absoluteMaxBackof
	}
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	if d > limit {
		d = limit
	}
	return d
}

// sleepCtx waits d or until ctx ends, returning ctx's error in the latter case.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// killSwitch is a dialer that can sever every connection it made and refuse new ones; it
// lets Kill simulate a crashed process: nothing more reaches the brokers.
type killSwitch struct {
	mu     sync.Mutex
	killed bool
	conns  map[net.Conn]struct{}
	dialer func(ctx context.Context, network, host string) (net.Conn, error) // the config's
}

// newKillSwitch returns a killSwitch over dial (config.dial: TCP, TLS when configured).
func newKillSwitch(dial func(ctx context.Context, network, host string) (net.Conn, error)) *killSwitch {
	return &killSwitch{conns: make(map[net.Conn]struct{}), dialer: dial}
}

func (k *killSwitch) dial(ctx context.Context, network, host string) (net.Conn, error) {
	k.mu.Lock()
	if k.killed {
		k.mu.Unlock()
		return nil, ErrKilled
	}
	k.mu.Unlock()
	conn, err := k.dialer(ctx, network, host)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.killed {
		conn.Close()
		return nil, ErrKilled
	}
	k.conns[conn] = struct{}{}
	return conn, nil
}

func (k *killSwitch) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.killed = true
	for c := range k.conns {
		c.Close()
	}
	k.conns = nil
}

func (k *killSwitch) isKilled() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.killed
}

func toKgoHeaders(hs []Header) []kgo.RecordHeader {
	if len(hs) == 0 {
		return nil
	}
	out := make([]kgo.RecordHeader, len(hs))
	for i, h := range hs {
		out[i] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
	}
	return out
}

func fromKgoRecord(r *kgo.Record) *Record {
	rec := &Record{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Key:       r.Key,
		Value:     r.Value,
		Timestamp: r.Timestamp,
	}
	if len(r.Headers) > 0 {
		rec.Headers = make([]Header, len(r.Headers))
		for i, h := range r.Headers {
			rec.Headers[i] = Header{Key: h.Key, Value: h.Value}
		}
	}
	return rec
}

func toKgoRecord(o Output) (*kgo.Record, error) {
	if o.Topic == "" {
		return nil, errors.New("processors: output without a topic")
	}
	return &kgo.Record{Topic: o.Topic, Key: o.Key, Value: o.Value, Headers: toKgoHeaders(o.Headers)}, nil
}

// WithBackground runs a group's handler calls on bg's threads (see Background): at a
// lowered priority, and no more of them computing at once than bg has turns, whatever the
// groups sharing bg. A call takes its turn with Compute, which a handler made by Handle or
// HandleTable does before each input's function (a Lazy input's function calls it itself);
// a handler made otherwise must call Compute before its work. Threads a C library starts from
// such a call inherit its priority (OpenCV's thread pool would; its models here run on the
// calling thread: a detection, an embedding and a liveness score cost the calling thread 2.08
// of the process's 2.38 CPU-s, the rest the Go runtime's). Without it a runner's calls run on
// its own goroutines, as many at once as it takes records.
func WithBackground(bg *Background) Option { return func(c *config) { c.background = bg } }

// WithTransactionalID sets the transactional id of a StatefulRunner (default: the group
// name and a random suffix). Give each member of a deployment a stable id of its own (e.g.
// "session-" + pod name): a member restarted with the id of a crashed one fences the crashed
// one's open transaction as soon as it starts, instead of waiting for the broker to abort it
// when the transaction timeout passes. Two live members must never share an id: the newer
// one fences the older.
func WithTransactionalID(id string) Option { return func(c *config) { c.txnID = id } }

// fetched logs a poll's fetch errors (not those of its context ending) and records the
// group's lag: what every group runner does with what it polled.
func (c *config) fetched(group string, fetches kgo.Fetches) {
	fetches.EachError(func(t string, p int32, err error) {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			c.logger.Warn("fetch error", "group", group, "topic", t, "partition", p, "err", err)
		}
	})
	c.metrics.observeLag(group, fetches)
}

// commitSync commits offsets and returns the request's error or the first partition error.
func commitSync(ctx context.Context, cl *kgo.Client, offsets map[string]map[int32]kgo.EpochOffset) error {
	var cerr error
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, e error) {
		cerr = e
		if e != nil || resp == nil {
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if perr := kerr.ErrorForCode(p.ErrorCode); perr != nil && cerr == nil {
					cerr = fmt.Errorf("%s/%d: %w", t.Topic, p.Partition, perr)
				}
			}
		}
	})
	return cerr
}
