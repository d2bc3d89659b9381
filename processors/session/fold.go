package session

import (
	"slices"
	"strings"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/schemas"
)

// Folder folds session events into session state for a set of flows (the flows tell which
// optional steps a session may capture besides the required steps it was opened with).
// A Folder is immutable and safe for concurrent use.
type Folder struct {
	flows flow.Set
}

// NewFolder returns a Folder for flows.
func NewFolder(flows flow.Set) Folder { return Folder{flows: flows} }

// Fold is NewFolder(flow.Default()).Fold.
func Fold(st *schemas.SessionState, event any) (*schemas.SessionState, bool) {
	return NewFolder(flow.Default()).Fold(st, event)
}

// Fold applies one decoded event to st and returns the next state and whether anything
// changed. event is a *schemas.SessionEvent, *CaptureSubmitted, *QualityAssessed,
// *DocumentRead, *ChipVerified, *LivenessAssessed, *FacesMatched, *FraudAssessed,
// *Decision or *ReviewEvent (review.go); any other value, or a nil pointer, is ignored.
//
// Fold is pure: it never reads the clock (times come from events) and never mutates st or
// the event; the next state shares no mutable memory with st (it may share the event's
// slices, so an event must not be modified after it was folded). When nothing changes it
// returns st and false, so folding the same event twice yields the same state. Every change
// bumps Version and sets Envelope to the event's envelope and UpdatedAt to its occurred_at.
// An erasure returns nil and true. Events for an unknown session (st == nil) other than
// SessionOpened are ignored (the group keeps them until the session opens: early.go). A
// capture that replaces another capture of its step (a retake) drops what was derived from
// the replaced one: its checks, document read, liveness and face-match results.
//
// Biometric erasure (consent withdrawal): EraseBiometrics moves the session's biometric
// blob references into BiometricErasure.Pending and cancels a session not yet terminal;
// BiometricsErased records their deletion. After it, a capture or result that names
// biometric blobs is not folded; its blobs are queued in Pending instead (see erasure.go).
func (f Folder) Fold(st *schemas.SessionState, event any) (*schemas.SessionState, bool) {
	if st != nil && st.BiometricErasure != nil {
		if refs, env, ok := lateBiometrics(event); ok {
			return queueLateBiometrics(st, env, refs)
		}
	}
	switch ev := event.(type) {
	case *schemas.SessionEvent:
		if ev == nil {
			return st, false
		}
		return f.foldSessionEvent(st, ev)
	case *schemas.CaptureSubmitted:
		if ev == nil || st == nil {
			return st, false
		}
		return f.foldCapture(st, ev)
	case *schemas.QualityAssessed:
		if ev == nil || st == nil {
			return st, false
		}
		return f.foldQuality(st, ev)
	case *schemas.DocumentRead:
		if ev == nil || st == nil {
			return st, false
		}
		return f.foldDocument(st, ev)
	case *schemas.ChipVerified:
		if ev == nil || st == nil || isTerminal(st.Status) || f.stale(st, flow.StepNFC, ev.CaptureID) {
			return st, false
		}
		return foldResult(st, st.Chip, ev, ev.Envelope, ev.Checks, func(n *schemas.SessionState, v *schemas.ChipVerified) { n.Chip = v })
	case *schemas.LivenessAssessed:
		if ev == nil || st == nil || isTerminal(st.Status) || f.stale(st, flow.StepSelfie, ev.CaptureID) {
			return st, false
		}
		return foldResult(st, st.Liveness, ev, ev.Envelope, ev.Checks, func(n *schemas.SessionState, v *schemas.LivenessAssessed) { n.Liveness = v })
	case *schemas.FacesMatched:
		if ev == nil || st == nil || isTerminal(st.Status) || f.staleSelfieMatch(st, ev) {
			return st, false
		}
		return foldResult(st, st.Faces, ev, ev.Envelope, ev.Checks, func(n *schemas.SessionState, v *schemas.FacesMatched) { n.Faces = v })
	case *schemas.FraudAssessed:
		if ev == nil || st == nil || isTerminal(st.Status) || beforeRetake(st, ev.Envelope) || !schemas.ChecksChange(st.Checks, ev.Checks) {
			return st, false
		}
		next := cloneState(st)
		next.Checks = schemas.MergeChecks(st.Checks, ev.Checks)
		return touch(next, ev.Envelope), true
	case *schemas.Decision:
		if ev == nil || st == nil {
			return st, false
		}
		return foldDecision(st, ev)
	case *schemas.ReviewEvent:
		if ev == nil || st == nil {
			return st, false
		}
		return foldReview(st, ev)
	}
	return st, false
}

