package clickhouse

import (
	"sort"
	"time"

	"github.com/idstream/idstream/internal/idnumber"
	"github.com/idstream/idstream/schemas"
)

// Retention values of SessionState.DataRetention.
const (
	RetentionService    = "service"
	RetentionIntegrator = "integrator" // no raw PII in ClickHouse: hashes and scores only
)

// Column lists of the inserts; each row builder returns values in this order.
var (
	decisionColumns = []string{
		"session_id", "tenant_id", "flow", "reference_id", "status", "outcome", "policy_version",
		"decision_id", "reasons", "reason_messages", "data_retention", "locale",
		"created_at", "created_at_ms", "expires_at", "decided_at", "decided_at_ms",
		"first_capture_at", "first_capture_at_ms", "captured_at", "captured_at_ms",
		"quality_at", "quality_at_ms", "document_read_at", "document_read_at_ms",
		"chip_verified_at", "chip_verified_at_ms", "liveness_at", "liveness_at_ms",
		"facematch_at", "facematch_at_ms", "steps", "checks_total", "checks_failed",
		"document_type", "id_number", "id_number_hash", "full_name", "date_of_birth", "sex",
		"nationality", "place_of_origin", "place_of_residence", "issue_date", "expiry_date",
		"other_keys", "other_values", "erased", "version", "event_id", "ingested_at",
		"decided_by", "reviewer_id",
	}
	reviewColumns = []string{
		"event_id", "session_id", "tenant_id", "kind", "reviewer_id", "outcome", "reason_code",
		"note", "policy_version", "reasons", "claim_until", "at", "at_ms", "subject",
	}
	checkColumns = []string{
		"session_id", "tenant_id", "flow", "name", "status", "score", "threshold", "reason_code",
		"model_version", "source", "capture_id", "outcome", "created_at", "decided_at", "version",
	}
	consentColumns = []string{
		"consent_id", "tracking_id", "tenant_id", "purpose_id", "status", "notice_version",
		"channel", "ip", "user_agent", "recorded_at", "recorded_at_ms", "proof_sha256", "event_id",
	}
	webhookColumns = []string{
		"event_id", "session_id", "tenant_id", "webhook_id", "decision_event_id", "url", "attempt",
		"status_code", "error", "duration_ms", "outcome", "attempted_at", "attempted_at_ms",
		"next_attempt_at",
	}
)

// erasureSet is the SET list of the erasure mutation on decisions: the PII columns (those
// integrator retention never fills) and the id number's hash are cleared, erased is set.
const erasureSet = "id_number = NULL, id_number_hash = '', full_name = NULL, date_of_birth = NULL, " +
	"place_of_origin = NULL, place_of_residence = NULL, other_values = arrayMap(x -> '', other_values), erased = 1"

// IDNumberHash is the keyed hash id numbers are kept under: hex(HMAC-SHA256(key,
// normalised id number)), the normalisation upper-casing and dropping spaces, tabs, dashes
// and dots. With the same key it equals the blocklist's value_hash (edge.BlocklistHash).
func IDNumberHash(key []byte, idNumber string) string {
	return idnumber.Hash(key, idNumber)
}

// isTerminal reports whether a snapshot is one the sink writes: decided, expired or cancelled.
func isTerminal(st *schemas.SessionState) bool {
	if st.Decision != nil {
		return true
	}
	switch st.Status {
	case schemas.StatusVerified, schemas.StatusRejected, schemas.StatusExpired, schemas.StatusCancelled:
		return true
	}
	return false
}

