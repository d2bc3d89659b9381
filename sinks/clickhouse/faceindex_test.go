package clickhouse

import (
	"context"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

func faceEntry(sid, outcome string, at time.Time) *schemas.FaceIndexEntry {
	return &schemas.FaceIndexEntry{
		Envelope:     schemas.Envelope{EventID: "evt_face_" + sid + outcome, SessionID: sid, TenantID: "ten_a", OccurredAt: at, Producer: "fraud"},
		IDNumberHash: "h_" + sid, Embedding: []float32{0.6, 0.8}, ModelVersion: "fr@1", CaptureID: "cap_" + sid, Outcome: outcome,
	}
}

// TestFaceIndexRows: the face-index topic's verified entries become face_index rows; an
// undecided or rejected entry does not; a tombstone (erasure) marks the row deleted with an
// empty embedding, also when it arrives in the same batch as the entry.
func TestFaceIndexRows(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	ctx := context.Background()
	at := time.Date(2026, 11, 22, 10, 0, 0, 123_000_000, time.UTC)
	if err := s.Write(ctx, []*stream.Record{
		rec(t, c, schemas.TopicFaceIndex, "ses_v", faceEntry("ses_v", "", at), 0),
		rec(t, c, schemas.TopicFaceIndex, "ses_v", faceEntry("ses_v", "verified", at.Add(time.Second)), 1),
		rec(t, c, schemas.TopicFaceIndex, "ses_r", faceEntry("ses_r", "rejected", at), 2),
		rec(t, c, schemas.TopicFaceIndex, "ses_p", faceEntry("ses_p", "", at), 3),
		rec(t, c, schemas.TopicFaceIndex, "ses_e", faceEntry("ses_e", "verified", at), 4),
	}); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".face_index FINAL WHERE deleted = 0"); n != 2 {
		t.Fatalf("%d live face_index rows, want 2 (the verified sessions)", n)
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".face_index FINAL WHERE session_id = 'ses_v' AND tenant_id = 'ten_a' AND id_number_hash = 'h_ses_v' "+
		"AND length(embedding) = 2 AND model_version = 'fr@1' AND created_at_ms = 123 AND version = "+
		"toUInt64(1795341601123)"); n != 1 {
		t.Fatal("face_index row of ses_v: wrong columns")
	}
	// ses_e erased; ses_x verified and erased within one batch.
	if err := s.Write(ctx, []*stream.Record{
		rec(t, c, schemas.TopicFaceIndex, "ses_e", nil, 5),
		rec(t, c, schemas.TopicFaceIndex, "ses_x", faceEntry("ses_x", "verified", at), 6),
		rec(t, c, schemas.TopicFaceIndex, "ses_x", nil, 7),
	}); err != nil {
		t.Fatal(err)
	}
	waitMutations(t, conn, db)
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".face_index FINAL WHERE deleted = 1 AND empty(embedding) AND session_id IN ('ses_e', 'ses_x')"); n != 1 {
		t.Fatalf("%d erased rows, want 1 (ses_e; ses_x never written live)", n)
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".face_index FINAL WHERE deleted = 0"); n != 1 {
		t.Fatalf("%d live rows after the erasures, want 1 (ses_v)", n)
	}
}
