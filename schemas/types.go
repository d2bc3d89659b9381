package schemas

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Topic names. Every topic is keyed by session_id unless its comment says otherwise.
const (
	TopicSessions        = "ekyc.sessions.v1"         // SessionEvent
	TopicCaptures        = "ekyc.captures.v1"         // CaptureSubmitted
	TopicQuality         = "ekyc.quality.v1"          // QualityAssessed
	TopicDocuments       = "ekyc.documents.v1"        // DocumentRead
	TopicChip            = "ekyc.chip.v1"             // ChipVerified
	TopicLiveness        = "ekyc.liveness.v1"         // LivenessAssessed
	TopicFacematch       = "ekyc.facematch.v1"        // FacesMatched
	TopicFraud           = "ekyc.fraud.v1"            // FraudAssessed
	TopicSessionState    = "ekyc.session-state.v1"    // SessionState, compacted, tombstone on erasure
	TopicDecisions       = "ekyc.decisions.v1"        // Decision, compacted: one decision per session
	TopicWebhookRetry    = "ekyc.webhook.retry.v1"    // WebhookDelivery
	TopicWebhookDLQ      = "ekyc.webhook.dlq.v1"      // WebhookDelivery
	TopicWebhookAttempts = "ekyc.webhook.attempts.v1" // WebhookAttempt, one record per delivery attempt
	TopicBlocklist       = "ekyc.blocklist.v1"        // BlocklistEntry, compacted, keyed by entry id
	TopicReviews         = "ekyc.reviews.v1"          // ReviewEvent: the human review of a session
	TopicConsents        = "cmp.consents.v1"          // ConsentRecorded, keyed by tracking_id
	// TopicErasures carries BiometricErasureRequested, keyed by tracking_id.
	TopicErasures = "cmp.erasures.v1"
	// TopicTrackingSessions carries TrackingSessionOpened, keyed by tracking_id: sessions
	// opened with a tracking id, re-keyed from TopicSessions for the erasure group.
	TopicTrackingSessions = "cmp.tracking-sessions.v1"
	// TopicErasureState carries TrackingErasureState, compacted, keyed by tracking_id: the
	// erasure group's table (co-partitioned with TopicErasures and TopicTrackingSessions).
	TopicErasureState = "cmp.erasure-state.v1"
	// TopicFaceIndex carries FaceIndexEntry, compacted, keyed by session_id: the fraud group's
	// index of selfie embeddings (biometric data, internal), tombstoned on erasure.
	TopicFaceIndex = "ekyc.face-index.v1"
	// TopicCaptureIndex carries CaptureSighting, compacted, keyed "<tenant_id>|<sha256>" (the
	// first sighting of an image's bytes in a tenant) or "<tenant_id>|phash|<capture_id>|<blob
	// name>" (an image's perceptual hash): the fraud group's index of images seen, tombstoned
	// on erasure. Entries written before its schema are JSON (fraud reads both).
	TopicCaptureIndex = "ekyc.fraud.capture-index.v1"
)

// Data categories of a biometric erasure (BiometricErasureRequested.Categories).
const (
	CategoryFaceImage         = "face_image"         // selfie images and video, chip DG2 and its decoded face
	CategoryFaceCrop          = "face_crop"          // face crops of document photos
	CategoryBiometricTemplate = "biometric_template" // face embeddings (ClickHouse face_index)
)

// BiometricCategories are the categories a consent withdrawal erases, in this order.
func BiometricCategories() []string {
	return []string{CategoryFaceImage, CategoryFaceCrop, CategoryBiometricTemplate}
}

// Check statuses.
const (
	CheckPass    = "pass"
	CheckFail    = "fail"
	CheckWarn    = "warn"
	CheckSkipped = "skipped"
)

// Session statuses (API.md, Data Get).
const (
	StatusOpen       = "open"
	StatusCapturing  = "capturing"
	StatusProcessing = "processing"
	StatusVerified   = "verified"
	StatusRejected   = "rejected"
	StatusExpired    = "expired"
	StatusCancelled  = "cancelled"
	// StatusReview is internal to the session-state topic: the decision policy sent the
	// session to human review (SessionState.Review). The public status stays processing
	// until a reviewer's decision becomes the session's decision.
	StatusReview = "review"
	// StatusUnopened is internal to the session-state topic, never a public status: the
	// snapshot is a placeholder holding, in EarlyEvents, the events of a session consumed
	// before its SessionOpened. Readers of the topic treat it as no session.
	StatusUnopened = "unopened"
)

