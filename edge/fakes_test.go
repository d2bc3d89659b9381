package edge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// jsonEncoder encodes events as JSON so tests can read what was produced.
type jsonEncoder struct{}

func (jsonEncoder) Encode(topic string, v any) ([]byte, error) { return json.Marshal(v) }

type fakePublisher struct {
	mu   sync.Mutex
	outs []stream.Output
	fail error
	// then, when set, sees every output produced, after it is acknowledged (a stand-in for
	// the groups downstream).
	then func(stream.Output)
}

func (p *fakePublisher) Produce(_ context.Context, outs ...stream.Output) error {
	p.mu.Lock()
	if p.fail != nil {
		p.mu.Unlock()
		return p.fail
	}
	p.outs = append(p.outs, outs...)
	then := p.then
	p.mu.Unlock()
	if then != nil {
		for _, o := range outs {
			then(o)
		}
	}
	return nil
}

func (p *fakePublisher) on(topic string) []stream.Output {
	p.mu.Lock()
	defer p.mu.Unlock()
	var r []stream.Output
	for _, o := range p.outs {
		if o.Topic == topic {
			r = append(r, o)
		}
	}
	return r
}

// fakeSessions is a map-backed Sessions that records the edge's opened sessions.
type fakeSessions struct {
	mu     sync.Mutex
	m      map[string]*schemas.SessionState
	erased map[string]bool
	panic  bool
}

func (f *fakeSessions) Erased(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.erased[id]
}

func newFakeSessions() *fakeSessions { return &fakeSessions{m: map[string]*schemas.SessionState{}} }

func (f *fakeSessions) Get(_ context.Context, id string) (*schemas.SessionState, bool, error) {
	if f.panic {
		panic("boom: internal detail")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.m[id]
	return st, ok, nil
}

// Wait polls the map every 10 ms.
func (f *fakeSessions) Wait(ctx context.Context, id string, pred func(*schemas.SessionState) bool) (*schemas.SessionState, error) {
	for {
		f.mu.Lock()
		st := f.m[id]
		f.mu.Unlock()
		if pred(st) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (f *fakeSessions) Range(fn func(*schemas.SessionState) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, st := range f.m {
		if !fn(st) {
			return
		}
	}
}

func (f *fakeSessions) Opened(st *schemas.SessionState) { f.put(st) }

func (f *fakeSessions) put(st *schemas.SessionState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[st.Envelope.SessionID] = st
}

// fakeQuality answers Wait from a map, or blocks until ctx ends.
type fakeQuality struct {
	mu      sync.Mutex
	replies map[string]*schemas.QualityAssessed // by step: the edge does not know capture ids in advance
	pub     *fakePublisher
}

func (q *fakeQuality) Wait(ctx context.Context, captureID string) (*schemas.QualityAssessed, error) {
	var step string
	for _, o := range q.pub.on(schemas.TopicCaptures) {
		var ev schemas.CaptureSubmitted
		if err := json.Unmarshal(o.Value, &ev); err == nil && ev.CaptureID == captureID {
			step = ev.Step
		}
	}
	q.mu.Lock()
	r, ok := q.replies[step]
	q.mu.Unlock()
	if ok {
		cp := *r
		cp.CaptureID = captureID
		return &cp, nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// memBlobs is a map-backed blob.Store.
type memBlobs struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemBlobs() *memBlobs { return &memBlobs{m: map[string][]byte{}} }

func (b *memBlobs) Put(_ context.Context, key string, data []byte, mt string) (blob.Object, error) {
	if err := blob.ValidateKey(key); err != nil {
		return blob.Object{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[key] = append([]byte(nil), data...)
	sum := sha256.Sum256(data)
	return blob.Object{URI: "mem://" + key, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data)), MediaType: mt}, nil
}

func (b *memBlobs) Get(_ context.Context, uri string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.m[strings.TrimPrefix(uri, "mem://")]
	if !ok {
		return nil, blob.ErrNotFound
	}
	return d, nil
}

func (b *memBlobs) Delete(_ context.Context, uri string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, strings.TrimPrefix(uri, "mem://"))
	return nil
}

func (b *memBlobs) DeletePrefix(_ context.Context, prefix string) error {
	if prefix == "" {
		return blob.ErrInvalidKey
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.m {
		if strings.HasPrefix(k, prefix) {
			delete(b.m, k)
		}
	}
	return nil
}

func (b *memBlobs) keys(prefix string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var r []string
	for k := range b.m {
		if strings.HasPrefix(k, prefix) {
			r = append(r, k)
		}
	}
	return r
}

type fakeConsent struct{ granted map[string]bool }

func (f fakeConsent) Granted(_ context.Context, tenantID, trackingID, purpose string) (bool, error) {
	return f.granted[tenantID+"|"+trackingID+"|"+purpose], nil
}

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func decodeProduced[T any](t *testing.T, o stream.Output) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(o.Value, &v); err != nil {
		t.Fatalf("decode produced %s: %v", o.Topic, err)
	}
	return v
}

var errTest = errors.New("broker exploded at 10.0.0.7:9092")
