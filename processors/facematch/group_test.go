package facematch

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

var (
	selfieAt = time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC)
	chipAt   = time.Date(2026, 11, 22, 10, 0, 3, 0, time.UTC)
	docAt    = time.Date(2026, 11, 22, 10, 0, 5, 0, time.UTC)
)

type fixture struct {
	codec *schemas.Codec
	blobs *blob.FS
	group stream.Group
}

func newFixture(t testing.TB, opts ...Option) *fixture {
	t.Helper()
	testEngine(t)
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatalf("NewCodec: %v", err)
	}
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatalf("NewFS: %v", err)
	}
	t.Cleanup(func() { _ = blobs.Close() })
	return &fixture{codec: codec, blobs: blobs, group: newGroup(t, codec, blobs, opts...)}
}

func newGroup(t testing.TB, codec *schemas.Codec, blobs blob.Store, opts ...Option) stream.Group {
	t.Helper()
	g, err := NewGroup(codec, blobs, testEngine(t), opts...)
	if err != nil {
		t.Fatalf("NewGroup: %v", err)
	}
	return g
}

// put stores img as a JPEG at key and returns its reference.
func (f *fixture) put(t testing.TB, key, name string, data []byte) *schemas.BlobRef {
	t.Helper()
	obj, err := f.blobs.Put(context.Background(), "ten_1/ses_1/"+key, data, "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	return &schemas.BlobRef{Name: name, URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}
}

// faces are the face images of a snapshot; nil ones are absent.
type faces struct {
	selfie, chip, doc []byte
}

// state builds the snapshot of a chip_id_card session in processing whose selfie, chip and
// document front carry the images of fs.
func (f *fixture) state(t testing.TB, fs faces) *schemas.SessionState {
	t.Helper()
	st := &schemas.SessionState{
		Envelope: schemas.Envelope{EventID: "evt_last", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: docAt.Add(time.Second), Producer: "session"},
		Version:  7, Status: schemas.StatusProcessing, Flow: "chip_id_card",
		Steps:  []string{"document_front", "document_back", "nfc", "selfie"},
		Locale: "vi", DataRetention: "service", Nonce: []byte("12345678"),
	}
	accepted := func(step, captureID string, at time.Time, blobs ...schemas.BlobRef) schemas.StepCapture {
		return schemas.StepCapture{Step: step, CaptureID: captureID, Status: schemas.CaptureAccepted, Blobs: blobs, SubmittedAt: at, UpdatedAt: at}
	}
	st.Captures = append(st.Captures, accepted("document_front", "cap_doc", docAt, *f.put(t, "cap_doc/image", "image", encodeJPEG(t, texture(), 80))))
	st.Captures = append(st.Captures, accepted("nfc", "cap_nfc", chipAt))
	if fs.chip != nil {
		st.Chip = &schemas.ChipVerified{
			Envelope:  schemas.Envelope{EventID: "evt_chip_cap_nfc", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: chipAt, Producer: "chip"},
			CaptureID: "cap_nfc", DocumentType: "chip_id_card",
			FaceImage: f.put(t, "cap_nfc/chip_face.jpg", "face", fs.chip),
		}
	}
	if fs.doc != nil {
		st.Documents = []schemas.DocumentRead{{
			Envelope:  schemas.Envelope{EventID: "evt_ocr_cap_doc", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: docAt, Producer: "ocr"},
			CaptureID: "cap_doc", Step: "document_front", DocumentType: "chip_id_card", Side: "front",
			FaceCrop: f.put(t, "cap_doc/face.jpg", "face", fs.doc),
		}}
	}
	if fs.selfie != nil {
		c := accepted("selfie", "cap_selfie", selfieAt, *f.put(t, "cap_selfie/image", "image", fs.selfie))
		c.Quality = &schemas.QualityAssessed{
			Envelope:  schemas.Envelope{EventID: "evt_q_cap_selfie", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: selfieAt, Producer: "quality"},
			CaptureID: "cap_selfie", Step: "selfie", Passed: true, Framing: "ok", Image: c.Blobs[0],
		}
		st.Captures = append(st.Captures, c)
	}
	return st
}

func (f *fixture) record(t testing.TB, st *schemas.SessionState) *stream.Record {
	t.Helper()
	v, err := f.codec.Encode(schemas.TopicSessionState, st)
	if err != nil {
		t.Fatalf("encode snapshot: %v", err)
	}
	return &stream.Record{Topic: schemas.TopicSessionState, Key: []byte("ses_1"), Value: v}
}

func outputs(t testing.TB, g stream.Group, rec *stream.Record) []stream.Output {
	t.Helper()
	outs, err := g.Handler(context.Background(), rec)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	return outs
}

// matched runs the handler on st and decodes its single output.
func (f *fixture) matched(t *testing.T, st *schemas.SessionState) schemas.FacesMatched {
	t.Helper()
	outs := outputs(t, f.group, f.record(t, st))
	if len(outs) != 1 {
		t.Fatalf("handler returned %d outputs, want 1", len(outs))
	}
	if outs[0].Topic != schemas.TopicFacematch || string(outs[0].Key) != "ses_1" {
		t.Fatalf("output to %s keyed %q, want %s keyed ses_1", outs[0].Topic, outs[0].Key, schemas.TopicFacematch)
	}
	var ev schemas.FacesMatched
	if err := f.codec.Decode(schemas.TopicFacematch, outs[0].Value, &ev); err != nil {
		t.Fatalf("decode output: %v", err)
	}
	for _, c := range ev.Checks {
		if c.Source != Producer || c.Threshold == nil || c.ModelVersion == nil || *c.ModelVersion != ev.ModelVersion || c.CaptureID == nil {
			t.Fatalf("check %+v incomplete", c)
		}
		t.Logf("%s: %s score %v reason %v", c.Name, c.Status, fmtScore(c.Score), deref(c.ReasonCode))
	}
	return ev
}

func fmtScore(p *float64) any {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func check(t *testing.T, ev schemas.FacesMatched, name string) schemas.Check {
	t.Helper()
	i := slices.IndexFunc(ev.Checks, func(c schemas.Check) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no check %s in %+v", name, ev.Checks)
	}
	return ev.Checks[i]
}

func names(ev schemas.FacesMatched) []string {
	var out []string
	for _, c := range ev.Checks {
		out = append(out, c.Name)
	}
	return out
}

// Images: the selfie is person A; "sameChip" is person A again, mirrored, at half size,
// rotated and re-encoded at JPEG 70 (a chip photo is small and heavily compressed);
// "otherChip" is person B the same way; "sameDoc" is person A at 0.7×, rotated the other way.
func selfieA(t testing.TB) []byte   { return encodeJPEG(t, personA(t), 92) }
func sameChip(t testing.TB) []byte  { return encodeJPEG(t, transformed(personA(t), 0.5, 4), 70) }
func otherChip(t testing.TB) []byte { return encodeJPEG(t, transformed(personB(t), 0.6, 4), 70) }
func sameDoc(t testing.TB) []byte   { return encodeJPEG(t, transformed(personA(t), 0.7, -8), 75) }

func TestGroupDeclaration(t *testing.T) {
	g := newFixture(t).group
	if g.Name != "facematch" || !slices.Equal(g.Inputs, []string{schemas.TopicSessionState}) ||
		!slices.Equal(g.Outputs, []string{schemas.TopicFacematch}) || g.Handler == nil {
		t.Fatalf("group = %+v", g)
	}
}

func TestSelfieMatchesChipOfSamePerson(t *testing.T) {
	f := newFixture(t)
	ev := f.matched(t, f.state(t, faces{selfie: selfieA(t), chip: sameChip(t)}))
	if !regexp.MustCompile(`^evt_face_[0-9a-f]{32}$`).MatchString(ev.Envelope.EventID) ||
		ev.Envelope.SessionID != "ses_1" || ev.Envelope.TenantID != "ten_1" || ev.Envelope.Producer != "facematch" ||
		!ev.Envelope.OccurredAt.Equal(chipAt) {
		t.Errorf("envelope = %+v (occurred_at must be the latest input's, %v)", ev.Envelope, chipAt)
	}
	if !regexp.MustCompile(`^fr_detect\.onnx@[0-9a-f]{8}\+fr_landmark\.onnx@[0-9a-f]{8}\+fr_feature\.onnx@[0-9a-f]{8}$`).MatchString(ev.ModelVersion) {
		t.Errorf("model version %q does not name the model files", ev.ModelVersion)
	}
	if len(ev.Pairs) != 1 || ev.Pairs[0].Pair != PairSelfieChip || !ev.Pairs[0].Matched || ev.Pairs[0].Threshold != face.DefaultMatchThreshold ||
		ev.Pairs[0].Similarity < ev.Pairs[0].Threshold {
		t.Fatalf("pairs = %+v, want selfie_chip matched", ev.Pairs)
	}
	c := check(t, ev, CheckSelfieChip)
	if len(ev.Checks) != 1 || c.Status != schemas.CheckPass || c.ReasonCode != nil || *c.Score != ev.Pairs[0].Similarity ||
		*c.Threshold != face.DefaultMatchThreshold || *c.CaptureID != "cap_selfie" {
		t.Fatalf("check = %+v", c)
	}
}

func TestSelfieAgainstChipOfAnotherPerson(t *testing.T) {
	f := newFixture(t)
	ev := f.matched(t, f.state(t, faces{selfie: selfieA(t), chip: otherChip(t)}))
	c := check(t, ev, CheckSelfieChip)
	if c.Status != schemas.CheckFail || deref(c.ReasonCode) != ReasonFaceMismatch || c.Score == nil || *c.Score >= face.DefaultMatchThreshold {
		t.Fatalf("check = %+v, want fail face_mismatch below the threshold", c)
	}
	if len(ev.Pairs) != 1 || ev.Pairs[0].Matched {
		t.Fatalf("pairs = %+v", ev.Pairs)
	}
}

func TestThresholdIsConfiguration(t *testing.T) {
	f := newFixture(t, WithThreshold(0.999))
	ev := f.matched(t, f.state(t, faces{selfie: selfieA(t), chip: sameChip(t)}))
	if c := check(t, ev, CheckSelfieChip); c.Status != schemas.CheckFail || *c.Threshold != 0.999 {
		t.Fatalf("with threshold 0.999 the same person is %+v", c)
	}
}

func TestAllThreePairs(t *testing.T) {
	f := newFixture(t)
	ev := f.matched(t, f.state(t, faces{selfie: selfieA(t), doc: sameDoc(t), chip: otherChip(t)}))
	if want := []string{CheckSelfieChip, CheckSelfieDocument, CheckDocumentChip}; !slices.Equal(names(ev), want) {
		t.Fatalf("checks %v, want %v", names(ev), want)
	}
	if c := check(t, ev, CheckSelfieDocument); c.Status != schemas.CheckPass {
		t.Errorf("selfie and document of one person: %+v", c)
	}
	for _, n := range []string{CheckSelfieChip, CheckDocumentChip} {
		if c := check(t, ev, n); c.Status != schemas.CheckFail || deref(c.ReasonCode) != ReasonFaceMismatch {
			t.Errorf("%s against another person's chip: %+v", n, c)
		}
	}
	if c := check(t, ev, CheckDocumentChip); *c.CaptureID != "cap_doc" {
		t.Errorf("document_chip is about capture %s, want cap_doc", *c.CaptureID)
	}
	if !ev.Envelope.OccurredAt.Equal(docAt) {
		t.Errorf("occurred_at %v, want the document read's %v", ev.Envelope.OccurredAt, docAt)
	}
}

func TestNoFaceInDocumentCrop(t *testing.T) {
	f := newFixture(t)
	ev := f.matched(t, f.state(t, faces{selfie: selfieA(t), doc: encodeJPEG(t, texture(), 85), chip: sameChip(t)}))
	if c := check(t, ev, CheckSelfieChip); c.Status != schemas.CheckPass {
		t.Errorf("selfie_chip = %+v", c)
	}
	for _, n := range []string{CheckSelfieDocument, CheckDocumentChip} {
		if c := check(t, ev, n); c.Status != schemas.CheckFail || deref(c.ReasonCode) != ReasonNoFaceFound || c.Score != nil {
			t.Errorf("%s = %+v, want fail no_face_found without score", n, c)
		}
	}
	if len(ev.Pairs) != 1 || ev.Pairs[0].Pair != PairSelfieChip {
		t.Errorf("pairs = %+v, want only the compared selfie_chip", ev.Pairs)
	}
}

// folded returns st with ev folded in as the session group does: Faces replaced, checks
// replaced by name, version bumped.
func folded(st *schemas.SessionState, ev schemas.FacesMatched) *schemas.SessionState {
	next := *st
	next.Faces = &ev
	next.Checks = slices.Clone(st.Checks)
	for _, c := range ev.Checks {
		if i := slices.IndexFunc(next.Checks, func(x schemas.Check) bool { return x.Name == c.Name }); i >= 0 {
			next.Checks[i] = c
		} else {
			next.Checks = append(next.Checks, c)
		}
	}
	next.Version++
	next.Envelope = ev.Envelope
	return &next
}

func TestSnapshotAlreadyCoveringThePairIsQuiet(t *testing.T) {
	f := newFixture(t)
	st := f.state(t, faces{selfie: selfieA(t), chip: sameChip(t)})
	ev := f.matched(t, st)
	next := folded(st, ev)
	fresh := newGroup(t, f.codec, f.blobs, WithCacheSize(0))
	if outs := outputs(t, fresh, f.record(t, next)); len(outs) != 0 {
		t.Fatalf("snapshot already holding the result: %d outputs", len(outs))
	}
	// Another event folded later (liveness): still nothing to do.
	later := *next
	later.Version++
	later.Liveness = &schemas.LivenessAssessed{Envelope: schemas.Envelope{EventID: "evt_live_cap_selfie", SessionID: "ses_1", OccurredAt: docAt}, CaptureID: "cap_selfie", Live: true}
	if outs := outputs(t, fresh, f.record(t, &later)); len(outs) != 0 {
		t.Fatalf("later snapshot: %d outputs", len(outs))
	}
	// A new selfie capture is new input: compared again, under another event id.
	retaken := *next
	retaken.Captures = slices.Clone(next.Captures)
	i := slices.IndexFunc(retaken.Captures, func(c schemas.StepCapture) bool { return c.Step == "selfie" })
	retaken.Captures[i].CaptureID = "cap_selfie_2"
	again := f.matched(t, &retaken)
	if again.Envelope.EventID == ev.Envelope.EventID || *check(t, again, CheckSelfieChip).CaptureID != "cap_selfie_2" {
		t.Fatalf("retaken selfie: event %s (before %s)", again.Envelope.EventID, ev.Envelope.EventID)
	}
}

func TestReplayAndRepeatedSnapshotsAreIdentical(t *testing.T) {
	f := newFixture(t)
	st := f.state(t, faces{selfie: selfieA(t), doc: sameDoc(t), chip: sameChip(t)})
	noCache := newGroup(t, f.codec, f.blobs, WithCacheSize(0))
	first := outputs(t, noCache, f.record(t, st))
	second := outputs(t, noCache, f.record(t, st))
	// The snapshot after another event (the group's own result not folded in yet).
	later := *st
	later.Version++
	later.Envelope = schemas.Envelope{EventID: "evt_live_cap_selfie", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: docAt.Add(time.Minute), Producer: "liveness"}
	third := outputs(t, noCache, f.record(t, &later))
	cached := outputs(t, f.group, f.record(t, &later))
	for i, outs := range [][]stream.Output{first, second, third, cached} {
		if len(outs) != 1 || !bytes.Equal(outs[0].Value, first[0].Value) {
			t.Fatalf("run %d produced a different event", i)
		}
	}
}

func TestCarriesPairsAlreadyMatched(t *testing.T) {
	f := newFixture(t)
	st := f.state(t, faces{selfie: selfieA(t), doc: sameDoc(t), chip: sameChip(t)})
	withoutDoc := *st
	withoutDoc.Documents = nil
	ev1 := f.matched(t, &withoutDoc)
	// The document read arrives after the selfie_chip result was folded in.
	next := folded(st, ev1)
	next.Documents = st.Documents
	ev2 := f.matched(t, next)
	fromScratch := f.matched(t, st)
	if ev2.Envelope.EventID != fromScratch.Envelope.EventID || !slices.Equal(ev2.Pairs, fromScratch.Pairs) || len(ev2.Checks) != 3 {
		t.Fatalf("with carried selfie_chip: %+v\nfrom scratch: %+v", ev2, fromScratch)
	}
	// selfie_chip is carried over, not recomputed: a marked value survives.
	marked := ev1
	marked.Pairs = slices.Clone(ev1.Pairs)
	marked.Pairs[0].Similarity = 0.777
	noCache := newGroup(t, f.codec, f.blobs, WithCacheSize(0))
	next = folded(st, marked)
	next.Documents = st.Documents
	outs := outputs(t, noCache, f.record(t, next))
	var ev3 schemas.FacesMatched
	if len(outs) != 1 || f.codec.Decode(schemas.TopicFacematch, outs[0].Value, &ev3) != nil {
		t.Fatal("no result")
	}
	if ev3.Pairs[0].Pair != PairSelfieChip || ev3.Pairs[0].Similarity != 0.777 || len(ev3.Pairs) != 3 {
		t.Fatalf("pairs %+v, want selfie_chip carried over", ev3.Pairs)
	}
}

func TestNothingToMatch(t *testing.T) {
	f := newFixture(t, WithCacheSize(0)) // every case has the same faces: no cached answer

	base := func() *schemas.SessionState { return f.state(t, faces{selfie: selfieA(t), chip: sameChip(t)}) }
	selfieIdx := func(st *schemas.SessionState) int {
		return slices.IndexFunc(st.Captures, func(c schemas.StepCapture) bool { return c.Step == "selfie" })
	}
	cases := map[string]func(st *schemas.SessionState){
		"verified":  func(st *schemas.SessionState) { st.Status = schemas.StatusVerified },
		"cancelled": func(st *schemas.SessionState) { st.Status = schemas.StatusCancelled },
		"biometrics erased": func(st *schemas.SessionState) {
			st.BiometricErasure = &schemas.BiometricErasure{TrackingID: "trk_1", ConsentID: "con_1", RequestedAt: docAt}
		},
		"selfie to retake": func(st *schemas.SessionState) { st.Captures[selfieIdx(st)].Status = schemas.CaptureRetake },
		"no selfie": func(st *schemas.SessionState) {
			st.Captures = slices.Delete(st.Captures, selfieIdx(st), selfieIdx(st)+1)
		},
		"no other face": func(st *schemas.SessionState) { st.Chip.FaceImage = nil },
		"chip of an older nfc capture": func(st *schemas.SessionState) {
			i := slices.IndexFunc(st.Captures, func(c schemas.StepCapture) bool { return c.Step == "nfc" })
			st.Captures[i].CaptureID = "cap_nfc_2"
		},
		"document read of an older capture": func(st *schemas.SessionState) {
			st.Chip = nil
			crop := st.Captures[0].Blobs[0]
			st.Documents = []schemas.DocumentRead{{CaptureID: "cap_doc_old", Step: "document_front", FaceCrop: &crop}}
		},
		"erased chip face": func(st *schemas.SessionState) {
			if err := f.blobs.Delete(context.Background(), st.Chip.FaceImage.URI); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			st := base()
			mutate(st)
			if outs := outputs(t, f.group, f.record(t, st)); len(outs) != 0 {
				t.Fatalf("%d outputs, want none", len(outs))
			}
		})
	}
	t.Run("tombstone", func(t *testing.T) {
		if outs := outputs(t, f.group, &stream.Record{Topic: schemas.TopicSessionState, Key: []byte("ses_1")}); len(outs) != 0 {
			t.Fatalf("%d outputs", len(outs))
		}
	})
}

func TestBadRecordsAreErrors(t *testing.T) {
	f := newFixture(t)
	for name, rec := range map[string]*stream.Record{
		"other topic": {Topic: schemas.TopicQuality, Key: []byte("ses_1"), Value: []byte{1}},
		"garbage":     {Topic: schemas.TopicSessionState, Key: []byte("ses_1"), Value: []byte("not avro")},
	} {
		if _, err := f.group.Handler(context.Background(), rec); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