// Step capture statuses.
const (
	CaptureSubmittedStatus = "submitted" // stored and produced; the gate has not answered yet
	CaptureAccepted        = "accepted"  // passed the quality gate (or, for nfc, received)
	CaptureRetake          = "retake"    // failed the quality gate; the step needs a new capture
)

// Envelope is carried by every event, first field of every record.
type Envelope struct {
	EventID    string    `avro:"event_id" json:"event_id"`
	SessionID  string    `avro:"session_id" json:"session_id"`
	TenantID   string    `avro:"tenant_id" json:"tenant_id"`
	OccurredAt time.Time `avro:"occurred_at" json:"occurred_at"` // timestamp-millis
	Producer   string    `avro:"producer" json:"producer"`
}

// ProducerDecision is the envelope producer of every Decision, and so of the one snapshot of
// ekyc.session-state.v1 that results from folding a session's Decision (the session group
// keeps the folded event's envelope): readers of the state tell that snapshot by it together
// with its decision (the decision group also produces the ReviewEvent that opens a case, so
// the snapshot of that fold carries this producer and no decision).
const ProducerDecision = "decision"

// ProducerEdge is the envelope producer of the events the edge writes: sessions, captures
// and the reviewers' actions (so the snapshot that folds a reviewer's retake request
// carries it).
const ProducerEdge = "edge"

// BlobRef is a claim-check: image and chip bytes live in the blob store, never in Kafka.
type BlobRef struct {
	Name      string `avro:"name" json:"name"` // role: image, video, sod, dg1, dg2, ..., face
	URI       string `avro:"uri" json:"uri"`
	SHA256    string `avro:"sha256" json:"sha256"` // lowercase hex
	Size      int64  `avro:"size" json:"size"`
	MediaType string `avro:"media_type" json:"media_type"`
}

// Check is one explained result (API.md, checks[]).
type Check struct {
	Name         string   `avro:"name" json:"name"`     // e.g. quality.document_front, chip.passive_authentication
	Status       string   `avro:"status" json:"status"` // pass | fail | warn | skipped
	Score        *float64 `avro:"score" json:"score"`
	Threshold    *float64 `avro:"threshold" json:"threshold"`
	ReasonCode   *string  `avro:"reason_code" json:"reason_code"`
	ModelVersion *string  `avro:"model_version" json:"model_version"`
	Source       string   `avro:"source" json:"-"`     // the group that produced it
	CaptureID    *string  `avro:"capture_id" json:"-"` // the capture it is about, if any
	Detail       *string  `avro:"detail" json:"-"`     // a message for humans, no PII
}

// Field is one extracted value with its confidence.
type Field struct {
	Name       string   `avro:"name" json:"name"`
	Value      string   `avro:"value" json:"value"`
	Confidence *float64 `avro:"confidence" json:"confidence"`
}

// MRZ is a machine readable zone, as read by OCR or from chip DG1.
type MRZ struct {
	Format string            `avro:"format" json:"format"` // TD1 | TD2 | TD3
	Lines  []string          `avro:"lines" json:"lines"`
	Valid  bool              `avro:"valid" json:"valid"` // every check digit correct
	Fields map[string]string `avro:"fields" json:"fields"`
}

// SessionEvent is the record of ekyc.sessions.v1: exactly one of its payloads is set.
type SessionEvent struct {
	Envelope  Envelope          `avro:"envelope"`
	Opened    *SessionOpened    `avro:"opened"`
	Cancelled *SessionCancelled `avro:"cancelled"`
	Expired   *SessionExpired   `avro:"expired"`
	Erased    *SessionErased    `avro:"erased"`
	// EraseBiometrics is produced by the erasure group: erase the session's biometric data.
	EraseBiometrics *EraseBiometrics `avro:"erase_biometrics"`
	// BiometricsErased is produced by the erasure group once the blobs the state queued
	// for deletion are deleted.
	BiometricsErased *BiometricsErased `avro:"biometrics_erased"`
}

