package session

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/idstream/idstream/schemas"
)

const trk = "trk_1"

func blobRef(name, uri string) schemas.BlobRef {
	return schemas.BlobRef{Name: name, URI: uri, SHA256: "00", Size: 1, MediaType: "application/octet-stream"}
}

// chipSession folds a chip_id_card session of trk with every kind of biometric blob: a
// selfie (image and video, assessed), an nfc read (sod, dg1, dg2), a document read with a
// face crop and a chip result with the decoded chip face. It is processing, not decided.
func chipSession(t *testing.T) *schemas.SessionState {
	t.Helper()
	o := opened("chip_id_card", "document_front", "document_back", "nfc", "selfie")
	o.Opened.TrackingID = ptr(trk)
	front := capture("document_front", "cap_f", 1)
	selfie := capture("selfie", "cap_s", 3)
	selfie.Blobs = append(selfie.Blobs, blobRef("video", "blob://cap_s/video"))
	nfc := &schemas.CaptureSubmitted{Envelope: env("evt_cap_n", 4), CaptureID: "cap_n", Step: "nfc", Blobs: []schemas.BlobRef{
		blobRef("sod", "blob://cap_n/sod"), blobRef("dg1", "blob://cap_n/dg1"), blobRef("dg2", "blob://cap_n/dg2")}}
	qs := quality("selfie", "cap_s", true, 5)
	qs.Image = selfie.Blobs[0]
	events := []any{
		o, front, quality("document_front", "cap_f", true, 2), capture("document_back", "cap_b", 2),
		quality("document_back", "cap_b", true, 2), selfie, qs, nfc,
		&schemas.DocumentRead{Envelope: env("evt_doc", 6), CaptureID: "cap_f", Step: "document_front",
			FaceCrop: ptr(blobRef("face", "blob://cap_f/face"))},
		&schemas.ChipVerified{Envelope: env("evt_chip", 7), CaptureID: "cap_n",
			FaceImage: ptr(blobRef("chip_face", "blob://cap_n/chip_face.jpg"))},
	}
	var st *schemas.SessionState
	for i, e := range events {
		var changed bool
		if st, changed = Fold(st, e); !changed {
			t.Fatalf("event %d (%T) changed nothing", i, e)
		}
	}
	if st.Status != schemas.StatusProcessing {
		t.Fatalf("status %s", st.Status)
	}
	return st
}

func eraseOrder(id string, sec int, consentID string, requestedSec int) *schemas.SessionEvent {
	return sessionEv(id, sec, func(e *schemas.SessionEvent) {
		e.EraseBiometrics = &schemas.EraseBiometrics{TrackingID: trk, ConsentID: consentID,
			Categories: schemas.BiometricCategories(), RequestedAt: at(requestedSec)}
	})
}

func bioErased(id string, sec int, consentID string, uris ...string) *schemas.SessionEvent {
	return sessionEv(id, sec, func(e *schemas.SessionEvent) {
		e.BiometricsErased = &schemas.BiometricsErased{ConsentID: consentID, BlobsDeleted: uris, ErasedAt: at(sec)}
	})
}

func uris(refs []schemas.BlobRef) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, r.URI)
	}
	slices.Sort(out)
	return out
}

// allURIs lists every blob URI the snapshot still references.
func allURIs(st *schemas.SessionState) []string {
	var refs []schemas.BlobRef
	for _, c := range st.Captures {
		refs = append(refs, c.Blobs...)
		if c.Quality != nil {
			refs = append(refs, c.Quality.Image)
		}
	}
	for _, d := range st.Documents {
		if d.FaceCrop != nil {
			refs = append(refs, *d.FaceCrop)
		}
	}
	if st.Chip != nil && st.Chip.FaceImage != nil {
		refs = append(refs, *st.Chip.FaceImage)
	}
	return slices.DeleteFunc(uris(refs), func(u string) bool { return u == "" })
}

var faceURIs = []string{"blob://cap_f/face", "blob://cap_n/chip_face.jpg", "blob://cap_n/dg2", "blob://cap_s", "blob://cap_s/video"}