func (f Folder) foldSessionEvent(st *schemas.SessionState, ev *schemas.SessionEvent) (*schemas.SessionState, bool) {
	switch {
	case ev.Opened != nil:
		if st != nil {
			return st, false // idempotent: the session exists
		}
		o := ev.Opened
		next := &schemas.SessionState{
			Status:        schemas.StatusOpen,
			Flow:          o.Flow,
			Steps:         slices.Clone(o.Steps),
			ReferenceID:   o.ReferenceID,
			RequestSHA256: o.RequestSHA256,
			TrackingID:    o.TrackingID,
			WebhookURL:    o.WebhookURL,
			Locale:        o.Locale,
			DataRetention: o.DataRetention,
			Nonce:         slices.Clone(o.Nonce),
			CreatedAt:     o.CreatedAt,
			ExpiresAt:     o.ExpiresAt,
		}
		return touch(next, ev.Envelope), true
	case st == nil:
		return st, false
	case ev.Erased != nil:
		return nil, true
	case ev.EraseBiometrics != nil:
		return foldEraseBiometrics(st, ev.Envelope, ev.EraseBiometrics)
	case ev.BiometricsErased != nil:
		return foldBiometricsErased(st, ev.Envelope, ev.BiometricsErased)
	case ev.Cancelled != nil:
		if isTerminal(st.Status) {
			return st, false
		}
		next := cloneState(st)
		next.Status = schemas.StatusCancelled
		return touch(next, ev.Envelope), true
	case ev.Expired != nil:
		if st.Status != schemas.StatusOpen && st.Status != schemas.StatusCapturing {
			return st, false
		}
		if ev.Expired.ExpiresAt.Before(st.ExpiresAt) {
			return st, false // emitted before a reviewer's retake moved the expiry on
		}
		next := cloneState(st)
		next.Status = schemas.StatusExpired
		return touch(next, ev.Envelope), true
	}
	return st, false
}

func (f Folder) foldCapture(st *schemas.SessionState, ev *schemas.CaptureSubmitted) (*schemas.SessionState, bool) {
	if st.Status != schemas.StatusOpen && st.Status != schemas.StatusCapturing {
		return st, false
	}
	order := f.stepOrder(st)
	if !slices.Contains(order, ev.Step) || ev.CaptureID == "" {
		return st, false
	}
	at := ev.Envelope.OccurredAt
	if i := captureIndex(st.Captures, ev.Step); i >= 0 {
		cur := st.Captures[i]
		if cur.CaptureID == ev.CaptureID {
			// A replay, or the capture whose assessment was consumed first: keep its status,
			// complete its blobs (the assessment only names the image).
			if len(cur.Blobs) >= len(ev.Blobs) {
				return st, false
			}
			cur.Blobs = ev.Blobs
			next := cloneState(st)
			next.Captures = slices.Clone(st.Captures)
			next.Captures[i] = cur
			return touch(next, ev.Envelope), true
		}
		if at.Before(cur.SubmittedAt) {
			return st, false // an older capture of the step, consumed after a newer one
		}
	}
	c := schemas.StepCapture{
		Step:        ev.Step,
		CaptureID:   ev.CaptureID,
		Status:      schemas.CaptureSubmittedStatus,
		Blobs:       ev.Blobs,
		SubmittedAt: at,
		UpdatedAt:   at,
	}
	if ev.Step == flow.StepNFC {
		c.Status = schemas.CaptureAccepted
	}
	next := cloneState(st)
	if i := captureIndex(st.Captures, ev.Step); i >= 0 {
		dropDerived(next, st.Captures[i].CaptureID)
	}
	next.Captures = putCapture(st.Captures, c, order)
	next.Status = schemas.StatusCapturing
	advance(next)
	return touch(next, ev.Envelope), true
}

// dropDerived removes from st (a clone the caller owns) what was derived from a capture
// that a retake replaces: the checks about it (quality, document, liveness, face matches),
// its document read, and the liveness and face-match results that name it. A decision
// policy awaits checks by name; without this a retake could be decided on the old
// capture's results before the new one's arrive.
func dropDerived(st *schemas.SessionState, captureID string) {
	about := func(c schemas.Check) bool { return c.CaptureID != nil && *c.CaptureID == captureID }
	st.Checks = slices.DeleteFunc(slices.Clone(st.Checks), about)
	st.Documents = slices.DeleteFunc(slices.Clone(st.Documents), func(d schemas.DocumentRead) bool { return d.CaptureID == captureID })
	if st.Liveness != nil && st.Liveness.CaptureID == captureID {
		st.Liveness = nil
	}
	if st.Faces != nil && slices.ContainsFunc(st.Faces.Checks, about) {
		st.Faces = nil
	}
}

