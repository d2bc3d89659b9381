package liveness

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

var assessedAt = time.Date(2026, 11, 22, 10, 0, 0, 123_000_000, time.UTC)

type fixture struct {
	codec *schemas.Codec
	blobs *blob.FS
	group stream.Group
}

func newFixture(t testing.TB, opts ...Option) *fixture {
	t.Helper()
	e := testEngine(t)
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatalf("NewCodec: %v", err)
	}
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatalf("NewFS: %v", err)
	}
	t.Cleanup(func() { _ = blobs.Close() })
	g, err := NewGroup(codec, blobs, e, opts...)
	if err != nil {
		t.Fatalf("NewGroup: %v", err)
	}
	return &fixture{codec: codec, blobs: blobs, group: g}
}

// selfie stores data as a capture's image and returns the gate's assessment record for it.
func (f *fixture) selfie(t testing.TB, captureID string, data []byte, mutate ...func(*schemas.QualityAssessed)) *stream.Record {
	t.Helper()
	obj, err := f.blobs.Put(context.Background(), "ten_1/ses_1/"+captureID+"/image", data, "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	qa := schemas.QualityAssessed{
		Envelope:    schemas.Envelope{EventID: "evt_q_" + captureID, SessionID: "ses_1", TenantID: "ten_1", OccurredAt: assessedAt, Producer: "quality"},
		CaptureID:   captureID,
		Step:        "selfie",
		Passed:      true,
		Framing:     "ok",
		Reasons:     []string{},
		Image:       schemas.BlobRef{Name: "image", URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType},
		GateVersion: "test",
		CapturedAt:  &assessedAt,
	}
	for _, m := range mutate {
		m(&qa)
	}
	v, err := f.codec.Encode(schemas.TopicQuality, qa)
	if err != nil {
		t.Fatalf("encode assessment: %v", err)
	}
	return &stream.Record{Topic: schemas.TopicQuality, Key: []byte("ses_1"), Value: v}
}

func (f *fixture) outputs(t testing.TB, rec *stream.Record) []stream.Output {
	t.Helper()
	outs, err := f.group.Handler(context.Background(), rec)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	return outs
}