// SessionOpened is produced by the edge on Session Init.
type SessionOpened struct {
	Flow          string    `avro:"flow"`
	Steps         []string  `avro:"steps"`
	ReferenceID   *string   `avro:"reference_id"`
	TrackingID    *string   `avro:"tracking_id"`
	WebhookURL    *string   `avro:"webhook_url"`
	Locale        string    `avro:"locale"`
	DataRetention string    `avro:"data_retention"` // service | integrator
	CreatedAt     time.Time `avro:"created_at"`
	ExpiresAt     time.Time `avro:"expires_at"`
	Nonce         []byte    `avro:"nonce"` // 8 bytes for chip active authentication
	// RequestSHA256 is the hex SHA-256 of the normalised Session Init request when it came
	// with an Idempotency-Key (null otherwise); the edge compares it on a retry.
	RequestSHA256 *string `avro:"request_sha256"`
}

// SessionCancelled ends a session without a decision.
type SessionCancelled struct {
	Reason string `avro:"reason"`
}

// SessionExpired is produced by the session group when expires_at passes.
type SessionExpired struct {
	ExpiresAt time.Time `avro:"expires_at"`
}

// SessionErased is produced by the edge on DELETE; the state is tombstoned.
type SessionErased struct {
	Reason string `avro:"reason"`
}

// EraseBiometrics orders the erasure of a session's biometric data after the withdrawal
// ConsentID of the session's tracking id (the session was opened before RequestedAt).
type EraseBiometrics struct {
	TrackingID  string    `avro:"tracking_id"`
	ConsentID   string    `avro:"consent_id"`
	Categories  []string  `avro:"categories"`
	RequestedAt time.Time `avro:"requested_at"`
}

// BiometricsErased records that the blobs BlobsDeleted (URIs) of a session were deleted
// from the blob store for the withdrawal ConsentID.
type BiometricsErased struct {
	ConsentID    string    `avro:"consent_id"`
	BlobsDeleted []string  `avro:"blobs_deleted"`
	ErasedAt     time.Time `avro:"erased_at"`
}

// CaptureSubmitted is produced by the edge for every accepted upload (ekyc.captures.v1).
type CaptureSubmitted struct {
	Envelope  Envelope          `avro:"envelope"`
	CaptureID string            `avro:"capture_id"`
	Step      string            `avro:"step"`   // document_front, document_back, passport, nfc, selfie
	Blobs     []BlobRef         `avro:"blobs"`  // image (+video), or the chip files sod, dg1, ...
	Nonce     []byte            `avro:"nonce"`  // the session's server nonce
	Client    map[string]string `avro:"client"` // device and client signals reported by the SDK
}

// QualityAssessed is the quality gate's answer for one image capture (ekyc.quality.v1).
type QualityAssessed struct {
	Envelope    Envelope `avro:"envelope"`
	CaptureID   string   `avro:"capture_id"`
	Step        string   `avro:"step"`
	Passed      bool     `avro:"passed"`
	Blur        float64  `avro:"blur"`       // variance of the Laplacian; higher is sharper
	Glare       float64  `avro:"glare"`      // fraction of saturated pixels
	Brightness  float64  `avro:"brightness"` // mean luma 0..255
	Framing     string   `avro:"framing"`    // ok | not_framed | unknown
	Reasons     []string `avro:"reasons"`
	Width       int      `avro:"width"`
	Height      int      `avro:"height"`
	Image       BlobRef  `avro:"image"`
	GateVersion string   `avro:"gate_version"`
	// CapturedAt is the capture's own occurred_at: the session group orders the captures of a
	// step by it, whichever of the capture and its assessment it consumes first.
	CapturedAt *time.Time `avro:"captured_at"`
}

// DocumentRead is the OCR result for one document capture (ekyc.documents.v1).
type DocumentRead struct {
	Envelope     Envelope `avro:"envelope"`
	CaptureID    string   `avro:"capture_id"`
	Step         string   `avro:"step"`
	DocumentType string   `avro:"document_type"`
	Side         string   `avro:"side"`
	Fields       []Field  `avro:"fields"`
	MRZ          *MRZ     `avro:"mrz"`
	FaceCrop     *BlobRef `avro:"face_crop"`
	Checks       []Check  `avro:"checks"`
	ModelVersion string   `avro:"model_version"`
}

// ChipVerified is the chip processor's result for one nfc capture (ekyc.chip.v1).
type ChipVerified struct {
	Envelope     Envelope `avro:"envelope"`
	CaptureID    string   `avro:"capture_id"`
	DocumentType string   `avro:"document_type"`
	MRZ          *MRZ     `avro:"mrz"`        // DG1
	Fields       []Field  `avro:"fields"`     // DG13 and others
	FaceImage    *BlobRef `avro:"face_image"` // DG2
	Checks       []Check  `avro:"checks"`     // passive auth, each DG hash, chain, active auth, registry
}