func (f Folder) foldQuality(st *schemas.SessionState, ev *schemas.QualityAssessed) (*schemas.SessionState, bool) {
	if st.Status != schemas.StatusOpen && st.Status != schemas.StatusCapturing {
		return st, false
	}
	order := f.stepOrder(st)
	if !slices.Contains(order, ev.Step) || ev.CaptureID == "" {
		return st, false
	}
	// The session group consumes captures and assessments from two topics, so an assessment
	// may come first: it then stands for its capture, ordered by the capture's own time.
	capturedAt := ev.Envelope.OccurredAt
	if ev.CapturedAt != nil {
		capturedAt = *ev.CapturedAt
	}
	i := captureIndex(st.Captures, ev.Step)
	var c schemas.StepCapture
	switch {
	case i >= 0 && st.Captures[i].CaptureID == ev.CaptureID:
		if st.Captures[i].Quality != nil {
			return st, false // already assessed: the first answer wins
		}
		c = st.Captures[i]
	case i >= 0 && capturedAt.Before(st.Captures[i].SubmittedAt):
		return st, false // about an older capture of the step
	default:
		c = schemas.StepCapture{Step: ev.Step, CaptureID: ev.CaptureID, Blobs: []schemas.BlobRef{ev.Image}, SubmittedAt: capturedAt}
	}
	q := *ev
	c.Quality = &q
	c.UpdatedAt = ev.Envelope.OccurredAt
	status := schemas.CheckFail
	c.Status = schemas.CaptureRetake
	if ev.Passed {
		c.Status = schemas.CaptureAccepted
		status = schemas.CheckPass
	}
	check := schemas.Check{
		Name:      "quality." + ev.Step,
		Status:    status,
		Score:     ptr(ev.Blur),
		Source:    "quality",
		CaptureID: ptr(ev.CaptureID),
	}
	if len(ev.Reasons) > 0 {
		check.ReasonCode = ptr(ev.Reasons[0])
	}
	if ev.GateVersion != "" {
		check.ModelVersion = ptr(ev.GateVersion)
	}
	next := cloneState(st)
	if i >= 0 && st.Captures[i].CaptureID != ev.CaptureID {
		dropDerived(next, st.Captures[i].CaptureID)
	}
	next.Captures = putCapture(st.Captures, c, order)
	next.Status = schemas.StatusCapturing
	next.Checks = schemas.MergeChecks(next.Checks, []schemas.Check{check})
	advance(next)
	return touch(next, ev.Envelope), true
}

func (f Folder) foldDocument(st *schemas.SessionState, ev *schemas.DocumentRead) (*schemas.SessionState, bool) {
	if isTerminal(st.Status) || ev.Step == "" || f.stale(st, ev.Step, ev.CaptureID) {
		return st, false
	}
	i := slices.IndexFunc(st.Documents, func(d schemas.DocumentRead) bool { return d.Step == ev.Step })
	if i >= 0 && st.Documents[i].Envelope.EventID == ev.Envelope.EventID && !schemas.ChecksChange(st.Checks, ev.Checks) {
		return st, false
	}
	next := cloneState(st)
	docs := slices.Clone(st.Documents)
	if i >= 0 {
		docs[i] = *ev
	} else {
		docs = append(docs, *ev)
		order := f.stepOrder(st)
		slices.SortStableFunc(docs, func(a, b schemas.DocumentRead) int {
			return stepRank(order, a.Step) - stepRank(order, b.Step)
		})
	}
	next.Documents = docs
	next.Checks = schemas.MergeChecks(st.Checks, ev.Checks)
	return touch(next, ev.Envelope), true
}

// foldResult stores a processor's result payload (the chip's, liveness's or face
// matching's) with its checks, unless the state already holds that very event with the same
// checks. cur is the payload the state holds, set stores a copy of ev into the next state.
func foldResult[T any](st *schemas.SessionState, cur, ev *T, env schemas.Envelope, checks []schemas.Check, set func(*schemas.SessionState, *T)) (*schemas.SessionState, bool) {
	if cur != nil && envelopeOf(cur).EventID == env.EventID && !schemas.ChecksChange(st.Checks, checks) {
		return st, false
	}
	next := cloneState(st)
	v := *ev
	set(next, &v)
	next.Checks = schemas.MergeChecks(st.Checks, checks)
	return touch(next, env), true
}

// envelopeOf returns the envelope of a result payload.
func envelopeOf(v any) schemas.Envelope {
	switch r := v.(type) {
	case *schemas.ChipVerified:
		return r.Envelope
	case *schemas.LivenessAssessed:
		return r.Envelope
	case *schemas.FacesMatched:
		return r.Envelope
	}
	return schemas.Envelope{}
}

