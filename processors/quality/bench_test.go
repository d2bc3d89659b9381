package quality

import (
	"bytes"
	"context"
	"image/jpeg"
	"testing"

	"github.com/idstream/idstream/internal/benchmetrics"
	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/cardrender"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/internal/imagequality"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// benchCapture builds the group (with opts) over a temporary blob store holding data as the
// image of one capture of step, and returns the group and that capture's record.
func benchCapture(b *testing.B, step string, data []byte, opts ...Option) (stream.Group, *stream.Record) {
	b.Helper()
	codec, err := schemas.NewCodec()
	if err != nil {
		b.Fatal(err)
	}
	blobs, err := blob.NewFS(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = blobs.Close() })
	obj, err := blobs.Put(context.Background(), "ten_1/ses_1/cap_bench/image", data, "image/jpeg")
	if err != nil {
		b.Fatal(err)
	}
	c := schemas.CaptureSubmitted{
		Envelope:  schemas.Envelope{EventID: "evt_cap_bench", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: capturedAt, Producer: "edge"},
		CaptureID: "cap_bench", Step: step, Nonce: []byte("12345678"), Client: map[string]string{},
		Blobs: []schemas.BlobRef{{Name: "image", URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}},
	}
	v, err := codec.Encode(schemas.TopicCaptures, c)
	if err != nil {
		b.Fatal(err)
	}
	g := NewGroup(codec, blobs, imagequality.NewGate(imagequality.DefaultThresholds()), opts...)
	return g, &stream.Record{Topic: schemas.TopicCaptures, Key: []byte("ses_1"), Value: v}
}

// measureHandler reports the group's latency and CPU per image for rec (benchmetrics).
func measureHandler(b *testing.B, g stream.Group, rec *stream.Record) {
	benchmetrics.Measure(b, 1, func() {
		if outs, err := g.Handler(context.Background(), rec); err != nil || len(outs) != 1 {
			b.Fatalf("outputs %d, err %v", len(outs), err)
		}
	})
}

// BenchmarkHandler is the group's time per capture: blob read, SHA-256 check, validation,
// decode and the gate. "document" is a 1600×1200 JPEG photo of a card on a wooden table
// (the document search runs in full); "selfie" an 800×900 JPEG portrait with the face
// detector's framing.
func BenchmarkHandler(b *testing.B) {
	b.Run("document", func(b *testing.B) {
		r, err := cardrender.New()
		if err != nil {
			b.Skipf("fonts for the card renderer: %v", err)
		}
		card, _ := r.ChipIDFront(cardrender.SyntheticPerson(1))
		img, _, err := cardrender.Place(card, cardrender.Scene{Width: 1600, Height: 1200, Background: cardrender.Wood,
			CenterX: 0.5, CenterY: 0.5, Scale: 0.75, RotationDeg: 5, Skew: 0.02, NoiseStdDev: 3}, 1)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
			b.Fatal(err)
		}
		g, rec := benchCapture(b, "document_front", buf.Bytes())
		measureHandler(b, g, rec)
	})
	b.Run("selfie", func(b *testing.B) {
		env := facetest.New(b)
		b.Cleanup(env.Close)
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, canvas(env.PortraitA(b), 800, 900, 100, 100), &jpeg.Options{Quality: 90}); err != nil {
			b.Fatal(err)
		}
		g, rec := benchCapture(b, "selfie", buf.Bytes(), WithFaceDetector(env.Engine(b), DefaultSelfieFraming()))
		measureHandler(b, g, rec)
	})
}
