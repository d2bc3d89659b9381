package fraud

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/internal/idnumber"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// broker is a running embedded broker with the fraud group, its two views and a tail of
// the fraud topic.
type broker struct {
	t         *testing.T
	codec     *schemas.Codec
	producer  *stream.Producer
	blocklist *Blocklist
	index     *CaptureIndex
	results   chan *schemas.FraudAssessed
}

func startPipeline(t *testing.T) *broker {
	t.Helper()
	emb, err := stream.StartEmbedded(stream.WithPartitionsDefault(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	brokers := emb.Addrs()
	opts := []stream.Option{
		stream.WithBrokers(brokers), stream.WithRetry(3, time.Millisecond),
		stream.WithKgoOpts(kgo.FetchMaxWait(250 * time.Millisecond)),
	}
	ctx, cancel := context.WithCancel(context.Background())
	var specs []stream.TopicSpec
	for _, ti := range schemas.Topics() {
		specs = append(specs, stream.TopicSpec{Name: ti.Name, Partitions: 3, Compacted: ti.Compacted})
	}
	if err := stream.EnsureTopics(ctx, brokers, specs); err != nil {
		t.Fatal(err)
	}
	b := &broker{t: t, codec: newCodec(t), results: make(chan *schemas.FraudAssessed, 100)}
	if b.producer, err = stream.NewProducer(opts...); err != nil {
		t.Fatal(err)
	}
	if b.blocklist, err = NewBlocklist(b.codec, opts...); err != nil {
		t.Fatal(err)
	}
	if b.index, err = NewCaptureIndex(b.codec, opts...); err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(b.codec, hashKey, b.blocklist, b.index, WithRegistry(registry.NewSandbox().Registry()))
	if err != nil {
		t.Fatal(err)
	}
	runner, err := stream.NewRunner(g, opts...)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := stream.NewTail(schemas.TopicFraud, func(r *stream.Record) {
		fa := new(schemas.FraudAssessed)
		if err := b.codec.Decode(schemas.TopicFraud, r.Value, fa); err == nil {
			b.results <- fa
		}
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 4)
	for _, run := range []func(context.Context) error{b.blocklist.Run, b.index.Run, runner.Run, tail.Run} {
		go func() {
			if err := run(ctx); err != nil {
				t.Errorf("run: %v", err)
			}
			done <- struct{}{}
		}()
	}
	t.Cleanup(func() {
		cancel()
		for range 4 {
			<-done
		}
		b.producer.Close()
	})
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	if err := tail.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *broker) produce(topic, key string, v any) {
	b.t.Helper()
	value, err := b.codec.Encode(topic, v)
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.producer.Produce(ctx, stream.Output{Topic: topic, Key: []byte(key), Value: value}); err != nil {
		b.t.Fatal(err)
	}
}

// sessionResult waits for the session checks of sessionID.
func (b *broker) sessionResult(sessionID string) *schemas.FraudAssessed {
	b.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case fa := <-b.results:
			if fa.Envelope.SessionID == sessionID && len(fa.Checks) > 1 {
				return fa
			}
		case <-deadline:
			b.t.Fatalf("no fraud result for %s", sessionID)
		}
	}
}

// until waits for cond, checked after every short pause (not a timed assertion: the
// deadline only bounds a broken test).
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEmbeddedBlocklist(t *testing.T) {
	b := startPipeline(t)
	p := persona("match")
	entry := schemas.BlocklistEntry{
		Envelope: schemas.Envelope{EventID: "evt_blk", TenantID: tenant, OccurredAt: time.Now().UTC().Truncate(time.Millisecond), Producer: "edge"},
		EntryID:  "blk_1", Kind: "id_number", ValueHash: ptr(idnumber.Hash(hashKey, p.IDNumber)),
		Embedding: []float32{}, CreatedAt: time.Now().UTC().Truncate(time.Millisecond),
	}
	b.produce(schemas.TopicBlocklist, entry.EntryID, &entry)
	until(t, "the entry", func() bool { return b.blocklist.Len() == 1 })

	s1 := "ses_" + strings.Repeat("1", 26)
	b.produce(schemas.TopicSessionState, s1, matchSnapshot(s1))
	expect(t, checkOf(t, b.sessionResult(s1), CheckBlocklistID), schemas.CheckFail, ReasonBlocklisted)

	del := entry
	del.Deleted, del.ValueHash = true, nil
	b.produce(schemas.TopicBlocklist, entry.EntryID, &del)
	until(t, "the deletion", func() bool { _, blocked := b.blocklist.Lookup(tenant, *entry.ValueHash); return !blocked })

	s2 := "ses_" + strings.Repeat("2", 26)
	b.produce(schemas.TopicSessionState, s2, matchSnapshot(s2))
	fa := b.sessionResult(s2)
	expect(t, checkOf(t, fa, CheckBlocklistID), schemas.CheckPass, "")
	expect(t, checkOf(t, fa, CheckRegistryTax), schemas.CheckPass, "")
}

func TestEmbeddedReplayedCapture(t *testing.T) {
	b := startPipeline(t)
	first := "ses_" + strings.Repeat("3", 26)
	second := "ses_" + strings.Repeat("4", 26)
	st1 := matchSnapshot(first)
	selfie := st1.Captures[3].Blobs[0].SHA256

	// The first session's selfie capture is indexed by the group.
	fx := &fixture{t: t}
	c1 := fx.capture(first, "selfie", selfie, nil)
	b.produce(schemas.TopicCaptures, first, c1)
	until(t, "the first sighting", func() bool { s, ok := b.index.First(tenant, selfie); return ok && s.SessionID == first })

	// A second session whose selfie has the same bytes.
	st2 := matchSnapshot(second)
	st2.Captures[3].Blobs[0].SHA256 = selfie
	b.produce(schemas.TopicCaptures, second, fx.capture(second, "selfie", selfie, nil))
	b.produce(schemas.TopicSessionState, second, st2)
	c := checkOf(t, b.sessionResult(second), CheckReplayedCapture)
	expect(t, c, schemas.CheckFail, ReasonReplayedCapture)
	if !strings.Contains(*c.Detail, first) {
		t.Fatalf("detail %q does not name the first session", *c.Detail)
	}
	if s, _ := b.index.First(tenant, selfie); s.SessionID != first {
		t.Fatalf("the second session took over the sighting: %+v", s)
	}

	// The first session itself is not a replay.
	b.produce(schemas.TopicSessionState, first, st1)
	expect(t, checkOf(t, b.sessionResult(first), CheckReplayedCapture), schemas.CheckPass, "")

	// A sighting of the first session written as JSON, before the index had a schema, is
	// read like the others.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	old := strings.Repeat("e", 64)
	legacy := []byte(`{"session_id":"` + first + `","capture_id":"cap_old","step":"document_front","seen_at":"2026-01-02T03:04:05Z"}`)
	if err := b.producer.Produce(ctx, stream.Output{Topic: schemas.TopicCaptureIndex, Key: []byte(IndexKey(tenant, old)), Value: legacy}); err != nil {
		t.Fatal(err)
	}
	until(t, "the JSON sighting", func() bool {
		s, ok := b.index.First(tenant, old)
		return ok && s.SessionID == first && s.Step == "document_front"
	})

	// Erasing the first session removes its sightings, of both formats.
	if err := b.producer.Produce(ctx, stream.Output{Topic: schemas.TopicSessionState, Key: []byte(first)}); err != nil {
		t.Fatal(err)
	}
	until(t, "the erasure", func() bool {
		_, ok := b.index.First(tenant, selfie)
		_, okOld := b.index.First(tenant, old)
		return !ok && !okOld
	})
}
