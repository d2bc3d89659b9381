// Package quality is the quality processor group: for every image capture on
// schemas.TopicCaptures it loads the image from the blob store, validates it
// (internal/imagecheck), runs the real-time quality gate (internal/quality) and emits a
// schemas.QualityAssessed to schemas.TopicQuality, keyed by session id. The group is
// stateless and its output is a pure function of the capture record and the blob bytes, so
// a replay produces the same event (same event id, same occurred_at).
package quality

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/imagecheck"
	qualitygate "github.com/idstream/idstream/internal/quality"
	"github.com/idstream/idstream/processors"
	"github.com/idstream/idstream/schemas"
)

// GroupName is the consumer group id.
const GroupName = "quality"

// Producer is the envelope producer of every event the group emits.
const Producer = "quality"

// EventIDPrefix prefixes the capture id to form the event id of its QualityAssessed.
const EventIDPrefix = "evt_q_"

// ImageBlobName is the BlobRef name of the image of a capture.
const ImageBlobName = "image"

// Reasons the group adds beyond the gate's: for captures whose image cannot be used, and
// for selfies whose face is missing, doubled, too small or off-centre.
const (
	ReasonNoDocument    = "no_document"
	ReasonNoFace        = "no_face"
	ReasonMultipleFaces = "multiple_faces"
	ReasonFaceTooSmall  = "face_too_small"
	ReasonNotFramed     = "not_framed"
)

// FaceDetector finds the faces of an image (internal/face's Engine satisfies it).
type FaceDetector interface {
	Detect(img image.Image) ([]face.Face, error)
}

// SelfieFraming bounds where the one face of a selfie must be.
type SelfieFraming struct {
	// MinFaceFraction is the smallest face side, as a fraction of the image's shorter side.
	MinFaceFraction float64
	// MaxCentreOffset is how far the face's centre may lie from the image's centre, as a
	// fraction of the image's width and height.
	MaxCentreOffset float64
}

// DefaultSelfieFraming: the face at least a fifth of the shorter side (about 130 px on a
// 640×480 selfie, enough for the 112×112 embedding crop), its centre within the middle 70 %.
func DefaultSelfieFraming() SelfieFraming {
	return SelfieFraming{MinFaceFraction: 0.2, MaxCentreOffset: 0.35}
}

// FramingUnknown is reported when the image could not be assessed at all.
const FramingUnknown = "unknown"

// Codec encodes and decodes the record values of a topic (schemas.Codec satisfies it).
type Codec interface {
	Encode(topic string, v any) ([]byte, error)
	Decode(topic string, data []byte, v any) error
}

// Option configures the group.
type Option func(*group)

// WithClock sets the clock used for occurred_at when a capture carries none (default
// time.Now). Captures with an occurred_at always pass it on unchanged.
func WithClock(now func() time.Time) Option {
	return func(g *group) {
		if now != nil {
			g.now = now
		}
	}
}

// WithFaceDetector makes the gate check selfies for exactly one face, large and central
// enough (reasons no_face, multiple_faces, face_too_small, not_framed). Without it, selfies
// are judged on blur, glare and exposure only.
func WithFaceDetector(d FaceDetector, framing SelfieFraming) Option {
	return func(g *group) { g.faces, g.framing = d, framing }
}

// WithImageLimits sets the limits images are validated against (default
// imagecheck.DefaultLimits()).
func WithImageLimits(lim imagecheck.Limits) Option {
	return func(g *group) { g.limits = lim }
}

// NewGroup declares the quality group. Its handler, for a record of schemas.TopicCaptures:
//   - emits nothing for an nfc capture, a step it does not know, a tombstone, or a capture
//     whose image blob is gone (blob.ErrNotFound: the session was erased);
//   - emits a failed QualityAssessed with reason no_document (document steps) or no_face
//     (selfie) when the capture has no image blob, or the image is too large, does not match
//     its recorded SHA-256, or fails imagecheck validation: never an error, so a bad upload
//     cannot loop through retries;
//   - otherwise emits the gate's assessment.
//
// The event id is "evt_q_" + capture id, occurred_at is the capture's occurred_at, producer
// "quality", and the image BlobRef is copied from the capture. The handler returns an error
// (retried, then dead-lettered) for a record of another topic, an undecodable record, a
// capture without a session or capture id, or a blob store failure other than not-found.
// The handler is safe for concurrent use.
func NewGroup(codec Codec, blobs blob.Store, gate *qualitygate.Gate, opts ...Option) processors.Group {
	g := &group{codec: codec, blobs: blobs, gate: gate, now: time.Now, limits: imagecheck.DefaultLimits()}
	for _, o := range opts {
		o(g)
	}
	return processors.Group{
		Name:    GroupName,
		Inputs:  []string{schemas.TopicCaptures},
		Outputs: []string{schemas.TopicQuality},
		Handler: g.handle,
	}
}

type group struct {
	codec   Codec
	blobs   blob.Store
	gate    *qualitygate.Gate
	now     func() time.Time
	limits  imagecheck.Limits
	faces   FaceDetector
	framing SelfieFraming
}

// kindOf maps a capture step to what its image must show; false for steps without an image.
func kindOf(step string) (qualitygate.Kind, bool) {
	switch step {
	case "document_front", "document_back", "passport":
		return qualitygate.Document, true
	case "selfie":
		return qualitygate.Selfie, true
	default: // nfc, or a step this version does not know
		return 0, false
	}
}

