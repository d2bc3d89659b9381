// Package liveness is the passive liveness processor group: for every selfie that passed the
// quality gate (schemas.QualityAssessed on schemas.TopicQuality) it loads the image from the
// blob store, validates it (internal/imagecheck), expects exactly one face, assesses passive
// liveness with internal/face (the liveness model plus the screen-replay and print signals)
// and emits a schemas.LivenessAssessed to schemas.TopicLiveness, keyed by session id, with
// one explained check, CheckName.
//
// The group is stateless and its output is a pure function of the assessment record, the
// blob bytes and the models: a replay produces the same event (same event id, same
// occurred_at, same scores).
package liveness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/claimcheck"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// GroupName is the consumer group id.
const GroupName = "liveness"

// Producer is the envelope producer of every event the group emits, and the Source of its
// checks.
const Producer = "liveness"

// EventIDPrefix prefixes the capture id to form the event id of its LivenessAssessed.
const EventIDPrefix = "evt_live_"

// StepSelfie is the capture step the group acts on.
const StepSelfie = "selfie"

// CheckName is the name of the check every LivenessAssessed carries.
const CheckName = "liveness.passive"

// Reason codes of a failing CheckName. An attack is reported as ReasonPresentationPrefix +
// the attack type: presentation_print, presentation_replay or presentation_mask.
const (
	ReasonNoFace             = "no_face"          // no face found in the selfie
	ReasonMultipleFaces      = "multiple_faces"   // more than one face in the selfie
	ReasonImageUnreadable    = "image_unreadable" // the stored image is not the one assessed, or does not decode
	ReasonPresentationPrefix = "presentation_"
)

// Keys of LivenessAssessed.Signals.
const (
	SignalModel  = "model"  // the liveness model's P(live)
	SignalReplay = "replay" // screen-replay evidence, 0..1 (face.Liveness.Replay)
	SignalPrint  = "print"  // printed-photo evidence, 0..1 (face.Liveness.Print)
)

// Option configures the group.
type Option func(*group)

// WithClock sets the clock used for occurred_at when an assessment carries none (default
// time.Now). Assessments with an occurred_at always pass it on unchanged.
func WithClock(now func() time.Time) Option {
	return func(g *group) {
		if now != nil {
			g.now = now
		}
	}
}

// WithImageLimits sets the limits images are validated against (default
// imagecheck.DefaultLimits()).
func WithImageLimits(lim imagecheck.Limits) Option {
	return func(g *group) { g.limits = lim }
}

// WithDecodedImages shares decoded images with the other parts of the process that read the
// same captures (imagecheck.Decoded): a capture is decoded once per process, not once per
// group. Without it every capture is decoded here.
func WithDecodedImages(d *imagecheck.Decoded) Option {
	return func(g *group) { g.decoded = d }
}

// WithModelVersion sets the model_version reported in events and checks, replacing the one
// NewGroup derives from the model files (see ModelVersion). Empty leaves the derived one.
func WithModelVersion(v string) Option {
	return func(g *group) {
		if v != "" {
			g.modelVersion = v
		}
	}
}

// WithLogger sets the logger (default: discard). The group logs ids, reason codes and
// error causes, never images, scores of a person or personal data.
func WithLogger(l *slog.Logger) Option {
	return func(g *group) {
		if l != nil {
			g.log = l
		}
	}
}

// NewGroup declares the liveness group on engine, whose configuration (face.Models) holds the
// liveness threshold. The model version is derived from the detector and liveness model files
// (ModelVersion) unless WithModelVersion sets it; reading them is the only error.
//
// Its handler, for a record of schemas.TopicQuality:
//   - emits nothing for a tombstone, an assessment of another step than selfie, a selfie
//     that did not pass the gate, or a selfie whose image blob is gone (blob.ErrNotFound:
//     the session or its biometrics were erased);
//   - otherwise emits exactly one LivenessAssessed with event id "evt_live_" + capture id,
//     occurred_at the assessment's, producer "liveness", keyed by session id, carrying
//     Score (P(live)), Threshold, Live, AttackType (print | replay | mask, null when live),
//     Signals {model, replay, print}, ModelVersion, and the check CheckName: pass when live,
//     else fail with reason presentation_<attack type>. A selfie without exactly one face
//     fails with reason no_face or multiple_faces, one whose stored bytes do not match the
//     assessed SHA-256 or do not decode with image_unreadable; those have score 0 and no
//     attack type. Bad images never return an error, so they cannot loop through retries.
//
// The handler returns an error (retried, then dead-lettered) for a record of another topic,
// an undecodable record, an assessment without session or capture id, a blob store failure
// other than not-found, too large or invalid key, a model failure, or an encoding failure.
// It is safe for concurrent use.
func NewGroup(codec stream.Codec, blobs blob.Store, engine *face.Engine, opts ...Option) (stream.Group, error) {
	g := &group{
		codec: codec, blobs: blobs, engine: engine,
		now: time.Now, limits: imagecheck.DefaultLimits(),
		log: slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(g)
	}
	if g.modelVersion == "" {
		v, err := ModelVersion(engine.Config())
		if err != nil {
			return stream.Group{}, fmt.Errorf("liveness: %w", err)
		}
		g.modelVersion = v
	}
	input := stream.On(schemas.Quality, g.handle).Lazy() // the documents' captures take no turn
	return stream.Group{
		Name:    GroupName,
		Inputs:  stream.Topics(input),
		Outputs: Spec().Outputs,
		Handler: stream.Handle(GroupName, codec, input),
	}, nil
}

