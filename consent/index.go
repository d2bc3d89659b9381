package consent

import (
	"context"
	"fmt"
	"sync"
)

// Index holds every consent record in memory, by tenant and tracking id, ordered by
// (recorded_at, consent_id). It is filled by a Follower from cmp.consents.v1 and by the
// Server with the records it has just written (read-your-writes); a record seen twice (by
// consent id) is kept once. The current status of a purpose is its latest record. Safe for
// concurrent use.
type Index struct {
	mu      sync.RWMutex
	byKey   map[string][]Record // indexKey(tenant, tracking id) → records, oldest first
	n       int
	intern  map[string]string
	ready   chan struct{}
	readyMu sync.Mutex
}

// maxInterned bounds the table of shared strings (purpose ids, statuses, notice versions,
// channels): values beyond it are stored as they come.
const maxInterned = 4096

// NewIndex returns an empty index that is not ready.
func NewIndex() *Index {
	return &Index{byKey: make(map[string][]Record), intern: make(map[string]string), ready: make(chan struct{})}
}

// indexKey scopes a tracking id to its tenant: tenants never see each other's records.
func indexKey(tenantID, trackingID string) string { return tenantID + "\x00" + trackingID }

func (ix *Index) internLocked(s string) string {
	if v, ok := ix.intern[s]; ok {
		return v
	}
	if len(ix.intern) < maxInterned {
		ix.intern[s] = s
	}
	return s
}

// Apply adds r under tenantID and trackingID unless a record with its consent id is
// already there, and reports whether it was added.
func (ix *Index) Apply(tenantID, trackingID string, r Record) bool {
	k := indexKey(tenantID, trackingID)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	recs := ix.byKey[k]
	for i := range recs {
		if recs[i].ConsentID == r.ConsentID {
			return false
		}
	}
	r.PurposeID = ix.internLocked(r.PurposeID)
	r.Status = ix.internLocked(r.Status)
	r.NoticeVersion = ix.internLocked(r.NoticeVersion)
	r.Channel = ix.internLocked(r.Channel)
	// Insert in order; records almost always arrive last.
	i := len(recs)
	for i > 0 && less(r, recs[i-1]) {
		i--
	}
	recs = append(recs, Record{})
	copy(recs[i+1:], recs[i:])
	recs[i] = r
	ix.byKey[k] = recs
	ix.n++
	return true
}

func less(a, b Record) bool {
	if !a.RecordedAt.Equal(b.RecordedAt) {
		return a.RecordedAt.Before(b.RecordedAt)
	}
	return a.ConsentID < b.ConsentID
}

// Records returns a copy of the records of trackingID in tenantID, oldest first (nil when
// there are none).
func (ix *Index) Records(tenantID, trackingID string) []Record {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	recs := ix.byKey[indexKey(tenantID, trackingID)]
	if len(recs) == 0 {
		return nil
	}
	return append([]Record(nil), recs...)
}

// Latest returns the latest record of purposeID for trackingID in tenantID.
func (ix *Index) Latest(tenantID, trackingID, purposeID string) (Record, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	recs := ix.byKey[indexKey(tenantID, trackingID)]
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].PurposeID == purposeID {
			return recs[i], true
		}
	}
	return Record{}, false
}

// Len returns the number of records held.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.n
}

// MarkReady declares the index caught up with its topic (the Follower calls it). Safe to
// call more than once.
func (ix *Index) MarkReady() {
	ix.readyMu.Lock()
	defer ix.readyMu.Unlock()
	select {
	case <-ix.ready:
	default:
		close(ix.ready)
	}
}

// Ready reports whether the index has caught up with the records that existed in its
// topic when it started following it: only then is "no record" a true answer.
func (ix *Index) Ready() bool {
	select {
	case <-ix.ready:
		return true
	default:
		return false
	}
}

// WaitReady blocks until Ready or ctx ends (returning ctx's error).
func (ix *Index) WaitReady(ctx context.Context) error {
	select {
	case <-ix.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("consent index: wait ready: %w", ctx.Err())
	}
}