func (g *group) handle(ctx context.Context, rec *processors.Record) ([]processors.Output, error) {
	if rec.Topic != schemas.TopicCaptures {
		return nil, fmt.Errorf("quality: record from unexpected topic %q", rec.Topic)
	}
	if rec.Value == nil {
		return nil, nil
	}
	c := new(schemas.CaptureSubmitted)
	if err := g.codec.Decode(schemas.TopicCaptures, rec.Value, c); err != nil {
		return nil, fmt.Errorf("quality: decode capture at offset %d: %w", rec.Offset, err)
	}
	kind, ok := kindOf(c.Step)
	if !ok {
		return nil, nil
	}
	if c.Envelope.SessionID == "" || c.CaptureID == "" {
		return nil, fmt.Errorf("quality: capture at offset %d has no session or capture id", rec.Offset)
	}
	qa, emit, err := g.assess(ctx, c, kind)
	if err != nil || !emit {
		return nil, err
	}
	value, err := g.codec.Encode(schemas.TopicQuality, qa)
	if err != nil {
		return nil, fmt.Errorf("quality: encode assessment of capture %s: %w", c.CaptureID, err)
	}
	return []processors.Output{{Topic: schemas.TopicQuality, Key: []byte(c.Envelope.SessionID), Value: value}}, nil
}

// assess returns the assessment of c, or emit false when there is nothing to say.
func (g *group) assess(ctx context.Context, c *schemas.CaptureSubmitted, kind qualitygate.Kind) (qa *schemas.QualityAssessed, emit bool, err error) {
	occurred := c.Envelope.OccurredAt
	if occurred.IsZero() {
		occurred = g.now().UTC().Truncate(time.Millisecond)
	}
	qa = &schemas.QualityAssessed{
		Envelope: schemas.Envelope{
			EventID:    EventIDPrefix + c.CaptureID,
			SessionID:  c.Envelope.SessionID,
			TenantID:   c.Envelope.TenantID,
			OccurredAt: occurred,
			Producer:   Producer,
		},
		CaptureID:   c.CaptureID,
		Step:        c.Step,
		GateVersion: qualitygate.Version,
		CapturedAt:  &occurred,
		Reasons:     []string{},
	}
	unusable := func() (*schemas.QualityAssessed, bool, error) {
		qa.Passed = false
		qa.Framing = FramingUnknown
		if kind == qualitygate.Selfie {
			qa.Reasons = []string{ReasonNoFace}
		} else {
			qa.Reasons = []string{ReasonNoDocument}
		}
		return qa, true, nil
	}

	ref, ok := imageRef(c.Blobs)
	if !ok {
		return unusable()
	}
	qa.Image = ref
	data, err := g.blobs.Get(ctx, ref.URI)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return nil, false, nil
	case errors.Is(err, blob.ErrTooLarge), errors.Is(err, blob.ErrInvalidKey):
		return unusable()
	case err != nil:
		return nil, false, fmt.Errorf("quality: load image of capture %s: %w", c.CaptureID, err)
	}
	if ref.SHA256 != "" {
		sum := sha256.Sum256(data)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), ref.SHA256) {
			return unusable()
		}
	}
	img, _, err := imagecheck.Decode(data, g.limits)
	if err != nil {
		return unusable()
	}
	res := g.gate.Assess(img, kind)
	qa.Passed = res.Passed
	qa.Blur = res.Blur
	qa.Glare = res.Glare
	qa.Brightness = res.Brightness
	qa.Framing = res.Framing
	qa.Reasons = res.Reasons
	qa.Width = res.Width
	qa.Height = res.Height
	if kind == qualitygate.Selfie && g.faces != nil {
		reason, err := g.selfieFraming(img)
		if err != nil {
			return nil, false, fmt.Errorf("quality: face detection on capture %s: %w", c.CaptureID, err)
		}
		qa.GateVersion = qualitygate.Version + "+faces"
		if reason != "" {
			qa.Passed = false
			qa.Framing = ReasonNotFramed
			if !slices.Contains(qa.Reasons, reason) {
				qa.Reasons = append(qa.Reasons, reason)
			}
		}
	}
	return qa, true, nil
}

// selfieFraming returns the reason a selfie's face fails framing, or "" when it has exactly
// one face, large and central enough.
func (g *group) selfieFraming(img image.Image) (string, error) {
	faces, err := g.faces.Detect(img)
	if err != nil {
		if errors.Is(err, face.ErrBadImage) {
			return ReasonNoFace, nil
		}
		return "", err
	}
	switch {
	case len(faces) == 0:
		return ReasonNoFace, nil
	case len(faces) > 1:
		return ReasonMultipleFaces, nil
	}
	b, box := img.Bounds(), faces[0].Box
	short := min(b.Dx(), b.Dy())
	if float64(min(box.Dx(), box.Dy())) < g.framing.MinFaceFraction*float64(short) {
		return ReasonFaceTooSmall, nil
	}
	cx := float64(box.Min.X+box.Max.X)/2 - float64(b.Min.X+b.Max.X)/2
	cy := float64(box.Min.Y+box.Max.Y)/2 - float64(b.Min.Y+b.Max.Y)/2
	if math.Abs(cx) > g.framing.MaxCentreOffset*float64(b.Dx()) || math.Abs(cy) > g.framing.MaxCentreOffset*float64(b.Dy()) {
		return ReasonNotFramed, nil
	}
	return "", nil
}

// imageRef returns the capture's blob named "image".
func imageRef(blobs []schemas.BlobRef) (schemas.BlobRef, bool) {
	for _, b := range blobs {
		if b.Name == ImageBlobName && b.URI != "" {
			return b, true
		}
	}
	return schemas.BlobRef{}, false
}
