package consent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Decoder decodes a record value of a topic (schemas.Codec satisfies it).
type Decoder interface {
	Decode(topic string, data []byte, v any) error
}

// Follower fills an Index with every record of cmp.consents.v1: it applies the topic's whole
// history (a stream.History: from its start, on every partition, no consumer group, only
// committed records), so every replica holds every record, and marks the index ready once
// it has caught up with the topic as it was when Run started. (A stream.View keeps only the
// latest value per key, which does not fit an append-only history.)
type Follower struct {
	history *stream.History
	index   *Index
	dec     Decoder
	log     *slog.Logger
}

// FollowerOption configures a Follower.
type FollowerOption func(*Follower)

// WithFollowerLogger logs records that cannot be decoded (by topic, partition and offset
// only; default: discard).
func WithFollowerLogger(l *slog.Logger) FollowerOption {
	return func(f *Follower) {
		if l != nil {
			f.log = l
		}
	}
}

// NewFollower returns a Follower filling index from history (of schemas.TopicConsents),
// decoding with dec. It returns an error when history, index or dec is missing.
func NewFollower(history *stream.History, index *Index, dec Decoder, opts ...FollowerOption) (*Follower, error) {
	if history == nil || index == nil || dec == nil {
		return nil, errors.New("consent follower: history, index and decoder are required")
	}
	if history.Topic() != schemas.TopicConsents {
		return nil, fmt.Errorf("consent follower: a history of %s, not of %s", history.Topic(), schemas.TopicConsents)
	}
	f := &Follower{history: history, index: index, dec: dec, log: slog.New(slog.DiscardHandler)}
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
	if err := f.history.Run(ctx, f.apply, f.index.MarkReady); err != nil {
		return fmt.Errorf("consent follower: %w", err)
	}
	return nil
}

func (f *Follower) apply(r *stream.Record) {
	var ev schemas.ConsentRecorded
	if err := f.dec.Decode(r.Topic, r.Value, &ev); err != nil {
		f.log.Warn("consent follower: skip undecodable record", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
		return
	}
	if ev.Envelope.TenantID == "" || ev.TrackingID == "" || ev.ConsentID == "" {
		f.log.Warn("consent follower: skip record without tenant, tracking or consent id", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset)
		return
	}
	f.index.Apply(ev.Envelope.TenantID, ev.TrackingID, fromEvent(&ev))
}
