package clickhouse

import (
	"time"

	"github.com/idstream/idstream/schemas"
)

// faceColumns are the columns of a face_index insert (faceRow's order).
var faceColumns = []string{
	"tenant_id", "session_id", "id_number_hash", "embedding", "model_version",
	"created_at", "created_at_ms", "deleted", "version",
}

// faceRow is the face_index row of a verified session's face-index entry (the fraud
// group's schemas.TopicFaceIndex): version is the entry's occurred_at in milliseconds, so a
// later entry of the session replaces it.
func faceRow(e *schemas.FaceIndexEntry) []any {
	at := e.Envelope.OccurredAt.UTC()
	emb := e.Embedding
	if emb == nil {
		emb = []float32{}
	}
	return []any{
		e.Envelope.TenantID, e.Envelope.SessionID, e.IDNumberHash, emb, e.ModelVersion,
		at.Truncate(time.Second), ms(at), uint8(0), uint64(max(at.UnixMilli(), 0)),
	}
}

// faceIndexed reports whether an entry belongs in face_index: only verified sessions'
// faces are searched, so only they are written for analysts.
func faceIndexed(e *schemas.FaceIndexEntry) bool {
	return e.Outcome == schemas.StatusVerified && len(e.Embedding) > 0
}
