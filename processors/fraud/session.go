package fraud

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idstream/idstream/processors"
	"github.com/idstream/idstream/schemas"
)

// handleSnapshot runs the session checks once per session (see the package comment).
func (g *group) handleSnapshot(ctx context.Context, rec *processors.Record) ([]processors.Output, error) {
	if len(rec.Key) == 0 {
		return nil, fmt.Errorf("fraud: snapshot at offset %d has no key", rec.Offset)
	}
	if rec.Value == nil {
		return g.forgetSession(ctx, string(rec.Key))
	}
	st := new(schemas.SessionState)
	if err := g.codec.Decode(schemas.TopicSessionState, rec.Value, st); err != nil {
		return nil, fmt.Errorf("fraud: decode snapshot at offset %d: %w", rec.Offset, err)
	}
	if st.Envelope.SessionID != string(rec.Key) {
		return nil, fmt.Errorf("fraud: snapshot at offset %d: key is not its session id", rec.Offset)
	}
	if st.Status != schemas.StatusProcessing || !ready(st) || assessed(st) {
		return nil, nil
	}
	checks, id, err := g.sessionChecks(ctx, st)
	if err != nil {
		return nil, err
	}
	if !changes(st.Checks, checks) {
		return nil, nil
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
	return []processors.Output{out}, nil
}

// sessionChecks computes the session checks of st, in SessionCheckNames order.
func (g *group) sessionChecks(ctx context.Context, st *schemas.SessionState) ([]schemas.Check, identity, error) {
	if err := g.blocklist.WaitReady(ctx); err != nil {
		return nil, identity{}, fmt.Errorf("fraud: blocklist: %w", err)
	}
	if err := g.sightings.WaitReady(ctx); err != nil {
		return nil, identity{}, fmt.Errorf("fraud: capture index: %w", err)
	}
	id := extractIdentity(st)
	at := st.CreatedAt
	if at.IsZero() {
		at = st.UpdatedAt
	}
	reg, err := g.registryChecks(ctx, st.Envelope.SessionID, id)
	if err != nil {
		return nil, id, err
	}
	checks := []schemas.Check{g.blocklistCheck(st.Envelope.TenantID, id)}
	checks = append(checks, reg...)
	checks = append(checks, idStructureCheck(id), datesCheck(id, at, g.minAge), g.replayCheck(st))
	for i := range checks {
		checks[i].Source = Producer
	}
	return checks, id, nil
}

// inputs lists what the session checks depend on, for the event id.
func (g *group) inputs(st *schemas.SessionState, id identity) []string {
	in := []string{st.Envelope.TenantID, id.idNumber, id.fullName, id.sex, date(id.dob), date(id.issue), id.rawExpiry, date(st.CreatedAt)}
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

// changes reports whether merging add into cs (by name) would change cs.
func changes(cs, add []schemas.Check) bool {
	for _, a := range add {
		i := slices.IndexFunc(cs, func(c schemas.Check) bool { return c.Name == a.Name })
		if i < 0 || !sameCheck(cs[i], a) {
			return true
		}
	}
	return false
}

func sameCheck(a, b schemas.Check) bool {
	return a.Name == b.Name && a.Status == b.Status && a.Source == b.Source &&
		eq(a.Score, b.Score) && eq(a.Threshold, b.Threshold) && eq(a.ReasonCode, b.ReasonCode) &&
		eq(a.ModelVersion, b.ModelVersion) && eq(a.CaptureID, b.CaptureID) && eq(a.Detail, b.Detail)
}

func eq[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// forgetSession tombstones the capture-index entries of an erased session.
func (g *group) forgetSession(ctx context.Context, sessionID string) ([]processors.Output, error) {
	if err := g.sightings.WaitReady(ctx); err != nil {
		return nil, fmt.Errorf("fraud: capture index: %w", err)
	}
	keys := g.sightings.KeysOfSession(sessionID)
	slices.Sort(keys)
	outs := make([]processors.Output, 0, len(keys))
	for _, k := range keys {
		outs = append(outs, processors.Output{Topic: TopicCaptureIndex, Key: []byte(k)})
	}
	return outs, nil
}
