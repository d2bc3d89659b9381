// Package fraud is the fraud processor group ("fraud"): the checks of DESIGN.md's Checks
// section that need more than one capture or data from outside the session.
//
// The group is stateless (stream.Group, at least once). It consumes two topics:
//
//   - schemas.TopicCaptures: for every image capture it assesses the client integrity signals
//     the SDK reported and the image's own metadata (check "fraud.injection_signals.<step>",
//     see InjectionCheckName), and records each blob's SHA-256 in the capture index (the
//     compacted topic schemas.TopicCaptureIndex, keyed "<tenant>|<sha256>", first sighting wins).
//   - schemas.TopicSessionState: once per session, when the snapshot is processing and holds
//     the identity data it needs (the chip result in flows that require nfc, else a
//     DocumentRead for every required document step), it emits one schemas.FraudAssessed with
//     the session checks of SessionCheckNames: blocklist, tax / health-insurance /
//     social-insurance registry cross-checks, id-number structure, dates and replayed
//     captures; and the face checks of faces.go (duplicate face 1:N, face blocklist,
//     presentation attack; in flows with a selfie they also wait for its liveness result).
//     A snapshot that already holds those checks (snapshots repeat) yields nothing.
//     A tombstone (erasure) removes the session's entries from the capture index.
//
// Face templates: the group embeds the selfie itself from the blob store and writes the
// embedding to the compacted schemas.TopicFaceIndex (keyed by session id; biometric data
// on an internal topic, so that every member can load the whole index, see FaceIndex).
// The entry is written again with the outcome once the session is decided, and tombstoned
// when the session is erased (state tombstone), its biometrics are erased (BiometricErasure
// in the snapshot, consent withdrawal), or it expires or is cancelled undecided. The
// ClickHouse sink copies verified entries into face_index for analysts.
//
// Why stateless and not a StatefulGroup: the cross-session state the checks read is keyed by
// blocklist entry and by tenant|image hash, not by session, so it cannot live in a table
// co-partitioned with the inputs; every member needs all of it anyway. Each member therefore
// materialises the whole blocklist (Blocklist) and the whole capture index (CaptureIndex)
// from compacted topics, which also makes them survive restarts. The outputs are idempotent:
// event ids are deterministic ("evt_fraud_" + session id + "_" + a hash of the inputs), the
// session group replaces checks by name and ignores unchanged ones, and an index entry is
// written only while its key is absent (or already names the same session).
//
// Known limits: two sessions of a tenant submitting the same bytes within the index's
// propagation delay (milliseconds) may both pass fraud.replayed_capture; the injection check
// reports the latest capture of each step (a retake replaces it), as the quality checks do.
package fraud

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// GroupName is the consumer group id; Producer the envelope producer and check Source.
const (
	GroupName = "fraud"
	Producer  = "fraud"
)

// EventIDPrefix prefixes every event id the group emits.
const EventIDPrefix = "evt_fraud_"

// Names of the session checks, emitted together once per session.
const (
	CheckBlocklistID             = "fraud.blocklist_id"
	CheckRegistryTax             = "fraud.registry_tax"
	CheckRegistryHealthInsurance = "fraud.registry_health_insurance"
	CheckRegistrySocialInsurance = "fraud.registry_social_insurance"
	CheckIDStructure             = "fraud.id_structure"
	CheckDates                   = "fraud.dates"
	CheckReplayedCapture         = "fraud.replayed_capture"
)

// InjectionCheckPrefix prefixes the step of a per-capture injection check.
const InjectionCheckPrefix = "fraud.injection_signals."

