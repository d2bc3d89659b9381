// Package ocr is the document reading processor group "ocr": for every passed quality
// assessment of a document step on schemas.TopicQuality (document_front, document_back,
// passport) it loads the image from the blob store, validates it (internal/imagecheck),
// recognises the document type and side (DetectType: 9-digit ID card, 12-digit ID card,
// 12-digit chip ID card, passport, vehicle registration), reads the machine readable zone
// and the printed fields of the type's layout with internal/docread, crops the document's
// face photo into the blob store, and emits one schemas.DocumentRead to
// schemas.TopicDocuments, keyed by session id.
//
// The group is stateless. Its output is a function of the assessment record and the blob
// bytes: a replay produces the same event (same event id, occurred_at, fields and checks) and
// rewrites the same face crop.
//
// The QualityAssessed carries no flow, so the layout is chosen by step and content (see
// NewGroup): the document type is reported as best known, and whether it is the one the
// session's flow expects is for the decision policy to judge.
package ocr

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// GroupName is the consumer group id.
const GroupName = "ocr"

// Producer is the envelope producer (and check Source) of every event the group emits.
const Producer = "ocr"

// EventIDPrefix prefixes the capture id to form the event id of its DocumentRead.
const EventIDPrefix = "evt_ocr_"

// Document steps the group reads.
const (
	StepFront    = "document_front"
	StepBack     = "document_back"
	StepPassport = "passport"
)

// Sides reported in DocumentRead.Side.
const (
	SideFront    = "front"
	SideBack     = "back"
	SidePassport = "passport"
)

// Document types reported in DocumentRead.DocumentType (see DetectType for how they are
// told apart).
const (
	// TypeChipIDCard is the 12-digit citizen identity card with chip (2021 on; TD1 zone on
	// the back).
	TypeChipIDCard = "chip_id_card"
	// TypeIDCard is the 12-digit citizen identity card without chip (2016–2020, no zone), or
	// another ID card whose back carries a TD1 or TD2 zone.
	TypeIDCard = "id_card"
	// TypeLegacyIDCard is the 9-digit identity card ("GIẤY CHỨNG MINH NHÂN DÂN", CMND).
	TypeLegacyIDCard        = "legacy_id_card"
	TypePassport            = "passport"
	TypeVehicleRegistration = "vehicle_registration"
	TypeUnknown             = "unknown"
)

// FaceCropName is the file name (last key segment) of the face crop the group stores:
// "<tenant>/<session>/<capture>/face_crop.jpg".
const FaceCropName = "face_crop.jpg"

// FaceCropRefName is the BlobRef name of the face crop in DocumentRead.FaceCrop.
const FaceCropRefName = "face"

// DefaultModelVersion names the OCR engine and models the group reports in ModelVersion and
// on its checks.
const DefaultModelVersion = "tesseract5-vie+ocrb_int-1"

// DefaultMinConfidence is the OCR confidence below which a required field is reported as
// low confidence (document.fields warn).
const DefaultMinConfidence = 0.6

// DefaultFaceMargin is the margin added around the detected face box on each side, as a
// fraction of the box side, before the photo is cropped.
const DefaultFaceMargin = 0.4

// FaceDetector finds the faces of an image (internal/face's Engine satisfies it).
type FaceDetector interface {
	Detect(img image.Image) ([]face.Face, error)
}

// Option configures the group.
type Option func(*group)

// WithClock sets the clock used when an assessment carries no occurred_at (default
// time.Now): it then dates the event and resolves the MRZ's two-digit years. Assessments with
// an occurred_at (or captured_at) always use them.
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

// WithMinConfidence sets the OCR confidence in [0, 1] below which a required field makes
// document.fields warn low_confidence (default DefaultMinConfidence). Values outside [0, 1]
// leave the default.
func WithMinConfidence(c float64) Option {
	return func(g *group) {
		if c >= 0 && c <= 1 {
			g.minConfidence = c
		}
	}
}

// WithFaceMargin sets the margin around the face box, as a fraction of its side on each side
// (default DefaultFaceMargin). Negative values leave the default.
func WithFaceMargin(m float64) Option {
	return func(g *group) {
		if m >= 0 {
			g.faceMargin = m
		}
	}
}

