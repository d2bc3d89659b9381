package readmodel

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/idstream/idstream/schemas"
)

// StepPending is the status the Data Get body gives a required step not captured yet.
const StepPending = "pending"

// SessionView is the Data Get body (API.md, GET /v1/ekyc/sessions/{id}), also the "data" of
// the session-completed webhook. Build it with DataGetBody; its JSON form depends on whether
// it is the full view (API key) or the SDK view (session_id, status and steps only).
type SessionView struct {
	SessionID   string              `json:"session_id"`
	Flow        string              `json:"flow"`
	ReferenceID *string             `json:"reference_id"`
	Status      string              `json:"status"`
	CreatedAt   string              `json:"created_at"`
	ExpiresAt   string              `json:"expires_at"`
	DecidedAt   *string             `json:"decided_at"`
	Steps       map[string]StepView `json:"steps"`
	Decision    *DecisionView       `json:"decision"`
	Checks      []CheckView         `json:"checks"`
	Extracted   *schemas.Extracted  `json:"extracted"`
	// Retake is set while a reviewer's request that the person take a step again is open
	// (the session is capturing that step): the step and the reviewer's reason code.
	Retake *RetakeView `json:"retake,omitempty"`

	full bool
}

// RetakeView is SessionView.Retake. The reviewer's note is internal and never in it.
type RetakeView struct {
	Step        string `json:"step"`
	ReasonCode  string `json:"reason_code"`
	RequestedAt string `json:"requested_at"`
}

// StepView is one entry of SessionView.Steps.
type StepView struct {
	Status    string `json:"status"` // pending | submitted | accepted | retake
	CaptureID string `json:"capture_id,omitempty"`
}

// DecisionView is SessionView.Decision.
type DecisionView struct {
	Outcome       string           `json:"outcome"`
	PolicyVersion string           `json:"policy_version"`
	Reasons       []schemas.Reason `json:"reasons"`
	// DecidedBy is "policy", or "reviewer" when the policy sent the session to a person.
	DecidedBy string `json:"decided_by"`
}

// CheckView is one entry of SessionView.Checks.
type CheckView struct {
	Name         string   `json:"name"`
	Status       string   `json:"status"`
	Score        *float64 `json:"score"`
	Threshold    *float64 `json:"threshold"`
	ReasonCode   *string  `json:"reason_code"`
	ModelVersion *string  `json:"model_version"`
}

// sdkView is the JSON form of SessionView for an sdk_token.
type sdkView struct {
	SessionID string              `json:"session_id"`
	Status    string              `json:"status"`
	Steps     map[string]StepView `json:"steps"`
}

// MarshalJSON writes the full body, or only session_id, status and steps for the SDK view.
func (v SessionView) MarshalJSON() ([]byte, error) {
	if !v.full {
		return json.Marshal(sdkView{SessionID: v.SessionID, Status: v.Status, Steps: v.Steps})
	}
	type plain SessionView // drops the method: no recursion
	return json.Marshal(plain(v))
}

// Full reports whether v is the full view.
func (v SessionView) Full() bool { return v.full }

// DataGetBody maps a session state to the Data Get body as of now. full selects the API-key
// view; otherwise the SDK view. A state still open or capturing at or past its expires_at is
// reported "expired". decision and extracted stay null until decided; checks lists every
// check of the state (empty array, never null). st must not be nil.
func DataGetBody(st *schemas.SessionState, now time.Time, full bool) SessionView {
	v := SessionView{
		SessionID:   st.Envelope.SessionID,
		Flow:        st.Flow,
		ReferenceID: st.ReferenceID,
		Status:      EffectiveStatus(st, now),
		CreatedAt:   Timestamp(st.CreatedAt),
		ExpiresAt:   Timestamp(st.ExpiresAt),
		Steps:       make(map[string]StepView, len(st.Steps)+len(st.Captures)),
		Checks:      make([]CheckView, 0, len(st.Checks)),
		full:        full,
	}
	for _, step := range st.Steps {
		v.Steps[step] = StepView{Status: StepPending}
	}
	for _, cp := range st.Captures {
		v.Steps[cp.Step] = StepView{Status: cp.Status, CaptureID: cp.CaptureID}
	}
	for _, ch := range st.Checks {
		v.Checks = append(v.Checks, CheckView{
			Name: ch.Name, Status: ch.Status, Score: ch.Score, Threshold: ch.Threshold,
			ReasonCode: ch.ReasonCode, ModelVersion: ch.ModelVersion,
		})
	}
	if st.DecidedAt != nil {
		d := Timestamp(*st.DecidedAt)
		v.DecidedAt = &d
	}
	if rt := PendingRetake(st); rt != nil {
		v.Retake = &RetakeView{Step: rt.Step, ReasonCode: rt.ReasonCode, RequestedAt: Timestamp(rt.RequestedAt)}
	}
	if d := st.Decision; d != nil {
		reasons := d.Reasons
		if reasons == nil {
			reasons = []schemas.Reason{}
		}
		by := d.DecidedBy
		if by == "" { // decided before decided_by was recorded
			by = schemas.DecidedByPolicy
		}
		v.Decision = &DecisionView{Outcome: d.Outcome, PolicyVersion: d.PolicyVersion, Reasons: reasons, DecidedBy: by}
		v.Extracted = d.Extracted
		if v.DecidedAt == nil && !d.DecidedAt.IsZero() {
			s := Timestamp(d.DecidedAt)
			v.DecidedAt = &s
		}
	}
	return v
}

