package fraud

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/idstream/idstream/processors"
	"github.com/idstream/idstream/schemas"
)

// TopicCaptureIndex is the fraud group's own compacted topic: the first sighting of each
// image hash per tenant. Key "<tenant_id>|<sha256 lowercase hex>"; value the JSON of a
// Sighting (an internal table, not part of the public contract); a tombstone when the
// session is erased. Create it compacted, with the partition count of the other topics.
const TopicCaptureIndex = "ekyc.fraud.capture-index.v1"

// IndexKey is the capture-index key of an image hash in a tenant.
func IndexKey(tenantID, sha256 string) string { return tenantID + "|" + strings.ToLower(sha256) }

// TopicSpecs returns the topics the fraud group needs besides those of schemas.Topics (for
// processors.EnsureTopics).
func TopicSpecs(partitions int32) []processors.TopicSpec {
	return []processors.TopicSpec{{Name: TopicCaptureIndex, Partitions: partitions, Compacted: true}}
}

// Blocklist is the in-memory blocklist of id-number hashes, materialised from the
// compacted schemas.TopicBlocklist (keyed by entry id) by a processors.View. An entry blocks
// only its own tenant's sessions; a deletion (deleted=true, or a tombstone) removes it, but
// a deletion produced under another tenant than the entry's is ignored. Face entries are
// kept out (the face checks will read them). Safe for concurrent use.
type Blocklist struct {
	codec Codec
	view  *processors.View

	mu      sync.RWMutex
	entries map[string]schemas.BlocklistEntry // entry id → live id-number entry
	byHash  map[string]map[string]bool        // tenant|hash → entry ids
}

// NewBlocklist creates the blocklist view; opts are the runtime's client options (brokers,
// logger, ...). Run it beside the group.
func NewBlocklist(codec Codec, opts ...processors.Option) (*Blocklist, error) {
	b := &Blocklist{codec: codec, entries: map[string]schemas.BlocklistEntry{}, byHash: map[string]map[string]bool{}}
	v, err := processors.NewView(schemas.TopicBlocklist, append(opts, processors.WithOnUpdate(b.apply))...)
	if err != nil {
		return nil, fmt.Errorf("fraud: blocklist: %w", err)
	}
	b.view = v
	return b, nil
}

// Run consumes the blocklist topic until ctx ends (see processors.View.Run).
func (b *Blocklist) Run(ctx context.Context) error { return b.view.Run(ctx) }

// WaitReady blocks until the blocklist has caught up with the topic or ctx ends.
func (b *Blocklist) WaitReady(ctx context.Context) error { return b.view.WaitReady(ctx) }

// Ready reports whether the blocklist has caught up with the topic (for /readyz).
func (b *Blocklist) Ready() bool { return b.view.Ready() }

// Lookup implements BlocklistIndex.
func (b *Blocklist) Lookup(tenantID, valueHash string) (string, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	ids := b.byHash[tenantID+"|"+valueHash]
	best := ""
	for id := range ids {
		if best == "" || id < best {
			best = id
		}
	}
	return best, best != ""
}

// Len returns the number of live id-number entries.
func (b *Blocklist) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.entries)
}

// apply folds one record of the topic (the View's update hook).
func (b *Blocklist) apply(key string, value []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if value == nil {
		b.remove(key)
		return
	}
	var e schemas.BlocklistEntry
	if err := b.codec.Decode(schemas.TopicBlocklist, value, &e); err != nil {
		return // not an entry this version understands; the edge is the only writer
	}
	if e.EntryID == "" {
		e.EntryID = key
	}
	cur, exists := b.entries[e.EntryID]
	if e.Deleted {
		if exists && cur.Envelope.TenantID == e.Envelope.TenantID {
			b.remove(e.EntryID)
		}
		return
	}
	if exists {
		b.remove(e.EntryID)
	}
	if e.Kind != "id_number" || e.ValueHash == nil || *e.ValueHash == "" {
		return
	}
	b.entries[e.EntryID] = e
	k := e.Envelope.TenantID + "|" + *e.ValueHash
	if b.byHash[k] == nil {
		b.byHash[k] = map[string]bool{}
	}
	b.byHash[k][e.EntryID] = true
}

func (b *Blocklist) remove(entryID string) {
	e, ok := b.entries[entryID]
	if !ok {
		return
	}
	delete(b.entries, entryID)
	k := e.Envelope.TenantID + "|" + *e.ValueHash
	delete(b.byHash[k], entryID)
	if len(b.byHash[k]) == 0 {
		delete(b.byHash, k)
	}
}

// CaptureIndex is the capture index (TopicCaptureIndex) held in memory by a
// processors.View: every member sees every tenant's sightings, and a restarted member
// restores them from the compacted topic. Besides the SHA-256 sightings it holds the
// perceptual hashes (PerceptualKey entries) in one phash.Set per tenant, searched linearly
// by Near (see perceptual.go for the figures). Safe for concurrent use.
type CaptureIndex struct {
	view *processors.View
	near *perceptualSets
}

// NewCaptureIndex creates the index view; opts are the runtime's client options. Run it
// beside the group.
func NewCaptureIndex(opts ...processors.Option) (*CaptureIndex, error) {
	near := newPerceptualSets()
	v, err := processors.NewView(TopicCaptureIndex, append(opts, processors.WithOnUpdate(near.apply))...)
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