func TestEraseBiometricsQueuesFaceBlobsAndCancels(t *testing.T) {
	st := chipSession(t)
	before := allURIs(st)
	next, changed := Fold(st, eraseOrder("evt_erase", 20, "con_w", 10))
	if !changed || next.BiometricErasure == nil {
		t.Fatal("erasure order not folded")
	}
	e := next.BiometricErasure
	if got := uris(e.Pending); !reflect.DeepEqual(got, faceURIs) {
		t.Errorf("pending %v, want %v", got, faceURIs)
	}
	if e.ConsentID != "con_w" || e.TrackingID != trk || !e.RequestedAt.Equal(at(10)) || e.ErasedAt != nil || len(e.BlobsDeleted) != 0 {
		t.Errorf("erasure %+v", e)
	}
	for _, u := range allURIs(next) {
		if slices.Contains(faceURIs, u) {
			t.Errorf("snapshot still references %s", u)
		}
	}
	if want := []string{"blob://cap_b", "blob://cap_f", "blob://cap_n/dg1", "blob://cap_n/sod"}; !reflect.DeepEqual(allURIs(next), want) {
		t.Errorf("kept %v, want %v", allURIs(next), want)
	}
	if next.Status != schemas.StatusCancelled || next.Version != st.Version+1 || next.Envelope.EventID != "evt_erase" {
		t.Errorf("status %s version %d envelope %+v", next.Status, next.Version, next.Envelope)
	}
	if !reflect.DeepEqual(allURIs(st), before) || st.BiometricErasure != nil {
		t.Error("Fold mutated the previous state")
	}
	// Idempotent: the same order again, or another withdrawal's, changes nothing.
	if _, changed := Fold(next, eraseOrder("evt_erase", 20, "con_w", 10)); changed {
		t.Error("replayed order changed the state")
	}
	if _, changed := Fold(next, eraseOrder("evt_erase2", 30, "con_w2", 25)); changed {
		t.Error("a second order changed an erased state")
	}
}

func TestEraseBiometricsIgnored(t *testing.T) {
	st := chipSession(t)
	for name, ev := range map[string]*schemas.SessionEvent{
		"opened after the withdrawal": eraseOrder("evt_e", 20, "con_w", -1),
		"other tracking id": sessionEv("evt_e", 20, func(e *schemas.SessionEvent) {
			e.EraseBiometrics = &schemas.EraseBiometrics{TrackingID: "trk_other", ConsentID: "con_w", RequestedAt: at(10)}
		}),
		"other tenant": func() *schemas.SessionEvent {
			e := eraseOrder("evt_e", 20, "con_w", 10)
			e.Envelope.TenantID = "ten_2"
			return e
		}(),
	} {
		if _, changed := Fold(st, ev); changed {
			t.Errorf("%s: changed the state", name)
		}
	}
	if next, changed := Fold(nil, eraseOrder("evt_e", 20, "con_w", 10)); changed || next != nil {
		t.Error("an order for an unknown session created a state")
	}
}

func TestEraseBiometricsKeepsDecidedStatus(t *testing.T) {
	st := chipSession(t)
	st, _ = Fold(st, &schemas.Decision{Envelope: env("evt_dec", 8), DecisionID: "dec_1", Outcome: schemas.StatusVerified, DecidedAt: at(8)})
	next, changed := Fold(st, eraseOrder("evt_erase", 20, "con_w", 10))
	if !changed || next.Status != schemas.StatusVerified || next.Decision == nil || len(next.BiometricErasure.Pending) != len(faceURIs) {
		t.Fatalf("changed %v, state %+v", changed, next)
	}
}