// WithModelVersion sets the model version reported on events and checks (default
// DefaultModelVersion); an operator who swaps the OCR models should change it.
func WithModelVersion(v string) Option {
	return func(g *group) {
		if v != "" {
			g.modelVersion = v
		}
	}
}

// WithLogger sets the logger (default: discard). The group logs ids, document types, check
// outcomes and error causes, never read values.
func WithLogger(l *slog.Logger) Option {
	return func(g *group) {
		if l != nil {
			g.log = l
		}
	}
}

// NewGroup declares the ocr group. reader reads the documents; faces finds the face photo
// on fronts and passport pages (nil: no face crop is made).
//
// Its handler, for a record of schemas.TopicQuality:
//   - emits nothing for a tombstone, an assessment that did not pass, or a step other than
//     document_front, document_back and passport;
//   - emits nothing when the image blob is gone (blob.ErrNotFound: the session was erased),
//     also when it disappears while the face crop is stored (the crop is then removed);
//   - emits a DocumentRead with failing checks (reason unreadable) when the image cannot be
//     used: no image reference, too large for the store, bytes that do not match the recorded
//     SHA-256, or an image imagecheck refuses. Never an error, so a bad image cannot loop;
//   - otherwise reads the side and emits its DocumentRead.
//
// How a side is read: the document is located and rectified, and one Tesseract pass over the
// whole of it (docread.ReadPage) gives its words with their boxes. The type is decided by
// DetectType from that text (see there for the rules), then every field of the type's side
// is found by its printed label (Vietnamese or English, OCR errors tolerated) and its value
// taken right of the label or on the line(s) below it (docread.Fields); numbers and dates are
// read again from their boxes with a digit engine. The type's fixed layout (docread.ChipIDFront,
// docread.IDCardFront, docread.LegacyIDFront, docread.VehicleRegistration, PassportLayout, ...) serves
// only as the fallback for a number, date, sex or nationality whose label was not found.
// When the text names no type, the page is read again as one block (docread.ReadAsBlock), which
// keeps short lines the automatic layout may drop. By step:
//   - document_front: the 9-digit card, the 12-digit card without chip, the chip card (2021,
//     or the identity card of 2024, whose front carries only number, name, birth date, sex
//     and nationality), the vehicle registration and a passport page are told apart by their
//     text. When it names none, the number decides: the chip ID layout is taken
//     (chip_id_card) when its ID number is 12 digits, else the vehicle layout when its plate
//     or its chassis number and registration date look right (see looksLikeVehicle), else
//     the 9-digit layout when its number is 9 digits (legacy_id_card); otherwise the chip ID
//     read is kept with type unknown;
//   - document_back: the MRZ (docread.ReadMRZ). A Vietnamese TD1 is the chip card's back
//     (chip_id_card: issue date, and when printed the identifying marks, or the places and
//     the expiry date of the 2024 card). Otherwise the text decides: the 12-digit card's back
//     without chip (id_card), the 9-digit card's back (legacy_id_card), the vehicle
//     registration's back (plate, colour, first registration date), or a front sent as the
//     back. Another TD1/TD2 without a recognised text is an id_card with no printed layout;
//     nothing recognised is unknown;
//   - passport: the MRZ and the printed data page (PassportLayout), the passport number
//     fixed to its form (a letter, seven digits) through O/0-like confusions. DocumentType
//     passport.
//
// Fields holds the printed fields read valid (a value that fails its kind's validation is
// left out rather than reported wrong), in layout order, each with its OCR confidence. MRZ
// holds the zone when one of the right shape was read, with Fields = FieldsAt(capture time)
// and Valid. FaceCrop (front and passport) is the largest face the detector finds, cropped
// with WithFaceMargin and stored as JPEG under "<tenant>/<session>/<capture>/face_crop.jpg".
//
// Checks, each with Source "ocr", the capture id and the model version, named per step so
// that the front's and the back's do not replace each other in the session state:
//   - document.mrz.<step>: pass when every check digit holds (score: the zone's OCR
//     confidence); fail mrz_check_digit when a zone was read but fails them; on a passport
//     fail mrz_not_found when no zone was read; skipped no_mrz on a front, and skipped
//     mrz_not_found on a back without a zone (9-digit ID and vehicle backs have none);
//   - document.fields.<step>: over the side's required fields (RequiredFields): pass when
//     all are read valid with confidence ≥ WithMinConfidence; on a passport page whose zone
//     is valid, warn fields_from_zone when the ones illegible in print are all carried by the
//     zone (its number, sex, birth and expiry dates: zoneCarried); warn low_confidence when
//     some are invalid or below the confidence but at least half are valid (from print or
//     zone); fail unreadable otherwise; skipped no_layout when the side has no known printed
//     layout. Score: the fraction of required fields read valid in print; Threshold: the
//     minimum confidence. Detail names the missing fields (names only);
//   - document.type.<step>: pass with Detail "document type: <type>" when the type is
//     known and the content shows the step's side; warn side_mismatch when it shows another
//     side (a back sent as the front: the layout of the side shown is read, and
//     document.fields judges that side); warn document_type_unknown when the type is not
//     known. Whether the type is one the session's flow accepts is for the decision to judge
//     (internal/flow's Flow.AcceptsDocumentType).
//
// For an unreadable image every check of the side fails with reason unreadable (the MRZ
// check of a front is skipped), Fields is empty and DocumentType is unknown (passport on the
// passport step). The event id is "evt_ocr_" + capture id, occurred_at is the
// assessment's, producer "ocr". The handler returns an error (retried, then dead-lettered)
// for a record of another topic, an undecodable record, an assessment without session or
// capture id, a blob store failure other than not-found, too large or invalid key, an OCR
// engine or face detector failure, or an encoding failure. It is safe for concurrent use
// when reader and faces are (internal/docread's Reader and internal/face's Engine are).
func NewGroup(codec stream.Codec, blobs blob.Store, reader *docread.Reader, faces FaceDetector, opts ...Option) stream.Group {
	g := &group{
		codec: codec, blobs: blobs, reader: reader, faces: faces,
		now: time.Now, limits: imagecheck.DefaultLimits(),
		minConfidence: DefaultMinConfidence, faceMargin: DefaultFaceMargin,
		modelVersion: DefaultModelVersion, log: slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(g)
	}
	input := stream.On(schemas.Quality, g.handle).Lazy() // the selfie and failed captures take no turn
	return stream.Group{
		Name:    GroupName,
		Inputs:  stream.Topics(input),
		Outputs: Spec().Outputs,
		Handler: stream.Handle(GroupName, codec, input),
	}
}

