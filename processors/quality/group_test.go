package quality

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/imagequality"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

var capturedAt = time.Date(2026, 11, 22, 10, 0, 0, 123_000_000, time.UTC)

type fixture struct {
	codec *schemas.Codec
	blobs *blob.FS
	group stream.Group
}

func newFixture(t *testing.T, opts ...Option) *fixture {
	t.Helper()
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatalf("NewCodec: %v", err)
	}
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatalf("NewFS: %v", err)
	}
	t.Cleanup(func() { _ = blobs.Close() })
	return &fixture{codec: codec, blobs: blobs, group: NewGroup(codec, blobs, imagequality.NewGate(imagequality.DefaultThresholds()), opts...)}
}

// sharpImage is 1000×640 of light background with dense dark strokes (text-like detail).
func sharpImage() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 1000, 640))
	rng := rand.New(rand.NewPCG(1, 1))
	for y := range 640 {
		for x := range 1000 {
			img.SetRGBA(x, y, color.RGBA{215, 210, 200, 255})
		}
	}
	for range 3000 {
		x, y := rng.IntN(990), rng.IntN(620)
		for dy := range 18 {
			for dx := range 3 {
				img.SetRGBA(x+dx, y+dy, color.RGBA{30, 30, 40, 255})
			}
		}
	}
	return img
}