func foldDecision(st *schemas.SessionState, ev *schemas.Decision) (*schemas.SessionState, bool) {
	if isTerminal(st.Status) || st.Decision != nil {
		return st, false // only the first decision counts
	}
	if ev.Outcome != schemas.StatusVerified && ev.Outcome != schemas.StatusRejected {
		return st, false
	}
	next := cloneState(st)
	next.Status = ev.Outcome
	decidedAt := ev.DecidedAt
	next.DecidedAt = &decidedAt
	next.Decision = &schemas.DecisionResult{
		DecisionID:    ev.DecisionID,
		Outcome:       ev.Outcome,
		PolicyVersion: ev.PolicyVersion,
		Reasons:       ev.Reasons,
		Extracted:     ev.Extracted,
		DecidedAt:     ev.DecidedAt,
		DecidedBy:     ev.DecidedBy,
		ReviewerID:    ev.ReviewerID,
	}
	next.Checks = schemas.MergeChecks(st.Checks, ev.Checks)
	return touch(next, ev.Envelope), true
}

// stale reports whether an event about captureID is about a capture of step that has since
// been replaced by another one, or sent back for a retake (by the gate or a reviewer: what
// comes of it no longer counts). Events that name no capture, or a step with no capture,
// are not stale.
func (f Folder) stale(st *schemas.SessionState, step, captureID string) bool {
	if captureID == "" {
		return false
	}
	i := captureIndex(st.Captures, step)
	return i >= 0 && (st.Captures[i].CaptureID != captureID || st.Captures[i].Status == schemas.CaptureRetake)
}

// beforeRetake reports whether an assessment of the whole session (its time is the
// snapshot's it was made from) predates the reviewer's retake request the session is
// waiting on: it judged what the person is taking again.
func beforeRetake(st *schemas.SessionState, env schemas.Envelope) bool {
	return st.Review != nil && st.Review.Retake != nil && !env.OccurredAt.After(st.Review.Retake.RequestedAt)
}

// staleSelfieMatch reports whether a face match compared a selfie that has since been
// replaced by a retake (its selfie pairs' checks name their selfie capture), or faces from
// before a reviewer's retake request: its time is the latest of its faces' (the facematch
// group's), so one not after the request compared none of the faces taken again.
func (f Folder) staleSelfieMatch(st *schemas.SessionState, ev *schemas.FacesMatched) bool {
	if beforeRetake(st, ev.Envelope) {
		return true
	}
	for _, c := range ev.Checks {
		if strings.HasPrefix(c.Name, "face.selfie_") && c.CaptureID != nil && f.stale(st, flow.StepSelfie, *c.CaptureID) {
			return true
		}
	}
	return false
}

// stepOrder returns the steps a session may capture: its required steps, then the optional
// steps of its flow.
func (f Folder) stepOrder(st *schemas.SessionState) []string {
	order := slices.Clone(st.Steps)
	if fl, ok := f.flows.Get(st.Flow); ok {
		for _, s := range fl.OptionalSteps {
			if !slices.Contains(order, s) {
				order = append(order, s)
			}
		}
	}
	return order
}

// advance moves a capturing session to processing once every required step has an
// accepted capture.
func advance(st *schemas.SessionState) {
	if st.Status != schemas.StatusCapturing || len(st.Steps) == 0 {
		return
	}
	for _, step := range st.Steps {
		i := captureIndex(st.Captures, step)
		if i < 0 || st.Captures[i].Status != schemas.CaptureAccepted {
			return
		}
	}
	st.Status = schemas.StatusProcessing
}

func isTerminal(status string) bool {
	switch status {
	case schemas.StatusVerified, schemas.StatusRejected, schemas.StatusExpired, schemas.StatusCancelled:
		return true
	}
	return false
}

// touch records that env's event changed st.
func touch(st *schemas.SessionState, env schemas.Envelope) *schemas.SessionState {
	st.Version++
	st.Envelope = env
	st.UpdatedAt = env.OccurredAt
	return st
}

// cloneState returns a shallow copy of st. Callers replace (never modify in place) any slice,
// map or pointer field they change, so the copy and st share only memory neither modifies.
func cloneState(st *schemas.SessionState) *schemas.SessionState {
	c := *st
	return &c
}

func captureIndex(cs []schemas.StepCapture, step string) int {
	return slices.IndexFunc(cs, func(c schemas.StepCapture) bool { return c.Step == step })
}

func stepRank(order []string, step string) int {
	if i := slices.Index(order, step); i >= 0 {
		return i
	}
	return len(order)
}

// putCapture returns a new slice with c replacing the capture of its step, in step order.
func putCapture(cs []schemas.StepCapture, c schemas.StepCapture, order []string) []schemas.StepCapture {
	out := slices.Clone(cs)
	if i := captureIndex(out, c.Step); i >= 0 {
		out[i] = c
		return out
	}
	out = append(out, c)
	slices.SortStableFunc(out, func(a, b schemas.StepCapture) int {
		return stepRank(order, a.Step) - stepRank(order, b.Step)
	})
	return out
}

func ptr[T any](v T) *T { return &v }
