package fraud

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/cardrender"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/internal/phash"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// nearSightings is memSightings with perceptual hashes (a NearIndex), fed with the index
// outputs of handled captures.
type nearSightings struct {
	*memSightings
	codec *schemas.Codec
	mu    sync.Mutex
	near  map[string]PerceptualSighting // PerceptualKey → entry
}

func (n *nearSightings) Perceptual(key string) (PerceptualSighting, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s, ok := n.near[key]
	return s, ok
}

func (n *nearSightings) Near(tenantID string, h phash.Hash, maxDistance int, fn func(PerceptualSighting, int) bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, s := range n.near {
		x, _ := phash.Parse(s.PHash)
		if strings.HasPrefix(k, tenantID+perceptualTag) && phash.Distance(h, x) <= maxDistance {
			if !fn(s, phash.Distance(h, x)) {
				return
			}
		}
	}
}

func (n *nearSightings) KeysOfSession(id string) []string {
	keys := n.memSightings.KeysOfSession(id)
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, s := range n.near {
		if s.SessionID == id {
			keys = append(keys, k)
		}
	}
	return keys
}

// add folds index outputs as the CaptureIndex view would.
func (n *nearSightings) add(t testing.TB, outs []stream.Output) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, o := range outs {
		if !strings.Contains(string(o.Key), perceptualTag) {
			continue
		}
		s, ok := (&CaptureIndex{codec: n.codec}).decodeEntry(o.Value)
		if !ok || s.PHash == "" {
			t.Fatalf("perceptual entry %q does not decode", o.Key)
		}
		n.near[string(o.Key)] = s
	}
}

type imageFixture struct {
	*fixture
	store blob.Store
	near  *nearSightings
}

