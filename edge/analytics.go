package edge

import (
	"context"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/internal/analytics"
	"github.com/idstream/idstream/readmodel"
)

// Analytics bounds: the period a reviewer may ask for, and how long the queries may take.
const (
	DefaultAnalyticsDays = 14
	MaxAnalyticsDays     = 92
	analyticsTimeout     = 20 * time.Second
)

// AnalyticsView answers GET /v1/review/analytics: the analyst views of the reviewer's
// tenant over the last Days days (sessions opened from From to To), and the review backlog
// as the session view has it now.
type AnalyticsView struct {
	From    string           `json:"from"`
	To      string           `json:"to"`
	Days    int              `json:"days"`
	Backlog AnalyticsQueue   `json:"backlog"`
	Report  analytics.Report `json:"report"`
}

// AnalyticsQueue is the tenant's review backlog now.
type AnalyticsQueue struct {
	Cases            int   `json:"cases"`
	OldestAgeSeconds int64 `json:"oldest_age_seconds"` // 0 when there is none
}

// reviewAnalytics answers GET /v1/review/analytics?days=N (1–92, default 14) for a
// reviewer: their tenant's figures only. 404 when the edge has no analytics source, 503
// when it does not answer.
func (s *Server) reviewAnalytics(c *fiber.Ctx) error {
	r, err := s.authenticateReviewer(c)
	if err != nil {
		return err
	}
	days := DefaultAnalyticsDays
	if v := c.Query("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxAnalyticsDays {
			return invalidRequest("days must be an integer from 1 to %d", MaxAnalyticsDays)
		}
		days = n
	}
	if s.cfg.Analytics == nil {
		return problem(fiber.StatusNotFound, CodeNotFound, "analytics are not configured on this edge (they read the ClickHouse the sink writes)")
	}
	now := s.now().UTC()
	to := now.Truncate(time.Second).Add(time.Second)
	from := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1-days)
	ctx, cancel := context.WithTimeout(c.UserContext(), analyticsTimeout)
	defer cancel()
	rep, err := s.cfg.Analytics.Report(ctx, r.tenant.ID, from, to)
	if err != nil {
		s.log.Error("edge: analytics", "request_id", requestID(c), "tenant_id", r.tenant.ID, "err", err)
		return errUnavailable()
	}
	v := AnalyticsView{From: readmodel.Timestamp(from), To: readmodel.Timestamp(to), Days: days, Report: *rep}
	cases := s.inReview(r.tenant.ID)
	for _, st := range cases {
		if st.Review == nil || st.Review.Decided != nil {
			continue
		}
		v.Backlog.Cases++
		if age := int64(now.Sub(st.Review.OpenedAt) / time.Second); age > v.Backlog.OldestAgeSeconds {
			v.Backlog.OldestAgeSeconds = age
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(v)
}
