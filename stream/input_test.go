package stream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

// TestHandleDecodesByTopic: a group's handler made from its inputs hands each record, its
// value decoded into its topic's type, to the input of its topic; skips tombstones unless
// the input takes them; and fails, naming the group, on a topic no input declares and on a
// value that does not decode.
func TestHandleDecodesByTopic(t *testing.T) {
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	capture := &schemas.CaptureSubmitted{
		Envelope:  schemas.Envelope{EventID: "evt_1", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: time.UnixMilli(1_790_000_000_000).UTC(), Producer: "edge"},
		CaptureID: "cap_1", Step: "selfie", Blobs: []schemas.BlobRef{},
	}
	out, err := Emit(codec, schemas.Captures, []byte("ses_1"), capture)
	if err != nil {
		t.Fatal(err)
	}
	if out.Topic != schemas.TopicCaptures || string(out.Key) != "ses_1" || len(out.Value) == 0 {
		t.Fatalf("emitted %+v, want the capture on its topic, keyed by session", out)
	}
	var got *schemas.CaptureSubmitted
	tombstones := 0
	inputs := []Input{
		On(schemas.Captures, func(_ context.Context, rec *Record, v *schemas.CaptureSubmitted) ([]Output, error) {
			got = v
			return []Output{{Topic: "out", Key: rec.Key}}, nil
		}),
		On(schemas.Quality, func(context.Context, *Record, *schemas.QualityAssessed) ([]Output, error) {
			t.Error("a quality record was handed over")
			return nil, nil
		}).WithTombstones(func(_ context.Context, _ *Record, table Table) ([]Output, error) {
			if table != nil {
				t.Error("a stateless group's tombstone came with a table")
			}
			tombstones++
			return nil, nil
		}),
	}
	if got := Topics(inputs...); len(got) != 2 || got[0] != schemas.TopicCaptures || got[1] != schemas.TopicQuality {
		t.Errorf("Topics = %q, want the inputs' topics in order", got)
	}
	h := Handle("test", codec, inputs...)
	ctx := context.Background()

	outs, err := h(ctx, &Record{Topic: out.Topic, Key: out.Key, Value: out.Value})
	if err != nil || len(outs) != 1 || got == nil || got.CaptureID != "cap_1" || !got.Envelope.OccurredAt.Equal(capture.Envelope.OccurredAt) {
		t.Fatalf("capture handled as %+v, %v (handler got %+v), want it decoded and handed over", outs, err, got)
	}
	got = nil
	if outs, err := h(ctx, &Record{Topic: schemas.TopicCaptures, Key: out.Key}); err != nil || outs != nil || got != nil {
		t.Errorf("a capture tombstone gave %v, %v, want it skipped", outs, err)
	}
	if _, err := h(ctx, &Record{Topic: schemas.TopicQuality, Key: out.Key}); err != nil || tombstones != 1 {
		t.Errorf("a quality tombstone gave %v and %d calls, want it handed to the input's tombstone function", err, tombstones)
	}
	if _, err := h(ctx, &Record{Topic: schemas.TopicDocuments, Value: out.Value}); err == nil || !strings.HasPrefix(err.Error(), "test: record from unexpected topic") {
		t.Errorf("a record of an undeclared topic gave %v, want the group's error", err)
	}
	_, err = h(ctx, &Record{Topic: schemas.TopicCaptures, Offset: 42, Value: []byte{0xC3, 0x01, 1, 2}})
	if err == nil || !strings.Contains(err.Error(), "offset 42") || !errors.Is(err, schemas.ErrMalformed) && !errors.Is(err, schemas.ErrUnknownFingerprint) {
		t.Errorf("an undecodable value gave %v, want a decode error naming its offset", err)
	}
}

// TestHandleTakesTheTurn: in a background call, a handler made by Handle takes the call's
// turn before an input's function, waiting for one while every turn is held; a Lazy input's
// function runs without one and a record it only glances at is done without waiting.
func TestHandleTakesTheTurn(t *testing.T) {
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	rec := func(step string) *Record {
		out, err := Emit(codec, schemas.Captures, []byte("ses_1"), &schemas.CaptureSubmitted{
			Envelope:  schemas.Envelope{EventID: "evt_" + step, SessionID: "ses_1", TenantID: "ten_1", OccurredAt: time.UnixMilli(1_790_000_000_000).UTC(), Producer: "edge"},
			CaptureID: "cap_" + step, Step: step, Blobs: []schemas.BlobRef{},
		})
		if err != nil {
			t.Fatal(err)
		}
		return &Record{Topic: out.Topic, Key: out.Key, Value: out.Value}
	}
	glance := func(ctx context.Context, _ *Record, v *schemas.CaptureSubmitted) ([]Output, error) {
		if v.Step != "nfc" {
			return nil, nil // not this group's: no turn
		}
		return nil, Compute(ctx)
	}
	eager := Handle("eager", codec, On(schemas.Captures, glance))
	lazy := Handle("lazy", codec, On(schemas.Captures, glance).Lazy())

	bg := NewBackground(1, 0)
	defer bg.Close()
	holding, release := make(chan struct{}), make(chan struct{})
	go bg.run(context.Background(), "elsewhere", func(ctx context.Context) {
		_ = Compute(ctx)
		close(holding)
		<-release
	})
	<-holding
	call := func(h Handler, r *Record) <-chan error {
		done := make(chan error, 1)
		go bg.run(context.Background(), "test", func(ctx context.Context) {
			_, err := h(ctx, r)
			done <- err
		})
		return done
	}
	select {
	case err := <-call(lazy, rec("selfie")):
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a Lazy input's glance at a record waited for a turn")
	}
	eagerDone, lazyWork := call(eager, rec("selfie")), call(lazy, rec("nfc"))
	select {
	case <-eagerDone:
		t.Fatal("an input's function ran without a turn while every turn was held")
	case <-lazyWork:
		t.Fatal("a Lazy input's work ran without a turn while every turn was held")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	for _, done := range []<-chan error{eagerDone, lazyWork} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
