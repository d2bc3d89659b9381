package consent

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"time"

	"github.com/idstream/idstream/schemas"
)

// TimeFormat is how recorded_at and updated_at are written in JSON and in the proof:
// RFC 3339, UTC, millisecond precision (the precision of the Avro timestamp-millis).
const TimeFormat = "2006-01-02T15:04:05.000Z"

// ProofDomain is the first line of the canonical form of a record (see Proof).
const ProofDomain = "idstream-consent-v1"

// Bounds of the free-text fields of a record, in bytes.
const (
	MaxTrackingIDBytes = 128
	MaxChannelBytes    = 64
	MaxIPBytes         = 64
	MaxUserAgentBytes  = 512
)

// Record is one consent record as the API shows it (API.md section 2).
type Record struct {
	ConsentID     string    `json:"consent_id"`
	PurposeID     string    `json:"purpose_id"`
	Status        string    `json:"status"`
	NoticeVersion string    `json:"notice_version"`
	RecordedAt    time.Time `json:"-"`
	Channel       string    `json:"channel"`
	IP            string    `json:"ip"`
	UserAgent     string    `json:"user_agent"`
	ProofSHA256   string    `json:"proof_sha256"`
}

// Proof returns proof_sha256 of a record of trackingID: the lowercase hex SHA-256 of its
// canonical form, which is these ten lines, each ended by one "\n" (0x0A), in UTF-8:
//
//	idstream-consent-v1
//	<tracking_id>
//	<consent_id>
//	<purpose_id>
//	<status>
//	<notice_version>
//	<recorded_at, RFC 3339 UTC with milliseconds: 2026-11-22T09:58:41.123Z>
//	<channel>
//	<ip>
//	<user_agent>
//
// Absent optional fields are empty lines. No field holds a control character (the API
// refuses them), so the form is unambiguous. Every value is exactly as GET /v1/consents
// returns it, so a controller recomputes the proof from a returned record with, e.g.:
//
//	printf '%s\n' idstream-consent-v1 "$tracking_id" "$consent_id" "$purpose_id" "$status" \
//	  "$notice_version" "$recorded_at" "$channel" "$ip" "$user_agent" | sha256sum
func Proof(trackingID string, r Record) string {
	var b strings.Builder
	for _, f := range []string{
		ProofDomain, trackingID, r.ConsentID, r.PurposeID, r.Status, r.NoticeVersion,
		r.RecordedAt.UTC().Format(TimeFormat), r.Channel, r.IP, r.UserAgent,
	} {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// idEncoding is lowercase base32 without padding (as the edge's ids).
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newConsentID returns "con_" + 26 lowercase base32 characters (130 random bits).
func newConsentID() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return "con_" + idEncoding.EncodeToString(b)[:26]
}

// Producer is the producer name in the envelope of the events this package writes.
const Producer = "consent"

// toEvent returns the ConsentRecorded of r for tenantID and trackingID. The envelope's
// event_id is the consent id (sinks deduplicate on it); session_id is empty: a consent
// belongs to a person (tracking id), not to a session.
func toEvent(tenantID, trackingID string, r Record) schemas.ConsentRecorded {
	return schemas.ConsentRecorded{
		Envelope: schemas.Envelope{
			EventID: r.ConsentID, TenantID: tenantID, OccurredAt: r.RecordedAt, Producer: Producer,
		},
		ConsentID: r.ConsentID, TrackingID: trackingID, PurposeID: r.PurposeID, Status: r.Status,
		NoticeVersion: r.NoticeVersion, Channel: r.Channel, IP: r.IP, UserAgent: r.UserAgent,
		RecordedAt: r.RecordedAt, ProofSHA256: r.ProofSHA256,
	}
}

// fromEvent returns the record carried by ev.
func fromEvent(ev *schemas.ConsentRecorded) Record {
	return Record{
		ConsentID: ev.ConsentID, PurposeID: ev.PurposeID, Status: ev.Status,
		NoticeVersion: ev.NoticeVersion, RecordedAt: ev.RecordedAt.UTC(), Channel: ev.Channel,
		IP: ev.IP, UserAgent: ev.UserAgent, ProofSHA256: ev.ProofSHA256,
	}
}