// Reason codes. A fail rejects the session under the default (hard) policy; a warn never does.
const (
	ReasonBlocklisted           = "blocklisted"             // fail: the id number's hash is on the tenant's blocklist
	ReasonRecordMismatch        = "record_mismatch"         // fail: the registry's record has another name or date of birth
	ReasonRecordNotFound        = "record_not_found"        // warn: no record (many people have no tax or insurance record)
	ReasonRecordInactive        = "record_inactive"         // warn: the record is closed, lapsed or expired
	ReasonRegistryUnavailable   = "registry_unavailable"    // warn: no answer in time (down, slow, circuit open)
	ReasonRegistryError         = "registry_error"          // warn: the registry refused the query or answered nonsense
	ReasonRegistryNotConfigured = "registry_not_configured" // skipped: no registry
	ReasonIdentityIncomplete    = "identity_incomplete"     // skipped: no usable id number, name or date of birth
	ReasonNoIDNumber            = "no_id_number"            // skipped: the session has no id number
	ReasonNotApplicable         = "not_applicable"          // skipped: not a Vietnamese personal id number
	ReasonIDStructureMismatch   = "id_structure_mismatch"   // fail: century, birth year or sex digits disagree
	ReasonInvalidIDNumber       = "invalid_id_number"       // fail: not a structurally valid id number
	ReasonNoDates               = "no_dates"                // skipped: no date of birth, issue or expiry date
	ReasonDocumentExpired       = "document_expired"        // fail: expired before the session
	ReasonIssueAfterExpiry      = "issue_after_expiry"      // fail: issued after it expires
	ReasonUnderage              = "underage"                // fail: younger than the minimum age at the session
	ReasonReplayedCapture       = "replayed_capture"        // fail: the same image bytes in an earlier session of the tenant
	ReasonInjectionSuspected    = "injection_suspected"     // fail: a client integrity signal or a nonce/timestamp echo failed
	ReasonNotFromCamera         = "not_from_camera"         // warn: the image's metadata says it did not come from a camera
)

// SessionCheckNames returns the names of the session checks, in the order they are reported.
func SessionCheckNames() []string {
	return []string{
		CheckBlocklistID, CheckRegistryTax, CheckRegistryHealthInsurance, CheckRegistrySocialInsurance,
		CheckIDStructure, CheckDates, CheckReplayedCapture,
		CheckDuplicateFace, CheckBlocklistFace, CheckPresentationAttack, // faces.go
	}
}

// InjectionCheckName is the name of the injection check of a capture of step.
func InjectionCheckName(step string) string { return InjectionCheckPrefix + step }

// Awaits returns the check names a decision policy should await for a flow whose required
// steps are steps: every session check, the injection check of each image step, and the
// tamper check of each document step (TamperSteps).
func Awaits(steps []string) []string {
	out := SessionCheckNames()
	for _, s := range steps {
		if s != stepNFC {
			out = append(out, InjectionCheckName(s))
		}
	}
	for _, s := range steps {
		if slices.Contains(TamperSteps(), s) {
			out = append(out, TamperCheckName(s))
		}
	}
	return out
}

const stepNFC = "nfc"

// Defaults.
const (
	DefaultMinAge          = 14              // Vietnamese chip ID cards are issued from 14
	DefaultRegistryTimeout = 5 * time.Second // per registry lookup
	DefaultTimestampSkew   = 5 * time.Minute // client timestamp echo vs the capture's time
)

// BlocklistIndex answers whether an id-number hash is blocklisted for a tenant (Blocklist).
type BlocklistIndex interface {
	WaitReady(ctx context.Context) error
	// Lookup returns the id of a live entry of tenantID blocking valueHash.
	Lookup(tenantID, valueHash string) (entryID string, blocked bool)
}

// Sighting is the first session of a tenant in which an image's bytes were seen.
type Sighting struct {
	SessionID string
	CaptureID string
	Step      string
	SeenAt    time.Time
}

// SightingIndex holds the first sighting of every image hash per tenant (CaptureIndex).
type SightingIndex interface {
	WaitReady(ctx context.Context) error
	// First returns the first sighting of sha256 (lowercase hex) in tenantID.
	First(tenantID, sha256 string) (Sighting, bool)
	// KeysOfSession returns the index keys whose sighting is sessionID.
	KeysOfSession(sessionID string) []string
}