// decisionRow returns the decisions row of a terminal snapshot, with PII dropped for
// integrator retention.
func decisionRow(st *schemas.SessionState, hashKey []byte, now time.Time) []any {
	var (
		outcome, policy, decisionID string
		reasons, messages           = []string{}, []string{}
		decidedAt                   = st.DecidedAt
		ex                          = &schemas.Extracted{}
	)
	decidedBy, reviewer := schemas.DecidedByPolicy, (*string)(nil)
	if d := st.Decision; d != nil {
		outcome, policy, decisionID = d.Outcome, d.PolicyVersion, d.DecisionID
		if d.DecidedBy != "" {
			decidedBy, reviewer = d.DecidedBy, d.ReviewerID
		}
		for _, r := range d.Reasons {
			reasons, messages = append(reasons, r.Code), append(messages, r.Message)
		}
		if decidedAt == nil && !d.DecidedAt.IsZero() {
			t := d.DecidedAt
			decidedAt = &t
		}
		if d.Extracted != nil {
			ex = d.Extracted
		}
	}
	st0 := stageTimes(st)
	failed := 0
	for _, c := range st.Checks {
		if c.Status == schemas.CheckFail {
			failed++
		}
	}
	var hash string
	if ex.IDNumber != nil && *ex.IDNumber != "" {
		hash = IDNumberHash(hashKey, *ex.IDNumber)
	}
	otherKeys := make([]string, 0, len(ex.Other))
	for k := range ex.Other {
		otherKeys = append(otherKeys, k)
	}
	sort.Strings(otherKeys)
	otherValues := make([]string, len(otherKeys))
	integrator := st.DataRetention == RetentionIntegrator
	for i, k := range otherKeys {
		if !integrator {
			otherValues[i] = ex.Other[k]
		}
	}
	idNumber, fullName, dob, origin, residence := ex.IDNumber, ex.FullName, ex.DateOfBirth, ex.PlaceOfOrigin, ex.PlaceOfResidence
	if integrator {
		idNumber, fullName, dob, origin, residence = nil, nil, nil, nil, nil
	}
	steps := st.Steps
	if steps == nil {
		steps = []string{}
	}
	return []any{
		st.Envelope.SessionID, st.Envelope.TenantID, st.Flow, st.ReferenceID, st.Status, outcome, policy,
		decisionID, reasons, messages, st.DataRetention, st.Locale,
		sec(st.CreatedAt), ms(st.CreatedAt), sec(st.ExpiresAt), secPtr(decidedAt), msPtr(decidedAt),
		secPtr(st0.firstCapture), msPtr(st0.firstCapture), secPtr(st0.captured), msPtr(st0.captured),
		secPtr(st0.quality), msPtr(st0.quality), secPtr(st0.documentRead), msPtr(st0.documentRead),
		secPtr(st0.chip), msPtr(st0.chip), secPtr(st0.liveness), msPtr(st0.liveness),
		secPtr(st0.facematch), msPtr(st0.facematch), steps, uint16(len(st.Checks)), uint16(failed),
		ex.DocumentType, idNumber, hash, fullName, dob, ex.Sex,
		ex.Nationality, origin, residence, ex.IssueDate, ex.ExpiryDate,
		otherKeys, otherValues, uint8(0), uint64(st.Version), st.Envelope.EventID, sec(now),
		decidedBy, reviewer,
	}
}

// reviewRow returns the review_actions row of one review event (nil for an event with no
// action): opened, claimed, released, decided, retake_requested (subject: the step) or
// viewed (subject: what was shown). The reviewer's note is free text that may hold personal data: the session's
// erasure clears it (Sink.erase).
func reviewRow(ev *schemas.ReviewEvent) []any {
	var (
		kind                                             string
		reviewer, outcome, reason, note, policy, subject *string
		reasons                                          = []string{}
		until                                            *time.Time
	)
	switch {
	case ev.Opened != nil:
		kind, policy = "opened", &ev.Opened.PolicyVersion
		for _, r := range ev.Opened.Reasons {
			reasons = append(reasons, r.Code)
		}
	case ev.Claimed != nil:
		kind, reviewer, until = "claimed", &ev.Claimed.ReviewerID, &ev.Claimed.Until
	case ev.Released != nil:
		kind, reviewer = "released", &ev.Released.ReviewerID
	case ev.Decided != nil:
		d := ev.Decided
		kind, reviewer, outcome, reason, note = "decided", &d.ReviewerID, &d.Outcome, &d.ReasonCode, d.Note
	case ev.Retake != nil:
		r := ev.Retake
		kind, reviewer, reason, note, subject = "retake_requested", &r.ReviewerID, &r.ReasonCode, r.Note, &r.Step
	case ev.Viewed != nil:
		kind, reviewer, subject = "viewed", &ev.Viewed.ReviewerID, &ev.Viewed.What
	default:
		return nil
	}
	at := ev.Envelope.OccurredAt
	return []any{
		ev.Envelope.EventID, ev.Envelope.SessionID, ev.Envelope.TenantID, kind, reviewer, outcome, reason,
		note, policy, reasons, secPtr(until), sec(at), ms(at), subject,
	}
}

