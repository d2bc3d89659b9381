package fraud

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// faceIndexUpdates keeps a session's face-index entry in step with its snapshot:
//   - a snapshot carrying a BiometricErasure, or an expired or cancelled one, tombstones the
//     entry (when the index holds one); so does a decided session with data_retention
//     "integrator": the service keeps none of its biometric data once it is decided, so
//     such a session is not searched by later sessions' duplicate-face checks, and a face
//     blocklist entry naming it after its decision carries no face;
//   - a decided snapshot writes the entry again with the decision's outcome (verified
//     entries are the ones duplicate search reads), from the index's copy, or by embedding
//     the selfie again when the index does not hold it yet but the face checks embedded it.
//
// It emits nothing when the face checks are off or nothing changes.
func (g *group) faceIndexUpdates(ctx context.Context, st *schemas.SessionState) ([]stream.Output, error) {
	if !g.faces.enabled() {
		return nil, nil
	}
	sid := st.Envelope.SessionID
	erased := st.BiometricErasure != nil || st.Status == schemas.StatusExpired || st.Status == schemas.StatusCancelled ||
		(st.Decision != nil && st.DataRetention == RetentionIntegrator)
	if !erased && st.Decision == nil {
		return nil, nil
	}
	if err := g.faces.index.WaitReady(ctx); err != nil {
		return nil, fmt.Errorf("face index: %w", err)
	}
	rec, held := g.faces.index.Get(sid)
	if erased {
		if !held {
			return nil, nil
		}
		return []stream.Output{{Topic: schemas.TopicFaceIndex, Key: []byte(sid)}}, nil
	}
	outcome := st.Decision.Outcome
	if held && rec.Outcome == outcome {
		return nil, nil
	}
	entry := &schemas.FaceIndexEntry{
		IDNumberHash: rec.IDNumberHash, Embedding: rec.Embedding, ModelVersion: rec.ModelVersion, CaptureID: rec.CaptureID,
	}
	if !held {
		if !embedded(st) {
			return nil, nil
		}
		s, ok := currentSelfie(st)
		if !ok {
			return nil, nil
		}
		if err := stream.Compute(ctx); err != nil { // a selfie to embed: the background's turn
			return nil, err
		}
		vec, reason, err := g.embedSelfie(ctx, s)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			g.log.Warn("fraud: decided session's selfie not indexed", "session_id", sid, "reason", reason)
			return nil, nil
		}
		entry.Embedding, entry.ModelVersion, entry.CaptureID = vec, g.faces.model, s.captureID
		entry.IDNumberHash = faceIDHash(g.hashKey, extractIdentity(st))
	}
	entry.Outcome = outcome
	entry.Envelope = schemas.Envelope{
		EventID:   eventID(sid, "face-index", entry.CaptureID, entry.ModelVersion, outcome),
		SessionID: sid, TenantID: st.Envelope.TenantID, OccurredAt: st.Decision.DecidedAt, Producer: Producer,
	}
	out, err := g.faceIndexOutput(entry)
	if err != nil {
		return nil, err
	}
	return []stream.Output{out}, nil
}

// RetentionIntegrator is the data_retention of a session whose integrator keeps the data:
// the service deletes its blobs once decided and keeps no raw PII or biometric template.
const RetentionIntegrator = "integrator"

// embedded reports whether the face checks of st embedded its selfie (they then wrote an
// index entry).
func embedded(st *schemas.SessionState) bool {
	return slices.ContainsFunc(st.Checks, func(c schemas.Check) bool {
		return c.Name == CheckDuplicateFace && c.Source == Producer && (c.Status == schemas.CheckPass || c.Status == schemas.CheckFail)
	})
}

// faceIndexOutput encodes an index entry, keyed by its session id.
func (g *group) faceIndexOutput(e *schemas.FaceIndexEntry) (stream.Output, error) {
	v, err := g.codec.Encode(schemas.TopicFaceIndex, e)
	if err != nil {
		return stream.Output{}, fmt.Errorf("encode face index entry of session %s: %w", e.Envelope.SessionID, err)
	}
	return stream.Output{Topic: schemas.TopicFaceIndex, Key: []byte(e.Envelope.SessionID), Value: v}, nil
}

// faceCache remembers the selfie embeddings of the last few sessions by capture and digest,
// so that the snapshots repeating before the group's own result is folded into the session
// do not run the face models again (the searches do run again). In memory only.
type faceCache struct {
	mu    sync.Mutex
	size  int
	order []string
	m     map[string]selfieEmbedding
}

// selfieEmbedding is the outcome of embedSelfie: a vector, or the reason there is none.
type selfieEmbedding struct {
	vec    []float32
	reason string
}

const faceCacheSize = 64

func newFaceCache(size int) *faceCache {
	return &faceCache{size: size, m: map[string]selfieEmbedding{}}
}

func (c *faceCache) get(key string) (selfieEmbedding, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[key]
	return r, ok
}

func (c *faceCache) put(key string, r selfieEmbedding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok {
		c.order = append(c.order, key)
	}
	c.m[key] = r
	for len(c.order) > c.size {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}
