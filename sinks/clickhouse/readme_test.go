package clickhouse

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

var sqlBlock = regexp.MustCompile("(?s)```sql\n(.*?)```")

// TestReadmeQueriesRun runs every sql block of deploy/clickhouse/README.md against test
// data (the database name swapped for the test's) and expects rows from each.
func TestReadmeQueriesRun(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	var recs []*stream.Record
	for i := 0; i < 40; i++ {
		st := decidedState(i, []string{RetentionService, RetentionIntegrator}[i%2])
		if i%8 != 4 { // a case still open has not ended: no decisions row
			recs = append(recs, rec(t, c, schemas.TopicSessionState, st.Envelope.SessionID, st, int64(i)))
		}
		cr := consent(i)
		recs = append(recs, rec(t, c, schemas.TopicConsents, cr.TrackingID, cr, int64(i)))
		recs = append(recs, rec(t, c, schemas.TopicWebhookAttempts, st.Envelope.SessionID, webhookAttempt(i, 1+i%2), int64(i)))
		if i%4 == 0 { // a case in review, decided by a reviewer (every other one still open)
			evs := reviewEvents(st, fmt.Sprintf("rev_%d", i%3))
			if i%8 == 4 {
				evs = evs[:4] // opened, claimed, viewed, a retake requested
			}
			for j, ev := range evs {
				recs = append(recs, rec(t, c, schemas.TopicReviews, st.Envelope.SessionID, ev, int64(i*10+j)))
			}
		}
	}
	if err := s.Write(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../deploy/clickhouse/README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := sqlBlock.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 5 {
		t.Fatalf("README has %d sql blocks, want at least 5 (funnel, reject reasons, fraud hits, latency, consents, review)", len(blocks))
	}
	for i, b := range blocks {
		q := strings.ReplaceAll(b[1], "idstream.", db+".")
		t.Run(fmt.Sprintf("query%d", i+1), func(t *testing.T) {
			rows, err := conn.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("%v\n%s", err, q)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				n++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatalf("no rows from\n%s", q)
			}
		})
	}
}

// reviewEvents are the opening, claim and decision of a case on st's session.
func reviewEvents(st *schemas.SessionState, reviewer string) []*schemas.ReviewEvent {
	env := func(n int) schemas.Envelope {
		return schemas.Envelope{EventID: fmt.Sprintf("evt_%s_r%d", st.Envelope.SessionID, n), SessionID: st.Envelope.SessionID,
			TenantID: st.Envelope.TenantID, OccurredAt: st.CreatedAt.Add(time.Duration(n) * time.Minute), Producer: "edge"}
	}
	return []*schemas.ReviewEvent{
		{Envelope: env(1), Opened: &schemas.ReviewOpened{PolicyVersion: "p1", Reasons: []schemas.Reason{{Code: "liveness_grey_band", Message: "m"}}}},
		{Envelope: env(2), Claimed: &schemas.ReviewClaimed{ReviewerID: reviewer, Until: st.CreatedAt.Add(17 * time.Minute)}},
		{Envelope: env(3), Viewed: &schemas.ReviewViewed{ReviewerID: reviewer, What: "image:selfie"}},
		{Envelope: env(4), Retake: &schemas.ReviewRetakeRequested{ReviewerID: reviewer, Step: "selfie", ReasonCode: "face_covered", ExpiresAt: st.CreatedAt.Add(24 * time.Hour)}},
		{Envelope: env(5), Decided: &schemas.ReviewDecided{ReviewerID: reviewer, Outcome: st.Status, ReasonCode: "checked"}},
	}
}