// Option configures the group.
type Option func(*group)

// WithRegistry sets the registry of the cross-checks (nil: the three checks are skipped with
// registry_not_configured).
func WithRegistry(r registry.Registry) Option { return func(g *group) { g.reg = r } }

// WithRegistryTimeout bounds each registry lookup (default DefaultRegistryTimeout); past it
// the check warns registry_unavailable. Values ≤ 0 leave the default.
func WithRegistryTimeout(d time.Duration) Option {
	return func(g *group) {
		if d > 0 {
			g.registryTimeout = d
		}
	}
}

// WithMinAge sets the minimum age at the session's creation (default DefaultMinAge; 18 for
// adult-only products). Values < 0 leave the default.
func WithMinAge(years int) Option {
	return func(g *group) {
		if years >= 0 {
			g.minAge = years
		}
	}
}

// WithRecordStatus overrides the status (schemas.CheckPass, CheckWarn or CheckFail) a
// registry record outcome maps to. The default mapping: found → pass; mismatch → fail
// record_mismatch; not_found → warn record_not_found; inactive → warn record_inactive.
func WithRecordStatus(outcome registry.RecordOutcome, status string) Option {
	return func(g *group) { g.recordStatus[outcome] = status }
}

// WithBlobs sets the blob store the injection check reads images from (nil: image metadata
// is not examined).
func WithBlobs(s blob.Store) Option { return func(g *group) { g.blobs = s } }

// WithDecodedImages shares decoded images with the other parts of the process that read the
// same captures (imagecheck.Decoded): a capture is decoded once per process, not once per
// group. Without it every image is decoded here.
func WithDecodedImages(d *imagecheck.Decoded) Option { return func(g *group) { g.decoded = d } }

// WithRequireNonceEcho makes a capture whose client signals carry no "nonce" echo fail
// injection_suspected (signal nonce_missing). Off by default: proxy integrations and plain
// REST clients send no client signals.
func WithRequireNonceEcho(require bool) Option { return func(g *group) { g.requireNonce = require } }

// WithTimestampSkew sets how far the client's "timestamp" echo may be from the capture's
// time (default DefaultTimestampSkew). Values ≤ 0 leave the default.
func WithTimestampSkew(d time.Duration) Option {
	return func(g *group) {
		if d > 0 {
			g.skew = d
		}
	}
}

// WithInjectionSignals replaces the boolean client signals that fail the injection check
// (default DefaultInjectionSignals).
func WithInjectionSignals(names ...string) Option {
	return func(g *group) { g.signals = slices.Clone(names) }
}

// WithLogger sets the logger (default: discard). Ids, check names and causes only; never an
// id number, a name or a date.
func WithLogger(l *slog.Logger) Option {
	return func(g *group) {
		if l != nil {
			g.log = l
		}
	}
}

