package readmodel

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// States is the edge's read model of sessions: the compacted session-state topic,
// materialised in memory, plus the sessions this process opened that the session group has
// not folded yet (so a client can use a session the moment Session Init answers).
// Safe for concurrent use.
type States struct {
	codec *schemas.Codec
	view  *stream.View

	mu          sync.Mutex
	provisional map[string]*schemas.SessionState
	opened      []openedAt // provisional ids in the order they were added, for expiry
	erased      map[string]time.Time
	erasedOrder []openedAt        // erased ids in the order their tombstones came, for expiry
	inReview    map[string]string // sessions in review (schemas.StatusReview) → their tenant
}

// openedAt is an id and when it was added, kept in order of addition for expiry.
type openedAt struct {
	id    string
	added time.Time
}

// provisionalTTL bounds how long a just-opened session is served from memory; the session
// group folds it within milliseconds unless it is down.
const provisionalTTL = 10 * time.Minute

// NewStates creates the view of the session-state topic; opts are the runtime's client
// options. Run it beside the edge.
func NewStates(codec *schemas.Codec, opts ...stream.Option) (*States, error) {
	v := &States{codec: codec, provisional: map[string]*schemas.SessionState{}, erased: map[string]time.Time{}, inReview: map[string]string{}}
	view, err := stream.NewView(schemas.TopicSessionState, append(opts, stream.WithOnUpdate(v.forget))...)
	if err != nil {
		return nil, fmt.Errorf("session-state view: %w", err)
	}
	v.view = view
	return v, nil
}

// Run consumes the state topic until ctx ends.
func (v *States) Run(ctx context.Context) error { return v.view.Run(ctx) }

// Ready is true once the view has caught up with the topic.
func (v *States) Ready() bool { return v.view.Ready() }

// forget drops the provisional entry once the real state (or its tombstone) arrives; a
// placeholder of early events (schemas.StatusUnopened) is not the session yet. Only an
// update of a provisional session is decoded to tell (every other update costs a lookup).
func (v *States) forget(key string, b []byte) {
	v.indexReview(key, b)
	v.mu.Lock()
	_, provisional := v.provisional[key]
	if b == nil {
		v.noteErasedLocked(key)
	}
	v.mu.Unlock()
	if !provisional {
		return
	}
	if b != nil {
		if st, err := v.decode(b); err == nil && st.Status == schemas.StatusUnopened {
			return
		}
	}
	v.mu.Lock()
	delete(v.provisional, key)
	v.mu.Unlock()
}

// reviewMark is in every encoded snapshot of a session that was ever in review (its status,
// its review record): snapshots without it are not decoded to keep the review index.
var reviewMark = []byte(schemas.StatusReview)

