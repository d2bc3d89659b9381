package session

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/schemas"
)

// foldReview applies one action of the human review (schemas.ReviewEvent): the session
// group is the one place that orders them, so a claim is granted here, by the event's
// order in the session's partition, not by the edge that produced it.
//
//   - opened: a processing session goes to StatusReview (once; repeats are ignored). After
//     a retake, the opening whose event id is ReviewOpenedEventID of the retake's round
//     reopens the case (kind reopened); any other opening is ignored.
//   - claimed: granted when the case is undecided and no one else holds an unexpired claim
//     (a reviewer may renew their own); otherwise recorded as refused.
//   - released: the holder gives the claim back; anyone else's release is refused.
//   - decided: accepted from the holder of an unexpired claim, with outcome verified or
//     rejected, once; the decision group then emits the session's decision.
//   - retake_requested: accepted from the holder of an unexpired claim for a required step
//     the session captured, at most schemas.MaxReviewRetakes times: the step's capture goes
//     back to retake (what was derived from it is dropped, see dropDerived), the session
//     to capturing until the event's expires_at (never earlier than it was), the claim is
//     released. The decision group reopens the case once the step is taken again.
//   - viewed: an audit record only; the state does not change.
//
// Times are the events' occurred_at: the fold stays pure. A refused action changes only
// the case's action log, so the reviewer's API call can tell it was refused.
func foldReview(st *schemas.SessionState, ev *schemas.ReviewEvent) (*schemas.SessionState, bool) {
	at := ev.Envelope.OccurredAt
	switch {
	case ev.Opened != nil:
		return foldOpened(st, ev)
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
	case ev.Retake != nil:
		return foldRetake(st, ev)
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

// foldOpened applies an opening: the first opening of a processing session, or the
// reopening of a case whose retake was taken (see foldReview).
func foldOpened(st *schemas.SessionState, ev *schemas.ReviewEvent) (*schemas.SessionState, bool) {
	if st.Status != schemas.StatusProcessing {
		return st, false
	}
	at, o := ev.Envelope.OccurredAt, ev.Opened
	next := cloneState(st)
	next.Status = schemas.StatusReview
	switch rv := st.Review; {
	case rv == nil:
		next.Review = &schemas.ReviewState{
			OpenedAt: at, PolicyVersion: o.PolicyVersion, Reasons: o.Reasons,
			Actions: []schemas.ReviewAction{{Kind: schemas.ReviewActionOpened, At: at, EventID: ev.Envelope.EventID}},
		}
	case rv.Retake != nil && rv.Decided == nil && ev.Envelope.EventID == schemas.ReviewOpenedEventID(st.Envelope.SessionID, rv.Retakes):
		r := *rv
		r.OpenedAt, r.PolicyVersion, r.Reasons = at, o.PolicyVersion, o.Reasons
		r.Retake, r.ClaimedBy, r.ClaimExpiresAt = nil, nil, nil
		r.Actions = appendAction(rv.Actions, ev.Envelope, schemas.ReviewActionReopened, "", "the person took "+rv.Retake.Step+" again")
		next.Review = &r
	default:
		return st, false // a repeat, or an opening of an earlier round
	}
	return touch(next, ev.Envelope), true
}

// foldRetake applies a reviewer's request that the person take one step again.
func foldRetake(st *schemas.SessionState, ev *schemas.ReviewEvent) (*schemas.SessionState, bool) {
	rq, at := ev.Retake, ev.Envelope.OccurredAt
	i := captureIndex(st.Captures, rq.Step)
	switch {
	case st.Review.Decided != nil:
		return refuse(st, ev.Envelope, rq.ReviewerID, schemas.ReviewRefusedDecided, "retake: the case is decided")
	case !holds(st.Review, rq.ReviewerID, at):
		return refuse(st, ev.Envelope, rq.ReviewerID, schemas.ReviewRefusedNotClaimed, "retake: the case is not claimed by this reviewer")
	case i < 0 || !slices.Contains(st.Steps, rq.Step):
		// Required steps only: the capture page and the SDK ask for those, so an optional
		// step sent back would never be taken again.
		return refuse(st, ev.Envelope, rq.ReviewerID, schemas.ReviewRefusedStep, "retake: the session has no capture of required step "+rq.Step)
	case st.Review.Retakes >= schemas.MaxReviewRetakes:
		return refuse(st, ev.Envelope, rq.ReviewerID, schemas.ReviewRefusedRetakes, fmt.Sprintf("retake: the session had %d retakes", st.Review.Retakes))
	}
	next := cloneState(st)
	c := st.Captures[i]
	dropDerived(next, c.CaptureID)
	c.Status, c.UpdatedAt = schemas.CaptureRetake, at
	next.Captures = slices.Clone(st.Captures)
	next.Captures[i] = c
	// The fraud group's session checks name no capture: it assesses the session again only
	// when some are missing, and a new document, chip or selfie must be assessed again.
	next.Checks = slices.DeleteFunc(next.Checks, func(ch schemas.Check) bool { return ch.Source == "fraud" && ch.CaptureID == nil })
	// The chip's results and the face matches name no capture dropDerived would know them
	// by: a chip read again, or a new face on either side, makes them stale.
	if rq.Step == flow.StepNFC {
		next.Chip = nil
		next.Checks = slices.DeleteFunc(next.Checks, func(ch schemas.Check) bool { return strings.HasPrefix(ch.Name, "chip.") })
	}
	if rq.Step != flow.StepDocumentBack {
		next.Faces = nil
		next.Checks = slices.DeleteFunc(next.Checks, func(ch schemas.Check) bool { return strings.HasPrefix(ch.Name, "face.") })
	}
	next.Status = schemas.StatusCapturing
	if rq.ExpiresAt.After(st.ExpiresAt) {
		next.ExpiresAt = rq.ExpiresAt
	}
	rv := *st.Review
	rv.ClaimedBy, rv.ClaimExpiresAt = nil, nil
	rv.Retakes++
	rv.Retake = &schemas.ReviewRetake{
		Step: rq.Step, ReviewerID: rq.ReviewerID, ReasonCode: rq.ReasonCode, Note: rq.Note,
		RequestedAt: at, EventID: ev.Envelope.EventID,
	}
	rv.Actions = appendAction(rv.Actions, ev.Envelope, schemas.ReviewActionRetake, rq.ReviewerID, rq.Step+" "+rq.ReasonCode)
	next.Review = &rv
	return touch(next, ev.Envelope), true
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