// LivenessAssessed is the passive liveness result for one selfie (ekyc.liveness.v1).
type LivenessAssessed struct {
	Envelope     Envelope           `avro:"envelope"`
	CaptureID    string             `avro:"capture_id"`
	Score        float64            `avro:"score"`
	Threshold    float64            `avro:"threshold"`
	Live         bool               `avro:"live"`
	AttackType   *string            `avro:"attack_type"` // print | replay | mask
	Signals      map[string]float64 `avro:"signals"`
	ModelVersion string             `avro:"model_version"`
	Checks       []Check            `avro:"checks"`
}

// FacePair is one face comparison.
type FacePair struct {
	Pair       string  `avro:"pair"` // selfie_document | selfie_chip | document_chip
	Similarity float64 `avro:"similarity"`
	Threshold  float64 `avro:"threshold"`
	Matched    bool    `avro:"matched"`
}

// FacesMatched is the face comparison result for one session (ekyc.facematch.v1).
type FacesMatched struct {
	Envelope     Envelope   `avro:"envelope"`
	Pairs        []FacePair `avro:"pairs"`
	ModelVersion string     `avro:"model_version"`
	Checks       []Check    `avro:"checks"`
}

// FraudAssessed carries one result per fraud check (ekyc.fraud.v1).
type FraudAssessed struct {
	Envelope Envelope `avro:"envelope"`
	Checks   []Check  `avro:"checks"`
}

// Reason explains a decision outcome.
type Reason struct {
	Code    string `avro:"code" json:"code"`
	Message string `avro:"message" json:"message"`
}

// Extracted is the data reconciled across OCR, MRZ and chip.
type Extracted struct {
	DocumentType     string              `avro:"document_type" json:"document_type"`
	IDNumber         *string             `avro:"id_number" json:"id_number"`
	FullName         *string             `avro:"full_name" json:"full_name"`
	DateOfBirth      *string             `avro:"date_of_birth" json:"date_of_birth"` // YYYY-MM-DD
	Sex              *string             `avro:"sex" json:"sex"`                     // M | F | X
	Nationality      *string             `avro:"nationality" json:"nationality"`
	PlaceOfOrigin    *string             `avro:"place_of_origin" json:"place_of_origin"`
	PlaceOfResidence *string             `avro:"place_of_residence" json:"place_of_residence"`
	IssueDate        *string             `avro:"issue_date" json:"issue_date"`
	ExpiryDate       *string             `avro:"expiry_date" json:"expiry_date"`
	MRZ              map[string]string   `avro:"mrz" json:"mrz"`
	Other            map[string]string   `avro:"other" json:"other,omitempty"` // e.g. vehicle plate, chassis
	Sources          map[string][]string `avro:"sources" json:"sources"`       // field → ocr | mrz | chip
}

// Decision is the outcome of one session (ekyc.decisions.v1): exactly one per session.
type Decision struct {
	Envelope      Envelope   `avro:"envelope"`
	DecisionID    string     `avro:"decision_id"` // deterministic: derived from session id
	Outcome       string     `avro:"outcome"`     // verified | rejected
	PolicyVersion string     `avro:"policy_version"`
	Flow          string     `avro:"flow"`
	ReferenceID   *string    `avro:"reference_id"`
	Reasons       []Reason   `avro:"reasons"`
	Checks        []Check    `avro:"checks"`
	Extracted     *Extracted `avro:"extracted"`
	DecidedAt     time.Time  `avro:"decided_at"`
	DecidedBy     string     `avro:"decided_by"`  // DecidedByPolicy | DecidedByReviewer
	ReviewerID    *string    `avro:"reviewer_id"` // set when DecidedBy is DecidedByReviewer
}

// Who decided a session (Decision.DecidedBy).
const (
	DecidedByPolicy   = "policy"
	DecidedByReviewer = "reviewer"
)

// StepCapture is the latest capture of one step, as folded into the session state.
type StepCapture struct {
	Step        string           `avro:"step"`
	CaptureID   string           `avro:"capture_id"`
	Status      string           `avro:"status"` // submitted | accepted | retake
	Blobs       []BlobRef        `avro:"blobs"`
	Quality     *QualityAssessed `avro:"quality"`
	SubmittedAt time.Time        `avro:"submitted_at"`
	UpdatedAt   time.Time        `avro:"updated_at"`
}

