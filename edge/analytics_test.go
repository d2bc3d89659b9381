package edge

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/analytics"
)

// fakeAnalytics records what it was asked for.
type fakeAnalytics struct {
	mu       sync.Mutex
	tenant   string
	from, to time.Time
	err      error
}

func (f *fakeAnalytics) Report(_ context.Context, tenantID string, from, to time.Time) (*analytics.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tenant, f.from, f.to = tenantID, from, to
	if f.err != nil {
		return nil, f.err
	}
	return &analytics.Report{Days: []analytics.FlowDay{{Day: "2026-11-22", Flow: "id_card", Sessions: 3, Verified: 2, Rejected: 1}}}, nil
}

func TestReviewAnalytics(t *testing.T) {
	src := &fakeAnalytics{}
	e := reviewEnv(t)
	e.srv.cfg.Analytics = src
	now := e.clock.Now()
	e.inReview("acme", now.Add(-2*time.Hour))
	e.inReview("acme", now.Add(-time.Hour))
	e.inReview("beta", now.Add(-5*time.Hour))

	r := e.do("GET", "/v1/review/analytics?days=7", keyAna, "", nil)
	var v AnalyticsView
	if err := json.Unmarshal(r.body, &v); err != nil || r.status != 200 {
		t.Fatalf("analytics: %d %s", r.status, r.body)
	}
	if src.tenant != "acme" || !src.from.Equal(time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)) || !src.to.After(now) {
		t.Errorf("asked for tenant %s from %s to %s, want acme's last 7 days", src.tenant, src.from, src.to)
	}
	if v.Days != 7 || v.Backlog.Cases != 2 || v.Backlog.OldestAgeSeconds != 7200 || len(v.Report.Days) != 1 {
		t.Errorf("view %+v: want acme's two cases, the oldest 2 h", v)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Error("analytics may be cached")
	}
	for _, q := range []string{"days=0", "days=93", "days=x"} {
		expectProblem(t, e.do("GET", "/v1/review/analytics?"+q, keyAna, "", nil), 422, CodeInvalidRequest)
	}
	expectProblem(t, e.do("GET", "/v1/review/analytics", keyAcme, "", nil), 403, CodeForbidden)
	src.err = errors.New("clickhouse down")
	expectProblem(t, e.do("GET", "/v1/review/analytics", keyAna, "", nil), 503, CodeUnavailable)
	e.srv.cfg.Analytics = nil
	expectProblem(t, e.do("GET", "/v1/review/analytics", keyAna, "", nil), 404, CodeNotFound)
}