// ModelVersion names the model files a liveness result depends on, each with the first 8
// hex digits of its SHA-256: "fr_detect.onnx@6c0256cc+fr_liveness.onnx@afa783b7" for the
// default models. A swapped file changes the version even under the same name.
func ModelVersion(m face.Models) (string, error) {
	return face.FilesVersion(m.DetectorPath, m.LivenessPath)
}

type group struct {
	codec        stream.Codec
	blobs        blob.Store
	engine       *face.Engine
	now          func() time.Time
	limits       imagecheck.Limits
	decoded      *imagecheck.Decoded // shared with the process's other readers (WithDecodedImages)
	modelVersion string
	log          *slog.Logger
}

func (g *group) handle(ctx context.Context, rec *stream.Record, qa *schemas.QualityAssessed) ([]stream.Output, error) {
	if qa.Step != StepSelfie || !qa.Passed {
		return nil, nil
	}
	if qa.Envelope.SessionID == "" || qa.CaptureID == "" {
		return nil, fmt.Errorf("assessment at offset %d has no session or capture id", rec.Offset)
	}
	if err := stream.Compute(ctx); err != nil { // a selfie to assess: the background's turn
		return nil, err
	}
	ev, err := g.assess(ctx, qa)
	if err != nil || ev == nil {
		return nil, err
	}
	out, err := stream.Emit(g.codec, schemas.Liveness, []byte(qa.Envelope.SessionID), ev)
	if err != nil {
		return nil, fmt.Errorf("result of capture %s: %w", qa.CaptureID, err)
	}
	return []stream.Output{out}, nil
}

// assess returns the liveness result of the selfie of qa, or nil when its image is gone.
func (g *group) assess(ctx context.Context, qa *schemas.QualityAssessed) (*schemas.LivenessAssessed, error) {
	occurred := qa.Envelope.OccurredAt
	if occurred.IsZero() {
		occurred = g.now().UTC().Truncate(time.Millisecond)
	}
	threshold := g.engine.Config().LivenessThreshold
	ev := &schemas.LivenessAssessed{
		Envelope: schemas.Envelope{
			EventID:    EventIDPrefix + qa.CaptureID,
			SessionID:  qa.Envelope.SessionID,
			TenantID:   qa.Envelope.TenantID,
			OccurredAt: occurred,
			Producer:   Producer,
		},
		CaptureID:    qa.CaptureID,
		Threshold:    threshold,
		Signals:      map[string]float64{},
		ModelVersion: g.modelVersion,
	}
	captureID := qa.CaptureID
	check := schemas.Check{
		Name:         CheckName,
		Status:       schemas.CheckFail,
		Threshold:    &threshold,
		ModelVersion: &g.modelVersion,
		Source:       Producer,
		CaptureID:    &captureID,
	}
	fail := func(reason string) (*schemas.LivenessAssessed, error) {
		check.ReasonCode = &reason
		ev.Checks = []schemas.Check{check}
		g.log.Info("liveness: selfie not assessable", "session_id", qa.Envelope.SessionID, "capture_id", qa.CaptureID, "reason", reason)
		return ev, nil
	}

	img, err := claimcheck.Image(ctx, g.blobs, qa.Image.URI, qa.Image.SHA256, g.limits, g.decoded)
	switch {
	case errors.Is(err, claimcheck.ErrGone):
		return nil, nil
	case errors.Is(err, claimcheck.ErrUnusable):
		return fail(ReasonImageUnreadable)
	case err != nil:
		return nil, fmt.Errorf("load image of capture %s: %w", qa.CaptureID, err)
	}
	faces, err := g.engine.Detect(img)
	switch {
	case errors.Is(err, face.ErrBadImage):
		return fail(ReasonImageUnreadable)
	case err != nil:
		return nil, fmt.Errorf("detect faces in capture %s: %w", qa.CaptureID, err)
	case len(faces) == 0:
		return fail(ReasonNoFace)
	case len(faces) > 1:
		return fail(ReasonMultipleFaces)
	}
	l, err := g.engine.Liveness(img, faces[0])
	if err != nil {
		return nil, fmt.Errorf("assess capture %s: %w", qa.CaptureID, err)
	}
	ev.Score = l.Score
	ev.Threshold = l.Threshold
	ev.Live = l.Live
	ev.Signals = map[string]float64{SignalModel: l.Score, SignalReplay: l.Replay, SignalPrint: l.Print}
	score := l.Score
	check.Score = &score
	check.Threshold = &ev.Threshold
	if l.Live {
		check.Status = schemas.CheckPass
	} else {
		attack := l.AttackType
		ev.AttackType = &attack
		reason := ReasonPresentationPrefix + attack
		check.ReasonCode = &reason
	}
	ev.Checks = []schemas.Check{check}
	g.log.Debug("liveness: selfie assessed", "session_id", qa.Envelope.SessionID, "capture_id", qa.CaptureID, "status", check.Status)
	return ev, nil
}

// Spec is the liveness group: passed selfie assessments in, liveness results out.
func Spec() topology.Node {
	return topology.Node{
		Name:    GroupName,
		Kind:    topology.Group,
		Inputs:  []string{schemas.TopicQuality},
		Outputs: []string{schemas.TopicLiveness},
	}
}
