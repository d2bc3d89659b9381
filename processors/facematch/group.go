// Package facematch is the face matching processor group. It consumes the session-state
// snapshots (schemas.TopicSessionState: the snapshot is the join of the selfie, the chip and
// the document results) and, once a session has an accepted selfie and at least one other
// face (the chip's DG2 face, the document's face crop), compares the faces pairwise with
// internal/face (largest face of each image, 5-point alignment, 512-d embedding, cosine
// similarity against a threshold) and emits a schemas.FacesMatched to
// schemas.TopicFacematch, keyed by session id, with one explained check per pair.
//
// Snapshots repeat (every event folded into a session produces one), so the group is
// idempotent: the event id is derived from the session id, the model version, the threshold
// and the faces compared (role, capture id and blob digest of each), and a snapshot whose
// st.Faces already carries that id produces nothing. Pairs the snapshot already holds for
// the same faces are carried over rather than recomputed. Face embeddings never leave the
// process: they are not in the event, and they are not logged.
package facematch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
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
const GroupName = "facematch"

// Producer is the envelope producer of every event the group emits, and the Source of its
// checks.
const Producer = "facematch"

// EventIDPrefix prefixes the digest of a comparison's inputs to form its event id.
const EventIDPrefix = "evt_face_"

// Pair names (schemas.FacePair.Pair); the check of a pair is named "face." + pair.
const (
	PairSelfieChip     = "selfie_chip"
	PairSelfieDocument = "selfie_document"
	PairDocumentChip   = "document_chip"
)

// Check names, one per pair.
const (
	CheckSelfieChip     = "face." + PairSelfieChip
	CheckSelfieDocument = "face." + PairSelfieDocument
	CheckDocumentChip   = "face." + PairDocumentChip
)

// Reason codes of a failing face check.
const (
	ReasonFaceMismatch    = "face_mismatch"    // similarity below the threshold
	ReasonNoFaceFound     = "no_face_found"    // no face detected in one of the two images
	ReasonImageUnreadable = "image_unreadable" // one image does not match its digest or does not decode
)

// Roles of the faces compared.
const (
	roleSelfie   = "selfie"
	roleDocument = "document"
	roleChip     = "chip"
)

const (
	stepSelfie    = "selfie"
	stepNFC       = "nfc"
	imageBlobName = "image"
)

// DefaultCacheSize is how many recent results the group keeps to answer repeated snapshots
// without recomputing (see WithCacheSize).
const DefaultCacheSize = 256

// Option configures the group.
type Option func(*group)

