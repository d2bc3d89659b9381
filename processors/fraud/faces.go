package fraud

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"

	"github.com/idstream/idstream/internal/claimcheck"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/idnumber"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/schemas"
)

// Face session checks (reported with the other session checks, see SessionCheckNames).
const (
	CheckDuplicateFace      = "fraud.duplicate_face"      // 1:N against the tenant's verified faces
	CheckBlocklistFace      = "fraud.blocklist_face"      // against the tenant's blocklisted faces
	CheckPresentationAttack = "fraud.presentation_attack" // from the liveness result
)

// Reason codes of the face checks.
const (
	ReasonDuplicateFace       = "duplicate_face"             // fail: the face of a verified session under another id number
	ReasonDuplicateInFlight   = "duplicate_face_in_flight"   // warn: the face of an undecided session under another id number
	ReasonPresentationPrint   = "presentation_print"         // fail: a printed photo held to the camera
	ReasonPresentationReplay  = "presentation_replay"        // fail: a photo or video shown on a screen
	ReasonPresentationMask    = "presentation_mask"          // fail: a mask, or a spoof no 2-D signal explains
	ReasonNoSelfie            = "no_selfie"                  // skipped: the flow takes no selfie
	ReasonFaceChecksOff       = "face_checks_not_configured" // skipped: no face engine or face index
	ReasonSelfieUnavailable   = "selfie_unavailable"         // skipped: the selfie's image is gone (erased)
	ReasonSelfieUnreadable    = "selfie_unreadable"          // skipped: the selfie does not match its digest or decode
	ReasonNoFaceFound         = "no_face_found"              // skipped: no face in the selfie
	ReasonLivenessUnavailable = "liveness_not_assessed"      // skipped: liveness could not assess the selfie
)

// DefaultDuplicateFaceThreshold is the cosine similarity at or above which two selfies are
// the same face for the duplicate-face and face-blocklist checks. Measured with the default
// models on the facetest photos (TestDuplicateFaceThresholdSeparation, run with -v): the
// same person (each of two portraits against itself mirrored, rescaled 0.6–1.2×, rotated
// ±10° and re-encoded at JPEG 60–80, or printed; 8 pairs) 0.73–0.96 (median 0.96, the
// prints lowest); different people (every pair of faces inside one of the six group photos;
// 31 pairs) −0.12–0.36 (median 0.09). 0.55 sits in the middle of the gap (0.19 above the
// largest different-people similarity, 0.18 below the smallest same-person one): higher
// than the 1:1 face.DefaultMatchThreshold (0.40) because 1:N search compares a selfie with
// every verified face of the tenant, so a false match is N times likelier. On the face
// corpus (models/MODELS.md) the 1102 impostor pairs of both halves scored at most 0.357 and
// its genuine pairs of different photos 0.47–0.95, so 0.55 also holds there (one calibration
// genuine pair, 0.47, would be missed: a duplicate is then not flagged). Re-measure on real
// selfie pairs before production; change it with WithDuplicateFaceThreshold.
const DefaultDuplicateFaceThreshold = 0.55

// duplicateSearchLimit bounds the hits one duplicate search returns.
const duplicateSearchLimit = 10

// FaceStore is the face index the face checks read (FaceIndex).
type FaceStore interface {
	WaitReady(ctx context.Context) error
	// Search returns up to limit verified faces of tenantID computed by model with a cosine
	// similarity to vec of at least minSimilarity, best first, leaving out excludeSession.
	Search(tenantID, model string, vec []float32, minSimilarity float64, limit int, excludeSession string) []FaceHit
	// SearchPending is Search over the faces of sessions assessed and not yet decided.
	SearchPending(tenantID, model string, vec []float32, minSimilarity float64, limit int, excludeSession string) []FaceHit
	// Get returns the face of a session, whatever its outcome.
	Get(sessionID string) (FaceRecord, bool)
}

// FaceBlocks lists the live face entries of the blocklist (Blocklist).
type FaceBlocks interface {
	WaitReady(ctx context.Context) error
	// FaceEntries returns the live face entries of tenantID, ordered by entry id.
	FaceEntries(tenantID string) []FaceBlock
}