// DecisionResult is the decision as folded into the session state.
type DecisionResult struct {
	DecisionID    string     `avro:"decision_id"`
	Outcome       string     `avro:"outcome"`
	PolicyVersion string     `avro:"policy_version"`
	Reasons       []Reason   `avro:"reasons"`
	Extracted     *Extracted `avro:"extracted"`
	DecidedAt     time.Time  `avro:"decided_at"`
	DecidedBy     string     `avro:"decided_by"`
	ReviewerID    *string    `avro:"reviewer_id"`
}

// SessionState is the full snapshot of one session (ekyc.session-state.v1, compacted).
// It is written only by the session group.
type SessionState struct {
	Envelope      Envelope          `avro:"envelope"` // of the last event folded in
	Version       int64             `avro:"version"`  // number of events folded in
	Status        string            `avro:"status"`
	Flow          string            `avro:"flow"`
	Steps         []string          `avro:"steps"` // the steps the flow requires
	ReferenceID   *string           `avro:"reference_id"`
	TrackingID    *string           `avro:"tracking_id"`
	WebhookURL    *string           `avro:"webhook_url"`
	Locale        string            `avro:"locale"`
	DataRetention string            `avro:"data_retention"`
	Nonce         []byte            `avro:"nonce"`
	CreatedAt     time.Time         `avro:"created_at"`
	ExpiresAt     time.Time         `avro:"expires_at"`
	UpdatedAt     time.Time         `avro:"updated_at"`
	DecidedAt     *time.Time        `avro:"decided_at"`
	Captures      []StepCapture     `avro:"captures"`  // latest per step, in flow order
	Checks        []Check           `avro:"checks"`    // latest per name
	Documents     []DocumentRead    `avro:"documents"` // latest per step
	Chip          *ChipVerified     `avro:"chip"`
	Liveness      *LivenessAssessed `avro:"liveness"`
	Faces         *FacesMatched     `avro:"faces"`
	Decision      *DecisionResult   `avro:"decision"`
	RequestSHA256 *string           `avro:"request_sha256"` // copied from SessionOpened
	// BiometricErasure is set once the session's biometric data was ordered erased.
	BiometricErasure *BiometricErasure `avro:"biometric_erasure"`
	// EarlyEvents is set only in a placeholder (StatusUnopened).
	EarlyEvents []EarlyEvent `avro:"early_events"`
	// Review is set once the policy sent the session to human review (StatusReview).
	Review *ReviewState `avro:"review"`
}

// ReviewState is the human review of a session, as the session group folds it.
type ReviewState struct {
	OpenedAt       time.Time       `avro:"opened_at"`
	PolicyVersion  string          `avro:"policy_version"`
	Reasons        []Reason        `avro:"reasons"`
	ClaimedBy      *string         `avro:"claimed_by"`
	ClaimExpiresAt *time.Time      `avro:"claim_expires_at"`
	Decided        *ReviewDecision `avro:"decided"`
	Actions        []ReviewAction  `avro:"actions"` // in order, at most MaxReviewActions
	// Retake is the retake a reviewer asked for, set while the person takes the step
	// again (the session is capturing, then processing) and cleared when the case returns
	// to review.
	Retake  *ReviewRetake `avro:"retake"`
	Retakes int           `avro:"retakes"` // retakes asked for in this session, at most MaxReviewRetakes
}

// MaxReviewRetakes bounds how often reviewers may send a session's steps back to the person.
const MaxReviewRetakes = 3

// ReviewRetake is a reviewer's request that the person take one step again.
type ReviewRetake struct {
	Step        string    `avro:"step"`
	ReviewerID  string    `avro:"reviewer_id"`
	ReasonCode  string    `avro:"reason_code"`
	Note        *string   `avro:"note"` // internal: never sent to the integrator
	RequestedAt time.Time `avro:"requested_at"`
	EventID     string    `avro:"event_id"` // the ReviewEvent of the request
}

// MaxReviewActions bounds ReviewState.Actions: the oldest are dropped beyond it (the review
// topic and its ClickHouse table keep them all).
const MaxReviewActions = 100

// ReviewDecision is a reviewer's decision of a case.
type ReviewDecision struct {
	ReviewerID string    `avro:"reviewer_id"`
	Outcome    string    `avro:"outcome"`
	ReasonCode string    `avro:"reason_code"`
	Note       *string   `avro:"note"`
	DecidedAt  time.Time `avro:"decided_at"`
}