// indexReview keeps the index of the sessions in review up to date with one update.
func (v *States) indexReview(key string, b []byte) {
	var tenant string
	if b != nil && bytes.Contains(b, reviewMark) {
		if st, err := v.decode(b); err == nil && st.Status == schemas.StatusReview {
			tenant = st.Envelope.TenantID
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if tenant != "" {
		v.inReview[key] = tenant
	} else {
		delete(v.inReview, key)
	}
}

// InReview returns the states of a tenant's sessions in review (schemas.StatusReview), in
// no order; it decodes only those, not every session of the view.
func (v *States) InReview(tenantID string) []*schemas.SessionState {
	return v.reviewStates(func(t string) bool { return t == tenantID })
}

// ReviewBacklog returns how many sessions are in review and when the oldest was opened (the
// zero time when none is).
func (v *States) ReviewBacklog() (int, time.Time) {
	states := v.reviewStates(func(string) bool { return true })
	var oldest time.Time
	for _, st := range states {
		if st.Review != nil && (oldest.IsZero() || st.Review.OpenedAt.Before(oldest)) {
			oldest = st.Review.OpenedAt
		}
	}
	return len(states), oldest
}

// reviewStates decodes the indexed sessions in review of the tenants keep accepts.
func (v *States) reviewStates(keep func(tenantID string) bool) []*schemas.SessionState {
	v.mu.Lock()
	var ids []string
	for id, t := range v.inReview {
		if keep(t) {
			ids = append(ids, id)
		}
	}
	v.mu.Unlock()
	out := make([]*schemas.SessionState, 0, len(ids))
	for _, id := range ids {
		if b, ok := v.view.Get(id); ok {
			if st, err := v.decode(b); err == nil && st.Status == schemas.StatusReview {
				out = append(out, st)
			}
		}
	}
	return out
}

// noteErasedLocked remembers, for provisionalTTL, that key's state was tombstoned.
func (v *States) noteErasedLocked(key string) {
	now := time.Now()
	for len(v.erasedOrder) > 0 && now.Sub(v.erasedOrder[0].added) > provisionalTTL {
		delete(v.erased, v.erasedOrder[0].id)
		v.erasedOrder = v.erasedOrder[1:]
	}
	v.erased[key] = now
	v.erasedOrder = append(v.erasedOrder, openedAt{id: key, added: now})
}

// Erased reports whether the session's state was tombstoned (erased) in the last
// provisionalTTL (edge.ErasedSessions): a session missing from the view that is not on the
// way.
func (v *States) Erased(id string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.erased[id]
	return ok
}

// Opened records a session this process has just opened (edge.SessionRecorder).
func (v *States) Opened(st *schemas.SessionState) {
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.view.Get(st.Envelope.SessionID); ok {
		return
	}
	for len(v.opened) > 0 && now.Sub(v.opened[0].added) > provisionalTTL {
		delete(v.provisional, v.opened[0].id)
		v.opened = v.opened[1:]
	}
	v.provisional[st.Envelope.SessionID] = st
	v.opened = append(v.opened, openedAt{id: st.Envelope.SessionID, added: now})
}

// decode decodes a snapshot of the topic.
func (v *States) decode(b []byte) (*schemas.SessionState, error) {
	var st schemas.SessionState
	if err := v.codec.Decode(schemas.TopicSessionState, b, &st); err != nil {
		return nil, fmt.Errorf("decode session state: %w", err)
	}
	return &st, nil
}

// Get returns the latest state of a session. A placeholder of early events (see
// schemas.StatusUnopened) is no session.
func (v *States) Get(_ context.Context, id string) (*schemas.SessionState, bool, error) {
	if b, ok := v.view.Get(id); ok {
		st, err := v.decode(b)
		if err != nil {
			return nil, false, err
		}
		if st.Status != schemas.StatusUnopened {
			return st, true, nil
		}
	}
	v.mu.Lock()
	st, ok := v.provisional[id]
	v.mu.Unlock()
	if ok {
		return st, true, nil
	}
	return nil, false, nil
}

// Wait blocks until pred holds for the session's state (as stored in the topic) or ctx ends.
func (v *States) Wait(ctx context.Context, id string, pred func(*schemas.SessionState) bool) (*schemas.SessionState, error) {
	var last *schemas.SessionState
	_, _, err := v.view.Wait(ctx, id, func(b []byte, ok bool) bool {
		if !ok {
			return pred(nil)
		}
		st, err := v.decode(b)
		if err != nil {
			return false
		}
		if st.Status == schemas.StatusUnopened {
			return pred(nil)
		}
		last = st
		return pred(st)
	})
	return last, err
}

// Range calls fn for every known session state until fn returns false.
func (v *States) Range(fn func(*schemas.SessionState) bool) {
	v.view.Range(func(_ string, b []byte) bool {
		st, err := v.decode(b)
		if err != nil || st.Status == schemas.StatusUnopened {
			return true
		}
		return fn(st)
	})
}

// GateReplies delivers quality-gate answers to the edge requests waiting for them,
// correlated by capture id. Answers that arrive before anyone waits are kept briefly.
// Safe for concurrent use.
type GateReplies struct {
	codec *schemas.Codec
	tail  *stream.Tail

	mu      sync.Mutex
	recent  map[string]*schemas.QualityAssessed
	arrived []openedAt // recent capture ids in arrival order, for expiry
	waiters map[string][]chan *schemas.QualityAssessed
}

// replyTTL bounds how long an unclaimed answer is kept.
const replyTTL = 2 * time.Minute

// NewGateReplies creates the tail of the quality topic the edge's capture requests wait on;
// opts are the runtime's client options.
func NewGateReplies(codec *schemas.Codec, opts ...stream.Option) (*GateReplies, error) {
	r := &GateReplies{codec: codec, recent: map[string]*schemas.QualityAssessed{}, waiters: map[string][]chan *schemas.QualityAssessed{}}
	tail, err := stream.NewTail(schemas.TopicQuality, r.deliver, opts...)
	if err != nil {
		return nil, fmt.Errorf("quality replies: %w", err)
	}
	r.tail = tail
	return r, nil
}

// Run consumes quality answers until ctx ends.
func (r *GateReplies) Run(ctx context.Context) error { return r.tail.Run(ctx) }

// deliver hands an answer to the requests waiting for its capture, or keeps it briefly.
func (r *GateReplies) deliver(rec *stream.Record) {
	var q schemas.QualityAssessed
	if err := r.codec.Decode(rec.Topic, rec.Value, &q); err != nil {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range r.waiters[q.CaptureID] {
		ch <- &q
	}
	delete(r.waiters, q.CaptureID)
	for len(r.arrived) > 0 && now.Sub(r.arrived[0].added) > replyTTL {
		delete(r.recent, r.arrived[0].id)
		r.arrived = r.arrived[1:]
	}
	r.recent[q.CaptureID] = &q
	r.arrived = append(r.arrived, openedAt{id: q.CaptureID, added: now})
}

// Wait returns the gate's answer for captureID, or ctx's error when the budget runs out.
func (r *GateReplies) Wait(ctx context.Context, captureID string) (*schemas.QualityAssessed, error) {
	ch := make(chan *schemas.QualityAssessed, 1)
	r.mu.Lock()
	if got, ok := r.recent[captureID]; ok {
		r.mu.Unlock()
		return got, nil
	}
	r.waiters[captureID] = append(r.waiters[captureID], ch)
	r.mu.Unlock()
	select {
	case q := <-ch:
		return q, nil
	case <-ctx.Done():
		r.mu.Lock()
		ws := r.waiters[captureID]
		for i, w := range ws {
			if w == ch {
				r.waiters[captureID] = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(r.waiters[captureID]) == 0 {
			delete(r.waiters, captureID)
		}
		r.mu.Unlock()
		return nil, ctx.Err()
	}
}