type group struct {
	codec         stream.Codec
	blobs         blob.Store
	reader        *docread.Reader
	faces         FaceDetector
	now           func() time.Time
	limits        imagecheck.Limits
	decoded       *imagecheck.Decoded // shared with the process's other readers (WithDecodedImages)
	minConfidence float64
	faceMargin    float64
	modelVersion  string
	log           *slog.Logger
}

// sideOf maps a document step to its side; false for steps the group does not read.
func sideOf(step string) (string, bool) {
	switch step {
	case StepFront:
		return SideFront, true
	case StepBack:
		return SideBack, true
	case StepPassport:
		return SidePassport, true
	}
	return "", false
}

func (g *group) handle(ctx context.Context, rec *stream.Record, qa *schemas.QualityAssessed) ([]stream.Output, error) {
	side, ok := sideOf(qa.Step)
	if !ok || !qa.Passed {
		return nil, nil
	}
	if qa.Envelope.SessionID == "" || qa.CaptureID == "" {
		return nil, fmt.Errorf("assessment at offset %d has no session or capture id", rec.Offset)
	}
	if err := stream.Compute(ctx); err != nil { // a capture to read: the background's turn
		return nil, err
	}
	doc, err := g.read(ctx, qa, side)
	if err != nil || doc == nil {
		return nil, err
	}
	out, err := stream.Emit(g.codec, schemas.Documents, []byte(qa.Envelope.SessionID), doc)
	if err != nil {
		return nil, fmt.Errorf("read of capture %s: %w", qa.CaptureID, err)
	}
	return []stream.Output{out}, nil
}

// errErased reports that the capture's image disappeared while it was read.
var errErased = errors.New("ocr: capture erased")

// Spec is the ocr group: passed document assessments in, document reads out.
func Spec() topology.Node {
	return topology.Node{
		Name:    GroupName,
		Kind:    topology.Group,
		Inputs:  []string{schemas.TopicQuality},
		Outputs: []string{schemas.TopicDocuments},
	}
}
