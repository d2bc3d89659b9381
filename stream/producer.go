package stream

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Producer produces records with acks=all and idempotence, partitioning keys with murmur2
// (KeyPartitioner). Safe for concurrent use.
type Producer struct {
	cl      *kgo.Client
	metrics *Metrics
}

// NewProducer creates a producer. Returns an error when no brokers are configured or the
// client options are invalid; it does not wait for the brokers to be reachable.
func NewProducer(opts ...Option) (*Producer, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("new producer: %w", err)
	}
	cl, err := kgo.NewClient(cfg.baseOpts(kgo.RequiredAcks(kgo.AllISRAcks()))...)
	if err != nil {
		return nil, fmt.Errorf("new producer: %w", err)
	}
	return &Producer{cl: cl, metrics: cfg.metrics}, nil
}

// Produce sends outs and returns once every record is acknowledged by the brokers, or the
// first error (ctx ending included). Outputs with an empty Topic are refused before anything
// is sent.
func (p *Producer) Produce(ctx context.Context, outs ...Output) error {
	recs := make([]*kgo.Record, 0, len(outs))
	for _, o := range outs {
		r, err := toKgoRecord(o)
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		return nil
	}
	if err := p.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	p.metrics.countProduced(recs)
	return nil
}

// Client returns the underlying franz-go client (for benchmarks and admin calls). Do not
// change its partitioner.
func (p *Producer) Client() *kgo.Client { return p.cl }

// Close flushes nothing further and closes the client; Produce calls in flight fail.
func (p *Producer) Close() { p.cl.Close() }
