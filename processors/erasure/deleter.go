package erasure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// DeleterGroupName is the consumer group id of DeleterGroup and the producer name of its
// records.
const DeleterGroupName = "erasure-blobs"

// DeleterOption configures DeleterGroup.
type DeleterOption func(*deleter)

// WithClock sets the clock of erased_at (default time.Now).
func WithClock(now func() time.Time) DeleterOption {
	return func(d *deleter) {
		if now != nil {
			d.now = now
		}
	}
}

// DeletedEventID returns the event id of the BiometricsErased that records the deletion
// of uris (in any order) for sessionID: the same set gives the same id.
func DeletedEventID(sessionID string, uris []string) string {
	sorted := slices.Sorted(slices.Values(uris))
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return "evt_bioerased_" + sessionID + "_" + hex.EncodeToString(sum[:8])
}

// DeleterGroup declares the stateless group that deletes queued biometric blobs. It
// consumes ekyc.session-state.v1; for a snapshot whose BiometricErasure has pending blobs,
// or is not yet marked done (erased_at null), it deletes every pending blob from store
// (an absent blob counts as deleted) and then emits one SessionEvent with
// BiometricsErased (the consent id, the URIs deleted, erased_at from the clock) to
// ekyc.sessions.v1, keyed by the session id, event id DeletedEventID. Other snapshots and
// tombstones produce nothing. A blob that cannot be deleted (store error, or a URI the
// store does not serve) is an error: the record is retried, then dead-lettered, and the
// erasure stays pending in the snapshot.
func DeleterGroup(codec stream.Codec, store blob.Store, opts ...DeleterOption) stream.Group {
	d := &deleter{codec: codec, store: store, now: time.Now}
	for _, o := range opts {
		if o != nil {
			o(d)
		}
	}
	input := stream.On(schemas.SessionStates, d.handle)
	return stream.Group{
		Name:    DeleterGroupName,
		Inputs:  stream.Topics(input),
		Outputs: DeleterSpec().Outputs,
		Handler: stream.Handle(DeleterGroupName, codec, input),
	}
}

type deleter struct {
	codec stream.Codec
	store blob.Store
	now   func() time.Time
}

func (d *deleter) handle(ctx context.Context, rec *stream.Record, st *schemas.SessionState) ([]stream.Output, error) {
	e := st.BiometricErasure
	if e == nil || (len(e.Pending) == 0 && e.ErasedAt != nil) {
		return nil, nil
	}
	sessionID := string(rec.Key)
	uris := make([]string, 0, len(e.Pending))
	for _, ref := range e.Pending {
		if err := d.store.Delete(ctx, ref.URI); err != nil {
			// The URI is not logged: it names the tenant and session only, but errors travel far.
			return nil, fmt.Errorf("delete a %s blob of a session: %w", ref.Name, err)
		}
		uris = append(uris, ref.URI)
	}
	slices.Sort(uris)
	at := d.now().UTC().Truncate(time.Millisecond)
	ev := schemas.SessionEvent{
		Envelope: schemas.Envelope{
			EventID: DeletedEventID(sessionID, uris), SessionID: sessionID, TenantID: st.Envelope.TenantID,
			OccurredAt: at, Producer: DeleterGroupName,
		},
		BiometricsErased: &schemas.BiometricsErased{ConsentID: e.ConsentID, BlobsDeleted: uris, ErasedAt: at},
	}
	out, err := stream.Emit(d.codec, schemas.Sessions, rec.Key, &ev)
	if err != nil {
		return nil, err
	}
	return []stream.Output{out}, nil
}

// DeleterSpec is the erasure blobs group: snapshots with blobs to erase in, the erasure done
// out.
func DeleterSpec() topology.Node {
	return topology.Node{
		Name:    DeleterGroupName,
		Kind:    topology.Group,
		Inputs:  []string{schemas.TopicSessionState},
		Outputs: []string{schemas.TopicSessions},
	}
}
