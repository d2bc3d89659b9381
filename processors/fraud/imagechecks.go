package fraud

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/internal/phash"
	"github.com/idstream/idstream/internal/tamper"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// TamperCheckPrefix prefixes the step of a per-capture tamper check ("fraud.tamper.<step>"),
// emitted for every capture of a document step (TamperSteps), in its own FraudAssessed.
const TamperCheckPrefix = "fraud.tamper."

// Tamper reason codes.
//
// double_compression is a warn by default (WithTamperStatus changes that), a choice made on
// the measurements of internal/tamper (TestDoubleCompressionRates prints them): 1 of
// 18 clean camera-like pictures flagged, 60 % of re-saves found (every re-save at a higher
// quality than the original, about a third of those at a lower one, the usual edit of a
// camera picture); and a legitimate pipeline (an SDK or a messaging app shrinking the file)
// also decodes and re-saves JPEGs, which looks exactly the same.
//
// ReasonCopyMove is reserved for a copy-move analysis, which the tamper package does not
// have yet (see its package comment).
const (
	ReasonDoubleCompression = "double_compression" // warn: the JPEG was decoded and saved again with another table
	ReasonCopyMove          = "copy_move"          // reserved: a region of the picture repeats elsewhere in it
	ReasonImageUnavailable  = "image_unavailable"  // skipped: no blob store, or the image is gone or unreadable
)

// TamperCheckName is the name of the tamper check of a capture of step.
func TamperCheckName(step string) string { return TamperCheckPrefix + step }

// TamperSteps are the steps whose captures get a tamper check: the document pictures.
func TamperSteps() []string { return []string{"document_front", "document_back", "passport"} }

// DefaultNearDuplicateSteps are the steps whose images are searched for near-duplicates
// (phash): the selfie. Card pictures are not, because renders of different people on one
// template hash alike (see phash.DefaultMaxDistance); the exact SHA-256 index covers them.
func DefaultNearDuplicateSteps() []string { return []string{"selfie"} }

// imageSettings are the group's tamper and near-duplicate settings; zero values mean the
// defaults.
type imageSettings struct {
	nearSteps    []string // nil: DefaultNearDuplicateSteps
	nearSet      bool
	maxDistance  int // 0: phash.DefaultMaxDistance; < 0 turns the search off
	tamperStatus map[string]string
	limits       imagecheck.Limits // zero: imagecheck.DefaultLimits, the edge's
}

func (s imageSettings) steps() []string {
	if !s.nearSet {
		return DefaultNearDuplicateSteps()
	}
	return s.nearSteps
}

func (s imageSettings) distance() int {
	if s.maxDistance == 0 {
		return phash.DefaultMaxDistance
	}
	return s.maxDistance
}

// WithNearDuplicateSteps sets the steps whose images are searched for near-duplicates
// across sessions (default DefaultNearDuplicateSteps; none turns the search off).
func WithNearDuplicateSteps(steps ...string) Option {
	return func(g *group) { g.img.nearSteps, g.img.nearSet = slices.Clone(steps), true }
}

// WithNearDuplicateDistance sets the largest Hamming distance (of 64 bits) at which two
// images are near-identical (default phash.DefaultMaxDistance). Values < 0 turn the search
// off; 0 leaves the default.
func WithNearDuplicateDistance(bits int) Option { return func(g *group) { g.img.maxDistance = bits } }

// WithTamperStatus sets the status (schemas.CheckWarn or CheckFail) that a tamper finding
// (ReasonDoubleCompression) gives the check; the default is warn.
func WithTamperStatus(reason, status string) Option {
	return func(g *group) {
		if g.img.tamperStatus == nil {
			g.img.tamperStatus = map[string]string{}
		}
		g.img.tamperStatus[reason] = status
	}
}

// capturedImage is one image blob of a capture with its bytes (nil when unavailable) and
// their SHA-256 (the key of the process's decoded images).
type capturedImage struct {
	ref  schemas.BlobRef
	data []byte
	sum  [sha256.Size]byte
}

// decode decodes im's bytes within g's limits, or takes the image the process decoded of
// them (WithDecodedImages).
func (g *group) decode(im capturedImage) (image.Image, imagecheck.Info, error) {
	return g.decoded.Decode(im.sum, im.data, g.img.limits)
}

// loadImages reads the capture's "image" blobs. A blob that is gone, too large or has a
// foreign URI is returned without data; another store error is returned.
func (g *group) loadImages(ctx context.Context, c *schemas.CaptureSubmitted) ([]capturedImage, error) {
	var out []capturedImage
	for _, b := range c.Blobs {
		if b.Name != "image" {
			continue
		}
		im := capturedImage{ref: b}
		if g.blobs != nil {
			data, err := g.blobs.Get(ctx, b.URI)
			switch {
			case errors.Is(err, blob.ErrNotFound), errors.Is(err, blob.ErrTooLarge), errors.Is(err, blob.ErrInvalidKey):
			case err != nil:
				return nil, fmt.Errorf("load image of capture %s: %w", c.CaptureID, err)
			default:
				im.data, im.sum = data, sha256.Sum256(data)
			}
		}
		out = append(out, im)
	}
	return out, nil
}

