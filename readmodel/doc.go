// Package readmodel is what the edge answers with and the webhook sink sends: the Data Get
// body built from a session's snapshot (DataGetBody), the session-completed webhook's body
// and target (WebhookBody, WebhookTarget, WebhookID), and the in-memory views the edge reads
// them from (States, the session-state topic with the sessions this process just opened;
// GateReplies, the quality gate's answers its capture requests wait for). The webhook sink
// and Data Get build the body with the same function, so they send the same bytes.
package readmodel