// EffectiveStatus is the session's status as of now: open or capturing past expires_at is
// "expired".
func EffectiveStatus(st *schemas.SessionState, now time.Time) string {
	switch st.Status {
	case schemas.StatusOpen, schemas.StatusCapturing, "":
		if !st.ExpiresAt.IsZero() && !now.Before(st.ExpiresAt) {
			return schemas.StatusExpired
		}
	}
	switch st.Status {
	case "":
		return schemas.StatusOpen
	case schemas.StatusReview: // a person decides; for the integrator it is still processing
		return schemas.StatusProcessing
	}
	return st.Status
}

// PendingRetake returns the reviewer's retake request the person has not answered yet: set
// while the session is capturing again after a reviewer sent a step back, else nil.
func PendingRetake(st *schemas.SessionState) *schemas.ReviewRetake {
	if st.Review == nil || st.Review.Retake == nil || (st.Status != schemas.StatusCapturing && st.Status != schemas.StatusOpen) {
		return nil
	}
	return st.Review.Retake
}

// Webhook event types.
const (
	// WebhookEventCompleted is the type of the session-completed webhook.
	WebhookEventCompleted = "ekyc.session.completed"
	// WebhookEventRetakeRequested is the type of the webhook sent when a reviewer asks the
	// person to take a step again: the integrator brings the person back to capture it
	// (POST /v1/ekyc/sessions/{id}/sdk-token gives a fresh sdk_token and capture_url).
	WebhookEventRetakeRequested = "ekyc.session.retake_requested"
)

// WebhookIDPrefix starts every webhook-id: the id is WebhookIDPrefix + the decision id.
const WebhookIDPrefix = "msg_"

// WebhookID returns the Standard Webhooks webhook-id of the session-completed webhook of a
// decision: stable per decision, the same on every attempt and every replay.
func WebhookID(decisionID string) string { return WebhookIDPrefix + decisionID }

// RetakeWebhookID returns the webhook-id of the retake-requested webhook of the review
// event eventID (the request's): stable, the same on every attempt and every replay.
func RetakeWebhookID(eventID string) string {
	return WebhookIDPrefix + "retake_" + strings.TrimPrefix(eventID, "evt_")
}

// WebhookTarget returns where the session-completed webhook of st goes: the session's
// webhook_url when set, else tenantURL (the tenant's). Empty means nowhere.
func WebhookTarget(st *schemas.SessionState, tenantURL string) string {
	if st.WebhookURL != nil && *st.WebhookURL != "" {
		return *st.WebhookURL
	}
	return tenantURL
}

// WebhookBody returns the exact bytes of the session-completed webhook for st:
// {"type":"ekyc.session.completed","timestamp":<decided_at, or now when unset>,"data":<Data Get body>}.
// It is deterministic for a decided state, so every replay signs the same body.
func WebhookBody(st *schemas.SessionState, now time.Time) ([]byte, error) {
	ts := now
	if st.DecidedAt != nil {
		ts = *st.DecidedAt
	} else if st.Decision != nil && !st.Decision.DecidedAt.IsZero() {
		ts = st.Decision.DecidedAt
	}
	return json.Marshal(struct {
		Type      string      `json:"type"`
		Timestamp string      `json:"timestamp"`
		Data      SessionView `json:"data"`
	}{WebhookEventCompleted, Timestamp(ts), DataGetBody(st, now, true)})
}

// RetakeWebhookBody returns the exact bytes of the retake-requested webhook of st, a state
// with a pending retake (PendingRetake): {"type":"ekyc.session.retake_requested",
// "timestamp":<requested_at>,"data":<Data Get body as of requested_at, with retake>}.
// Deterministic: every replay signs the same body.
func RetakeWebhookBody(st *schemas.SessionState) ([]byte, error) {
	rt := PendingRetake(st)
	if rt == nil {
		return nil, errors.New("readmodel: the session has no pending retake")
	}
	return json.Marshal(struct {
		Type      string      `json:"type"`
		Timestamp string      `json:"timestamp"`
		Data      SessionView `json:"data"`
	}{WebhookEventRetakeRequested, Timestamp(rt.RequestedAt), DataGetBody(st, rt.RequestedAt, true)})
}

// Timestamp formats t as the API's timestamps are written: RFC 3339, UTC, whole seconds.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
