package session

import (
	"slices"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/schemas"
)

// chipFaceBlobName is the BlobRef.Name of an nfc capture's DG2 file (the chip's face
// image), as the edge stores it.
const chipFaceBlobName = "dg2"

// Biometric blobs of a session (what a consent withdrawal erases): every blob of a selfie
// capture (image, video) and the image its quality assessment names, the DG2 file of an
// nfc capture, the face crop of every document read and the chip's decoded face
// (ChipVerified.FaceImage). Document images and the other chip files are not biometric
// data in this sense and are kept.

// foldEraseBiometrics applies an erasure order: the session's biometric blob references
// leave the snapshot and are queued in BiometricErasure.Pending for the erasure group to
// delete; a session not yet terminal is cancelled (a withdrawal stops processing). It is
// ignored when the session already has an erasure (the first one wins; blobs arriving
// later are queued by queueLateBiometrics), belongs to another tenant or tracking id, or
// was opened after the withdrawal.
func foldEraseBiometrics(st *schemas.SessionState, env schemas.Envelope, ev *schemas.EraseBiometrics) (*schemas.SessionState, bool) {
	if st.BiometricErasure != nil || st.TrackingID == nil || *st.TrackingID != ev.TrackingID ||
		env.TenantID != st.Envelope.TenantID || st.CreatedAt.After(ev.RequestedAt) {
		return st, false
	}
	next := cloneState(st)
	var pending []schemas.BlobRef
	next.Captures = make([]schemas.StepCapture, len(st.Captures))
	for i, c := range st.Captures {
		keep := make([]schemas.BlobRef, 0, len(c.Blobs))
		for _, b := range c.Blobs {
			if c.Step == flow.StepSelfie || b.Name == chipFaceBlobName {
				pending = addRef(pending, b)
			} else {
				keep = append(keep, b)
			}
		}
		c.Blobs = keep
		if c.Step == flow.StepSelfie && c.Quality != nil {
			q := *c.Quality
			pending = addRef(pending, q.Image)
			q.Image = schemas.BlobRef{Name: q.Image.Name}
			c.Quality = &q
		}
		next.Captures[i] = c
	}
	if len(st.Documents) > 0 {
		next.Documents = make([]schemas.DocumentRead, len(st.Documents))
		for i, d := range st.Documents {
			if d.FaceCrop != nil {
				pending = addRef(pending, *d.FaceCrop)
				d.FaceCrop = nil
			}
			next.Documents[i] = d
		}
	}
	if st.Chip != nil && st.Chip.FaceImage != nil {
		c := *st.Chip
		pending = addRef(pending, *c.FaceImage)
		c.FaceImage = nil
		next.Chip = &c
	}
	next.BiometricErasure = &schemas.BiometricErasure{
		TrackingID:   ev.TrackingID,
		ConsentID:    ev.ConsentID,
		RequestedAt:  ev.RequestedAt,
		Pending:      pending,
		BlobsDeleted: []string{},
	}
	if !isTerminal(st.Status) {
		next.Status = schemas.StatusCancelled
	}
	return touch(next, env), true
}

// foldBiometricsErased records deleted blobs: their URIs leave Pending and join
// BlobsDeleted; once nothing is pending, ErasedAt is set to the event's erased_at. It is
// ignored without an erasure of the same consent id, or when it changes nothing.
func foldBiometricsErased(st *schemas.SessionState, env schemas.Envelope, ev *schemas.BiometricsErased) (*schemas.SessionState, bool) {
	e := st.BiometricErasure
	if e == nil || e.ConsentID != ev.ConsentID {
		return st, false
	}
	pending := slices.DeleteFunc(slices.Clone(e.Pending), func(b schemas.BlobRef) bool {
		return slices.Contains(ev.BlobsDeleted, b.URI)
	})
	deleted := slices.Clone(e.BlobsDeleted)
	for _, uri := range ev.BlobsDeleted {
		if uri != "" && !slices.Contains(deleted, uri) {
			deleted = append(deleted, uri)
		}
	}
	erasedAt := e.ErasedAt
	if len(pending) == 0 && erasedAt == nil {
		t := ev.ErasedAt
		erasedAt = &t
	}
	if len(pending) == len(e.Pending) && len(deleted) == len(e.BlobsDeleted) && erasedAt == e.ErasedAt {
		return st, false
	}
	next := cloneState(st)
	next.BiometricErasure = &schemas.BiometricErasure{
		TrackingID: e.TrackingID, ConsentID: e.ConsentID, RequestedAt: e.RequestedAt,
		Pending: pending, BlobsDeleted: deleted, ErasedAt: erasedAt,
	}
	return touch(next, env), true
}

// lateBiometrics returns the biometric blob references event carries and its envelope;
// ok is false for event types that carry none.
func lateBiometrics(event any) (refs []schemas.BlobRef, env schemas.Envelope, ok bool) {
	switch ev := event.(type) {
	case *schemas.CaptureSubmitted:
		if ev == nil {
			return nil, env, false
		}
		for _, b := range ev.Blobs {
			if ev.Step == flow.StepSelfie || b.Name == chipFaceBlobName {
				refs = append(refs, b)
			}
		}
		return refs, ev.Envelope, true
	case *schemas.QualityAssessed:
		if ev == nil {
			return nil, env, false
		}
		if ev.Step == flow.StepSelfie {
			refs = append(refs, ev.Image)
		}
		return refs, ev.Envelope, true
	case *schemas.DocumentRead:
		if ev == nil {
			return nil, env, false
		}
		if ev.FaceCrop != nil {
			refs = append(refs, *ev.FaceCrop)
		}
		return refs, ev.Envelope, true
	case *schemas.ChipVerified:
		if ev == nil {
			return nil, env, false
		}
		if ev.FaceImage != nil {
			refs = append(refs, *ev.FaceImage)
		}
		return refs, ev.Envelope, true
	}
	return nil, env, false
}

// queueLateBiometrics handles an event that reaches a session after its biometric
// erasure (a capture or a result in flight when the withdrawal came): the event is not
// folded (the session is terminal), but the biometric blobs it names that are neither
// pending nor deleted are queued for deletion, and ErasedAt is cleared until they are.
func queueLateBiometrics(st *schemas.SessionState, env schemas.Envelope, refs []schemas.BlobRef) (*schemas.SessionState, bool) {
	e := st.BiometricErasure
	pending := slices.Clone(e.Pending)
	for _, b := range refs {
		if !slices.Contains(e.BlobsDeleted, b.URI) {
			pending = addRef(pending, b)
		}
	}
	if len(pending) == len(e.Pending) {
		return st, false
	}
	next := cloneState(st)
	next.BiometricErasure = &schemas.BiometricErasure{
		TrackingID: e.TrackingID, ConsentID: e.ConsentID, RequestedAt: e.RequestedAt,
		Pending: pending, BlobsDeleted: e.BlobsDeleted,
	}
	return touch(next, env), true
}

// addRef returns refs with b appended unless b has no URI or refs already holds its URI.
// refs must not be shared with a state.
func addRef(refs []schemas.BlobRef, b schemas.BlobRef) []schemas.BlobRef {
	if b.URI == "" || slices.ContainsFunc(refs, func(r schemas.BlobRef) bool { return r.URI == b.URI }) {
		return refs
	}
	return append(refs, b)
}
