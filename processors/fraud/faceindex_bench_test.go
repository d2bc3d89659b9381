package fraud

import (
	"context"
	"fmt"
	"image"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/schemas"
)

// randomEntry is a face-index entry with a random unit 512-d embedding.
func randomEntry(r *rand.Rand, i int, outcome string) *schemas.FaceIndexEntry {
	v := make([]float32, 512)
	for j := range v {
		v[j] = float32(r.NormFloat64())
	}
	sid := fmt.Sprintf("ses_%026d", i)
	return &schemas.FaceIndexEntry{
		Envelope:     schemas.Envelope{EventID: "evt_" + sid, SessionID: sid, TenantID: tenant, OccurredAt: time.UnixMilli(1_790_000_000_000).UTC(), Producer: Producer},
		IDNumberHash: fmt.Sprintf("%064x", i), Embedding: normalized(v), ModelVersion: "m", CaptureID: "cap_" + sid, Outcome: outcome,
	}
}

// BenchmarkFaceSearch measures the duplicate-face (1:N) search of FaceIndex at 10k and 100k
// verified 512-d faces of one tenant, reporting p50 and p99 per search, and the memory one
// face costs a fraud member: the encoded record the view keeps plus the index's vector
// (heap growth while loading, divided by the faces loaded).
func BenchmarkFaceSearch(b *testing.B) {
	codec := newCodec(b)
	x := newFaceIndex(codec)
	view := map[string][]byte{} // stands for the stream.View's copy of the topic
	r := rand.New(rand.NewPCG(7, 8))
	loaded := 0
	for _, n := range []int{10_000, 100_000} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		from := loaded
		for ; loaded < n; loaded++ {
			e := randomEntry(r, loaded, schemas.StatusVerified)
			v, err := codec.Encode(schemas.TopicFaceIndex, e)
			if err != nil {
				b.Fatal(err)
			}
			view[e.Envelope.SessionID] = v
			x.Apply(e.Envelope.SessionID, v)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perFace := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(loaded-from)
		queries := make([][]float32, 64)
		for i := range queries {
			queries[i] = randomEntry(r, -1, "").Embedding
		}
		b.Run(fmt.Sprintf("faces=%dk", n/1000), func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				x.Search(tenant, "m", queries[i%len(queries)], DefaultDuplicateFaceThreshold, duplicateSearchLimit, "")
				lat = append(lat, time.Since(start))
				i++
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(perFace, "B/face")
		})
	}
	runtime.KeepAlive(view)
}

// BenchmarkFraudFaces measures the fraud group's time per session with the face checks on
// (the real face engine embedding a 600×700 selfie, duplicate search over 10k verified
// faces, 10 face blocklist entries, presentation attack) besides every other session check
// (no registry), plus the decided snapshot that marks the session verified in the index.
func BenchmarkFraudFaces(b *testing.B) {
	ff := newFaceFixture(b)
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 10_000 {
		e := randomEntry(r, 1_000_000+i, schemas.StatusVerified)
		ff.index.Put(e.Envelope.SessionID, e)
	}
	for i := range 10 {
		e := randomEntry(r, 2_000_000+i, schemas.StatusRejected)
		e.ModelVersion = ff.faceModel()
		ff.index.Put(e.Envelope.SessionID, e)
		src := e.Envelope.SessionID
		v, err := ff.codec.Encode(schemas.TopicBlocklist, &schemas.BlocklistEntry{
			Envelope: e.Envelope, EntryID: fmt.Sprintf("blk_%d", i), Kind: "face", SourceSessionID: &src, Embedding: []float32{}, CreatedAt: e.Envelope.OccurredAt,
		})
		if err != nil {
			b.Fatal(err)
		}
		ff.blocks.Apply(fmt.Sprintf("blk_%d", i), v)
	}
	portrait := ff.env.PortraitA(b)
	var imgs []image.Image
	for i := range 8 {
		imgs = append(imgs, facetest.Transformed(portrait, 0.7+0.05*float64(i), float64(i%7-3)))
	}
	ctx := context.Background()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		// A new session (and selfie capture) each time, so that no embedding comes from the
		// group's cache; storing its selfie is not timed.
		st := ff.session(fmt.Sprintf("ses_%026d", i), idA, imgs[i%len(imgs)])
		rec := ff.snapshotRecord(st)
		start := time.Now()
		outs, err := ff.group.Handler(ctx, rec)
		if err != nil || len(outs) != 2 {
			b.Fatalf("%v, %d outputs", err, len(outs))
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms/session")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms/session")
}
