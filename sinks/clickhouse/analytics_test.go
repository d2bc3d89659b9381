package clickhouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/analytics"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// TestAnalystReport: the analyst views of a tenant count its sessions only, over the
// period asked for, from what the sink wrote.
func TestAnalystReport(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	var recs []*stream.Record
	for i := 1; i <= 8; i++ { // ten_a: 4 and 8 rejected for liveness_failed, 5 with a fraud warning
		st := decidedState(i, RetentionService)
		if i == 3 {
			ana := "ana"
			st.Decision.DecidedBy, st.Decision.ReviewerID = schemas.DecidedByReviewer, &ana
		}
		recs = append(recs, rec(t, c, schemas.TopicSessionState, st.Envelope.SessionID, st, int64(i)))
	}
	// ses_000008 gave its reason twice (two face pairs can both fail): one session still.
	eight := recs[7]
	st8 := decidedState(8, RetentionService)
	st8.Decision.Reasons = append(st8.Decision.Reasons, st8.Decision.Reasons[0])
	recs[7] = rec(t, c, schemas.TopicSessionState, st8.Envelope.SessionID, st8, eight.Offset)
	// Another tenant's rejected session, decided by its reviewer, with a fraud warning.
	other := decidedState(20, RetentionService)
	other.Envelope.TenantID = "ten_b"
	cuc := "cuc"
	other.Decision.DecidedBy, other.Decision.ReviewerID = schemas.DecidedByReviewer, &cuc
	recs = append(recs, rec(t, c, schemas.TopicSessionState, other.Envelope.SessionID, other, 20))
	view := func(n int, tenant, sid, reviewer, what string) *stream.Record {
		ev := &schemas.ReviewEvent{
			Envelope: schemas.Envelope{EventID: fmt.Sprintf("evt_v%d", n), SessionID: sid, TenantID: tenant, OccurredAt: base.Add(time.Hour), Producer: "edge"},
			Viewed:   &schemas.ReviewViewed{ReviewerID: reviewer, What: what},
		}
		return rec(t, c, schemas.TopicReviews, sid, ev, int64(30+n))
	}
	recs = append(recs, view(1, "ten_a", "ses_000003", "ana", "case"), view(2, "ten_a", "ses_000003", "ana", "image:selfie"), view(3, "ten_b", "ses_000020", "cuc", "case"))
	if err := s.Write(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	a, err := NewAnalyst(conn, db)
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Report(context.Background(), "ten_a", base.Add(-24*time.Hour), base.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var sessions, verified, rejected int64
	for _, d := range r.Days {
		sessions, verified, rejected = sessions+d.Sessions, verified+d.Verified, rejected+d.Rejected
		if d.Day != "2026-11-22" {
			t.Errorf("day %q", d.Day)
		}
	}
	if sessions != 8 || verified != 6 || rejected != 2 || len(r.Days) != 3 {
		t.Errorf("days %+v: %d sessions, %d verified, %d rejected; want ten_a's 8, 6, 2 over its 3 flows", r.Days, sessions, verified, rejected)
	}
	if len(r.RejectReasons) != 1 || r.RejectReasons[0] != (analytics.ReasonCount{Code: "liveness_failed", Sessions: 2}) {
		t.Errorf("reject reasons %+v", r.RejectReasons)
	}
	if len(r.Steps) != 3 {
		t.Fatalf("steps %+v", r.Steps)
	}
	for _, fs := range r.Steps {
		last := fs.Steps[len(fs.Steps)-1]
		// decidedState: captured (the last capture) at 30 s, decided at 45.5 s.
		if last.Name != analytics.StepCapturedToDecision || last.P90MS == nil || *last.P90MS < 15000 || *last.P90MS > 16000 {
			t.Errorf("%s: %+v", fs.Flow, last)
		}
	}
	if len(r.Reviewers) != 1 || r.Reviewers[0].ReviewerID != "ana" || r.Reviewers[0].Verified != 1 {
		t.Errorf("reviewers %+v", r.Reviewers)
	}
	if len(r.FraudSignals) != 1 || r.FraudSignals[0].Check != "fraud.duplicate_face" || r.FraudSignals[0].Warned != 1 {
		t.Errorf("fraud signals %+v", r.FraudSignals)
	}
	if len(r.Views) != 1 || r.Views[0] != (analytics.ReviewerViews{ReviewerID: "ana", Views: 2, Sessions: 1}) {
		t.Errorf("views %+v (another tenant's reviewer must not show)", r.Views)
	}
	// A period with none of them: empty lists, not nulls.
	empty, err := a.Report(context.Background(), "ten_a", base.Add(48*time.Hour), base.Add(72*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.Days) != 0 || empty.Views == nil || empty.Steps == nil {
		t.Errorf("an empty period: %+v", empty)
	}
	if _, err := NewAnalyst(conn, "bad name;"); err == nil {
		t.Error("an invalid database name was taken")
	}
}