// Kinds of ReviewAction.
const (
	ReviewActionOpened   = "opened"
	ReviewActionClaimed  = "claimed"
	ReviewActionReleased = "released"
	ReviewActionDecided  = "decided"
	ReviewActionRetake   = "retake_requested"
	ReviewActionReopened = "reopened" // the person took the step again: the case is back in review
	ReviewActionRefused  = "refused"
)

// Why the session group refused a review action: the code a refused ReviewAction's detail
// starts with ("<code>: <words>"), which the edge answers as the problem of the same name.
const (
	ReviewRefusedClaimed    = "case_claimed"     // another reviewer holds an unexpired claim
	ReviewRefusedDecided    = "case_decided"     // the case is decided
	ReviewRefusedNotClaimed = "case_not_claimed" // the reviewer holds no unexpired claim
	ReviewRefusedOutcome    = "invalid_outcome"  // a decision's outcome is not verified or rejected
	ReviewRefusedStep       = "invalid_step"     // a retake names a step the session did not capture
	ReviewRefusedRetakes    = "retake_limit"     // the session had MaxReviewRetakes retakes
)

// ReviewAction is one action on a case (ReviewState.Actions).
type ReviewAction struct {
	Kind       string    `avro:"kind"` // opened | claimed | released | decided | retake_requested | reopened | refused
	ReviewerID *string   `avro:"reviewer_id"`
	At         time.Time `avro:"at"`
	Detail     *string   `avro:"detail"`
	EventID    string    `avro:"event_id"` // the ReviewEvent it came from
}

// ReviewEvent is one record of ekyc.reviews.v1 (keyed by session id): exactly one of its
// actions is set.
type ReviewEvent struct {
	Envelope Envelope               `avro:"envelope"`
	Opened   *ReviewOpened          `avro:"opened"`
	Claimed  *ReviewClaimed         `avro:"claimed"`
	Released *ReviewReleased        `avro:"released"`
	Decided  *ReviewDecided         `avro:"decided"`
	Retake   *ReviewRetakeRequested `avro:"retake_requested"`
	Viewed   *ReviewViewed          `avro:"viewed"`
}

// ReviewOpened: the policy sent the session to review, for Reasons.
type ReviewOpened struct {
	PolicyVersion string   `avro:"policy_version"`
	Reasons       []Reason `avro:"reasons"`
}

// ReviewClaimed: a reviewer claims the case until Until.
type ReviewClaimed struct {
	ReviewerID string    `avro:"reviewer_id"`
	Until      time.Time `avro:"until"`
}

// ReviewReleased: a reviewer gives the case back.
type ReviewReleased struct {
	ReviewerID string `avro:"reviewer_id"`
}

// ReviewDecided: a reviewer decides the case.
type ReviewDecided struct {
	ReviewerID string  `avro:"reviewer_id"`
	Outcome    string  `avro:"outcome"`
	ReasonCode string  `avro:"reason_code"`
	Note       *string `avro:"note"`
}

// ReviewRetakeRequested: a reviewer sends one captured step back to the person. The
// session reopens the step until ExpiresAt and returns to review once it is taken again.
type ReviewRetakeRequested struct {
	ReviewerID string    `avro:"reviewer_id"`
	Step       string    `avro:"step"`
	ReasonCode string    `avro:"reason_code"`
	Note       *string   `avro:"note"`
	ExpiresAt  time.Time `avro:"expires_at"`
}

// ReviewViewed: a reviewer saw the session's personal data (What: "case", or a picture:
// "image:<step>", "document_face:<step>", "chip_portrait:nfc"). It is an audit record: the
// session state does not change.
type ReviewViewed struct {
	ReviewerID string `avro:"reviewer_id"`
	What       string `avro:"what"`
}

// EarlyEvent is a raw record of a session's event consumed before the session's
// SessionOpened (see StatusUnopened).
type EarlyEvent struct {
	Topic string `avro:"topic"`
	Value []byte `avro:"value"`
}

