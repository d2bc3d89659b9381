package consent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Decoder decodes a record value of a topic (schemas.Codec satisfies it).
type Decoder interface {
	Decode(topic string, data []byte, v any) error
}

// Follower reads cmp.consents.v1 from its start, on every partition, without a consumer
// group, and applies every committed record to an Index: every replica holds every record.
// It marks the index ready once it has read, on every partition, up to the end offset
// listed when Run started. (stream.View keeps only the latest value per key and
// stream.Tail starts at the end, so neither fits an append-only history; the Follower
// is a plain franz-go reader that keeps transaction markers to track its position exactly.)
type Follower struct {
	topic   string
	brokers []string
	kgoOpts []kgo.Opt
	index   *Index
	dec     Decoder
	log     *slog.Logger
}

// FollowerOption configures a Follower.
type FollowerOption func(*Follower)

// WithFollowerKgoOpts appends franz-go options to the reader's client (tests pass
// kgo.FetchMaxWait).
func WithFollowerKgoOpts(opts ...kgo.Opt) FollowerOption {
	return func(f *Follower) { f.kgoOpts = append(f.kgoOpts, opts...) }
}

// WithFollowerLogger logs records that cannot be decoded (by topic, partition and offset
// only; default: discard).
func WithFollowerLogger(l *slog.Logger) FollowerOption {
	return func(f *Follower) {
		if l != nil {
			f.log = l
		}
	}
}

// WithFollowerTopic reads another topic than schemas.TopicConsents (tests).
func WithFollowerTopic(topic string) FollowerOption {
	return func(f *Follower) { f.topic = topic }
}

// NewFollower returns a Follower filling index from brokers, decoding with dec. It returns
// an error when brokers, index or dec is missing.
func NewFollower(brokers []string, index *Index, dec Decoder, opts ...FollowerOption) (*Follower, error) {
	if len(brokers) == 0 || index == nil || dec == nil {
		return nil, errors.New("consent follower: brokers, index and decoder are required")
	}
	f := &Follower{
		topic: schemas.TopicConsents, brokers: append([]string(nil), brokers...),
		index: index, dec: dec, log: slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		if o != nil {
			o(f)
		}
	}
	return f, nil
}

// Run follows the topic until ctx ends (returning nil) or the topic cannot be read
// (returning the error; the topic must exist: stream.EnsureTopics). A record that
// cannot be decoded is logged and skipped. Run once per Follower.
func (f *Follower) Run(ctx context.Context) error {
	stop := func(err error) error {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("consent follower %s: %w", f.topic, err)
	}
	base := append([]kgo.Opt{kgo.SeedBrokers(f.brokers...), kgo.ClientID("idstream-consent"),
		kgo.RecordPartitioner(stream.KeyPartitioner())}, f.kgoOpts...)
	adm, err := kgo.NewClient(base...)
	if err != nil {
		return stop(err)
	}
	starts, err := kadm.NewClient(adm).ListStartOffsets(ctx, f.topic)
	if err == nil {
		err = starts.Error()
	}
	var ends kadm.ListedOffsets
	if err == nil {
		ends, err = kadm.NewClient(adm).ListEndOffsets(ctx, f.topic)
		if err == nil {
			err = ends.Error()
		}
	}
	adm.Close()
	if err != nil {
		return stop(fmt.Errorf("list offsets: %w", err))
	}
	// pending: partitions not yet read up to their end offset at start → that offset.
	pending := make(map[int32]int64)
	ends.Each(func(o kadm.ListedOffset) {
		start := int64(0)
		if s, ok := starts.Lookup(f.topic, o.Partition); ok {
			start = s.Offset
		}
		if o.Offset > start {
			pending[o.Partition] = o.Offset
		}
	})
	if len(pending) == 0 {
		f.index.MarkReady()
	}
	cl, err := kgo.NewClient(append(base,
		kgo.ConsumeTopics(f.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Markers advance the position like records: keeping them lets "read up to the end
		// offset" be decided from the last offset seen, even when a partition ends in one.
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return stop(err)
	}
	defer cl.Close()
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if fetches.IsClientClosed() {
			return stop(errors.New("client closed"))
		}
		var fatal error
		fetches.EachError(func(topic string, p int32, err error) {
			if fatal == nil {
				fatal = fmt.Errorf("partition %d: %w", p, err)
			}
		})
		if fatal != nil {
			return stop(fatal)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if end, ok := pending[r.Partition]; ok && r.Offset+1 >= end {
				delete(pending, r.Partition)
				if len(pending) == 0 {
					defer f.index.MarkReady() // after this record is applied
				}
			}
			if r.Attrs.IsControl() {
				return
			}
			f.apply(r)
		})
	}
}

func (f *Follower) apply(r *kgo.Record) {
	var ev schemas.ConsentRecorded
	if err := f.dec.Decode(f.topic, r.Value, &ev); err != nil {
		f.log.Warn("consent follower: skip undecodable record", "topic", f.topic, "partition", r.Partition, "offset", r.Offset, "err", err)
		return
	}
	if ev.Envelope.TenantID == "" || ev.TrackingID == "" || ev.ConsentID == "" {
		f.log.Warn("consent follower: skip record without tenant, tracking or consent id", "topic", f.topic, "partition", r.Partition, "offset", r.Offset)
		return
	}
	f.index.Apply(ev.Envelope.TenantID, ev.TrackingID, fromEvent(&ev))
}
