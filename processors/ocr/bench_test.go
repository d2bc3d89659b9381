package ocr

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"testing"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/idstream/idstream/internal/benchmetrics"
	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/cardrender"
	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// BenchmarkHandler is the group's time per passed document capture (a 1200×756 or
// 1250×880 JPEG render): blob read, decode, document search and rectification, Tesseract on
// every field (one engine per model, OMP_THREAD_LIMIT=1), the MRZ with OCR-B, and on the
// front and the passport page the face crop (detection) stored in the blob store.
func BenchmarkHandler(b *testing.B) {
	reader, err := docread.New(docread.Config{MRZModelDir: "../../models", PoolSize: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = reader.Close() })
	rend, err := cardrender.New()
	if err != nil {
		b.Fatal(err)
	}
	env := facetest.New(b)
	b.Cleanup(env.Close)
	codec, err := schemas.NewCodec()
	if err != nil {
		b.Fatal(err)
	}
	blobs, err := blob.NewFS(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = blobs.Close() })
	g := NewGroup(codec, blobs, reader, env.Engine(b))

	withPortrait := func(img image.Image, box image.Rectangle) image.Image {
		out := image.NewRGBA(img.Bounds())
		xdraw.Draw(out, out.Bounds(), img, image.Point{}, xdraw.Src)
		xdraw.CatmullRom.Scale(out, box, env.PortraitA(b), env.PortraitA(b).Bounds(), xdraw.Src, nil)
		return out
	}
	p := cardrender.SyntheticPerson(1)
	front, _ := rend.ChipIDFront(p)
	back, _ := rend.ChipIDBack(p)
	passport, _ := rend.Passport(p)
	vehicle, _ := rend.VehicleRegistration(cardrender.SyntheticVehicle(1))
	for _, c := range []struct {
		name, step string
		img        image.Image
	}{
		{"id-front", StepFront, withPortrait(front, cardPhotoBox)},
		{"id-back", StepBack, back},
		{"passport", StepPassport, withPortrait(passport, passportPhotoBox)},
		{"vehicle-front", StepFront, vehicle},
	} {
		b.Run(c.name, func(b *testing.B) {
			rec := benchAssessment(b, codec, blobs, "cap_bench_"+c.name, c.step, jpegOf(b, c.img))
			benchmetrics.Measure(b, 1, func() {
				if outs, err := g.Handler(context.Background(), rec); err != nil || len(outs) != 1 {
					b.Fatalf("outputs %d, err %v", len(outs), err)
				}
			})
		})
	}
}

// benchAssessment stores data as a capture's image and returns its passed QualityAssessed.
func benchAssessment(b *testing.B, codec *schemas.Codec, blobs blob.Store, captureID, step string, data []byte) *stream.Record {
	b.Helper()
	obj, err := blobs.Put(context.Background(), tenantID+"/"+sessionID+"/"+captureID+"/image", data, "image/jpeg")
	if err != nil {
		b.Fatal(err)
	}
	at := capturedAt
	v, err := codec.Encode(schemas.TopicQuality, &schemas.QualityAssessed{
		Envelope:  schemas.Envelope{EventID: "evt_q_" + captureID, SessionID: sessionID, TenantID: tenantID, OccurredAt: at.Add(time.Second), Producer: "quality"},
		CaptureID: captureID, Step: step, Passed: true, Framing: "ok", Reasons: []string{},
		Image:       schemas.BlobRef{Name: "image", URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType},
		GateVersion: "bench", CapturedAt: &at,
	})
	if err != nil {
		b.Fatal(err)
	}
	return &stream.Record{Topic: schemas.TopicQuality, Key: []byte(sessionID), Value: v}
}

// jpegOf encodes img as a quality-92 JPEG.
func jpegOf(b *testing.B, img image.Image) []byte {
	b.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 92}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