// BiometricErasure is the erasure of a session's biometric data after a consent
// withdrawal: the face blob references are removed from the snapshot and kept in Pending
// until the blobs are deleted; BlobsDeleted lists the URIs deleted so far; ErasedAt is set
// when nothing is pending (null while some blobs remain).
type BiometricErasure struct {
	TrackingID   string     `avro:"tracking_id"`
	ConsentID    string     `avro:"consent_id"`
	RequestedAt  time.Time  `avro:"requested_at"`
	Pending      []BlobRef  `avro:"pending"`
	BlobsDeleted []string   `avro:"blobs_deleted"`
	ErasedAt     *time.Time `avro:"erased_at"`
}

// WebhookDelivery is a pending or dead-lettered webhook delivery
// (ekyc.webhook.retry.v1, ekyc.webhook.dlq.v1).
type WebhookDelivery struct {
	Envelope  Envelope `avro:"envelope"`
	WebhookID string   `avro:"webhook_id"` // stable per event, the same on every attempt
	// DecisionEventID is the event the webhook tells of: the Decision's (session completed)
	// or the reviewer's retake request's (retake requested).
	DecisionEventID string    `avro:"decision_event_id"`
	URL             string    `avro:"url"`
	Attempt         int       `avro:"attempt"` // attempts made so far
	NotBefore       time.Time `avro:"not_before"`
	LastStatus      *int      `avro:"last_status"`
	LastError       *string   `avro:"last_error"`
	Body            []byte    `avro:"body"` // the exact payload, so every attempt signs the same bytes
	// Chain is the event id of the attempt-0 record that started this chain of attempts (the
	// first delivery of a decision, or an admin replay); null on that record itself.
	Chain *string `avro:"chain"`
}

// Webhook attempt outcomes (WebhookAttempt.Outcome).
const (
	WebhookDelivered    = "delivered"     // the endpoint answered 2xx
	WebhookRetry        = "retry"         // failed; another attempt is scheduled at next_attempt_at
	WebhookDeadLettered = "dead_lettered" // failed on the last attempt; sent to ekyc.webhook.dlq.v1
	WebhookRefused      = "refused"       // target not allowed (scheme, private address); dead-lettered at once
)

// WebhookAttempt is one webhook delivery attempt and its outcome (ekyc.webhook.attempts.v1,
// keyed by session_id). Its envelope's event_id is WebhookID + "/" + Attempt.
type WebhookAttempt struct {
	Envelope        Envelope   `avro:"envelope"`
	WebhookID       string     `avro:"webhook_id"` // the webhook-id header, the same on every attempt
	DecisionEventID string     `avro:"decision_event_id"`
	URL             string     `avro:"url"`
	Attempt         int        `avro:"attempt"`     // 1 for the first attempt
	StatusCode      *int       `avro:"status_code"` // nil when no response was received
	Error           *string    `avro:"error"`       // nil on success; no PII
	DurationMS      int64      `avro:"duration_ms"`
	Outcome         string     `avro:"outcome"` // delivered | retry | dead_lettered | refused
	AttemptedAt     time.Time  `avro:"attempted_at"`
	NextAttemptAt   *time.Time `avro:"next_attempt_at"` // set for outcome retry
}

// BlocklistEntry is one blocked document number or face (ekyc.blocklist.v1, keyed by entry id).
type BlocklistEntry struct {
	Envelope        Envelope  `avro:"envelope"`
	EntryID         string    `avro:"entry_id"`
	Kind            string    `avro:"kind"`       // id_number | face
	ValueHash       *string   `avro:"value_hash"` // keyed hash of the id number
	Embedding       []float32 `avro:"embedding"`  // face embedding, for kind face
	SourceSessionID *string   `avro:"source_session_id"`
	Reason          *string   `avro:"reason"`
	CreatedAt       time.Time `avro:"created_at"`
	Deleted         bool      `avro:"deleted"`
}

// FaceIndexEntry is the selfie face embedding of one session (ekyc.face-index.v1, compacted,
// keyed by session id): written by the fraud group when it assesses the session, again with
// the outcome once the session is decided, and tombstoned when the session or its
// biometrics are erased. Biometric data: an internal table, not part of the data teams'
// contract.
type FaceIndexEntry struct {
	Envelope     Envelope  `avro:"envelope"`
	IDNumberHash string    `avro:"id_number_hash"` // keyed hash of the claimed id number, "" when none
	Embedding    []float32 `avro:"embedding"`      // L2-normalised
	ModelVersion string    `avro:"model_version"`
	CaptureID    string    `avro:"capture_id"` // the selfie capture
	Outcome      string    `avro:"outcome"`    // "" (undecided) | verified | rejected
}