func newImageFixture(t *testing.T, opts ...Option) *imageFixture {
	t.Helper()
	store, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, codec: newCodec(t), blocklist: memBlocklist{}, sightings: newMemSightings()}
	near := &nearSightings{memSightings: f.sightings, codec: f.codec, near: map[string]PerceptualSighting{}}
	g, err := NewGroup(f.codec, hashKey, f.blocklist, near, append([]Option{WithBlobs(store)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	f.group = g
	return &imageFixture{fixture: f, store: store, near: near}
}

func (f *imageFixture) put(sessionID, name string, data []byte) schemas.BlobRef {
	f.t.Helper()
	obj, err := f.store.Put(context.Background(), tenant+"/"+sessionID+"/"+name, data, "image/jpeg")
	if err != nil {
		f.t.Fatal(err)
	}
	return schemas.BlobRef{Name: "image", URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}
}

// submit handles a capture of step in sessionID with data at time at; it returns the
// checks the capture produced by name and folds its index outputs.
func (f *imageFixture) submit(sessionID, step string, data []byte, at time.Time) (map[string]schemas.Check, schemas.StepCapture) {
	f.t.Helper()
	ref := f.put(sessionID, step+fmt.Sprint(at.UnixNano()), data)
	c := f.capture(sessionID, step, ref.SHA256, nil, func(c *schemas.CaptureSubmitted) {
		c.Blobs = []schemas.BlobRef{ref}
		c.Envelope.OccurredAt = at
	})
	v, err := f.codec.Encode(schemas.TopicCaptures, c)
	if err != nil {
		f.t.Fatal(err)
	}
	outs, err := f.group.Handler(context.Background(), &stream.Record{Topic: schemas.TopicCaptures, Key: []byte(sessionID), Value: v})
	if err != nil {
		f.t.Fatal(err)
	}
	f.near.add(f.t, outs)
	checks := map[string]schemas.Check{}
	for _, o := range outs {
		if o.Topic == schemas.TopicFraud {
			var fa schemas.FraudAssessed
			if err := f.codec.Decode(schemas.TopicFraud, o.Value, &fa); err != nil {
				f.t.Fatal(err)
			}
			for _, ch := range fa.Checks {
				checks[ch.Name] = ch
			}
		}
	}
	return checks, schemas.StepCapture{Step: step, CaptureID: c.CaptureID, Status: schemas.CaptureAccepted, Blobs: []schemas.BlobRef{ref}, SubmittedAt: at}
}

func jpegOf(t testing.TB, img image.Image, q int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cameraCard is a camera-like picture of a card front (cardrender.Degrade, no JPEG step).
func cameraCard(t testing.TB, seed uint64) image.Image {
	t.Helper()
	r, err := cardrender.New()
	if err != nil {
		t.Fatalf("card renderer: %v", err)
	}
	img, _ := r.ChipIDBack(cardrender.SyntheticPerson(seed))
	d := cardrender.MildDegradation(seed)
	d.JPEGQuality = 0
	out, err := cardrender.Degrade(img, d, seed)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTamperCheck(t *testing.T) {
	f := newImageFixture(t)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	card := cameraCard(t, 4)
	once := jpegOf(t, card, 75)
	dec, err := jpeg.Decode(bytes.NewReader(once))
	if err != nil {
		t.Fatal(err)
	}
	resaved := jpegOf(t, dec, 92) // saved again at a higher quality: the reliably found case
	checks, _ := f.submit(sid, "document_back", once, at)
	expect(t, checks[TamperCheckName("document_back")], schemas.CheckPass, "")
	if _, ok := checks[InjectionCheckName("document_back")]; !ok {
		t.Fatal("no injection check beside the tamper check")
	}
	checks, _ = f.submit(sid, "document_back", jpegOf(t, card, 92), at)
	expect(t, checks[TamperCheckName("document_back")], schemas.CheckPass, "")
	// Decoded and saved again at another quality: double compression, a warn by default.
	checks, _ = f.submit(sid, "document_back", resaved, at)
	c := checks[TamperCheckName("document_back")]
	expect(t, c, schemas.CheckWarn, ReasonDoubleCompression)
	if c.Score == nil || c.Threshold == nil || *c.Score < *c.Threshold || !strings.Contains(*c.Detail, "double JPEG compression") {
		t.Fatalf("check %+v", c)
	}
	strict := newImageFixture(t, WithTamperStatus(ReasonDoubleCompression, schemas.CheckFail))
	checks, _ = strict.submit(sid, "document_back", resaved, at)
	expect(t, checks[TamperCheckName("document_back")], schemas.CheckFail, ReasonDoubleCompression)
	// A selfie gets no tamper check; a document without a blob store or image is skipped.
	checks, _ = f.submit(sid, "selfie", once, at)
	if _, ok := checks[TamperCheckName("selfie")]; ok {
		t.Fatal("tamper check on a selfie")
	}
	plain := newFixture(t)
	v, _ := plain.codec.Encode(schemas.TopicCaptures, plain.capture(sid, "passport", strings.Repeat("a", 64), nil))
	outs, err := plain.group.Handler(context.Background(), &stream.Record{Topic: schemas.TopicCaptures, Key: []byte(sid), Value: v})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range outs {
		var fa schemas.FraudAssessed
		if o.Topic == schemas.TopicFraud && plain.codec.Decode(schemas.TopicFraud, o.Value, &fa) == nil && fa.Checks[0].Name == TamperCheckName("passport") {
			expect(t, fa.Checks[0], schemas.CheckSkipped, ReasonImageUnavailable)
			found = true
		}
	}
	if !found {
		t.Fatal("no tamper check without a blob store")
	}
	// Garbage bytes under a JPEG name are skipped, never a crash.
	checks, _ = f.submit(sid, "passport", []byte("\xff\xd8\xffnot really"), at)
	expect(t, checks[TamperCheckName("passport")], schemas.CheckSkipped, ReasonImageUnavailable)
}

// selfieSession returns a processing snapshot of sessionID holding selfie as its selfie
// capture.
func selfieSession(sessionID string, selfie schemas.StepCapture) *schemas.SessionState {
	st := matchSnapshot(sessionID)
	st.Captures[3] = selfie
	return st
}

func TestNearDuplicateReplay(t *testing.T) {
	faces := facetest.New(t)
	f := newImageFixture(t)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a := faces.PortraitA(t)
	first := jpegOf(t, a, 92)
	const earlier, later, other = "ses_earlierxxxxxxxxxxxxxxxxx", "ses_laterxxxxxxxxxxxxxxxxxxx", "ses_otherxxxxxxxxxxxxxxxxxxx"
	_, capA := f.submit(earlier, "selfie", first, at)
	if len(f.near.near) != 1 {
		t.Fatalf("perceptual entries %v", f.near.near)
	}
	// The earlier session's own selfie is no replay.
	expect(t, checkOf(t, f.run(selfieSession(earlier, capA)), CheckReplayedCapture), schemas.CheckPass, "")
	// The same photo re-encoded at another quality in a later session: a near-identical replay.
	_, capB := f.submit(later, "selfie", jpegOf(t, a, 70), at.Add(time.Hour))
	c := checkOf(t, f.run(selfieSession(later, capB)), CheckReplayedCapture)
	expect(t, c, schemas.CheckFail, ReasonReplayedCapture)
	if !strings.Contains(*c.Detail, "near-identical") || !strings.Contains(*c.Detail, earlier) {
		t.Fatalf("detail %q", *c.Detail)
	}
	// The earlier session is not flagged by the later copy (first sighting wins).
	expect(t, checkOf(t, f.run(selfieSession(earlier, capA)), CheckReplayedCapture), schemas.CheckPass, "")
	// Another person's photo is not a replay.
	_, capC := f.submit(other, "selfie", jpegOf(t, faces.PortraitB(t), 92), at.Add(2*time.Hour))
	expect(t, checkOf(t, f.run(selfieSession(other, capC)), CheckReplayedCapture), schemas.CheckPass, "")
	// Before its own entry reaches the index, the hash is computed from the blob.
	delete(f.near.near, PerceptualKey(tenant, capB.CaptureID, "image"))
	expect(t, checkOf(t, f.run(selfieSession(later, capB)), CheckReplayedCapture), schemas.CheckFail, ReasonReplayedCapture)
	// Erasure of the earlier session tombstones its perceptual entry too.
	outs, err := f.group.Handler(context.Background(), &stream.Record{Topic: schemas.TopicSessionState, Key: []byte(earlier)})
	if err != nil {
		t.Fatal(err)
	}
	gone := false
	for _, o := range outs {
		if o.Topic == schemas.TopicCaptureIndex && string(o.Key) == PerceptualKey(tenant, capA.CaptureID, "image") && o.Value == nil {
			gone = true
			delete(f.near.near, string(o.Key))
		}
	}
	if !gone {
		t.Fatalf("erasure outputs %+v", outs)
	}
	expect(t, checkOf(t, f.run(selfieSession(later, capB)), CheckReplayedCapture), schemas.CheckPass, "")
	// Off: no perceptual entries at all.
	off := newImageFixture(t, WithNearDuplicateSteps())
	off.submit(earlier, "selfie", first, at)
	if len(off.near.near) != 0 {
		t.Fatalf("entries with the search off: %v", off.near.near)
	}
}

// TestPerceptualSetsApply: the tenants' hash sets follow the index topic, its Avro entries
// and the JSON ones written before it had a schema alike.
func TestPerceptualSetsApply(t *testing.T) {
	codec := newCodec(t)
	p := newPerceptualSets((&CaptureIndex{codec: codec}).decodeEntry)
	val := func(session string, h phash.Hash) []byte {
		hs := h.String()
		v, err := codec.Encode(schemas.TopicCaptureIndex, &schemas.CaptureSighting{
			Envelope:  schemas.Envelope{EventID: "evt_1", SessionID: session, TenantID: "acme", OccurredAt: time.Now(), Producer: Producer},
			CaptureID: "cap", Step: "selfie", PHash: &hs,
		})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	legacy := func(session string, h phash.Hash) []byte {
		v, _ := json.Marshal(map[string]string{"session_id": session, "capture_id": "cap", "phash": h.String()})
		return v
	}
	k1, k2 := PerceptualKey("acme", "cap_1", "image"), PerceptualKey("other", "cap_2", "image")
	p.apply(k1, val("ses_1", 0xff))
	p.apply(k2, legacy("ses_2", 0xff))
	p.apply(IndexKey("acme", strings.Repeat("a", 64)), []byte(`{"session_id":"ses_1"}`)) // a SHA-256 sighting: ignored
	p.apply(PerceptualKey("acme", "cap_3", "image"), []byte("garbage"))
	var got []string
	p.within("acme", 0xfe, 2, func(k string, d int) bool { got = append(got, fmt.Sprint(k, d)); return true })
	if len(got) != 1 || got[0] != k1+"1" || p.len() != 2 {
		t.Fatalf("within %v len %d", got, p.len())
	}
	p.apply(k1, nil)
	got = nil
	p.within("acme", 0xfe, 64, func(k string, d int) bool { got = append(got, k); return true })
	if len(got) != 0 || p.len() != 1 {
		t.Fatalf("after tombstone %v %d", got, p.len())
	}
}

// BenchmarkNearSearch measures the near-duplicate search of one tenant's perceptual hashes
// (random 64-bit hashes, none near the query) at 10k, 100k and 1M entries.
func BenchmarkNearSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("hashes=%d", n), func(b *testing.B) {
			p := newPerceptualSets((&CaptureIndex{codec: newCodec(b)}).decodeEntry)
			rng := rand.New(rand.NewPCG(3, 4))
			for i := range n {
				p.apply(PerceptualKey(tenant, fmt.Sprintf("cap_%d", i), "image"), []byte(fmt.Sprintf(`{"session_id":"ses_%d","phash":"%016x"}`, i, rng.Uint64())))
			}
			q := phash.Hash(rng.Uint64())
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p.within(tenant, q, phash.DefaultMaxDistance, func(string, int) bool { return true })
			}
		})
	}
}