// checkRows returns one checks row per check of a terminal snapshot.
func checkRows(st *schemas.SessionState) [][]any {
	var outcome string
	decidedAt := st.DecidedAt
	if st.Decision != nil {
		outcome = st.Decision.Outcome
		if decidedAt == nil {
			t := st.Decision.DecidedAt
			decidedAt = &t
		}
	}
	rows := make([][]any, 0, len(st.Checks))
	for _, c := range st.Checks {
		rows = append(rows, []any{
			st.Envelope.SessionID, st.Envelope.TenantID, st.Flow, c.Name, c.Status, c.Score, c.Threshold, c.ReasonCode,
			c.ModelVersion, c.Source, c.CaptureID, outcome, sec(st.CreatedAt), secPtr(decidedAt), uint64(st.Version),
		})
	}
	return rows
}

func consentRow(c *schemas.ConsentRecorded) []any {
	return []any{
		c.ConsentID, c.TrackingID, c.Envelope.TenantID, c.PurposeID, c.Status, c.NoticeVersion,
		c.Channel, c.IP, c.UserAgent, sec(c.RecordedAt), ms(c.RecordedAt), c.ProofSHA256, c.Envelope.EventID,
	}
}

func webhookRow(a *schemas.WebhookAttempt) []any {
	var status *int32
	if a.StatusCode != nil {
		v := int32(*a.StatusCode)
		status = &v
	}
	dur := a.DurationMS
	if dur < 0 {
		dur = 0
	}
	return []any{
		a.Envelope.EventID, a.Envelope.SessionID, a.Envelope.TenantID, a.WebhookID, a.DecisionEventID, a.URL, uint16(a.Attempt),
		status, a.Error, uint32(dur), a.Outcome, sec(a.AttemptedAt), ms(a.AttemptedAt),
		secPtr(a.NextAttemptAt),
	}
}

// stages holds the per-stage timestamps of a snapshot (nil: the stage did not happen).
type stages struct {
	firstCapture, captured, quality, documentRead, chip, liveness, facematch *time.Time
}

// stageTimes derives when each stage of a session happened: first capture submitted, every
// required step accepted, last quality answer, last document read, chip verified, liveness
// and face match results.
func stageTimes(st *schemas.SessionState) stages {
	var s stages
	accepted := map[string]time.Time{}
	for _, c := range st.Captures {
		s.firstCapture = minTime(s.firstCapture, c.SubmittedAt)
		if c.Status == schemas.CaptureAccepted {
			accepted[c.Step] = c.UpdatedAt
		}
		if c.Quality != nil {
			s.quality = maxTime(s.quality, c.Quality.Envelope.OccurredAt)
		}
	}
	if len(st.Steps) > 0 {
		var all *time.Time
		for _, step := range st.Steps {
			t, ok := accepted[step]
			if !ok {
				all = nil
				break
			}
			all = maxTime(all, t)
		}
		s.captured = all
	}
	for _, d := range st.Documents {
		s.documentRead = maxTime(s.documentRead, d.Envelope.OccurredAt)
	}
	if st.Chip != nil {
		s.chip = maxTime(nil, st.Chip.Envelope.OccurredAt)
	}
	if st.Liveness != nil {
		s.liveness = maxTime(nil, st.Liveness.Envelope.OccurredAt)
	}
	if st.Faces != nil {
		s.facematch = maxTime(nil, st.Faces.Envelope.OccurredAt)
	}
	return s
}

func minTime(cur *time.Time, t time.Time) *time.Time {
	if t.IsZero() {
		return cur
	}
	if cur == nil || t.Before(*cur) {
		return &t
	}
	return cur
}

func maxTime(cur *time.Time, t time.Time) *time.Time {
	if t.IsZero() {
		return cur
	}
	if cur == nil || t.After(*cur) {
		return &t
	}
	return cur
}

// sec truncates t to the second, in UTC (a DateTime column); ms gives the milliseconds.
// Times before 1970 (a zero time) become the epoch: DateTime cannot hold them.
func sec(t time.Time) time.Time {
	if t.Unix() < 0 {
		return time.Unix(0, 0).UTC()
	}
	return t.UTC().Truncate(time.Second)
}

func ms(t time.Time) uint16 { return uint16(t.Nanosecond() / int(time.Millisecond)) }

func secPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := sec(*t)
	return &v
}

func msPtr(t *time.Time) uint16 {
	if t == nil {
		return 0
	}
	return ms(*t)
}
