package fraud

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// handleErasedSnapshot forgets the session of a snapshot's tombstone (its erasure).
func (g *group) handleErasedSnapshot(ctx context.Context, rec *stream.Record, _ stream.Table) ([]stream.Output, error) {
	if len(rec.Key) == 0 {
		return nil, fmt.Errorf("snapshot tombstone at offset %d has no key", rec.Offset)
	}
	return g.forgetSession(ctx, string(rec.Key))
}

// handleSnapshot runs the session checks once per session (see the package comment).
func (g *group) handleSnapshot(ctx context.Context, rec *stream.Record, st *schemas.SessionState) ([]stream.Output, error) {
	if len(rec.Key) == 0 || st.Envelope.SessionID != string(rec.Key) {
		return nil, fmt.Errorf("snapshot at offset %d: key is not its session id", rec.Offset)
	}
	updates, err := g.faceIndexUpdates(ctx, st)
	if err != nil {
		return nil, err
	}
	if st.Status != schemas.StatusProcessing || !ready(st) || assessed(st) {
		return updates, nil
	}
	if err := stream.Compute(ctx); err != nil { // a session to check: the background's turn
		return nil, err
	}
	checks, id, entry, err := g.sessionChecks(ctx, st)
	if err != nil {
		return nil, err
	}
	if !schemas.ChecksChange(st.Checks, checks) {
		return updates, nil
	}
	env := schemas.Envelope{
		EventID:    eventID(st.Envelope.SessionID, g.inputs(st, id)...),
		SessionID:  st.Envelope.SessionID,
		TenantID:   st.Envelope.TenantID,
		OccurredAt: st.UpdatedAt,
		Producer:   Producer,
	}
	out, err := g.assessed(env, checks)
	if err != nil {
		return nil, err
	}
	outs := append(updates, out)
	if entry != nil {
		o, err := g.faceIndexOutput(entry)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// sessionChecks computes the session checks of st, in SessionCheckNames order, and the
// face-index entry of its selfie (nil when the face checks did not embed one).
func (g *group) sessionChecks(ctx context.Context, st *schemas.SessionState) ([]schemas.Check, identity, *schemas.FaceIndexEntry, error) {
	if err := g.blocklist.WaitReady(ctx); err != nil {
		return nil, identity{}, nil, fmt.Errorf("blocklist: %w", err)
	}
	if err := g.sightings.WaitReady(ctx); err != nil {
		return nil, identity{}, nil, fmt.Errorf("capture index: %w", err)
	}
	id := extractIdentity(st)
	at := st.CreatedAt
	if at.IsZero() {
		at = st.UpdatedAt
	}
	reg, err := g.registryChecks(ctx, st.Envelope.SessionID, id)
	if err != nil {
		return nil, id, nil, err
	}
	faces, err := g.faceChecks(ctx, st, id)
	if err != nil {
		return nil, id, nil, err
	}
	checks := []schemas.Check{g.blocklistCheck(st.Envelope.TenantID, id)}
	checks = append(checks, reg...)
	checks = append(checks, idStructureCheck(id), datesCheck(id, at, g.minAge), g.replayCheck(ctx, st))
	checks = append(checks, faces.duplicate, faces.blocklist, presentationCheck(st))
	for i := range checks {
		checks[i].Source = Producer
	}
	return checks, id, faces.entry, nil
}

// inputs lists what the session checks depend on, for the event id.
func (g *group) inputs(st *schemas.SessionState, id identity) []string {
	in := []string{st.Envelope.TenantID, id.idNumber, id.fullName, id.sex, date(id.dob), date(id.issue), id.rawExpiry, date(st.CreatedAt)}
	if st.Liveness != nil {
		in = append(in, "liveness/"+st.Liveness.Envelope.EventID)
	}
	if g.faces.enabled() {
		in = append(in, "faces/"+g.faces.model+"/"+strconv.FormatFloat(g.faces.threshold, 'g', -1, 64))
	}
	for _, c := range st.Captures {
		for _, b := range c.Blobs {
			in = append(in, c.Step+"/"+b.Name+"/"+strings.ToLower(b.SHA256))
		}
	}
	return in
}

func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.DateOnly)
}

// assessed reports whether st already holds every session check of this group.
func assessed(st *schemas.SessionState) bool {
	for _, name := range SessionCheckNames() {
		if !slices.ContainsFunc(st.Checks, func(c schemas.Check) bool { return c.Name == name && c.Source == Producer }) {
			return false
		}
	}
	return true
}

// forgetSession tombstones the capture-index entries of an erased session, and its
// face-index entry when the face checks are on (a tombstone for an absent key is harmless).
func (g *group) forgetSession(ctx context.Context, sessionID string) ([]stream.Output, error) {
	if err := g.sightings.WaitReady(ctx); err != nil {
		return nil, fmt.Errorf("capture index: %w", err)
	}
	keys := g.sightings.KeysOfSession(sessionID)
	slices.Sort(keys)
	outs := make([]stream.Output, 0, len(keys))
	for _, k := range keys {
		outs = append(outs, stream.Output{Topic: schemas.TopicCaptureIndex, Key: []byte(k)})
	}
	if g.faces.enabled() {
		outs = append(outs, stream.Output{Topic: schemas.TopicFaceIndex, Key: []byte(sessionID)})
	}
	return outs, nil
}