// NewGroup declares the fraud group. hashKey is the key of idnumber.Hash, the same key the
// edge hashes blocklisted id numbers with (its token secret). blocklist and sightings are
// normally a *Blocklist and a *CaptureIndex that the caller runs beside the group.
//
// The handler returns an error (retried, then dead-lettered) only for a record of another
// topic, an undecodable record, a key that is not the record's session id, a blob store
// failure other than not-found, an encoding failure, or when ctx ends (waiting for the
// indexes to be ready included). It is safe for concurrent use.
func NewGroup(codec stream.Codec, hashKey []byte, blocklist BlocklistIndex, sightings SightingIndex, opts ...Option) (stream.Group, error) {
	if codec == nil || blocklist == nil || sightings == nil {
		return stream.Group{}, errors.New("fraud: new group: codec, blocklist and sightings are required")
	}
	if len(hashKey) == 0 {
		return stream.Group{}, errors.New("fraud: new group: empty hash key")
	}
	g := &group{
		codec: codec, hashKey: slices.Clone(hashKey), blocklist: blocklist, sightings: sightings,
		registryTimeout: DefaultRegistryTimeout, minAge: DefaultMinAge, skew: DefaultTimestampSkew,
		signals: DefaultInjectionSignals(), log: slog.New(slog.DiscardHandler),
		recordStatus: map[registry.RecordOutcome]string{
			registry.RecordFound:    schemas.CheckPass,
			registry.RecordMismatch: schemas.CheckFail,
			registry.RecordNotFound: schemas.CheckWarn,
			registry.RecordInactive: schemas.CheckWarn,
		},
	}
	for _, o := range opts {
		o(g)
	}
	if err := g.initFaces(); err != nil {
		return stream.Group{}, err
	}
	inputs := []stream.Input{
		// Lazy: an NFC capture, a snapshot with nothing to check and an erasure take no
		// background turn; the checks take theirs (stream.Compute).
		stream.On(schemas.Captures, g.handleCapture).Lazy(),
		stream.On(schemas.SessionStates, g.handleSnapshot).WithTombstones(g.handleErasedSnapshot).Lazy(),
	}
	return stream.Group{
		Name:    GroupName,
		Inputs:  stream.Topics(inputs...),
		Outputs: Spec().Outputs,
		Handler: stream.Handle(GroupName, codec, inputs...),
	}, nil
}

type group struct {
	codec           stream.Codec
	hashKey         []byte
	blocklist       BlocklistIndex
	sightings       SightingIndex
	reg             registry.Registry
	blobs           blob.Store
	decoded         *imagecheck.Decoded // shared with the process's other readers (WithDecodedImages)
	registryTimeout time.Duration
	recordStatus    map[registry.RecordOutcome]string
	minAge          int
	requireNonce    bool
	skew            time.Duration
	signals         []string
	log             *slog.Logger
	faces           faceConfig    // faces.go
	img             imageSettings // imagechecks.go: tamper and near-duplicate settings
}

// assessed builds the FraudAssessed output of checks.
func (g *group) assessed(env schemas.Envelope, checks []schemas.Check) (stream.Output, error) {
	for i := range checks {
		checks[i].Source = Producer
	}
	value, err := g.codec.Encode(schemas.TopicFraud, &schemas.FraudAssessed{Envelope: env, Checks: checks})
	if err != nil {
		return stream.Output{}, fmt.Errorf("encode result of session %s: %w", env.SessionID, err)
	}
	return stream.Output{Topic: schemas.TopicFraud, Key: []byte(env.SessionID), Value: value}, nil
}

// eventID derives an event id from the session id and the inputs of a result.
func eventID(sessionID string, inputs ...string) string {
	h := sha256.New()
	for _, s := range inputs {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return EventIDPrefix + sessionID + "_" + hex.EncodeToString(h.Sum(nil))[:16]
}

func ptr[T any](v T) *T { return &v }

// newCheck builds a check; empty reason and detail are left null.
func newCheck(name, status, reason, detail string) schemas.Check {
	c := schemas.Check{Name: name, Status: status, Source: Producer}
	if reason != "" {
		c.ReasonCode = ptr(reason)
	}
	if detail != "" {
		c.Detail = ptr(detail)
	}
	return c
}

// Spec is the fraud group: captures and session snapshots in, fraud checks out; it looks up
// the blocklist, its own capture index and the face index in views.
func Spec() topology.Node {
	return topology.Node{
		Name:    GroupName,
		Kind:    topology.Group,
		Inputs:  []string{schemas.TopicCaptures, schemas.TopicSessionState},
		Lookups: []string{schemas.TopicBlocklist, schemas.TopicCaptureIndex, schemas.TopicFaceIndex},
		Outputs: []string{schemas.TopicFraud, schemas.TopicCaptureIndex, schemas.TopicFaceIndex},
	}
}
