package schemas

// Topic is a typed handle on one of the contract's topics: its name and, by its type
// parameter, the Go type its record values are (what Codec encodes from and decodes into).
// Processors declare what they consume and emit with these, so a handler given the wrong
// type does not compile.
type Topic[T any] string

// Name returns the topic's name.
func (t Topic[T]) Name() string { return string(t) }

// New returns a pointer to a new zero value of the topic's type.
func (t Topic[T]) New() *T { return new(T) }

// The typed handles of the topics (types.go): one per topic name, same order.
const (
	Sessions         Topic[SessionEvent]              = TopicSessions
	Captures         Topic[CaptureSubmitted]          = TopicCaptures
	Quality          Topic[QualityAssessed]           = TopicQuality
	Documents        Topic[DocumentRead]              = TopicDocuments
	Chip             Topic[ChipVerified]              = TopicChip
	Liveness         Topic[LivenessAssessed]          = TopicLiveness
	Facematch        Topic[FacesMatched]              = TopicFacematch
	Fraud            Topic[FraudAssessed]             = TopicFraud
	SessionStates    Topic[SessionState]              = TopicSessionState
	Decisions        Topic[Decision]                  = TopicDecisions
	WebhookRetries   Topic[WebhookDelivery]           = TopicWebhookRetry
	WebhookDLQ       Topic[WebhookDelivery]           = TopicWebhookDLQ
	WebhookAttempts  Topic[WebhookAttempt]            = TopicWebhookAttempts
	Blocklist        Topic[BlocklistEntry]            = TopicBlocklist
	Reviews          Topic[ReviewEvent]               = TopicReviews
	Consents         Topic[ConsentRecorded]           = TopicConsents
	Erasures         Topic[BiometricErasureRequested] = TopicErasures
	TrackingSessions Topic[TrackingSessionOpened]     = TopicTrackingSessions
	ErasureStates    Topic[TrackingErasureState]      = TopicErasureState
	FaceIndex        Topic[FaceIndexEntry]            = TopicFaceIndex
	CaptureIndex     Topic[CaptureSighting]           = TopicCaptureIndex
)
