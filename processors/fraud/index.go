package fraud

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// IndexKey is the capture-index key of an image hash in a tenant.
func IndexKey(tenantID, sha256 string) string { return tenantID + "|" + strings.ToLower(sha256) }

// CaptureIndex is the capture index (schemas.TopicCaptureIndex) held in memory by a
// stream.View: every member sees every tenant's sightings, and a restarted member restores
// them from the compacted topic. Besides the SHA-256 sightings it holds the perceptual hashes
// (PerceptualKey entries) in one phash.Set per tenant, searched linearly by Near (see
// perceptual.go for the figures). Entries are Avro (schemas.CaptureSighting); entries written
// before the topic had a schema are JSON and are read too (decodeEntry). Safe for concurrent
// use.
type CaptureIndex struct {
	codec stream.Codec
	view  *stream.View
	near  *perceptualSets
}

// NewCaptureIndex creates the index view; opts are the runtime's client options. Run it
// beside the group.
func NewCaptureIndex(codec stream.Codec, opts ...stream.Option) (*CaptureIndex, error) {
	x := &CaptureIndex{codec: codec}
	x.near = newPerceptualSets(x.decodeEntry)
	v, err := stream.NewView(schemas.TopicCaptureIndex, append(opts, stream.WithOnUpdate(x.near.apply))...)
	if err != nil {
		return nil, fmt.Errorf("fraud: capture index: %w", err)
	}
	x.view = v
	return x, nil
}

// indexEntry returns the capture-index record of an image of c under key: a perceptual entry
// when phash is set, else the sighting of the image's bytes.
func (g *group) indexEntry(c *schemas.CaptureSubmitted, key string, phash *string) (stream.Output, error) {
	env := c.Envelope
	env.EventID, env.Producer, env.OccurredAt = "evt_idx_"+key, Producer, c.Envelope.OccurredAt.UTC()
	out, err := stream.Emit(g.codec, schemas.CaptureIndex, []byte(key), &schemas.CaptureSighting{
		Envelope: env, CaptureID: c.CaptureID, Step: c.Step, PHash: phash,
	})
	if err != nil {
		return stream.Output{}, fmt.Errorf("index entry of capture %s: %w", c.CaptureID, err)
	}
	return out, nil
}

// legacyEntry is the JSON of an index entry written before the topic had a schema.
type legacyEntry struct {
	SessionID string    `json:"session_id"`
	CaptureID string    `json:"capture_id"`
	Step      string    `json:"step"`
	SeenAt    time.Time `json:"seen_at"`
	PHash     string    `json:"phash"`
}

// decodeEntry decodes an index entry, Avro or legacy JSON, into its sighting and its
// perceptual hash ("" for an exact-bytes entry); false when it does not decode or names no
// session.
func (x *CaptureIndex) decodeEntry(v []byte) (PerceptualSighting, bool) {
	if len(v) > 0 && v[0] == '{' {
		var l legacyEntry
		if err := json.Unmarshal(v, &l); err != nil || l.SessionID == "" {
			return PerceptualSighting{}, false
		}
		return PerceptualSighting(l), true
	}
	var e schemas.CaptureSighting
	if err := x.codec.Decode(schemas.TopicCaptureIndex, v, &e); err != nil || e.Envelope.SessionID == "" {
		return PerceptualSighting{}, false
	}
	s := PerceptualSighting{SessionID: e.Envelope.SessionID, CaptureID: e.CaptureID, Step: e.Step, SeenAt: e.Envelope.OccurredAt}
	if e.PHash != nil {
		s.PHash = *e.PHash
	}
	return s, true
}

// Run consumes the index topic until ctx ends.
func (x *CaptureIndex) Run(ctx context.Context) error { return x.view.Run(ctx) }

// WaitReady blocks until the index has caught up with the topic or ctx ends.
func (x *CaptureIndex) WaitReady(ctx context.Context) error { return x.view.WaitReady(ctx) }

// Ready reports whether the index has caught up with the topic.
func (x *CaptureIndex) Ready() bool { return x.view.Ready() }

// First implements SightingIndex.
func (x *CaptureIndex) First(tenantID, sha256 string) (Sighting, bool) {
	v, ok := x.view.Get(IndexKey(tenantID, sha256))
	if !ok {
		return Sighting{}, false
	}
	s, ok := x.decodeEntry(v)
	if !ok {
		return Sighting{}, false
	}
	return Sighting{SessionID: s.SessionID, CaptureID: s.CaptureID, Step: s.Step, SeenAt: s.SeenAt}, true
}

// KeysOfSession implements SightingIndex. It scans the whole index (erasures are rare),
// decoding only the entries whose bytes hold the session id.
func (x *CaptureIndex) KeysOfSession(sessionID string) []string {
	var keys []string
	needle := []byte(sessionID)
	x.view.Range(func(key string, value []byte) bool {
		if bytes.Contains(value, needle) {
			if s, ok := x.decodeEntry(value); ok && s.SessionID == sessionID {
				keys = append(keys, key)
			}
		}
		return true
	})
	return keys
}

// Len returns the number of sightings held.
func (x *CaptureIndex) Len() int { return x.view.Len() }
