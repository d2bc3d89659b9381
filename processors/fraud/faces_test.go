package fraud

import (
	"context"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// faceFixture runs the group with the real face engine, an in-memory FaceIndex and
// Blocklist fed with the group's own outputs (as the views would be), and a blob store
// holding the selfies.
type faceFixture struct {
	*fixture
	env    *facetest.Env
	store  *blob.FS
	index  *FaceIndex
	blocks *Blocklist
}

func newFaceFixture(t testing.TB, opts ...Option) *faceFixture {
	t.Helper()
	env := facetest.New(t)
	store, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	codec := newCodec(t)
	ff := &faceFixture{env: env, store: store, index: newFaceIndex(codec), blocks: newBlocklist(codec)}
	f := &fixture{t: t, codec: codec, blocklist: memBlocklist{}, sightings: newMemSightings()}
	g, err := NewGroup(codec, hashKey, f.blocklist, f.sightings,
		append([]Option{WithBlobs(store), WithFaces(env.Engine(t), ff.index, ff.blocks)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	f.group = g
	ff.fixture = f
	return ff
}

// session returns a processing chip_id_card snapshot of sessionID claiming idNumber (a
// valid persona's data otherwise) whose stored selfie is img.
func (ff *faceFixture) session(sessionID, idNumber string, img image.Image) *schemas.SessionState {
	ff.t.Helper()
	st := matchSnapshot(sessionID)
	for i, f := range st.Chip.Fields {
		if f.Name == "id_number" {
			st.Chip.Fields[i].Value = idNumber
		}
	}
	obj, err := ff.store.Put(context.Background(), tenant+"/"+sessionID+"/selfie/image", facetest.JPEG(ff.t, img), "image/jpeg")
	if err != nil {
		ff.t.Fatal(err)
	}
	for i, c := range st.Captures {
		if c.Step == stepSelfie {
			st.Captures[i].CaptureID = "cap_selfie_" + sessionID
			st.Liveness.CaptureID = st.Captures[i].CaptureID
			st.Captures[i].Blobs = []schemas.BlobRef{{Name: imageBlob, URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}}
		}
	}
	return st
}

// faceModel is the model version the group records with embeddings.
func (ff *faceFixture) faceModel() string {
	ff.t.Helper()
	m := ff.env.Engine(ff.t).Config()
	v, err := face.FilesVersion(m.DetectorPath, m.LandmarkPath, m.EmbedderPath)
	if err != nil {
		ff.t.Fatal(err)
	}
	return v
}

// handle runs a snapshot (nil value: tombstone of sessionID), feeds the face-index outputs
// to the index, and returns the FraudAssessed (or nil) and the face-index outputs.
func (ff *faceFixture) handle(sessionID string, st *schemas.SessionState) (*schemas.FraudAssessed, []stream.Output) {
	ff.t.Helper()
	rec := &stream.Record{Topic: schemas.TopicSessionState, Key: []byte(sessionID)}
	if st != nil {
		rec = ff.snapshotRecord(st)
	}
	outs, err := ff.group.Handler(context.Background(), rec)
	if err != nil {
		ff.t.Fatalf("handler: %v", err)
	}
	var fa *schemas.FraudAssessed
	var faces []stream.Output
	for _, o := range outs {
		switch o.Topic {
		case schemas.TopicFraud:
			fa = new(schemas.FraudAssessed)
			if err := ff.codec.Decode(schemas.TopicFraud, o.Value, fa); err != nil {
				ff.t.Fatal(err)
			}
		case schemas.TopicFaceIndex:
			if string(o.Key) != sessionID {
				ff.t.Fatalf("face index output keyed %q for session %s", o.Key, sessionID)
			}
			ff.index.Apply(string(o.Key), o.Value)
			faces = append(faces, o)
		}
	}
	return fa, faces
}

// decided returns st decided with outcome.
func decided(st *schemas.SessionState, fa *schemas.FraudAssessed, outcome string) *schemas.SessionState {
	d := *st
	d.Status = outcome
	d.Checks = append(append([]schemas.Check(nil), st.Checks...), fa.Checks...)
	at := st.UpdatedAt.Add(time.Second)
	d.Decision = &schemas.DecisionResult{DecisionID: "dec_" + st.Envelope.SessionID, Outcome: outcome, PolicyVersion: "test", DecidedAt: at}
	d.DecidedAt = &at
	return &d
}

// verify assesses st and then its verified decision, as the pipeline would.
func (ff *faceFixture) verify(st *schemas.SessionState) *schemas.FraudAssessed {
	ff.t.Helper()
	fa, outs := ff.handle(st.Envelope.SessionID, st)
	if fa == nil || len(outs) != 1 {
		ff.t.Fatalf("assessment %+v, %d face index outputs", fa, len(outs))
	}
	if _, outs := ff.handle(st.Envelope.SessionID, decided(st, fa, schemas.StatusVerified)); len(outs) != 1 {
		ff.t.Fatalf("decided snapshot wrote %d face index entries, want 1", len(outs))
	}
	if rec, ok := ff.index.Get(st.Envelope.SessionID); !ok || rec.Outcome != schemas.StatusVerified {
		ff.t.Fatalf("index entry of the verified session %+v %v", rec, ok)
	}
	return fa
}

const (
	idA = "001099012345"
	idB = "079199004321"
)

func sessionN(n string) string { return "ses_" + strings.Repeat(n, 26) }

func TestDuplicateFace(t *testing.T) {
	ff := newFaceFixture(t)
	a := ff.env.PortraitA(t)
	first := ff.session(sessionN("a"), idA, a)
	fa := ff.verify(first)
	expect(t, checkOf(t, fa, CheckDuplicateFace), schemas.CheckPass, "") // nothing verified before it

	// The same face (another capture of it) under identity B: duplicate.
	second := ff.session(sessionN("b"), idB, facetest.Transformed(a, 0.8, 6))
	fa, _ = ff.handle(second.Envelope.SessionID, second)
	c := checkOf(t, fa, CheckDuplicateFace)
	expect(t, c, schemas.CheckFail, ReasonDuplicateFace)
	if c.Score == nil || *c.Score < DefaultDuplicateFaceThreshold || c.Threshold == nil || *c.Threshold != DefaultDuplicateFaceThreshold ||
		c.ModelVersion == nil || !strings.Contains(*c.ModelVersion, "fr_feature.onnx@") || !strings.Contains(*c.Detail, first.Envelope.SessionID) {
		t.Fatalf("duplicate check %+v", c)
	}

	// B is rejected for it. The same face under the same identity (verifying again): pass.
	ff.handle(second.Envelope.SessionID, decided(second, fa, schemas.StatusRejected))
	again := ff.session(sessionN("c"), idA, facetest.Transformed(a, 1.1, -4))
	fa, _ = ff.handle(again.Envelope.SessionID, again)
	expect(t, checkOf(t, fa, CheckDuplicateFace), schemas.CheckPass, "")

	// Another face under identity B: pass.
	other := ff.session(sessionN("d"), idB, ff.env.PortraitB(t))
	fa, _ = ff.handle(other.Envelope.SessionID, other)
	expect(t, checkOf(t, fa, CheckDuplicateFace), schemas.CheckPass, "")

	// Another tenant never sees the face.
	foreign := ff.session(sessionN("e"), idB, facetest.Transformed(a, 0.8, 6))
	foreign.Envelope.TenantID = "globex"
	fa, _ = ff.handle(foreign.Envelope.SessionID, foreign)
	expect(t, checkOf(t, fa, CheckDuplicateFace), schemas.CheckPass, "")
}

func TestDuplicateFaceOnlyVerifiedAndNotErased(t *testing.T) {
	ff := newFaceFixture(t)
	a := ff.env.PortraitA(t)
	first := ff.session(sessionN("a"), idA, a)
	fa, outs := ff.handle(first.Envelope.SessionID, first)
	if len(outs) != 1 {
		t.Fatalf("%d face index outputs", len(outs))
	}
	probe := func(n string) schemas.Check {
		st := ff.session(sessionN(n), idB, facetest.Transformed(a, 0.8, 6))
		fa, _ := ff.handle(st.Envelope.SessionID, st)
		return checkOf(t, fa, CheckDuplicateFace)
	}
	// Undecided: a warning (two identities in flight with one face); rejected: not searched.
	expect(t, probe("b"), schemas.CheckWarn, ReasonDuplicateInFlight)
	ff.handle(first.Envelope.SessionID, decided(first, fa, schemas.StatusRejected))
	if rec, ok := ff.index.Get(first.Envelope.SessionID); !ok || rec.Outcome != schemas.StatusRejected {
		t.Fatalf("rejected entry %+v %v", rec, ok)
	}
	expect(t, probe("c"), schemas.CheckPass, "")

	// Verified: searched; a repeated decided snapshot writes nothing more.
	ver := decided(first, fa, schemas.StatusVerified)
	ff.handle(first.Envelope.SessionID, ver)
	if _, outs := ff.handle(first.Envelope.SessionID, ver); len(outs) != 0 {
		t.Fatalf("repeated decided snapshot wrote %d entries", len(outs))
	}
	expect(t, probe("d"), schemas.CheckFail, ReasonDuplicateFace)

	// Biometric erasure (consent withdrawal): tombstoned, no longer searched.
	erased := *ver
	erased.BiometricErasure = &schemas.BiometricErasure{TrackingID: "trk", ConsentID: "con", RequestedAt: ver.UpdatedAt}
	if _, outs := ff.handle(first.Envelope.SessionID, &erased); len(outs) != 1 || outs[0].Value != nil {
		t.Fatalf("biometric erasure outputs %+v", outs)
	}
	expect(t, probe("e"), schemas.CheckPass, "")

	// Session erasure (state tombstone): tombstoned too.
	ff.handle(first.Envelope.SessionID, ver)
	expect(t, probe("f"), schemas.CheckFail, ReasonDuplicateFace)
	if _, outs := ff.handle(first.Envelope.SessionID, nil); len(outs) != 1 || outs[0].Value != nil {
		t.Fatalf("tombstone outputs %+v", outs)
	}
	if _, ok := ff.index.Get(first.Envelope.SessionID); ok {
		t.Fatal("erased session still indexed")
	}
	expect(t, probe("g"), schemas.CheckPass, "")

	// Integrator retention: the service keeps no template once the session is decided.
	kept := ff.session(sessionN("h"), idA, a)
	kept.DataRetention = RetentionIntegrator
	fk, outs := ff.handle(kept.Envelope.SessionID, kept)
	if len(outs) != 1 || outs[0].Value == nil {
		t.Fatalf("integrator session's assessment wrote %+v", outs)
	}
	if _, outs := ff.handle(kept.Envelope.SessionID, decided(kept, fk, schemas.StatusVerified)); len(outs) != 1 || outs[0].Value != nil {
		t.Fatalf("integrator session's decision wrote %+v, want a tombstone", outs)
	}
	expect(t, probe("i"), schemas.CheckPass, "")
}

func TestFaceBlocklist(t *testing.T) {
	ff := newFaceFixture(t)
	a := ff.env.PortraitA(t)
	// The blocked session: assessed (embedded) and rejected; its face is in the index.
	blocked := ff.session(sessionN("a"), idA, a)
	fa, _ := ff.handle(blocked.Envelope.SessionID, blocked)
	expect(t, checkOf(t, fa, CheckBlocklistFace), schemas.CheckPass, "")
	ff.handle(blocked.Envelope.SessionID, decided(blocked, fa, schemas.StatusRejected))

	entry := func(id string, deleted bool, tenantID string) {
		t.Helper()
		src := blocked.Envelope.SessionID
		e := schemas.BlocklistEntry{
			Envelope: schemas.Envelope{EventID: "evt_" + id, SessionID: src, TenantID: tenantID, OccurredAt: time.Now().UTC().Truncate(time.Millisecond), Producer: "edge"},
			EntryID:  id, Kind: "face", SourceSessionID: &src, Embedding: []float32{}, CreatedAt: time.Now().UTC().Truncate(time.Millisecond), Deleted: deleted,
		}
		if deleted {
			e.Kind, e.SourceSessionID = "", nil
		}
		v, err := ff.codec.Encode(schemas.TopicBlocklist, &e)
		if err != nil {
			t.Fatal(err)
		}
		ff.blocks.Apply(id, v)
	}
	probe := func(n string, img image.Image) schemas.Check {
		st := ff.session(sessionN(n), idB, img)
		fa, _ := ff.handle(st.Envelope.SessionID, st)
		return checkOf(t, fa, CheckBlocklistFace)
	}
	entry("blk_1", false, tenant)
	c := probe("b", facetest.Transformed(a, 0.9, 5))
	expect(t, c, schemas.CheckFail, ReasonBlocklisted)
	if c.Score == nil || *c.Score < DefaultDuplicateFaceThreshold || !strings.Contains(*c.Detail, "blk_1") {
		t.Fatalf("blocklist check %+v", c)
	}
	expect(t, probe("c", ff.env.PortraitB(t)), schemas.CheckPass, "") // another face

	entry("blk_1", true, "globex") // a deletion by another tenant is ignored
	expect(t, probe("d", facetest.Transformed(a, 0.9, 5)), schemas.CheckFail, ReasonBlocklisted)
	entry("blk_1", true, tenant) // deleted: stops matching
	expect(t, probe("e", facetest.Transformed(a, 0.9, 5)), schemas.CheckPass, "")
	if ff.blocks.Len() != 0 {
		t.Fatalf("%d live face entries", ff.blocks.Len())
	}
}

func TestFaceChecksSkipped(t *testing.T) {
	ff := newFaceFixture(t)
	// A flow without a selfie: skipped no_selfie, and the assessment does not wait for liveness.
	st := matchSnapshot(sessionN("a"))
	st.Steps = []string{"document_front", "document_back", "nfc"}
	st.Captures = st.Captures[:3]
	st.Liveness = nil
	fa, outs := ff.handle(st.Envelope.SessionID, st)
	for _, name := range []string{CheckDuplicateFace, CheckBlocklistFace, CheckPresentationAttack} {
		expect(t, checkOf(t, fa, name), schemas.CheckSkipped, ReasonNoSelfie)
	}
	if len(outs) != 0 {
		t.Fatalf("indexed a session without a selfie: %+v", outs)
	}
	// A selfie without a face: skipped no_face_found, nothing indexed.
	st = ff.session(sessionN("b"), idA, facetest.Texture())
	fa, outs = ff.handle(st.Envelope.SessionID, st)
	expect(t, checkOf(t, fa, CheckDuplicateFace), schemas.CheckSkipped, ReasonNoFaceFound)
	expect(t, checkOf(t, fa, CheckBlocklistFace), schemas.CheckSkipped, ReasonNoFaceFound)
	if len(outs) != 0 {
		t.Fatalf("indexed a selfie without a face: %+v", outs)
	}
	// The selfie's blob is gone: skipped selfie_unavailable.
	st = matchSnapshot(sessionN("c"))
	fa, _ = ff.handle(st.Envelope.SessionID, st)
	expect(t, checkOf(t, fa, CheckDuplicateFace), schemas.CheckSkipped, ReasonSelfieUnavailable)
}

func TestPresentationAttack(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name    string
		live    bool
		attack  string
		signals map[string]float64
		score   float64
		status  string
		reason  string
	}{
		{"live", true, "", map[string]float64{"model": 0.97, "replay": 0, "print": 0.02}, 0.97, schemas.CheckPass, ""},
		{"print", false, "print", map[string]float64{"model": 0.9, "replay": 0.1, "print": 0.6}, 0.9, schemas.CheckFail, ReasonPresentationPrint},
		{"replay", false, "replay", map[string]float64{"model": 0.9, "replay": 1, "print": 0}, 0.9, schemas.CheckFail, ReasonPresentationReplay},
		{"mask", false, "mask", map[string]float64{"model": 0.1, "replay": 0, "print": 0}, 0.1, schemas.CheckFail, ReasonPresentationMask},
		{"replay from signals", false, "", map[string]float64{"model": 0.3, "replay": 0.8, "print": 0.2}, 0.3, schemas.CheckFail, ReasonPresentationReplay},
		{"print from signals", false, "", map[string]float64{"model": 0.3, "replay": 0.1, "print": 0.7}, 0.3, schemas.CheckFail, ReasonPresentationPrint},
		{"not assessable", false, "", nil, 0, schemas.CheckSkipped, ReasonLivenessUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := matchSnapshot(sessionN("p"))
			st.Liveness.Live, st.Liveness.Score, st.Liveness.Signals = tc.live, tc.score, tc.signals
			st.Liveness.AttackType = nil
			if tc.attack != "" {
				st.Liveness.AttackType = ptr(tc.attack)
			}
			c := checkOf(t, f.run(st), CheckPresentationAttack)
			expect(t, c, tc.status, tc.reason)
			if tc.status != schemas.CheckSkipped && (c.Score == nil || *c.Score != tc.score || c.Threshold == nil || *c.Threshold != 0.5 ||
				c.ModelVersion == nil || c.CaptureID == nil || *c.CaptureID != st.Liveness.CaptureID) {
				t.Fatalf("check %+v", c)
			}
		})
	}
}

func TestFaceIndexSlab(t *testing.T) {
	x := newFaceIndex(newCodec(t))
	put := func(sid, tenantID, outcome string, v ...float32) {
		x.Put(sid, &schemas.FaceIndexEntry{Envelope: schemas.Envelope{SessionID: sid, TenantID: tenantID}, Embedding: v, ModelVersion: "m", Outcome: outcome, IDNumberHash: "h_" + sid})
	}
	put("s1", "t", "verified", 1, 0, 0)
	put("s2", "t", "verified", 0, 1, 0)
	put("s3", "t", "verified", 0.9, 0.1, 0)
	put("s4", "t", "", 1, 0, 0)         // undecided: not searched
	put("s5", "u", "verified", 1, 0, 0) // another tenant
	hits := x.Search("t", "m", []float32{2, 0, 0}, 0.5, 10, "")
	if len(hits) != 2 || hits[0].SessionID != "s1" || hits[1].SessionID != "s3" || hits[0].IDNumberHash != "h_s1" {
		t.Fatalf("hits %+v", hits)
	}
	if hits := x.Search("t", "m", []float32{1, 0, 0}, 0.5, 10, "s1"); len(hits) != 1 || hits[0].SessionID != "s3" {
		t.Fatalf("excluding s1: %+v", hits)
	}
	if hits := x.Search("t", "other-model", []float32{1, 0, 0}, 0.5, 10, ""); len(hits) != 0 {
		t.Fatalf("another model's faces compared: %+v", hits)
	}
	// Removing the first slot moves the last face into it; everything stays findable.
	x.Apply("s1", nil)
	if hits := x.Search("t", "m", []float32{0, 1, 0}, 0.5, 10, ""); len(hits) != 1 || hits[0].SessionID != "s2" {
		t.Fatalf("after removal: %+v", hits)
	}
	if r, ok := x.Get("s3"); !ok || r.Outcome != "verified" || len(r.Embedding) != 3 {
		t.Fatalf("get s3 %+v %v", r, ok)
	}
	if r, ok := x.Get("s4"); !ok || r.Outcome != "" {
		t.Fatalf("get s4 %+v %v", r, ok)
	}
	if all, verified := x.Len(); all != 4 || verified != 3 {
		t.Fatalf("len %d/%d", all, verified)
	}
	x.Apply("s2", []byte("garbage")) // undecodable: the entry goes
	if _, ok := x.Get("s2"); ok {
		t.Fatal("undecodable value kept the entry")
	}

	// Undecided faces are searched apart, and leave that search once decided or removed.
	put("s6", "t", "", 0.95, 0.05, 0)
	put("s7", "t", "rejected", 1, 0, 0)
	if hits := x.SearchPending("t", "m", []float32{1, 0, 0}, 0.5, 10, "s6"); len(hits) != 1 || hits[0].SessionID != "s4" {
		t.Fatalf("pending hits %+v", hits)
	}
	put("s4", "t", "rejected", 1, 0, 0)
	x.Apply("s6", nil)
	if hits := x.SearchPending("t", "m", []float32{1, 0, 0}, 0.5, 10, ""); len(hits) != 0 {
		t.Fatalf("decided or removed faces still pending: %+v", hits)
	}
}
