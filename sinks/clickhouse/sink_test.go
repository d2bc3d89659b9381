package clickhouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

func TestWriteDecidedSessionsAndChecks(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	ctx := context.Background()
	st := decidedState(1, RetentionService)
	open := *st
	open.Status, open.Decision, open.DecidedAt, open.Version = schemas.StatusProcessing, nil, nil, 5
	recs := []*stream.Record{
		rec(t, c, schemas.TopicSessionState, st.Envelope.SessionID, &open, 0), // not terminal: not written
		rec(t, c, schemas.TopicSessionState, st.Envelope.SessionID, st, 1),
	}
	for i := 0; i < 2; i++ { // twice: a replay
		if err := s.Write(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".decisions FINAL"); n != 1 {
		t.Fatalf("decisions FINAL = %d rows, want 1", n)
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".checks FINAL"); n != 4 {
		t.Fatalf("checks FINAL = %d rows, want 4", n)
	}
	var (
		status, outcome, name, hash string
		idn                         *string
		createdMS                   uint16
		docMS                       uint16
	)
	err := conn.QueryRow(ctx, "SELECT status, outcome, full_name, id_number, id_number_hash, created_at_ms, captured_at_ms FROM "+db+".decisions FINAL").
		Scan(&status, &outcome, &name, &idn, &hash, &createdMS, &docMS)
	if err != nil {
		t.Fatal(err)
	}
	if status != "verified" || outcome != "verified" || name != "NGUYỄN VĂN A" || idn == nil || *idn != *st.Decision.Extracted.IDNumber ||
		hash != IDNumberHash(testHashKey, *idn) || createdMS != 123 || docMS != 523 {
		t.Fatalf("row = %s %s %s %v %s %d %d", status, outcome, name, idn, hash, createdMS, docMS)
	}
}

func TestIntegratorRetentionLeavesNoRawPII(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	st := decidedState(2, RetentionIntegrator)
	if err := s.Write(context.Background(), []*stream.Record{rec(t, c, schemas.TopicSessionState, st.Envelope.SessionID, st, 0)}); err != nil {
		t.Fatal(err)
	}
	assertNoPII(t, conn, db, st.Envelope.SessionID)
	want := IDNumberHash(testHashKey, *st.Decision.Extracted.IDNumber)
	var hash string
	if err := conn.QueryRow(context.Background(), "SELECT id_number_hash FROM "+db+".decisions FINAL").Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if hash != want {
		t.Fatalf("id_number_hash = %q, want the keyed hash %q", hash, want)
	}
	// The raw id number, name and place appear nowhere in the row.
	n := queryInt(t, conn, "SELECT count() FROM "+db+".decisions WHERE position(toString(tuple(*)), '"+*st.Decision.Extracted.IDNumber+"') > 0 OR position(toString(tuple(*)), 'NGUY') > 0 OR position(toString(tuple(*)), '29A-12345') > 0")
	if n != 0 {
		t.Fatalf("%d rows still hold raw PII", n)
	}
}

// assertNoPII checks the PII columns of a session's decisions row are empty.
func assertNoPII(t *testing.T, conn driver.Conn, db, sid string) {
	t.Helper()
	q := "SELECT count() FROM " + db + ".decisions FINAL WHERE session_id = '" + sid + "' AND id_number IS NULL AND full_name IS NULL AND date_of_birth IS NULL" +
		" AND place_of_origin IS NULL AND place_of_residence IS NULL AND arrayAll(x -> x = '', other_values)"
	if n := queryInt(t, conn, q); n != 1 {
		t.Fatalf("session %s: PII columns not empty", sid)
	}
}

func TestErasureClearsPIIAndFaceIndex(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	ctx := context.Background()
	st, other := decidedState(3, RetentionService), decidedState(5, RetentionService)
	sid := st.Envelope.SessionID
	if err := s.Write(ctx, []*stream.Record{
		rec(t, c, schemas.TopicSessionState, sid, st, 0),
		rec(t, c, schemas.TopicSessionState, other.Envelope.SessionID, other, 1),
	}); err != nil {
		t.Fatal(err)
	}
	// The fraud work writes face_index; here the test does.
	fb, err := conn.PrepareBatch(ctx, "INSERT INTO "+db+".face_index (tenant_id, session_id, id_number_hash, embedding, model_version, created_at, created_at_ms, deleted, version)")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{sid, other.Envelope.SessionID} {
		if err := fb.Append("ten_a", id, "h", []float32{0.1, 0.2}, "fr@1", base, uint16(0), uint8(0), uint64(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := fb.Send(); err != nil {
		t.Fatal(err)
	}

	if err := s.Write(ctx, []*stream.Record{rec(t, c, schemas.TopicSessionState, sid, nil, 2)}); err != nil {
		t.Fatal(err)
	}
	waitMutations(t, conn, db)
	assertNoPII(t, conn, db, sid)
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".decisions FINAL WHERE session_id = '"+sid+"' AND erased = 1 AND id_number_hash = '' AND outcome = 'verified'"); n != 1 {
		t.Fatal("erased session row: want erased = 1, no hash, outcome kept")
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".face_index FINAL WHERE session_id = '"+sid+"' AND deleted = 1 AND empty(embedding)"); n != 1 {
		t.Fatal("face_index row of the erased session not marked deleted")
	}
	// The other session is untouched.
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".decisions FINAL WHERE session_id = '"+other.Envelope.SessionID+"' AND full_name = 'NGUYỄN VĂN A' AND erased = 0"); n != 1 {
		t.Fatal("erasure touched another session")
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".face_index FINAL WHERE deleted = 0"); n != 1 {
		t.Fatal("erasure touched another session's face")
	}
}

func TestConsentsAndWebhookAttemptsLand(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	var recs []*stream.Record
	for i := 0; i < 6; i++ {
		cr := consent(i)
		recs = append(recs, rec(t, c, schemas.TopicConsents, cr.TrackingID, cr, int64(i)))
	}
	recs = append(recs,
		rec(t, c, schemas.TopicWebhookAttempts, "ses_000001", webhookAttempt(1, 1), 0),
		rec(t, c, schemas.TopicWebhookAttempts, "ses_000001", webhookAttempt(1, 2), 1),
		&stream.Record{Topic: schemas.TopicConsents, Key: []byte("junk"), Value: []byte("not avro")},
	)
	for i := 0; i < 2; i++ { // a replay deduplicates
		if err := s.Write(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".consents FINAL"); n != 6 {
		t.Fatalf("consents FINAL = %d, want 6", n)
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".consents FINAL WHERE purpose_id = 'marketing' AND tenant_id = 'ten_a'"); n != 3 {
		t.Fatalf("marketing consents = %d, want 3", n)
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".webhook_deliveries FINAL WHERE webhook_id = 'wh_1'"); n != 2 {
		t.Fatalf("webhook attempts = %d, want 2", n)
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".webhook_deliveries FINAL WHERE attempt = 1 AND status_code = 500 AND outcome = 'retry' AND next_attempt_at IS NOT NULL"); n != 1 {
		t.Fatal("first attempt not recorded as a retry with status 500")
	}
	if s.Skipped() != 2 { // the junk record, once per write
		t.Fatalf("skipped = %d, want 2", s.Skipped())
	}
}

// TestBiometricErasureClearsFaceIndex: a snapshot carrying a biometric erasure (consent
// withdrawal) marks the session's face_index rows deleted with an empty embedding, keeps
// its decision row (and its PII: only biometrics were withdrawn) and touches no other
// session; writing the batch again changes nothing.
func TestBiometricErasureClearsFaceIndex(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	ctx := context.Background()
	st, other := decidedState(7, RetentionService), decidedState(8, RetentionService)
	sid := st.Envelope.SessionID
	fb, err := conn.PrepareBatch(ctx, "INSERT INTO "+db+".face_index (tenant_id, session_id, id_number_hash, embedding, model_version, created_at, created_at_ms, deleted, version)")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{sid, other.Envelope.SessionID} {
		if err := fb.Append("ten_a", id, "h", []float32{0.1, 0.2}, "fr@1", base, uint16(0), uint8(0), uint64(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := fb.Send(); err != nil {
		t.Fatal(err)
	}
	erasedAt := base.Add(time.Hour)
	withdrawn := *st
	withdrawn.Version++
	withdrawn.BiometricErasure = &schemas.BiometricErasure{TrackingID: "trk_1", ConsentID: "con_w", RequestedAt: erasedAt,
		BlobsDeleted: []string{"fs://ten_a/" + sid + "/cap_s/image"}, ErasedAt: &erasedAt}
	batch := []*stream.Record{
		rec(t, c, schemas.TopicSessionState, sid, st, 0),
		rec(t, c, schemas.TopicSessionState, other.Envelope.SessionID, other, 1),
		rec(t, c, schemas.TopicSessionState, sid, &withdrawn, 2),
	}
	for range 2 {
		if err := s.Write(ctx, batch); err != nil {
			t.Fatal(err)
		}
		waitMutations(t, conn, db)
		if n := queryInt(t, conn, "SELECT count() FROM "+db+".face_index FINAL WHERE session_id = '"+sid+"' AND deleted = 1 AND empty(embedding)"); n != 1 {
			t.Fatal("face_index row of the withdrawn session not marked deleted")
		}
		if n := queryInt(t, conn, "SELECT count() FROM "+db+".face_index FINAL WHERE deleted = 0 AND length(embedding) = 2"); n != 1 {
			t.Fatal("the withdrawal touched another session's face")
		}
		if n := queryInt(t, conn, "SELECT count() FROM "+db+".decisions FINAL WHERE session_id = '"+sid+"' AND erased = 0 AND full_name IS NOT NULL"); n != 1 {
			t.Fatal("the withdrawn session's decision row changed")
		}
	}
}

// TestReviewActionsLandAndNotesAreErased: a reviewed session's decision says who decided;
// every review action lands once in review_actions; the session's erasure clears the
// reviewers' notes.
func TestReviewActionsLandAndNotesAreErased(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	ctx := context.Background()
	st := decidedState(7, RetentionService)
	sid := st.Envelope.SessionID
	ana := "ana"
	st.Decision.DecidedBy, st.Decision.ReviewerID = schemas.DecidedByReviewer, &ana
	env := func(n int) schemas.Envelope {
		return schemas.Envelope{EventID: fmt.Sprintf("evt_r%d", n), SessionID: sid, TenantID: st.Envelope.TenantID, OccurredAt: base.Add(time.Duration(n) * time.Second), Producer: "edge"}
	}
	note := "a mask at the chin"
	events := []*schemas.ReviewEvent{
		{Envelope: env(1), Opened: &schemas.ReviewOpened{PolicyVersion: "p1", Reasons: []schemas.Reason{{Code: "liveness_grey_band", Message: "m"}}}},
		{Envelope: env(2), Claimed: &schemas.ReviewClaimed{ReviewerID: ana, Until: base.Add(15 * time.Minute)}},
		{Envelope: env(3), Decided: &schemas.ReviewDecided{ReviewerID: ana, Outcome: "rejected", ReasonCode: "mask_seen", Note: &note}},
		{Envelope: env(4), Retake: &schemas.ReviewRetakeRequested{ReviewerID: ana, Step: "selfie", ReasonCode: "face_hidden", Note: &note, ExpiresAt: base.Add(24 * time.Hour)}},
		{Envelope: env(5), Viewed: &schemas.ReviewViewed{ReviewerID: ana, What: "image:selfie"}},
	}
	recs := []*stream.Record{rec(t, c, schemas.TopicSessionState, sid, st, 0)}
	for i, ev := range events {
		recs = append(recs, rec(t, c, schemas.TopicReviews, sid, ev, int64(i+1)))
	}
	for range 2 { // a replay
		if err := s.Write(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".decisions FINAL WHERE decided_by = 'reviewer' AND reviewer_id = 'ana'"); n != 1 {
		t.Fatalf("decided_by: %d rows", n)
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".review_actions FINAL WHERE session_id = '"+sid+"'"); n != 5 {
		t.Fatalf("review_actions: %d rows, want 5", n)
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".review_actions FINAL WHERE (kind = 'retake_requested' AND subject = 'selfie' AND reason_code = 'face_hidden') OR (kind = 'viewed' AND subject = 'image:selfie' AND reviewer_id = 'ana')"); n != 2 {
		t.Fatal("the retake's and the view's rows are not as produced")
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".review_actions FINAL WHERE kind = 'decided' AND outcome = 'rejected' AND reason_code = 'mask_seen' AND note = '"+note+"'"); n != 1 {
		t.Fatal("the decision's row is not as produced")
	}
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".review_actions FINAL WHERE kind = 'opened' AND has(reasons, 'liveness_grey_band')"); n != 1 {
		t.Fatal("the opening's reasons are missing")
	}
	if err := s.Write(ctx, []*stream.Record{rec(t, c, schemas.TopicSessionState, sid, nil, 9)}); err != nil {
		t.Fatal(err)
	}
	waitMutations(t, conn, db)
	if n := queryInt(t, conn, "SELECT count() FROM "+db+".review_actions FINAL WHERE session_id = '"+sid+"' AND note IS NOT NULL"); n != 0 {
		t.Fatal("an erased session's review note is still there")
	}
}
