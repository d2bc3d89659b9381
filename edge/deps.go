package edge

import (
	"context"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Publisher produces records and returns once every one is acknowledged by the brokers.
type Publisher interface {
	Produce(ctx context.Context, outs ...stream.Output) error
}

// Encoder encodes an event for a topic (schemas.Codec satisfies it).
type Encoder interface {
	Encode(topic string, v any) ([]byte, error)
}

// Sessions is the edge's read view of session states (ekyc.session-state.v1 plus the
// sessions this edge just opened).
type Sessions interface {
	// Get returns the state of sessionID, false when it is unknown (or erased).
	Get(ctx context.Context, sessionID string) (*schemas.SessionState, bool, error)
	// Wait blocks until the state of sessionID satisfies pred or ctx ends.
	Wait(ctx context.Context, sessionID string, pred func(*schemas.SessionState) bool) (*schemas.SessionState, error)
	// Range calls fn for every known session until fn returns false.
	Range(fn func(*schemas.SessionState) bool)
}

// SessionRecorder is optionally implemented by a Sessions view: after a SessionOpened is
// acknowledged, the edge calls Opened with the state the session group will fold, so that
// step endpoints called right after Session Init find the session before the fold lands.
type SessionRecorder interface {
	Opened(st *schemas.SessionState)
}

// ErasedSessions is optionally implemented by a Sessions view: Erased reports whether the
// session's state was erased lately, so that a step request for it gets 404 at once rather
// than waiting for a state that will not come.
type ErasedSessions interface {
	Erased(sessionID string) bool
}

// QualityReplies delivers the quality gate's answer for a capture.
type QualityReplies interface {
	// Wait returns the QualityAssessed of captureID, or ctx's error when the budget ends.
	Wait(ctx context.Context, captureID string) (*schemas.QualityAssessed, error)
}

// ConsentChecker tells whether a tracking id holds a granted consent for a purpose.
type ConsentChecker interface {
	Granted(ctx context.Context, tenantID, trackingID, purpose string) (bool, error)
}

// ImageInspector validates an uploaded image: any error means "not a usable image" (422
// invalid_image). It returns the image's media type (image/jpeg or image/png).
type ImageInspector interface {
	InspectImage(data []byte) (mediaType string, err error)
}

// ImageInspectorFunc adapts a function to ImageInspector.
type ImageInspectorFunc func(data []byte) (string, error)

// InspectImage calls f.
func (f ImageInspectorFunc) InspectImage(data []byte) (string, error) { return f(data) }