// FaceBlock is one live face entry of the blocklist: it blocks the selfie face of
// SourceSessionID (looked up in the face index), or Embedding when the entry carries one.
type FaceBlock struct {
	EntryID         string
	SourceSessionID string
	Embedding       []float32
}

// faceConfig is the face checks' part of the group.
type faceConfig struct {
	engine    *face.Engine
	index     FaceStore
	blocks    FaceBlocks
	model     string
	threshold float64
	limits    imagecheck.Limits
	cache     *faceCache
}

// WithFaces enables the face checks: the selfie is embedded with engine (largest face), its
// face searched in index (duplicate_face) and compared with the blocked faces of blocks
// (blocklist_face). The model version of the index entries is derived from the engine's
// detector, landmark and embedder files. Without it, or with a nil argument, the two checks
// are skipped with face_checks_not_configured (fraud.presentation_attack runs regardless).
func WithFaces(engine *face.Engine, index FaceStore, blocks FaceBlocks) Option {
	return func(g *group) {
		g.faces.engine, g.faces.index, g.faces.blocks = engine, index, blocks
	}
}

// WithDuplicateFaceThreshold sets the cosine similarity at or above which two faces are one
// (default DefaultDuplicateFaceThreshold). Values outside (0, 1] leave the default.
func WithDuplicateFaceThreshold(t float64) Option {
	return func(g *group) {
		if t > 0 && t <= 1 {
			g.faces.threshold = t
		}
	}
}

// WithFaceModelVersion overrides the model version recorded with embeddings (default:
// derived from the engine's model files). Only faces of one model version are compared.
func WithFaceModelVersion(v string) Option { return func(g *group) { g.faces.model = v } }

// initFaces completes the face configuration after the options; the only error is an
// unreadable model file.
func (g *group) initFaces() error {
	if g.faces.threshold == 0 {
		g.faces.threshold = DefaultDuplicateFaceThreshold
	}
	g.faces.limits = imagecheck.DefaultLimits()
	g.faces.cache = newFaceCache(faceCacheSize)
	if !g.faces.enabled() || g.faces.model != "" {
		return nil
	}
	m := g.faces.engine.Config()
	v, err := face.FilesVersion(m.DetectorPath, m.LandmarkPath, m.EmbedderPath)
	if err != nil {
		return fmt.Errorf("fraud: face model version: %w", err)
	}
	g.faces.model = v
	return nil
}

func (c faceConfig) enabled() bool { return c.engine != nil && c.index != nil && c.blocks != nil }

// selfie is the session's current, accepted selfie capture.
type selfie struct {
	captureID string
	ref       schemas.BlobRef
}

// currentSelfie returns the accepted selfie capture of st with an image blob.
func currentSelfie(st *schemas.SessionState) (selfie, bool) {
	i := slices.IndexFunc(st.Captures, func(c schemas.StepCapture) bool { return c.Step == stepSelfie })
	if i < 0 || st.Captures[i].Status != schemas.CaptureAccepted {
		return selfie{}, false
	}
	c := st.Captures[i]
	j := slices.IndexFunc(c.Blobs, func(b schemas.BlobRef) bool { return b.Name == imageBlob && b.URI != "" })
	if j < 0 {
		return selfie{}, false
	}
	return selfie{captureID: c.CaptureID, ref: c.Blobs[j]}, true
}

const (
	stepSelfie = "selfie"
	imageBlob  = "image"
)

func hasStep(st *schemas.SessionState, step string) bool { return slices.Contains(st.Steps, step) }

