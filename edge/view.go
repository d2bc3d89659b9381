package edge

import (
	"time"

	"github.com/idstream/idstream/schemas"
)

// The Data Get body and the session-completed webhook body are built in package schemas
// (schemas/view.go), so that the webhook sink, which may not import the edge, sends exactly
// the body Data Get answers. These names keep the edge's vocabulary.

// StepPending is the status the Data Get body gives a required step not captured yet.
const StepPending = schemas.StepPending

// WebhookEventCompleted is the type of the session-completed webhook.
const WebhookEventCompleted = schemas.WebhookEventCompleted

type (
	// SessionView is the Data Get body; see schemas.SessionView.
	SessionView = schemas.SessionView
	// StepView is one entry of SessionView.Steps.
	StepView = schemas.StepView
	// DecisionView is SessionView.Decision.
	DecisionView = schemas.DecisionView
	// CheckView is one entry of SessionView.Checks.
	CheckView = schemas.CheckView
)

// DataGetBody maps a session state to the Data Get body as of now; see schemas.DataGetBody.
func DataGetBody(st *schemas.SessionState, now time.Time, full bool) SessionView {
	return schemas.DataGetBody(st, now, full)
}

// EffectiveStatus is the session's status as of now; see schemas.EffectiveStatus.
func EffectiveStatus(st *schemas.SessionState, now time.Time) string {
	return schemas.EffectiveStatus(st, now)
}

// WebhookBody returns the exact bytes of the session-completed webhook; see
// schemas.WebhookBody.
func WebhookBody(st *schemas.SessionState, now time.Time) ([]byte, error) {
	return schemas.WebhookBody(st, now)
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
