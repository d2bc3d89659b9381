package session

import (
	"fmt"
	"time"

	"github.com/idstream/idstream/schemas"
)

// foldReview applies one action of the human review (schemas.ReviewEvent): the session
// group is the one place that orders them, so a claim is granted here, by the event's
// order in the session's partition, not by the edge that produced it.
//
//   - opened: a processing session goes to StatusReview (once; repeats are ignored).
//   - claimed: granted when the case is undecided and no one else holds an unexpired claim
//     (a reviewer may renew their own); otherwise recorded as refused.
//   - released: the holder gives the claim back; anyone else's release is refused.
//   - decided: accepted from the holder of an unexpired claim, with outcome verified or
//     rejected, once; the decision group then emits the session's decision.
//
// Times are the events' occurred_at: the fold stays pure. A refused action changes only
// the case's action log, so the reviewer's API call can tell it was refused.
func foldReview(st *schemas.SessionState, ev *schemas.ReviewEvent) (*schemas.SessionState, bool) {
	at := ev.Envelope.OccurredAt
	switch {
	case ev.Opened != nil:
		if st.Status != schemas.StatusProcessing || st.Review != nil {
			return st, false
		}
		next := cloneState(st)
		next.Status = schemas.StatusReview
		next.Review = &schemas.ReviewState{
			OpenedAt: at, PolicyVersion: ev.Opened.PolicyVersion, Reasons: ev.Opened.Reasons,
			Actions: []schemas.ReviewAction{{Kind: schemas.ReviewActionOpened, At: at, EventID: ev.Envelope.EventID}},
		}
		return touch(next, ev.Envelope), true
	case st.Status != schemas.StatusReview || st.Review == nil:
		return st, false // not in review (decided, expired, erased): nothing to act on
	case ev.Claimed != nil:
		r := ev.Claimed.ReviewerID
		if code, why := claimRefusal(st.Review, r, at); code != "" {
			return refuse(st, ev.Envelope, r, code, "claim: "+why)
		}
		until := ev.Claimed.Until
		return act(st, ev.Envelope, func(rv *schemas.ReviewState) {
			rv.ClaimedBy, rv.ClaimExpiresAt = &r, &until
			rv.Actions = appendAction(rv.Actions, ev.Envelope, schemas.ReviewActionClaimed, r, "until "+until.UTC().Format(time.RFC3339))
		})
	case ev.Released != nil:
		r := ev.Released.ReviewerID
		if !holds(st.Review, r, at) {
			return refuse(st, ev.Envelope, r, schemas.ReviewRefusedNotClaimed, "release: the case is not claimed by this reviewer")
		}
		return act(st, ev.Envelope, func(rv *schemas.ReviewState) {
			rv.ClaimedBy, rv.ClaimExpiresAt = nil, nil
			rv.Actions = appendAction(rv.Actions, ev.Envelope, schemas.ReviewActionReleased, r, "")
		})
	case ev.Decided != nil:
		d := ev.Decided
		switch {
		case st.Review.Decided != nil:
			return refuse(st, ev.Envelope, d.ReviewerID, schemas.ReviewRefusedDecided, "decide: the case is decided")
		case !holds(st.Review, d.ReviewerID, at):
			return refuse(st, ev.Envelope, d.ReviewerID, schemas.ReviewRefusedNotClaimed, "decide: the case is not claimed by this reviewer")
		case d.Outcome != schemas.StatusVerified && d.Outcome != schemas.StatusRejected:
			return refuse(st, ev.Envelope, d.ReviewerID, schemas.ReviewRefusedOutcome, "decide: outcome must be verified or rejected")
		}
		return act(st, ev.Envelope, func(rv *schemas.ReviewState) {
			rv.Decided = &schemas.ReviewDecision{ReviewerID: d.ReviewerID, Outcome: d.Outcome, ReasonCode: d.ReasonCode, Note: d.Note, DecidedAt: at}
			rv.Actions = appendAction(rv.Actions, ev.Envelope, schemas.ReviewActionDecided, d.ReviewerID, d.Outcome+" "+d.ReasonCode)
		})
	}
	return st, false
}

// claimRefusal says why reviewer may not claim the case at t (a schemas.ReviewRefused*
// code and words), or "" when they may.
func claimRefusal(rv *schemas.ReviewState, reviewer string, t time.Time) (code, why string) {
	switch {
	case rv.Decided != nil:
		return schemas.ReviewRefusedDecided, "the case is decided"
	case rv.ClaimedBy != nil && *rv.ClaimedBy != reviewer && rv.ClaimExpiresAt != nil && t.Before(*rv.ClaimExpiresAt):
		return schemas.ReviewRefusedClaimed, fmt.Sprintf("held by %s", *rv.ClaimedBy)
	}
	return "", ""
}

// holds reports whether reviewer holds an unexpired claim on the case at t.
func holds(rv *schemas.ReviewState, reviewer string, t time.Time) bool {
	return rv.ClaimedBy != nil && *rv.ClaimedBy == reviewer && rv.ClaimExpiresAt != nil && t.Before(*rv.ClaimExpiresAt)
}

// act applies change to a copy of the state's review.
func act(st *schemas.SessionState, env schemas.Envelope, change func(*schemas.ReviewState)) (*schemas.SessionState, bool) {
	next := cloneState(st)
	rv := *st.Review
	change(&rv)
	next.Review = &rv
	return touch(next, env), true
}

// refuse records a refused action in the case's log, its detail "<code>: <why>".
func refuse(st *schemas.SessionState, env schemas.Envelope, reviewer, code, why string) (*schemas.SessionState, bool) {
	return act(st, env, func(rv *schemas.ReviewState) {
		rv.Actions = appendAction(rv.Actions, env, schemas.ReviewActionRefused, reviewer, code+": "+why)
	})
}

// appendAction returns actions with the action of the event of env (a new slice), the
// oldest dropped beyond schemas.MaxReviewActions.
func appendAction(actions []schemas.ReviewAction, env schemas.Envelope, kind, reviewer string, detail string) []schemas.ReviewAction {
	a := schemas.ReviewAction{Kind: kind, At: env.OccurredAt, EventID: env.EventID}
	if reviewer != "" {
		a.ReviewerID = &reviewer
	}
	if detail != "" {
		a.Detail = &detail
	}
	out := append(append([]schemas.ReviewAction(nil), actions...), a)
	if len(out) > schemas.MaxReviewActions {
		out = out[len(out)-schemas.MaxReviewActions:]
	}
	return out
}