// embedSelfie loads the selfie and embeds its largest face. A reason (selfie_unavailable,
// selfie_unreadable, no_face_found) is returned instead of an embedding when there is none;
// err only for a blob store or model failure.
func (g *group) embedSelfie(ctx context.Context, s selfie) (vec []float32, reason string, err error) {
	img, err := claimcheck.Image(ctx, g.blobs, s.ref.URI, s.ref.SHA256, g.faces.limits, g.decoded)
	switch {
	case errors.Is(err, claimcheck.ErrGone):
		return nil, ReasonSelfieUnavailable, nil
	case errors.Is(err, claimcheck.ErrUnusable):
		return nil, ReasonSelfieUnreadable, nil
	case err != nil:
		return nil, "", fmt.Errorf("load selfie of capture %s: %w", s.captureID, err)
	}
	vec, reason, err = largestFaceEmbedding(g.faces.engine, img)
	if err != nil {
		return nil, "", fmt.Errorf("selfie of capture %s: %w", s.captureID, err)
	}
	return vec, reason, nil
}

// largestFaceEmbedding embeds the largest face of img (normalised), or returns a reason.
func largestFaceEmbedding(eng *face.Engine, img image.Image) ([]float32, string, error) {
	faces, err := eng.Detect(img)
	switch {
	case errors.Is(err, face.ErrBadImage):
		return nil, ReasonSelfieUnreadable, nil
	case err != nil:
		return nil, "", fmt.Errorf("detect faces: %w", err)
	case len(faces) == 0:
		return nil, ReasonNoFaceFound, nil
	}
	vec, err := eng.Embed(img, face.Largest(faces))
	if err != nil {
		return nil, "", fmt.Errorf("embed face: %w", err)
	}
	return normalized(vec), "", nil
}

// faceResult is what the face checks computed for a session.
type faceResult struct {
	duplicate, blocklist schemas.Check
	entry                *schemas.FaceIndexEntry // the index entry to write; nil when no embedding
}

// faceChecks runs fraud.duplicate_face and fraud.blocklist_face on st's selfie.
func (g *group) faceChecks(ctx context.Context, st *schemas.SessionState, id identity) (faceResult, error) {
	skip := func(reason, detail string) faceResult {
		return faceResult{
			duplicate: newCheck(CheckDuplicateFace, schemas.CheckSkipped, reason, detail),
			blocklist: newCheck(CheckBlocklistFace, schemas.CheckSkipped, reason, detail),
		}
	}
	if !hasStep(st, stepSelfie) {
		return skip(ReasonNoSelfie, "the flow takes no selfie"), nil
	}
	if !g.faces.enabled() || g.blobs == nil {
		return skip(ReasonFaceChecksOff, "no face engine or face index is configured"), nil
	}
	s, ok := currentSelfie(st)
	if !ok {
		return skip(ReasonSelfieUnavailable, "the session has no accepted selfie image"), nil
	}
	if err := g.faces.index.WaitReady(ctx); err != nil {
		return faceResult{}, fmt.Errorf("face index: %w", err)
	}
	if err := g.faces.blocks.WaitReady(ctx); err != nil {
		return faceResult{}, fmt.Errorf("face blocklist: %w", err)
	}
	key := s.captureID + "|" + strings.ToLower(s.ref.SHA256) + "|" + s.ref.URI
	e, ok := g.faces.cache.get(key)
	if !ok {
		vec, reason, err := g.embedSelfie(ctx, s)
		if err != nil {
			return faceResult{}, err
		}
		e = selfieEmbedding{vec: vec, reason: reason}
		if reason != ReasonSelfieUnavailable {
			g.faces.cache.put(key, e)
		}
	}
	if e.reason != "" {
		return skip(e.reason, "no face embedding of selfie capture "+s.captureID), nil
	}
	vec, idHash := e.vec, faceIDHash(g.hashKey, id)
	sid, tenantID := st.Envelope.SessionID, st.Envelope.TenantID
	res := faceResult{
		duplicate: g.duplicateCheck(tenantID, sid, idHash, vec),
		blocklist: g.faceBlocklistCheck(tenantID, vec),
		entry: &schemas.FaceIndexEntry{
			Envelope: schemas.Envelope{
				EventID: eventID(sid, "face-index", s.captureID, g.faces.model), SessionID: sid, TenantID: tenantID,
				OccurredAt: st.UpdatedAt, Producer: Producer,
			},
			IDNumberHash: idHash, Embedding: vec, ModelVersion: g.faces.model, CaptureID: s.captureID,
		},
	}
	for _, c := range []*schemas.Check{&res.duplicate, &res.blocklist} {
		c.ModelVersion = ptr(g.faces.model)
		c.Threshold = ptr(g.faces.threshold)
		c.CaptureID = ptr(s.captureID)
	}
	return res, nil
}

