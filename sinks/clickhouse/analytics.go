package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/idstream/idstream/internal/analytics"
)

// Analyst computes the analyst views (analytics.Report) of one tenant from the tables the
// sink writes. Every query names the tenant and the period; values are bound, never spliced.
// The SQL runs on ClickHouse 18.16 and current ClickHouse. Safe for concurrent use.
type Analyst struct {
	conn driver.Conn
	db   string
}

// NewAnalyst returns an Analyst reading database db (DefaultDatabase when empty) over conn.
func NewAnalyst(conn driver.Conn, db string) (*Analyst, error) {
	if db == "" {
		db = DefaultDatabase
	}
	if !databaseName.MatchString(db) {
		return nil, fmt.Errorf("new analyst: invalid database name %q", db)
	}
	return &Analyst{conn: conn, db: db}, nil
}

// Report implements analytics.Source: sessions opened in [from, to) (reviewers' decisions
// and views: made in it). Days are UTC dates, whatever the server's timezone.
func (a *Analyst) Report(ctx context.Context, tenantID string, from, to time.Time) (*analytics.Report, error) {
	r := &analytics.Report{
		Days: []analytics.FlowDay{}, RejectReasons: []analytics.ReasonCount{}, Steps: []analytics.FlowSteps{},
		Reviewers: []analytics.ReviewerDay{}, FraudSignals: []analytics.FraudDay{}, Views: []analytics.ReviewerViews{},
	}
	period := []any{tenantID, from.Unix(), to.Unix()}
	const opened = "tenant_id = ? AND created_at >= toDateTime(?) AND created_at < toDateTime(?)"
	queries := []struct {
		name, sql string
		scan      func(driver.Rows) error
	}{
		{"days", `SELECT toString(toDate(created_at, 'UTC')) AS day, flow, count(),
       countIf(outcome = 'verified'), countIf(outcome = 'rejected'), countIf(status IN ('expired', 'cancelled'))
FROM ` + a.db + `.decisions FINAL WHERE ` + opened + `
GROUP BY day, flow ORDER BY day, flow`, func(rows driver.Rows) error {
			var d analytics.FlowDay
			var n, v, rj, e uint64
			if err := rows.Scan(&d.Day, &d.Flow, &n, &v, &rj, &e); err != nil {
				return err
			}
			d.Sessions, d.Verified, d.Rejected, d.Expired = int64(n), int64(v), int64(rj), int64(e)
			r.Days = append(r.Days, d)
			return nil
		}},
		{"reject reasons", `SELECT reason, uniqExact(session_id) AS sessions
FROM ` + a.db + `.decisions FINAL ARRAY JOIN reasons AS reason
WHERE outcome = 'rejected' AND ` + opened + `
GROUP BY reason ORDER BY sessions DESC, reason LIMIT 20`, func(rows driver.Rows) error {
			var c analytics.ReasonCount
			var n uint64
			if err := rows.Scan(&c.Code, &n); err != nil {
				return err
			}
			c.Sessions = int64(n)
			r.RejectReasons = append(r.RejectReasons, c)
			return nil
		}},
		{"steps", `SELECT flow, count(),
       quantile(0.5)(` + span("created_at", "first_capture_at") + `), quantile(0.9)(` + span("created_at", "first_capture_at") + `),
       quantile(0.5)(` + span("first_capture_at", "captured_at") + `), quantile(0.9)(` + span("first_capture_at", "captured_at") + `),
       quantile(0.5)(` + span("first_capture_at", "document_read_at") + `), quantile(0.9)(` + span("first_capture_at", "document_read_at") + `),
       quantile(0.5)(` + span("captured_at", "liveness_at") + `), quantile(0.9)(` + span("captured_at", "liveness_at") + `),
       quantile(0.5)(` + span("captured_at", "decided_at") + `), quantile(0.9)(` + span("captured_at", "decided_at") + `)
FROM ` + a.db + `.decisions FINAL WHERE outcome != '' AND ` + opened + `
GROUP BY flow ORDER BY flow`, func(rows driver.Rows) error {
			var fs analytics.FlowSteps
			var n uint64
			q := make([]*float64, 10)
			dest := []any{&fs.Flow, &n}
			for i := range q {
				dest = append(dest, &q[i])
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			fs.Sessions = int64(n)
			for i, name := range []string{analytics.StepOpenToFirstCapture, analytics.StepCapturing, analytics.StepFirstCaptureToOCR, analytics.StepCapturedToLiveness, analytics.StepCapturedToDecision} {
				fs.Steps = append(fs.Steps, analytics.Step{Name: name, P50MS: finite(q[2*i]), P90MS: finite(q[2*i+1])})
			}
			r.Steps = append(r.Steps, fs)
			return nil
		}},
		{"reviewers", `SELECT toString(toDate(decided_at, 'UTC')) AS day, assumeNotNull(reviewer_id) AS reviewer,
       countIf(outcome = 'verified'), countIf(outcome = 'rejected')
FROM ` + a.db + `.decisions FINAL
WHERE decided_by = 'reviewer' AND reviewer_id IS NOT NULL
  AND tenant_id = ? AND decided_at >= toDateTime(?) AND decided_at < toDateTime(?)
GROUP BY day, reviewer ORDER BY day, reviewer`, func(rows driver.Rows) error {
			var d analytics.ReviewerDay
			var v, rj uint64
			if err := rows.Scan(&d.Day, &d.ReviewerID, &v, &rj); err != nil {
				return err
			}
			d.Verified, d.Rejected = int64(v), int64(rj)
			r.Reviewers = append(r.Reviewers, d)
			return nil
		}},
		{"fraud signals", `SELECT toString(toDate(created_at, 'UTC')) AS day, name, countIf(status = 'fail') AS failed, countIf(status = 'warn')
FROM ` + a.db + `.checks FINAL
WHERE name LIKE 'fraud.%' AND status IN ('fail', 'warn') AND ` + opened + `
GROUP BY day, name ORDER BY day, failed DESC, name`, func(rows driver.Rows) error {
			var d analytics.FraudDay
			var f, w uint64
			if err := rows.Scan(&d.Day, &d.Check, &f, &w); err != nil {
				return err
			}
			d.Failed, d.Warned = int64(f), int64(w)
			r.FraudSignals = append(r.FraudSignals, d)
			return nil
		}},
		{"views", `SELECT assumeNotNull(reviewer_id) AS reviewer, count() AS views, uniqExact(session_id)
FROM ` + a.db + `.review_actions FINAL
WHERE kind = 'viewed' AND reviewer_id IS NOT NULL AND tenant_id = ? AND at >= toDateTime(?) AND at < toDateTime(?)
GROUP BY reviewer ORDER BY views DESC, reviewer`, func(rows driver.Rows) error {
			var v analytics.ReviewerViews
			var n, s uint64
			if err := rows.Scan(&v.ReviewerID, &n, &s); err != nil {
				return err
			}
			v.Views, v.Sessions = int64(n), int64(s)
			r.Views = append(r.Views, v)
			return nil
		}},
	}
	for _, q := range queries {
		if err := EachRow(ctx, a.conn, q.sql, period, q.scan); err != nil {
			return nil, fmt.Errorf("analytics %s: %w", q.name, err)
		}
	}
	return r, nil
}

// EachRow runs query with args (bound by the driver) on conn and calls scan on every row;
// it returns the first error of the query, of scan or of the rows.
func EachRow(ctx context.Context, conn driver.Conn, query string, args []any, scan func(driver.Rows) error) error {
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// span is the milliseconds from column start to column end (NULL when either is).
func span(start, end string) string {
	return fmt.Sprintf("toInt64(%[2]s) * 1000 + %[2]s_ms - (toInt64(%[1]s) * 1000 + %[1]s_ms)", start, end)
}

// finite drops the NaN a quantile of nothing gives on some servers.
func finite(v *float64) *float64 {
	if v == nil || *v != *v {
		return nil
	}
	return v
}
