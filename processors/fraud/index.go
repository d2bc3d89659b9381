package fraud

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/idstream/idstream/stream"
)

// TopicCaptureIndex is the fraud group's own compacted topic: the first sighting of each
// image hash per tenant. Key "<tenant_id>|<sha256 lowercase hex>"; value the JSON of a
// Sighting (an internal table, not part of the public contract); a tombstone when the
// session is erased. Create it compacted, with the partition count of the other topics.
const TopicCaptureIndex = "ekyc.fraud.capture-index.v1"

// IndexKey is the capture-index key of an image hash in a tenant.
func IndexKey(tenantID, sha256 string) string { return tenantID + "|" + strings.ToLower(sha256) }

// TopicSpecs returns the topics the fraud group needs besides those of schemas.Topics (for
// stream.EnsureTopics).
func TopicSpecs(partitions int32) []stream.TopicSpec {
	return []stream.TopicSpec{{Name: TopicCaptureIndex, Partitions: partitions, Compacted: true}}
}

// CaptureIndex is the capture index (TopicCaptureIndex) held in memory by a
// stream.View: every member sees every tenant's sightings, and a restarted member
// restores them from the compacted topic. Besides the SHA-256 sightings it holds the
// perceptual hashes (PerceptualKey entries) in one phash.Set per tenant, searched linearly
// by Near (see perceptual.go for the figures). Safe for concurrent use.
type CaptureIndex struct {
	view *stream.View
	near *perceptualSets
}

// NewCaptureIndex creates the index view; opts are the runtime's client options. Run it
// beside the group.
func NewCaptureIndex(opts ...stream.Option) (*CaptureIndex, error) {
	near := newPerceptualSets()
	v, err := stream.NewView(TopicCaptureIndex, append(opts, stream.WithOnUpdate(near.apply))...)
	if err != nil {
		return nil, fmt.Errorf("fraud: capture index: %w", err)
	}
	return &CaptureIndex{view: v, near: near}, nil
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
	var s Sighting
	if err := json.Unmarshal(v, &s); err != nil || s.SessionID == "" {
		return Sighting{}, false
	}
	return s, true
}

// KeysOfSession implements SightingIndex. It scans the whole index (erasures are rare).
func (x *CaptureIndex) KeysOfSession(sessionID string) []string {
	var keys []string
	needle := []byte(`"session_id":"` + sessionID + `"`)
	x.view.Range(func(key string, value []byte) bool {
		if strings.Contains(string(value), string(needle)) {
			keys = append(keys, key)
		}
		return true
	})
	return keys
}

// Len returns the number of sightings held.
func (x *CaptureIndex) Len() int { return x.view.Len() }
