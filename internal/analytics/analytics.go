// Package analytics holds the analyst views of one tenant over a period: pass rate by flow
// and day, rejection reasons, time per step, reviewer throughput, fraud signals over time
// and the reviewers' views of personal data. A Source computes them (the ClickHouse adapter:
// sinks/clickhouse.Analyst); the review API serves them to the tenant's reviewers and the back
// office draws them.
package analytics

import (
	"context"
	"time"
)

// Source computes a tenant's Report for sessions opened in [from, to). Implementations
// must scope every figure to tenantID and be safe for concurrent use.
type Source interface {
	Report(ctx context.Context, tenantID string, from, to time.Time) (*Report, error)
}

// Report is the analyst views of one tenant over a period. Days are UTC dates (YYYY-MM-DD);
// every list is ordered as documented on its field and never nil.
type Report struct {
	// Days: sessions that ended, per day opened and flow, by day then flow.
	Days []FlowDay `json:"days"`
	// RejectReasons: reason codes of rejected sessions (each session counted once per code),
	// the most frequent first (top 20).
	RejectReasons []ReasonCount `json:"reject_reasons"`
	// Steps: time per step of decided sessions, per flow.
	Steps []FlowSteps `json:"steps"`
	// Reviewers: sessions a reviewer decided in the period, per day decided and reviewer.
	Reviewers []ReviewerDay `json:"reviewers"`
	// FraudSignals: failed or warning fraud checks, per day opened and check, by day then
	// the most failures first.
	FraudSignals []FraudDay `json:"fraud_signals"`
	// Views: the reviewers' views of personal data (a case or a picture), the most first.
	Views []ReviewerViews `json:"views"`
}

// FlowDay is one day's ended sessions of one flow.
type FlowDay struct {
	Day      string `json:"day"`
	Flow     string `json:"flow"`
	Sessions int64  `json:"sessions"`
	Verified int64  `json:"verified"`
	Rejected int64  `json:"rejected"`
	Expired  int64  `json:"expired"` // expired or cancelled
}

// ReasonCount is how many rejected sessions gave a reason.
type ReasonCount struct {
	Code     string `json:"code"`
	Sessions int64  `json:"sessions"`
}

// FlowSteps is the time per step of one flow's decided sessions.
type FlowSteps struct {
	Flow     string `json:"flow"`
	Sessions int64  `json:"sessions"`
	Steps    []Step `json:"steps"`
}

// Step names, in the order a session goes through them.
const (
	StepOpenToFirstCapture = "open_to_first_capture" // the person starts
	StepCapturing          = "capturing"             // first capture → every step captured
	StepFirstCaptureToOCR  = "first_capture_to_ocr"  // first capture → the documents read
	StepCapturedToLiveness = "captured_to_liveness"  // → liveness assessed
	StepCapturedToDecision = "captured_to_decision"  // → decided (a person's review included)
)

// Step is the median and 90th percentile of one step, milliseconds; nil when no session of
// the flow has the step (a flow without a selfie has no liveness).
type Step struct {
	Name  string   `json:"name"`
	P50MS *float64 `json:"p50_ms"`
	P90MS *float64 `json:"p90_ms"`
}

// ReviewerDay is what one reviewer decided on one day.
type ReviewerDay struct {
	Day        string `json:"day"`
	ReviewerID string `json:"reviewer_id"`
	Verified   int64  `json:"verified"`
	Rejected   int64  `json:"rejected"`
}

// FraudDay is one fraud check's failures and warnings on one day.
type FraudDay struct {
	Day    string `json:"day"`
	Check  string `json:"check"`
	Failed int64  `json:"failed"`
	Warned int64  `json:"warned"`
}

// ReviewerViews is how often a reviewer saw personal data, and in how many sessions.
type ReviewerViews struct {
	ReviewerID string `json:"reviewer_id"`
	Views      int64  `json:"views"`
	Sessions   int64  `json:"sessions"`
}