func TestBiometricsErasedRecordsDeletion(t *testing.T) {
	st, _ := Fold(chipSession(t), eraseOrder("evt_erase", 20, "con_w", 10))
	part, changed := Fold(st, bioErased("evt_d1", 21, "con_w", faceURIs[:2]...))
	if !changed || len(part.BiometricErasure.Pending) != 3 || part.BiometricErasure.ErasedAt != nil ||
		!reflect.DeepEqual(part.BiometricErasure.BlobsDeleted, faceURIs[:2]) {
		t.Fatalf("partial deletion: %+v", part.BiometricErasure)
	}
	if _, changed := Fold(part, bioErased("evt_x", 21, "con_other", faceURIs...)); changed {
		t.Error("a deletion for another withdrawal was folded")
	}
	done, changed := Fold(part, bioErased("evt_d2", 22, "con_w", faceURIs...))
	if !changed || len(done.BiometricErasure.Pending) != 0 || done.BiometricErasure.ErasedAt == nil ||
		!done.BiometricErasure.ErasedAt.Equal(at(22)) || len(done.BiometricErasure.BlobsDeleted) != len(faceURIs) {
		t.Fatalf("complete deletion: %+v", done.BiometricErasure)
	}
	for _, ev := range []any{bioErased("evt_d2", 22, "con_w", faceURIs...), bioErased("evt_d1", 21, "con_w", faceURIs[:2]...)} {
		if _, changed := Fold(done, ev); changed {
			t.Error("a replayed deletion changed the state")
		}
	}
	// An erasure with nothing to delete is recorded by an empty deletion.
	o := opened("id_card", "document_front", "document_back", "selfie")
	o.Opened.TrackingID = ptr(trk)
	empty, _ := Fold(nil, o)
	empty, _ = Fold(empty, eraseOrder("evt_erase", 20, "con_w", 10))
	empty, changed = Fold(empty, bioErased("evt_d", 21, "con_w"))
	if !changed || empty.BiometricErasure.ErasedAt == nil || empty.Status != schemas.StatusCancelled {
		t.Fatalf("empty erasure: %+v", empty.BiometricErasure)
	}
}

func TestLateBiometricsAreQueued(t *testing.T) {
	st, _ := Fold(chipSession(t), eraseOrder("evt_erase", 20, "con_w", 10))
	st, _ = Fold(st, bioErased("evt_d", 21, "con_w", faceURIs...))
	// Replays of events folded before the erasure name deleted blobs only: nothing changes.
	for _, e := range []any{
		&schemas.ChipVerified{Envelope: env("evt_chip", 7), CaptureID: "cap_n", FaceImage: ptr(blobRef("chip_face", "blob://cap_n/chip_face.jpg"))},
		capture("selfie", "cap_s", 3),
		capture("document_front", "cap_f", 1),
	} {
		if _, changed := Fold(st, e); changed {
			t.Errorf("replayed %T changed the state", e)
		}
	}
	// A result in flight names a new face blob: it is queued, not folded.
	late := &schemas.DocumentRead{Envelope: env("evt_doc2", 30), CaptureID: "cap_f", Step: "document_front",
		FaceCrop: ptr(blobRef("face", "blob://cap_f/face2")), Checks: []schemas.Check{check("document.type", "pass")}}
	next, changed := Fold(st, late)
	if !changed || uris(next.BiometricErasure.Pending)[0] != "blob://cap_f/face2" || next.BiometricErasure.ErasedAt != nil ||
		len(next.Checks) != len(st.Checks) || allURIs(next)[0] != allURIs(st)[0] {
		t.Fatalf("late face crop: %+v", next.BiometricErasure)
	}
	next, changed = Fold(next, bioErased("evt_d3", 31, "con_w", "blob://cap_f/face2"))
	if !changed || len(next.BiometricErasure.Pending) != 0 || !next.BiometricErasure.ErasedAt.Equal(at(31)) {
		t.Fatalf("late deletion: %+v", next.BiometricErasure)
	}
}

// TestGroupFoldsErasureThroughCodec: the order and the deletion travel as Avro and land
// in the snapshot the group writes.
func TestGroupFoldsErasureThroughCodec(t *testing.T) {
	c := newCodec(t)
	g := NewGroup(c)
	table := memTable{}
	o := opened("id_card", "document_front", "document_back", "selfie")
	o.Opened.TrackingID = ptr(trk)
	sel := capture("selfie", "cap_s", 1)
	for i, e := range []any{o, sel, eraseOrder("evt_erase", 20, "con_w", 10), bioErased("evt_d", 21, "con_w", "blob://cap_s")} {
		outs, err := g.Handler(context.Background(), record(t, c, e, int64(i)), table)
		if err != nil || len(outs) != 1 {
			t.Fatalf("event %d: %v %+v", i, err, outs)
		}
		table.apply(outs, g.Table)
	}
	st := decodeState(t, c, table[sid])
	e := st.BiometricErasure
	if e == nil || e.ConsentID != "con_w" || len(e.Pending) != 0 || !reflect.DeepEqual(e.BlobsDeleted, []string{"blob://cap_s"}) ||
		e.ErasedAt == nil || st.Status != schemas.StatusCancelled || len(st.Captures[0].Blobs) != 0 {
		t.Fatalf("state %+v erasure %+v", st, e)
	}
}