// smoothImage is a plain gradient: no detail at all, so it is blurry.
func smoothImage() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 1000, 640))
	for y := range 640 {
		for x := range 1000 {
			v := uint8(80 + x/10)
			img.SetRGBA(x, y, color.RGBA{v, v, v, 255})
		}
	}
	return img
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// capture stores data as the image of a capture and returns the encoded CaptureSubmitted.
func (f *fixture) capture(t *testing.T, captureID, step string, data []byte) (*stream.Record, schemas.BlobRef) {
	t.Helper()
	obj, err := f.blobs.Put(context.Background(), "ten_1/ses_1/"+captureID+"/image", data, "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	ref := schemas.BlobRef{Name: "image", URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}
	return f.record(t, captureID, step, []schemas.BlobRef{ref}), ref
}

func (f *fixture) record(t *testing.T, captureID, step string, blobs []schemas.BlobRef) *stream.Record {
	t.Helper()
	c := schemas.CaptureSubmitted{
		Envelope:  schemas.Envelope{EventID: "evt_" + captureID, SessionID: "ses_1", TenantID: "ten_1", OccurredAt: capturedAt, Producer: "edge"},
		CaptureID: captureID,
		Step:      step,
		Blobs:     blobs,
		Nonce:     []byte("12345678"),
		Client:    map[string]string{"sdk": "test"},
	}
	v, err := f.codec.Encode(schemas.TopicCaptures, c)
	if err != nil {
		t.Fatalf("encode capture: %v", err)
	}
	return &stream.Record{Topic: schemas.TopicCaptures, Key: []byte("ses_1"), Value: v}
}

// assessed runs the handler and decodes its single output.
func (f *fixture) assessed(t *testing.T, rec *stream.Record) schemas.QualityAssessed {
	t.Helper()
	outs, err := f.group.Handler(context.Background(), rec)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	if len(outs) != 1 {
		t.Fatalf("handler returned %d outputs, want 1", len(outs))
	}
	if outs[0].Topic != schemas.TopicQuality || string(outs[0].Key) != "ses_1" {
		t.Fatalf("output to %s keyed %q, want %s keyed ses_1", outs[0].Topic, outs[0].Key, schemas.TopicQuality)
	}
	var qa schemas.QualityAssessed
	if err := f.codec.Decode(schemas.TopicQuality, outs[0].Value, &qa); err != nil {
		t.Fatalf("decode output: %v", err)
	}
	return qa
}

func TestGroupDeclaration(t *testing.T) {
	g := newFixture(t).group
	if g.Name != "quality" || !slices.Equal(g.Inputs, []string{schemas.TopicCaptures}) ||
		!slices.Equal(g.Outputs, []string{schemas.TopicQuality}) || g.Handler == nil {
		t.Fatalf("group = %+v", g)
	}
}

func TestSharpDocumentPasses(t *testing.T) {
	f := newFixture(t)
	rec, ref := f.capture(t, "cap_1", "document_front", encodeJPEG(t, sharpImage()))
	qa := f.assessed(t, rec)
	wantEnv := schemas.Envelope{EventID: "evt_q_cap_1", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: capturedAt, Producer: "quality"}
	if qa.Envelope.EventID != wantEnv.EventID || qa.Envelope.SessionID != wantEnv.SessionID ||
		qa.Envelope.TenantID != wantEnv.TenantID || !qa.Envelope.OccurredAt.Equal(capturedAt) ||
		qa.Envelope.Producer != wantEnv.Producer {
		t.Errorf("envelope = %+v, want %+v", qa.Envelope, wantEnv)
	}
	if !qa.Passed || len(qa.Reasons) != 0 || qa.Framing != "ok" {
		t.Errorf("assessment = %+v, want passed", qa)
	}
	if qa.CaptureID != "cap_1" || qa.Step != "document_front" || qa.Image != ref ||
		qa.GateVersion != imagequality.Version || qa.Width != 1000 || qa.Height != 640 {
		t.Errorf("assessment = %+v", qa)
	}
	if qa.Blur < 100 || qa.Brightness < 100 {
		t.Errorf("scores blur %.1f brightness %.1f, want a sharp, bright image", qa.Blur, qa.Brightness)
	}
}

func TestReplayIsIdentical(t *testing.T) {
	f := newFixture(t, WithClock(func() time.Time { t.Fatal("clock read for a capture with occurred_at"); return time.Time{} }))
	rec, _ := f.capture(t, "cap_1", "selfie", encodePNG(t, sharpImage()))
	first, err := f.group.Handler(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.group.Handler(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || len(second) != 1 || !bytes.Equal(first[0].Value, second[0].Value) {
		t.Fatal("a replayed capture produced a different event")
	}
}

func TestBlurrySelfie(t *testing.T) {
	f := newFixture(t)
	rec, _ := f.capture(t, "cap_2", "selfie", encodePNG(t, smoothImage()))
	qa := f.assessed(t, rec)
	if qa.Passed || !slices.Equal(qa.Reasons, []string{"blurry"}) {
		t.Fatalf("assessment = %+v, want failed with blurry", qa)
	}
}

func TestNFCIsIgnored(t *testing.T) {
	f := newFixture(t)
	rec := f.record(t, "cap_3", "nfc", []schemas.BlobRef{{Name: "sod", URI: "fs://ten_1/ses_1/cap_3/sod"}})
	outs, err := f.group.Handler(context.Background(), rec)
	if err != nil || len(outs) != 0 {
		t.Fatalf("nfc capture: %d outputs, %v; want none", len(outs), err)
	}
}

func TestUnusableImages(t *testing.T) {
	var gifBuf bytes.Buffer
	if err := gif.Encode(&gifBuf, smoothImage(), nil); err != nil {
		t.Fatal(err)
	}
	sharp := encodeJPEG(t, sharpImage())
	for _, tc := range []struct {
		name, step string
		data       []byte
		want       string
	}{
		{"gif document", "document_back", gifBuf.Bytes(), "no_document"},
		{"random selfie", "selfie", []byte("definitely not an image"), "no_face"},
		{"truncated passport", "passport", sharp[:len(sharp)/2], "no_document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			rec, ref := f.capture(t, "cap_4", tc.step, tc.data)
			qa := f.assessed(t, rec)
			if qa.Passed || !slices.Equal(qa.Reasons, []string{tc.want}) || qa.Framing != "unknown" {
				t.Fatalf("assessment = %+v, want failed with %s", qa, tc.want)
			}
			if qa.Image != ref || qa.Envelope.EventID != "evt_q_cap_4" {
				t.Fatalf("assessment = %+v", qa)
			}
		})
	}
}

func TestTamperedBlobIsUnusable(t *testing.T) {
	f := newFixture(t)
	rec, ref := f.capture(t, "cap_5", "document_front", encodeJPEG(t, sharpImage()))
	// Replace the bytes behind the reference: the recorded SHA-256 no longer matches.
	if _, err := f.blobs.Put(context.Background(), "ten_1/ses_1/cap_5/image", encodeJPEG(t, smoothImage()), "image/jpeg"); err != nil {
		t.Fatal(err)
	}
	qa := f.assessed(t, rec)
	if qa.Passed || !slices.Equal(qa.Reasons, []string{"no_document"}) || qa.Image != ref {
		t.Fatalf("assessment = %+v, want failed with no_document", qa)
	}
}

func TestMissingImageBlob(t *testing.T) {
	f := newFixture(t)
	rec := f.record(t, "cap_6", "selfie", []schemas.BlobRef{{Name: "video", URI: "fs://ten_1/ses_1/cap_6/video"}})
	qa := f.assessed(t, rec)
	if qa.Passed || !slices.Equal(qa.Reasons, []string{"no_face"}) {
		t.Fatalf("assessment = %+v, want failed with no_face", qa)
	}
}

func TestErasedSessionEmitsNothing(t *testing.T) {
	f := newFixture(t)
	rec, _ := f.capture(t, "cap_7", "document_front", encodeJPEG(t, sharpImage()))
	if err := f.blobs.DeletePrefix(context.Background(), "ten_1/ses_1/"); err != nil {
		t.Fatal(err)
	}
	outs, err := f.group.Handler(context.Background(), rec)
	if err != nil || len(outs) != 0 {
		t.Fatalf("erased session: %d outputs, %v; want none and no error", len(outs), err)
	}
}

func TestClockWhenCaptureHasNoTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 11, 0, 0, 456_789_000, time.UTC)
	f := newFixture(t, WithClock(func() time.Time { return now }))
	obj, err := f.blobs.Put(context.Background(), "ten_1/ses_1/cap_8/image", encodePNG(t, sharpImage()), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	c := schemas.CaptureSubmitted{
		Envelope:  schemas.Envelope{EventID: "evt_cap_8", SessionID: "ses_1", TenantID: "ten_1", Producer: "edge"},
		CaptureID: "cap_8",
		Step:      "selfie",
		Blobs:     []schemas.BlobRef{{Name: "image", URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}},
	}
	v, err := f.codec.Encode(schemas.TopicCaptures, c)
	if err != nil {
		t.Fatal(err)
	}
	qa := f.assessed(t, &stream.Record{Topic: schemas.TopicCaptures, Key: []byte("ses_1"), Value: v})
	if want := now.Truncate(time.Millisecond); !qa.Envelope.OccurredAt.Equal(want) {
		t.Fatalf("occurred_at = %s, want the clock's %s", qa.Envelope.OccurredAt, want)
	}
}

// failingStore fails every Get with an I/O-like error.
type failingStore struct{ blob.Store }

func (failingStore) Get(context.Context, string) ([]byte, error) {
	return nil, errors.New("disk on fire")
}

func TestErrorsAreReturnedForRetry(t *testing.T) {
	f := newFixture(t)
	rec, _ := f.capture(t, "cap_9", "selfie", encodePNG(t, sharpImage()))
	broken := NewGroup(f.codec, failingStore{}, imagequality.NewGate(imagequality.DefaultThresholds()))
	if _, err := broken.Handler(context.Background(), rec); err == nil {
		t.Error("blob store failure: no error, want one (retry)")
	}
	if _, err := f.group.Handler(context.Background(), &stream.Record{Topic: schemas.TopicCaptures, Value: []byte{0xC3, 0x01, 0xFF}}); err == nil {
		t.Error("undecodable record: no error")
	}
	if _, err := f.group.Handler(context.Background(), &stream.Record{Topic: schemas.TopicQuality, Value: rec.Value}); err == nil {
		t.Error("record of another topic: no error")
	}
	noID := f.record(t, "", "selfie", nil)
	if _, err := f.group.Handler(context.Background(), noID); err == nil {
		t.Error("capture without capture id: no error")
	}
	if outs, err := f.group.Handler(context.Background(), &stream.Record{Topic: schemas.TopicCaptures, Key: []byte("ses_1")}); err != nil || len(outs) != 0 {
		t.Errorf("tombstone: %d outputs, %v; want none", len(outs), err)
	}
}
