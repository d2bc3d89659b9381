package fraud

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/idstream/idstream/processors"
	"github.com/idstream/idstream/schemas"
)

// FaceBlocklist holds the live face entries of the compacted schemas.TopicBlocklist (kind
// "face"), materialised by its own processors.View beside Blocklist (which keeps the
// id-number entries). The edge's POST /v1/admin/blocklist {"session_id": ...} writes a face
// entry naming the blocked session (source_session_id) with an empty embedding: the blocked
// face is that session's selfie embedding, which the fraud group reads from the face index
// (FaceIndex.Get, whatever the session's outcome). An entry carrying an embedding is used as
// is. A deletion (deleted=true from the entry's own tenant, or a tombstone) removes the
// entry, so it stops matching. Safe for concurrent use.
type FaceBlocklist struct {
	codec Codec
	view  *processors.View

	mu       sync.RWMutex
	entries  map[string]faceBlockEntry // entry id → live face entry
	byTenant map[string][]string       // tenant → entry ids, sorted
}

type faceBlockEntry struct {
	tenant string
	block  FaceBlock
}

// NewFaceBlocklist creates the face blocklist view; opts are the runtime's client options.
// Run it beside the group.
func NewFaceBlocklist(codec Codec, opts ...processors.Option) (*FaceBlocklist, error) {
	b := newFaceBlocklist(codec)
	v, err := processors.NewView(schemas.TopicBlocklist, append(opts, processors.WithOnUpdate(b.Apply))...)
	if err != nil {
		return nil, fmt.Errorf("fraud: face blocklist: %w", err)
	}
	b.view = v
	return b, nil
}

func newFaceBlocklist(codec Codec) *FaceBlocklist {
	return &FaceBlocklist{codec: codec, entries: map[string]faceBlockEntry{}, byTenant: map[string][]string{}}
}

// Run consumes the blocklist topic until ctx ends.
func (b *FaceBlocklist) Run(ctx context.Context) error { return b.view.Run(ctx) }

// WaitReady blocks until the view has caught up with the topic or ctx ends.
func (b *FaceBlocklist) WaitReady(ctx context.Context) error {
	if b.view == nil {
		return nil
	}
	return b.view.WaitReady(ctx)
}

// Ready reports whether the view has caught up with the topic.
func (b *FaceBlocklist) Ready() bool { return b.view == nil || b.view.Ready() }

// FaceEntries implements FaceBlocks.
func (b *FaceBlocklist) FaceEntries(tenantID string) []FaceBlock {
	b.mu.RLock()
	defer b.mu.RUnlock()
	ids := b.byTenant[tenantID]
	out := make([]FaceBlock, 0, len(ids))
	for _, id := range ids {
		out = append(out, b.entries[id].block)
	}
	return out
}

// Len returns the number of live face entries.
func (b *FaceBlocklist) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.entries)
}

// Apply folds one record of the blocklist topic (the view's update hook; exported for
// tests that feed records directly).
func (b *FaceBlocklist) Apply(key string, value []byte) {
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
		if exists && cur.tenant == e.Envelope.TenantID {
			b.remove(e.EntryID)
		}
		return
	}
	if exists {
		b.remove(e.EntryID)
	}
	src := ""
	if e.SourceSessionID != nil {
		src = strings.TrimSpace(*e.SourceSessionID)
	}
	if e.Kind != "face" || (src == "" && len(e.Embedding) == 0) {
		return
	}
	b.entries[e.EntryID] = faceBlockEntry{
		tenant: e.Envelope.TenantID,
		block:  FaceBlock{EntryID: e.EntryID, SourceSessionID: src, Embedding: slices.Clone(e.Embedding)},
	}
	ids := append(b.byTenant[e.Envelope.TenantID], e.EntryID)
	slices.Sort(ids)
	b.byTenant[e.Envelope.TenantID] = ids
}

func (b *FaceBlocklist) remove(entryID string) {
	e, ok := b.entries[entryID]
	if !ok {
		return
	}
	delete(b.entries, entryID)
	ids := slices.DeleteFunc(b.byTenant[e.tenant], func(id string) bool { return id == entryID })
	if len(ids) == 0 {
		delete(b.byTenant, e.tenant)
	} else {
		b.byTenant[e.tenant] = ids
	}
}