// WithThreshold sets the cosine similarity at or above which two faces match (default: the
// engine's face.Models.MatchThreshold). Values outside (-1, 1] leave the default.
func WithThreshold(t float64) Option {
	return func(g *group) {
		if t > -1 && t <= 1 {
			g.threshold = t
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

// WithCacheSize sets how many recent results (encoded events, no embeddings) the group keeps
// in memory, so that the snapshots that arrive before its own result is folded into the
// session do not recompute the same comparison (default DefaultCacheSize; 0 disables).
func WithCacheSize(n int) Option {
	return func(g *group) {
		if n >= 0 {
			g.cacheSize = n
		}
	}
}

// WithLogger sets the logger (default: discard). The group logs ids, pair names, statuses
// and error causes; never images, embeddings or personal data.
func WithLogger(l *slog.Logger) Option {
	return func(g *group) {
		if l != nil {
			g.log = l
		}
	}
}

// NewGroup declares the facematch group on engine. The model version is derived from the
// detector, landmark and embedder model files (ModelVersion) unless WithModelVersion sets it;
// reading them is the only error.
//
// Its handler, for a record of schemas.TopicSessionState:
//   - emits nothing for a tombstone, a terminal session (verified, rejected, expired,
//     cancelled), a session whose biometrics were ordered erased, a session without an
//     accepted selfie capture (with an "image" blob), or one with no other face: the chip
//     face st.Chip.FaceImage (when st.Chip is about the current nfc capture) or a document
//     face crop st.Documents[i].FaceCrop (the first, in step order, whose read is about the
//     step's current, accepted capture);
//   - emits nothing when st.Faces already carries the event id of the current faces, or when
//     an image blob is gone (blob.ErrNotFound: erased);
//   - otherwise emits one FacesMatched holding every pair of the current faces, in the order
//     selfie_chip, selfie_document, document_chip (document_chip needs both), with a check
//     per pair: "face.<pair>", pass when the similarity of the largest faces reaches the
//     threshold, else fail face_mismatch; fail no_face_found when an image has no face, fail
//     image_unreadable when its bytes do not match the recorded SHA-256 or do not decode
//     (those pairs have a check but no FacePair). Checks have Source "facematch", Score the
//     similarity, Threshold, ModelVersion, CaptureID the capture of the pair's first face.
//
// The event id is "evt_face_" + 32 hex digits of a SHA-256 over the session id, the model
// version, the threshold and each face's role, capture id and blob digest; occurred_at is the
// latest occurred_at of the results the faces come from (the selfie's quality assessment, the
// chip result, the document read), so any snapshot with the same faces yields the same bytes.
//
// The handler returns an error (retried, then dead-lettered) for a record of another topic,
// an undecodable record, a snapshot without session id, a blob store failure other than
// not-found, too large or invalid key, a model failure, or an encoding failure. It is safe
// for concurrent use.
func NewGroup(codec stream.Codec, blobs blob.Store, engine *face.Engine, opts ...Option) (stream.Group, error) {
	g := &group{
		codec: codec, blobs: blobs, engine: engine,
		threshold: engine.Config().MatchThreshold,
		limits:    imagecheck.DefaultLimits(),
		cacheSize: DefaultCacheSize,
		log:       slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(g)
	}
	if g.modelVersion == "" {
		v, err := ModelVersion(engine.Config())
		if err != nil {
			return stream.Group{}, fmt.Errorf("facematch: %w", err)
		}
		g.modelVersion = v
	}
	g.cache = newResultCache(g.cacheSize)
	input := stream.On(schemas.SessionStates, g.handle).Lazy() // snapshots with nothing new take no turn
	return stream.Group{
		Name:    GroupName,
		Inputs:  stream.Topics(input),
		Outputs: Spec().Outputs,
		Handler: stream.Handle(GroupName, codec, input),
	}, nil
}

// ModelVersion names the model files a comparison depends on, each with the first 8 hex
// digits of its SHA-256: "fr_detect.onnx@6c0256cc+fr_landmark.onnx@f10b0ba1+
// fr_feature.onnx@87aacdfe" for the default models.
func ModelVersion(m face.Models) (string, error) {
	return face.FilesVersion(m.DetectorPath, m.LandmarkPath, m.EmbedderPath)
}

type group struct {
	codec        stream.Codec
	blobs        blob.Store
	engine       *face.Engine
	threshold    float64
	limits       imagecheck.Limits
	decoded      *imagecheck.Decoded // shared with the process's other readers (WithDecodedImages)
	modelVersion string
	cacheSize    int
	cache        *resultCache
	log          *slog.Logger
}

// source is one face image of a session.
type source struct {
	role      string
	step      string // the capture step it comes from (empty for the chip when unknown)
	captureID string
	ref       schemas.BlobRef
	at        time.Time // occurred_at of the result that names it
}

// pairSpec is one comparison: the check is about a's capture.
type pairSpec struct {
	name string
	a, b *source
}

func (g *group) handle(ctx context.Context, rec *stream.Record, st *schemas.SessionState) ([]stream.Output, error) {
	if st.Envelope.SessionID == "" {
		return nil, fmt.Errorf("snapshot at offset %d has no session id", rec.Offset)
	}
	if isTerminal(st.Status) || st.BiometricErasure != nil {
		return nil, nil
	}
	srcs := sources(st)
	if srcs == nil {
		return nil, nil
	}
	id := g.eventID(st.Envelope.SessionID, srcs)
	if st.Faces != nil && st.Faces.Envelope.EventID == id {
		return nil, nil
	}
	if v, ok := g.cache.get(id); ok {
		return []stream.Output{{Topic: schemas.TopicFacematch, Key: []byte(st.Envelope.SessionID), Value: v}}, nil
	}
	if err := stream.Compute(ctx); err != nil { // faces to match: the background's turn
		return nil, err
	}
	ev, err := g.match(ctx, st, id, srcs)
	if err != nil || ev == nil {
		return nil, err
	}
	value, err := g.codec.Encode(schemas.TopicFacematch, ev)
	if err != nil {
		return nil, fmt.Errorf("encode result of session %s: %w", st.Envelope.SessionID, err)
	}
	g.cache.put(id, value)
	return []stream.Output{{Topic: schemas.TopicFacematch, Key: []byte(st.Envelope.SessionID), Value: value}}, nil
}

// sources returns the current faces of st, selfie first, or nil when there is no accepted
// selfie or no other face.
func sources(st *schemas.SessionState) []*source {
	var selfie, doc, chip *source
	current := func(step string) (schemas.StepCapture, bool) {
		i := slices.IndexFunc(st.Captures, func(c schemas.StepCapture) bool { return c.Step == step })
		if i < 0 {
			return schemas.StepCapture{}, false
		}
		return st.Captures[i], true
	}
	if c, ok := current(stepSelfie); ok && c.Status == schemas.CaptureAccepted {
		if i := slices.IndexFunc(c.Blobs, func(b schemas.BlobRef) bool { return b.Name == imageBlobName && b.URI != "" }); i >= 0 {
			at := c.UpdatedAt
			if c.Quality != nil {
				at = c.Quality.Envelope.OccurredAt
			}
			selfie = &source{role: roleSelfie, step: stepSelfie, captureID: c.CaptureID, ref: c.Blobs[i], at: at}
		}
	}
	if selfie == nil {
		return nil
	}
	if ch := st.Chip; ch != nil && ch.FaceImage != nil && ch.FaceImage.URI != "" {
		c, ok := current(stepNFC)
		if !ok || c.CaptureID == ch.CaptureID {
			chip = &source{role: roleChip, step: stepNFC, captureID: ch.CaptureID, ref: *ch.FaceImage, at: ch.Envelope.OccurredAt}
		}
	}
	for _, d := range st.Documents {
		if d.FaceCrop == nil || d.FaceCrop.URI == "" {
			continue
		}
		if c, ok := current(d.Step); ok && c.CaptureID == d.CaptureID && c.Status == schemas.CaptureAccepted {
			doc = &source{role: roleDocument, step: d.Step, captureID: d.CaptureID, ref: *d.FaceCrop, at: d.Envelope.OccurredAt}
			break
		}
	}
	if chip == nil && doc == nil {
		return nil
	}
	out := []*source{selfie}
	if doc != nil {
		out = append(out, doc)
	}
	if chip != nil {
		out = append(out, chip)
	}
	return out
}

// pairs returns the comparisons of srcs (selfie first) in reporting order.
func pairs(srcs []*source) []pairSpec {
	var selfie, doc, chip *source
	for _, s := range srcs {
		switch s.role {
		case roleSelfie:
			selfie = s
		case roleDocument:
			doc = s
		case roleChip:
			chip = s
		}
	}
	var out []pairSpec
	if selfie != nil && chip != nil {
		out = append(out, pairSpec{PairSelfieChip, selfie, chip})
	}
	if selfie != nil && doc != nil {
		out = append(out, pairSpec{PairSelfieDocument, selfie, doc})
	}
	if doc != nil && chip != nil {
		out = append(out, pairSpec{PairDocumentChip, doc, chip})
	}
	return out
}

// eventID derives the event id of comparing srcs in session sessionID.
func (g *group) eventID(sessionID string, srcs []*source) string {
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	field(sessionID)
	field(g.modelVersion)
	field(strconv.FormatFloat(g.threshold, 'g', -1, 64))
	for _, s := range srcs {
		field(s.role)
		field(s.captureID)
		digest := strings.ToLower(s.ref.SHA256)
		if digest == "" {
			digest = s.ref.URI
		}
		field(digest)
	}
	return EventIDPrefix + hex.EncodeToString(h.Sum(nil))[:32]
}

// carried returns the pairs and checks of st.Faces that can be reused for srcs: those of
// st.Faces when it compared a subset of srcs (its event id is the id of that subset).
func (g *group) carried(st *schemas.SessionState, srcs []*source) (map[string]schemas.FacePair, map[string]schemas.Check) {
	if st.Faces == nil || len(srcs) < 3 {
		return nil, nil
	}
	for _, sub := range [][]*source{{srcs[0], srcs[1]}, {srcs[0], srcs[2]}} {
		if g.eventID(st.Envelope.SessionID, sub) != st.Faces.Envelope.EventID {
			continue
		}
		ps, cs := map[string]schemas.FacePair{}, map[string]schemas.Check{}
		for _, p := range pairs(sub) {
			for _, fp := range st.Faces.Pairs {
				if fp.Pair == p.name {
					ps[p.name] = fp
				}
			}
			for _, c := range st.Faces.Checks {
				if c.Name == "face."+p.name {
					cs[p.name] = c
				}
			}
		}
		return ps, cs
	}
	return nil, nil
}

// faceResult is the outcome of finding and embedding the largest face of one image.
type faceResult struct {
	vec    []float32 // nil unless reason is empty
	reason string    // ReasonNoFaceFound, ReasonImageUnreadable or empty
}

// match compares the faces of srcs; nil when an image is gone.
func (g *group) match(ctx context.Context, st *schemas.SessionState, id string, srcs []*source) (*schemas.FacesMatched, error) {
	var at time.Time
	for _, s := range srcs {
		if s.at.After(at) {
			at = s.at
		}
	}
	if at.IsZero() {
		at = st.Envelope.OccurredAt
	}
	ev := &schemas.FacesMatched{
		Envelope: schemas.Envelope{
			EventID:    id,
			SessionID:  st.Envelope.SessionID,
			TenantID:   st.Envelope.TenantID,
			OccurredAt: at,
			Producer:   Producer,
		},
		Pairs:        []schemas.FacePair{},
		ModelVersion: g.modelVersion,
	}
	keptPairs, keptChecks := g.carried(st, srcs)
	results := map[string]faceResult{}
	embed := func(s *source) (faceResult, bool, error) {
		if r, ok := results[s.role]; ok {
			return r, true, nil
		}
		r, found, err := g.embed(ctx, s)
		if err != nil || !found {
			return r, found, err
		}
		results[s.role] = r
		return r, true, nil
	}
	for _, p := range pairs(srcs) {
		if c, ok := keptChecks[p.name]; ok {
			if fp, ok := keptPairs[p.name]; ok {
				ev.Pairs = append(ev.Pairs, fp)
			}
			ev.Checks = append(ev.Checks, c)
			continue
		}
		ra, found, err := embed(p.a)
		if err != nil || !found {
			return nil, err
		}
		rb, found, err := embed(p.b)
		if err != nil || !found {
			return nil, err
		}
		fp, check := g.compare(p, ra, rb)
		if fp != nil {
			ev.Pairs = append(ev.Pairs, *fp)
		}
		ev.Checks = append(ev.Checks, check)
		g.log.Debug("facematch: pair compared", "session_id", st.Envelope.SessionID, "pair", p.name, "status", check.Status)
	}
	return ev, nil
}

// compare builds the pair and check of p from the faces found in its two images.
func (g *group) compare(p pairSpec, ra, rb faceResult) (*schemas.FacePair, schemas.Check) {
	threshold := g.threshold
	captureID := p.a.captureID
	version := g.modelVersion
	detail := fmt.Sprintf("%s capture %s vs %s capture %s", p.a.role, p.a.captureID, p.b.role, p.b.captureID)
	check := schemas.Check{
		Name:         "face." + p.name,
		Status:       schemas.CheckFail,
		Threshold:    &threshold,
		ModelVersion: &version,
		Source:       Producer,
		CaptureID:    &captureID,
	}
	for _, x := range []struct {
		r    faceResult
		role string
	}{{ra, p.a.role}, {rb, p.b.role}} {
		if x.r.reason != "" {
			reason := x.r.reason
			check.ReasonCode = &reason
			d := detail + ": " + strings.ReplaceAll(reason, "_", " ") + " in the " + x.role + " image"
			check.Detail = &d
			return nil, check
		}
	}
	sim := face.Cosine(ra.vec, rb.vec)
	if math.IsNaN(sim) {
		sim = 0
	}
	fp := &schemas.FacePair{Pair: p.name, Similarity: sim, Threshold: threshold, Matched: sim >= threshold}
	check.Score = &sim
	check.Detail = &detail
	if fp.Matched {
		check.Status = schemas.CheckPass
	} else {
		reason := ReasonFaceMismatch
		check.ReasonCode = &reason
	}
	return fp, check
}

// embed loads the image of s and embeds its largest face. found is false when the blob is
// gone; an unusable image or one without a face is a result with a reason, not an error.
func (g *group) embed(ctx context.Context, s *source) (r faceResult, found bool, err error) {
	unreadable := faceResult{reason: ReasonImageUnreadable}
	img, err := claimcheck.Image(ctx, g.blobs, s.ref.URI, s.ref.SHA256, g.limits, g.decoded)
	switch {
	case errors.Is(err, claimcheck.ErrGone):
		return faceResult{}, false, nil
	case errors.Is(err, claimcheck.ErrUnusable):
		return unreadable, true, nil
	case err != nil:
		return faceResult{}, false, fmt.Errorf("load %s image of capture %s: %w", s.role, s.captureID, err)
	}
	faces, err := g.engine.Detect(img)
	switch {
	case errors.Is(err, face.ErrBadImage):
		return unreadable, true, nil
	case err != nil:
		return faceResult{}, false, fmt.Errorf("detect faces in %s image of capture %s: %w", s.role, s.captureID, err)
	case len(faces) == 0:
		return faceResult{reason: ReasonNoFaceFound}, true, nil
	}
	vec, err := g.engine.Embed(img, face.Largest(faces))
	if err != nil {
		return faceResult{}, false, fmt.Errorf("embed %s face of capture %s: %w", s.role, s.captureID, err)
	}
	return faceResult{vec: vec}, true, nil
}

func isTerminal(status string) bool {
	switch status {
	case schemas.StatusVerified, schemas.StatusRejected, schemas.StatusExpired, schemas.StatusCancelled:
		return true
	}
	return false
}

// resultCache keeps the most recent encoded results by event id, first in first out.
type resultCache struct {
	mu    sync.Mutex
	size  int
	order []string
	byID  map[string][]byte
}

func newResultCache(size int) *resultCache {
	return &resultCache{size: size, byID: map[string][]byte{}}
}

func (c *resultCache) get(id string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byID[id]
	return v, ok
}

func (c *resultCache) put(id string, v []byte) {
	if c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byID[id]; ok {
		return
	}
	if len(c.order) >= c.size {
		delete(c.byID, c.order[0])
		c.order = c.order[1:]
	}
	c.order = append(c.order, id)
	c.byID[id] = v
}

// Spec is the facematch group: session snapshots in, face comparisons out.
func Spec() topology.Node {
	return topology.Node{
		Name:    GroupName,
		Kind:    topology.Group,
		Inputs:  []string{schemas.TopicSessionState},
		Outputs: []string{schemas.TopicFacematch},
	}
}