// assessed runs the handler and decodes its single output.
func (f *fixture) assessed(t *testing.T, rec *stream.Record) schemas.LivenessAssessed {
	t.Helper()
	outs := f.outputs(t, rec)
	if len(outs) != 1 {
		t.Fatalf("handler returned %d outputs, want 1", len(outs))
	}
	if outs[0].Topic != schemas.TopicLiveness || string(outs[0].Key) != "ses_1" {
		t.Fatalf("output to %s keyed %q, want %s keyed ses_1", outs[0].Topic, outs[0].Key, schemas.TopicLiveness)
	}
	var ev schemas.LivenessAssessed
	if err := f.codec.Decode(schemas.TopicLiveness, outs[0].Value, &ev); err != nil {
		t.Fatalf("decode output: %v", err)
	}
	if len(ev.Checks) != 1 || ev.Checks[0].Name != CheckName {
		t.Fatalf("checks = %+v, want one %s", ev.Checks, CheckName)
	}
	c := ev.Checks[0]
	if c.Source != Producer || c.CaptureID == nil || *c.CaptureID != ev.CaptureID ||
		c.ModelVersion == nil || *c.ModelVersion != ev.ModelVersion || c.Threshold == nil || *c.Threshold != ev.Threshold {
		t.Fatalf("check = %+v does not describe event %+v", c, ev)
	}
	t.Logf("%s: live %v score %.3f signals %v attack %v reason %v", ev.CaptureID, ev.Live, ev.Score, ev.Signals, deref(ev.AttackType), deref(c.ReasonCode))
	return ev
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestGroupDeclaration(t *testing.T) {
	g := newFixture(t).group
	if g.Name != "liveness" || !slices.Equal(g.Inputs, []string{schemas.TopicQuality}) ||
		!slices.Equal(g.Outputs, []string{schemas.TopicLiveness}) || g.Handler == nil {
		t.Fatalf("group = %+v", g)
	}
}

func TestLiveSelfiePasses(t *testing.T) {
	f := newFixture(t)
	ev := f.assessed(t, f.selfie(t, "cap_1", encodeJPEG(t, portrait(t), 92)))
	want := schemas.Envelope{EventID: "evt_live_cap_1", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: assessedAt, Producer: "liveness"}
	if ev.Envelope.EventID != want.EventID || ev.Envelope.SessionID != want.SessionID || ev.Envelope.TenantID != want.TenantID ||
		!ev.Envelope.OccurredAt.Equal(want.OccurredAt) || ev.Envelope.Producer != want.Producer {
		t.Errorf("envelope = %+v, want %+v", ev.Envelope, want)
	}
	if !ev.Live || ev.AttackType != nil || ev.Score < ev.Threshold || ev.Threshold != face.DefaultLivenessThreshold {
		t.Errorf("live selfie assessed %+v", ev)
	}
	c := ev.Checks[0]
	if c.Status != schemas.CheckPass || c.ReasonCode != nil || c.Score == nil || *c.Score != ev.Score {
		t.Errorf("check = %+v, want pass with the score", c)
	}
	for _, k := range []string{SignalModel, SignalReplay, SignalPrint} {
		if v, ok := ev.Signals[k]; !ok || v < 0 || v > 1 {
			t.Errorf("signal %q = %v, %v", k, v, ok)
		}
	}
	if ev.Signals[SignalReplay] >= 0.5 || ev.Signals[SignalPrint] >= 0.5 {
		t.Errorf("camera photo has attack signals %v", ev.Signals)
	}
	if !regexp.MustCompile(`^fr_detect\.onnx@[0-9a-f]{8}\+fr_liveness\.onnx@[0-9a-f]{8}$`).MatchString(ev.ModelVersion) {
		t.Errorf("model version %q does not name the model files", ev.ModelVersion)
	}
}

func TestScreenReplayFails(t *testing.T) {
	f := newFixture(t)
	ev := f.assessed(t, f.selfie(t, "cap_2", encodeJPEG(t, screen(portrait(t)), 90)))
	c := ev.Checks[0]
	if ev.Live || deref(ev.AttackType) != "replay" || c.Status != schemas.CheckFail || deref(c.ReasonCode) != "presentation_replay" {
		t.Fatalf("screen re-render: live %v attack %s check %s/%s", ev.Live, deref(ev.AttackType), c.Status, deref(c.ReasonCode))
	}
	if ev.Signals[SignalReplay] < 0.5 || c.Score == nil {
		t.Errorf("replay signal %.2f, score %v", ev.Signals[SignalReplay], c.Score)
	}
}

func TestPrintFails(t *testing.T) {
	f := newFixture(t)
	ev := f.assessed(t, f.selfie(t, "cap_3", encodeJPEG(t, printed(portrait(t)), 85)))
	c := ev.Checks[0]
	if ev.Live || deref(ev.AttackType) != "print" || c.Status != schemas.CheckFail || deref(c.ReasonCode) != "presentation_print" {
		t.Fatalf("print re-render: live %v attack %s check %s/%s", ev.Live, deref(ev.AttackType), c.Status, deref(c.ReasonCode))
	}
}

func TestFaceCount(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, captureID, reason string
		data                    []byte
	}{
		{"no face", "cap_4", ReasonNoFace, encodeJPEG(t, texture(), 90)},
		{"three people", "cap_5", ReasonMultipleFaces, encodeJPEG(t, photo(t, "sample3.jpg"), 85)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := f.assessed(t, f.selfie(t, tc.captureID, tc.data))
			c := ev.Checks[0]
			if ev.Live || ev.AttackType != nil || ev.Score != 0 || c.Status != schemas.CheckFail || deref(c.ReasonCode) != tc.reason || c.Score != nil {
				t.Fatalf("event %+v check %+v, want fail %s without score", ev, c, tc.reason)
			}
		})
	}
}

