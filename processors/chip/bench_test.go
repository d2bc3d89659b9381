package chip

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/benchmetrics"
	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/processors/chip/chiptest"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// BenchmarkHandler is the group's time per chip read (SOD, DG1, DG2 with a JPEG face, DG13,
// DG14, DG15 and an active authentication signature; ECDSA P-256 test PKI): blob reads,
// passive authentication (SOD signature, DS certificate chain, DG hashes), active
// authentication, DG1/DG13 parsing, the face stored as JPEG, and the sandbox registry. The
// one image is the DG2 face.
func BenchmarkHandler(b *testing.B) {
	pki, err := mrtdtest.NewPKI(mrtdtest.ECDSAP256)
	if err != nil {
		b.Fatal(err)
	}
	codec, err := schemas.NewCodec()
	if err != nil {
		b.Fatal(err)
	}
	fs, err := blob.NewFS(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = fs.Close() })
	g := NewGroup(codec, fs, pki.Trust(), sandbox(), WithFaceDecodeOptions(), WithClock(func() time.Time { return pki.Now }))
	files := chiptest.NewChip(b, pki, chiptest.Persona(b, "match"), sessionNonce)
	c := schemas.CaptureSubmitted{
		Envelope:  schemas.Envelope{EventID: "evt_c1", SessionID: sessionID, TenantID: tenantID, OccurredAt: pki.Now.Add(-time.Minute), Producer: "edge"},
		CaptureID: captureID, Step: StepNFC, Nonce: sessionNonce, Client: map[string]string{},
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	}) {
		obj, err := fs.Put(context.Background(), tenantID+"/"+sessionID+"/"+captureID+"/"+name, files[name], "application/octet-stream")
		if err != nil {
			b.Fatal(err)
		}
		c.Blobs = append(c.Blobs, schemas.BlobRef{Name: name, URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType})
	}
	v, err := codec.Encode(schemas.TopicCaptures, c)
	if err != nil {
		b.Fatal(err)
	}
	rec := &stream.Record{Topic: schemas.TopicCaptures, Key: []byte(sessionID), Value: v}
	benchmetrics.Measure(b, 1, func() {
		outs, err := g.Handler(context.Background(), rec)
		if err != nil || len(outs) != 1 {
			b.Fatalf("outputs %d, err %v", len(outs), err)
		}
	})
}