// CaptureSighting is one entry of the fraud group's capture index (TopicCaptureIndex): an
// image seen in a session, its envelope's occurred_at when it was captured.
type CaptureSighting struct {
	Envelope  Envelope `avro:"envelope"`
	CaptureID string   `avro:"capture_id"`
	Step      string   `avro:"step"`
	PHash     *string  `avro:"phash"` // perceptual hash (phash.Hash.String) of a perceptual entry
}

// ConsentRecorded is one append-only consent record (cmp.consents.v1, keyed by tracking_id).
type ConsentRecorded struct {
	Envelope      Envelope  `avro:"envelope"`
	ConsentID     string    `avro:"consent_id"`
	TrackingID    string    `avro:"tracking_id"`
	PurposeID     string    `avro:"purpose_id"`
	Status        string    `avro:"status"` // granted | denied | withdrawn
	NoticeVersion string    `avro:"notice_version"`
	Channel       string    `avro:"channel"`
	IP            string    `avro:"ip"`
	UserAgent     string    `avro:"user_agent"`
	RecordedAt    time.Time `avro:"recorded_at"`
	ProofSHA256   string    `avro:"proof_sha256"`
}

// BiometricErasureRequested asks for the erasure of the biometric data of a tracking id's
// sessions of one tenant (the envelope's tenant_id) opened before RequestedAt
// (cmp.erasures.v1, keyed by tracking_id). The consent service produces it beside the
// withdrawal record ConsentID of the eKYC purpose; its envelope's event_id derives from
// ConsentID and its session_id is empty.
type BiometricErasureRequested struct {
	Envelope    Envelope  `avro:"envelope"`
	TrackingID  string    `avro:"tracking_id"`
	ConsentID   string    `avro:"consent_id"`
	Categories  []string  `avro:"categories"`
	RequestedAt time.Time `avro:"requested_at"`
}

// TrackingSessionOpened is a session opened with a tracking id (cmp.tracking-sessions.v1,
// keyed by tracking_id); the envelope names the session and its tenant.
type TrackingSessionOpened struct {
	Envelope   Envelope  `avro:"envelope"`
	TrackingID string    `avro:"tracking_id"`
	OpenedAt   time.Time `avro:"opened_at"`
}

// TrackingErasureState is the erasure group's table row of one tracking id
// (cmp.erasure-state.v1, compacted, keyed by tracking_id), across tenants.
type TrackingErasureState struct {
	Envelope   Envelope         `avro:"envelope"` // of the last record folded in
	TrackingID string           `avro:"tracking_id"`
	Sessions   []TrackedSession `avro:"sessions"` // ordered by tenant, then session id
	Erasures   []TrackedErasure `avro:"erasures"` // ordered by requested_at, then consent id
}

// TrackedSession is a session of a tracked id; ErasureConsentID is set once its erasure
// was ordered.
type TrackedSession struct {
	TenantID         string    `avro:"tenant_id"`
	SessionID        string    `avro:"session_id"`
	OpenedAt         time.Time `avro:"opened_at"`
	ErasureConsentID *string   `avro:"erasure_consent_id"`
}

// TrackedErasure is an erasure request of a tracked id.
type TrackedErasure struct {
	TenantID    string    `avro:"tenant_id"`
	ConsentID   string    `avro:"consent_id"`
	Categories  []string  `avro:"categories"`
	RequestedAt time.Time `avro:"requested_at"`
}

// DecisionEventID is the event id of the Decision whose decision id is decisionID
// ("dec_<digits>" → "evt_<digits>"): the decision group derives both from the session id.
func DecisionEventID(decisionID string) string {
	return "evt_" + strings.TrimPrefix(decisionID, "dec_")
}

// SessionDigest is the first 24 hex digits of SHA-256(sessionID): the part of the ids the
// decision group derives from a session (its decision's, its review openings').
func SessionDigest(sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return hex.EncodeToString(sum[:])[:24]
}

// ReviewOpenedEventID is the event id of the ReviewEvent that opens the review of a session
// for the round-th time: round 0 is the first opening, round n the reopening after the
// n-th retake a reviewer asked for (ReviewState.Retakes). The decision group derives it so
// that replays repeat it; the session group folds an opening of the current round only.
func ReviewOpenedEventID(sessionID string, round int) string {
	id := "evt_review_" + SessionDigest(sessionID)
	if round > 0 {
		id += "_r" + strconv.Itoa(round)
	}
	return id
}