func TestUnreadableImageFailsWithoutError(t *testing.T) {
	f := newFixture(t)
	good := encodeJPEG(t, portrait(t), 92)
	t.Run("digest mismatch", func(t *testing.T) {
		rec := f.selfie(t, "cap_6", good, func(qa *schemas.QualityAssessed) { qa.Image.SHA256 = strings.Repeat("ab", 32) })
		if c := f.assessed(t, rec).Checks[0]; c.Status != schemas.CheckFail || deref(c.ReasonCode) != ReasonImageUnreadable {
			t.Fatalf("check %+v", c)
		}
	})
	t.Run("truncated bytes", func(t *testing.T) {
		rec := f.selfie(t, "cap_7", good[:len(good)/3])
		if c := f.assessed(t, rec).Checks[0]; c.Status != schemas.CheckFail || deref(c.ReasonCode) != ReasonImageUnreadable {
			t.Fatalf("check %+v", c)
		}
	})
}

func TestNothingToAssess(t *testing.T) {
	f := newFixture(t)
	data := encodeJPEG(t, portrait(t), 92)
	cases := map[string]*stream.Record{
		"failed gate":    f.selfie(t, "cap_8", data, func(qa *schemas.QualityAssessed) { qa.Passed = false; qa.Reasons = []string{"blurry"} }),
		"document step":  f.selfie(t, "cap_9", data, func(qa *schemas.QualityAssessed) { qa.Step = "document_front" }),
		"tombstone":      {Topic: schemas.TopicQuality, Key: []byte("ses_1")},
		"erased session": f.selfie(t, "cap_10", data),
	}
	if err := f.blobs.DeletePrefix(context.Background(), "ten_1/ses_1/cap_10"); err != nil {
		t.Fatal(err)
	}
	for name, rec := range cases {
		if outs := f.outputs(t, rec); len(outs) != 0 {
			t.Errorf("%s: %d outputs, want none", name, len(outs))
		}
	}
}

func TestBadRecordsAreErrors(t *testing.T) {
	f := newFixture(t)
	data := encodeJPEG(t, portrait(t), 92)
	cases := map[string]*stream.Record{
		"other topic": {Topic: schemas.TopicCaptures, Key: []byte("ses_1"), Value: []byte{1}},
		"garbage":     {Topic: schemas.TopicQuality, Key: []byte("ses_1"), Value: []byte("not avro")},
		"no capture":  f.selfie(t, "cap_11", data, func(qa *schemas.QualityAssessed) { qa.CaptureID = "" }),
	}
	for name, rec := range cases {
		if _, err := f.group.Handler(context.Background(), rec); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestReplayIsIdentical(t *testing.T) {
	f := newFixture(t, WithClock(func() time.Time { t.Fatal("clock read for an assessment with occurred_at"); return time.Time{} }))
	rec := f.selfie(t, "cap_12", encodeJPEG(t, portrait(t), 92))
	// Compared decoded: hamba/avro writes a map (Signals) in Go's random iteration order, so
	// the bytes of two encodings of one event may differ while the event is the same.
	first := f.assessed(t, rec)
	second := f.assessed(t, rec)
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("a replayed assessment produced a different event:\n%+v\n%+v", first, second)
	}
}

func TestModelVersionOverride(t *testing.T) {
	f := newFixture(t, WithModelVersion("liveness-2026-11"))
	ev := f.assessed(t, f.selfie(t, "cap_13", encodeJPEG(t, portrait(t), 92)))
	if ev.ModelVersion != "liveness-2026-11" || *ev.Checks[0].ModelVersion != "liveness-2026-11" {
		t.Fatalf("model version %q", ev.ModelVersion)
	}
}