// tamperCheck analyses the capture's image (see the tamper package): skipped
// image_unavailable without one; else double_compression with the status of WithTamperStatus
// (default warn). Score and threshold are the double-compression vote fraction and
// tamper.DoubleVoteThreshold (null for a PNG); the detail names the finding.
func (g *group) tamperCheck(c *schemas.CaptureSubmitted, images []capturedImage) schemas.Check {
	check := newCheck(TamperCheckName(c.Step), schemas.CheckPass, "", "")
	check.CaptureID = ptr(c.CaptureID)
	i := slices.IndexFunc(images, func(im capturedImage) bool { return im.data != nil })
	if i < 0 {
		check.Status, check.ReasonCode = schemas.CheckSkipped, ptr(ReasonImageUnavailable)
		check.Detail = ptr("no image to analyse")
		return check
	}
	img, info, err := g.decode(images[i])
	if err != nil {
		check.Status, check.ReasonCode = schemas.CheckSkipped, ptr(ReasonImageUnavailable)
		check.Detail = ptr("the image could not be analysed")
		return check
	}
	r := tamper.AnalyzeDecoded(images[i].data, img, info)
	var findings []string
	if r.DoubleCompression.Applicable {
		check.Score, check.Threshold = ptr(r.DoubleCompression.Score), ptr(tamper.DoubleVoteThreshold)
	}
	if r.DoubleCompression.Detected {
		check.Status, check.ReasonCode = g.tamperStatus(ReasonDoubleCompression), ptr(ReasonDoubleCompression)
		findings = append(findings, fmt.Sprintf("double JPEG compression (%d of %d frequencies fit an earlier quantisation)",
			r.DoubleCompression.Votes, r.DoubleCompression.Frequencies))
	}
	if len(findings) > 0 {
		check.Detail = ptr(strings.Join(findings, "; "))
	}
	return check
}

func (g *group) tamperStatus(reason string) string {
	if s, ok := g.img.tamperStatus[reason]; ok && (s == schemas.CheckFail || s == schemas.CheckWarn) {
		return s
	}
	return schemas.CheckWarn
}

// perceptualEntries returns the capture-index entries of the perceptual hashes of the
// capture's images, for the near-duplicate steps. An image that is unavailable or does not
// decode gets none.
func (g *group) perceptualEntries(c *schemas.CaptureSubmitted, images []capturedImage) ([]stream.Output, error) {
	if g.img.distance() < 0 || !slices.Contains(g.img.steps(), c.Step) {
		return nil, nil
	}
	var outs []stream.Output
	for _, im := range images {
		if im.data == nil {
			continue
		}
		img, _, err := g.decode(im)
		if err != nil {
			continue
		}
		h := phash.Of(img).String()
		out, err := g.indexEntry(c, PerceptualKey(c.Envelope.TenantID, c.CaptureID, im.ref.Name), &h)
		if err != nil {
			return nil, err
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// nearReplays returns, for each near-duplicate-step image of st, a description of the
// earliest capture of another session of the tenant that is near-identical to it and was
// seen before it (first sighting wins; ties go to the smaller session id). The image's own
// hash comes from the index, or, when its entry has not arrived yet, from the blob.
func (g *group) nearReplays(ctx context.Context, st *schemas.SessionState) []string {
	ni, ok := g.sightings.(NearIndex)
	if !ok || g.img.distance() < 0 {
		return nil
	}
	var hits []string
	for _, c := range st.Captures {
		if !slices.Contains(g.img.steps(), c.Step) {
			continue
		}
		for _, b := range c.Blobs {
			if b.Name != "image" {
				continue
			}
			own, found := ni.Perceptual(PerceptualKey(st.Envelope.TenantID, c.CaptureID, b.Name))
			if !found || own.SessionID != st.Envelope.SessionID {
				h, ok := g.hashBlob(ctx, st.Envelope.SessionID, b)
				if !ok {
					continue
				}
				own = PerceptualSighting{SessionID: st.Envelope.SessionID, CaptureID: c.CaptureID, SeenAt: c.SubmittedAt, PHash: h.String()}
			}
			h, err := phash.Parse(own.PHash)
			if err != nil {
				continue
			}
			var best PerceptualSighting
			bestDist := -1
			ni.Near(st.Envelope.TenantID, h, g.img.distance(), func(s PerceptualSighting, d int) bool {
				earlier := s.SeenAt.Before(own.SeenAt) || (s.SeenAt.Equal(own.SeenAt) && s.SessionID < own.SessionID)
				if s.SessionID == st.Envelope.SessionID || !earlier {
					return true
				}
				if bestDist < 0 || s.SeenAt.Before(best.SeenAt) {
					best, bestDist = s, d
				}
				return true
			})
			if bestDist >= 0 {
				hits = append(hits, fmt.Sprintf("%s %s near-identical (%d of 64 bits differ) to a capture of session %s", c.Step, b.Name, bestDist, best.SessionID))
			}
		}
	}
	return hits
}

// hashBlob reads and hashes one image of a session; false when it is unavailable.
func (g *group) hashBlob(ctx context.Context, sessionID string, b schemas.BlobRef) (phash.Hash, bool) {
	if g.blobs == nil {
		return 0, false
	}
	data, err := g.blobs.Get(ctx, b.URI)
	if err != nil {
		if !errors.Is(err, blob.ErrNotFound) {
			g.log.Warn("fraud: near-duplicate search: image unavailable", "session_id", sessionID, "err", err)
		}
		return 0, false
	}
	img, _, err := g.decoded.Decode(sha256.Sum256(data), data, g.img.limits)
	if err != nil {
		return 0, false
	}
	return phash.Of(img), true
}