// faceIDHash is the id-number hash an index entry records ("" without an id number).
func faceIDHash(key []byte, id identity) string {
	if id.idNumber == "" {
		return ""
	}
	return idnumber.Hash(key, id.idNumber)
}

// duplicateCheck fails duplicate_face when a verified face of the tenant reaches the
// threshold under another id-number hash (or when either session has no id number: the
// same face cannot be shown to be the same identity). A hit under the same hash is the
// same person verifying again and passes. Without such a hit, a face of an undecided session
// under another id-number hash warns duplicate_face_in_flight. Score: the best similarity
// found.
func (g *group) duplicateCheck(tenantID, sessionID, idHash string, vec []float32) schemas.Check {
	hits := g.faces.index.Search(tenantID, g.faces.model, vec, g.faces.threshold, duplicateSearchLimit, sessionID)
	c := newCheck(CheckDuplicateFace, schemas.CheckPass, "", "")
	if len(hits) > 0 {
		c.Score = ptr(hits[0].Similarity)
	}
	for _, h := range hits {
		if h.IDNumberHash != idHash || idHash == "" {
			c = newCheck(CheckDuplicateFace, schemas.CheckFail, ReasonDuplicateFace,
				fmt.Sprintf("the selfie matches the face of verified session %s under another id number", h.SessionID))
			c.Score = ptr(h.Similarity)
			return c
		}
	}
	// Sessions in flight: one face under several identities at once (a batch of synthetic
	// identities) shows here before any of them is verified. A warn, not a fail: neither
	// session is known good, so the analyst (or a stricter policy) decides.
	for _, h := range g.faces.index.SearchPending(tenantID, g.faces.model, vec, g.faces.threshold, duplicateSearchLimit, sessionID) {
		if h.IDNumberHash != idHash || idHash == "" {
			c = newCheck(CheckDuplicateFace, schemas.CheckWarn, ReasonDuplicateInFlight,
				fmt.Sprintf("the selfie matches the face of undecided session %s under another id number", h.SessionID))
			c.Score = ptr(h.Similarity)
			return c
		}
	}
	return c
}

// faceBlocklistCheck fails blocklisted when the selfie reaches the threshold against a
// live face entry of the tenant: the entry's embedding, else the face index's embedding
// of its source session. An entry whose session has no face in the index cannot match (it
// is logged by id). Score: the best similarity against a blocked face.
func (g *group) faceBlocklistCheck(tenantID string, vec []float32) schemas.Check {
	best, bestEntry := -2.0, ""
	for _, b := range g.faces.blocks.FaceEntries(tenantID) {
		blocked := b.Embedding
		if len(blocked) == 0 {
			rec, ok := g.faces.index.Get(b.SourceSessionID)
			if !ok || rec.TenantID != tenantID || rec.ModelVersion != g.faces.model {
				g.log.Debug("fraud: face blocklist entry has no face of this model", "entry_id", b.EntryID)
				continue
			}
			blocked = rec.Embedding
		}
		if len(blocked) != len(vec) {
			continue
		}
		if sim := float64(dot(vec, normalized(blocked))); sim > best {
			best, bestEntry = sim, b.EntryID
		}
	}
	if best < g.faces.threshold {
		c := newCheck(CheckBlocklistFace, schemas.CheckPass, "", "")
		if bestEntry != "" {
			c.Score = ptr(best)
		}
		return c
	}
	c := newCheck(CheckBlocklistFace, schemas.CheckFail, ReasonBlocklisted, "the selfie matches the face of blocklist entry "+bestEntry)
	c.Score = ptr(best)
	return c
}
