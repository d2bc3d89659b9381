package fraud

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Blocklist is the in-memory blocklist, materialised from the compacted
// schemas.TopicBlocklist (keyed by entry id) by a stream.View. It keeps both kinds of
// entry: id-number entries (the keyed hash of the number, BlocklistIndex) and face entries
// (FaceBlocks). The edge's POST /v1/admin/blocklist {"session_id": ...} writes a face entry
// naming the blocked session (source_session_id) with an empty embedding: the blocked face is
// that session's selfie embedding, which the fraud group reads from the face index
// (FaceIndex.Get, whatever the session's outcome); an entry carrying an embedding is used as
// is. An entry blocks only its own tenant's sessions; a deletion (deleted=true, or a
// tombstone) removes it, but a deletion produced under another tenant than the entry's is
// ignored. Safe for concurrent use.
type Blocklist struct {
	codec stream.Codec
	view  *stream.View

	mu      sync.RWMutex
	entries map[string]schemas.BlocklistEntry // entry id → live entry of either kind
	byHash  map[string]map[string]bool        // tenant|hash → id-number entry ids
	faces   map[string][]string               // tenant → face entry ids, sorted
}

// NewBlocklist creates the blocklist view; opts are the runtime's client options (brokers,
// logger, ...). Run it beside the group.
func NewBlocklist(codec stream.Codec, opts ...stream.Option) (*Blocklist, error) {
	b := newBlocklist(codec)
	v, err := stream.NewView(schemas.TopicBlocklist, append(opts, stream.WithOnUpdate(b.Apply))...)
	if err != nil {
		return nil, fmt.Errorf("fraud: blocklist: %w", err)
	}
	b.view = v
	return b, nil
}

// newBlocklist is a Blocklist without a view, fed through Apply.
func newBlocklist(codec stream.Codec) *Blocklist {
	return &Blocklist{codec: codec, entries: map[string]schemas.BlocklistEntry{},
		byHash: map[string]map[string]bool{}, faces: map[string][]string{}}
}

// Run consumes the blocklist topic until ctx ends (see stream.View.Run).
func (b *Blocklist) Run(ctx context.Context) error { return b.view.Run(ctx) }

// WaitReady blocks until the blocklist has caught up with the topic or ctx ends (at once
// without a view).
func (b *Blocklist) WaitReady(ctx context.Context) error {
	if b.view == nil {
		return nil
	}
	return b.view.WaitReady(ctx)
}

// Ready reports whether the blocklist has caught up with the topic (for /readyz).
func (b *Blocklist) Ready() bool { return b.view == nil || b.view.Ready() }

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

// FaceEntries implements FaceBlocks.
func (b *Blocklist) FaceEntries(tenantID string) []FaceBlock {
	b.mu.RLock()
	defer b.mu.RUnlock()
	ids := b.faces[tenantID]
	out := make([]FaceBlock, 0, len(ids))
	for _, id := range ids {
		e := b.entries[id]
		out = append(out, FaceBlock{EntryID: id, SourceSessionID: sourceSession(e), Embedding: slices.Clone(e.Embedding)})
	}
	return out
}

// Len returns the number of live entries of both kinds.
func (b *Blocklist) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.entries)
}

// Apply folds one record of the topic (the view's update hook; tests feed records directly).
func (b *Blocklist) Apply(key string, value []byte) {
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
	tenantID := e.Envelope.TenantID
	switch {
	case e.Kind == "id_number" && e.ValueHash != nil && *e.ValueHash != "":
		k := tenantID + "|" + *e.ValueHash
		if b.byHash[k] == nil {
			b.byHash[k] = map[string]bool{}
		}
		b.byHash[k][e.EntryID] = true
	case e.Kind == "face" && (sourceSession(e) != "" || len(e.Embedding) > 0):
		ids := append(b.faces[tenantID], e.EntryID)
		slices.Sort(ids)
		b.faces[tenantID] = ids
	default:
		return
	}
	b.entries[e.EntryID] = e
}

func (b *Blocklist) remove(entryID string) {
	e, ok := b.entries[entryID]
	if !ok {
		return
	}
	delete(b.entries, entryID)
	tenantID := e.Envelope.TenantID
	if e.Kind == "face" {
		ids := slices.DeleteFunc(b.faces[tenantID], func(id string) bool { return id == entryID })
		if len(ids) == 0 {
			delete(b.faces, tenantID)
		} else {
			b.faces[tenantID] = ids
		}
		return
	}
	k := tenantID + "|" + *e.ValueHash
	delete(b.byHash[k], entryID)
	if len(b.byHash[k]) == 0 {
		delete(b.byHash, k)
	}
}

// sourceSession is the blocked session of a face entry ("" when it carries none).
func sourceSession(e schemas.BlocklistEntry) string {
	if e.SourceSessionID == nil {
		return ""
	}
	return strings.TrimSpace(*e.SourceSessionID)
}
