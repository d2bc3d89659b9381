package erasure_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/processors/erasure"
	"github.com/idstream/idstream/processors/session"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// env is one embedded broker with every topic of the contract, a real blob.FS, the codec
// and views of the session states and of the erasure table.
type env struct {
	t       *testing.T
	brokers []string
	codec   *schemas.Codec
	blobs   *blob.FS
	prod    *stream.Producer
	states  *stream.View
	table   *stream.View
	now     time.Time
}

// partitions is 1 so that a sentinel flowing through the groups after a replay proves
// every earlier record has been handled (see TestWithdrawalErasesBiometrics); keying and
// co-partitioning are checked by group_test.go.
const partitions = 1

func newEnv(t *testing.T) *env {
	t.Helper()
	b, err := stream.StartEmbedded(stream.WithDataDir(t.TempDir()), stream.WithPartitionsDefault(partitions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	var specs []stream.TopicSpec
	for _, ti := range schemas.Topics() {
		specs = append(specs, stream.TopicSpec{Name: ti.Name, Partitions: partitions, Compacted: ti.Compacted})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := stream.EnsureTopics(ctx, b.Addrs(), specs); err != nil {
		t.Fatal(err)
	}
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	fs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fs.Close() })
	e := &env{t: t, brokers: b.Addrs(), codec: codec, blobs: fs, now: time.Now().UTC().Truncate(time.Millisecond)}
	if e.prod, err = stream.NewProducer(e.opts()...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.prod.Close)
	e.states = e.view(schemas.TopicSessionState, nil)
	e.table = e.view(schemas.TopicErasureState, nil)
	return e
}

func (e *env) opts() []stream.Option {
	return []stream.Option{
		stream.WithBrokers(e.brokers),
		stream.WithRetry(3, time.Millisecond),
		stream.WithKgoOpts(kgo.FetchMaxWait(250 * time.Millisecond)),
	}
}

// view starts a view of topic (onUpdate sees every record) and waits until it caught up.
func (e *env) view(topic string, onUpdate func(key string, value []byte)) *stream.View {
	e.t.Helper()
	opts := e.opts()
	if onUpdate != nil {
		opts = append(opts, stream.WithOnUpdate(onUpdate))
	}
	v, err := stream.NewView(topic, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.spawn(v.Run)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := v.WaitReady(ctx); err != nil {
		e.t.Fatal(err)
	}
	return v
}

// spawn runs fn until the test ends; it returns a function that stops it and waits.
func (e *env) spawn(fn func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := fn(ctx); err != nil && !errors.Is(err, context.Canceled) {
			e.t.Errorf("run: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	e.t.Cleanup(stop)
	return stop
}

func (e *env) runStateful(g stream.StatefulGroup) func() {
	e.t.Helper()
	r, err := stream.NewStatefulRunner(g, e.opts()...)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.spawn(r.Run)
}

func (e *env) runStateless(g stream.Group) func() {
	e.t.Helper()
	r, err := stream.NewRunner(g, e.opts()...)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.spawn(r.Run)
}

// runErasureGroups runs the three groups of the package, with suffix appended to their
// group names (a new suffix starts them again from the start of their inputs).
func (e *env) runErasureGroups(suffix string) (stop func()) {
	ig := erasure.IndexGroup(e.codec)
	ig.Name += suffix
	g := erasure.Group(e.codec)
	g.Name += suffix
	dg := erasure.DeleterGroup(e.codec, e.blobs)
	dg.Name += suffix
	stops := []func(){e.runStateless(ig), e.runStateful(g), e.runStateless(dg)}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

func (e *env) produce(topic, key string, v any) {
	e.t.Helper()
	value, err := e.codec.Encode(topic, v)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.prod.Produce(context.Background(), stream.Output{Topic: topic, Key: []byte(key), Value: value}); err != nil {
		e.t.Fatal(err)
	}
}

func envelope(tenant, sid, id string, at time.Time) schemas.Envelope {
	return schemas.Envelope{EventID: id, SessionID: sid, TenantID: tenant, OccurredAt: at, Producer: "test"}
}

// sess describes a test session and the blobs it stores.
type sess struct {
	tenant, id, trk string
	openedAt        time.Time
	face            []string // URIs of biometric blobs
	other           []string // URIs of other blobs
}

func (e *env) put(s *sess, capture, name string, face bool) schemas.BlobRef {
	e.t.Helper()
	obj, err := e.blobs.Put(context.Background(), s.tenant+"/"+s.id+"/"+capture+"/"+name, []byte("bytes of "+name), "application/octet-stream")
	if err != nil {
		e.t.Fatal(err)
	}
	if face {
		s.face = append(s.face, obj.URI)
	} else {
		s.other = append(s.other, obj.URI)
	}
	return schemas.BlobRef{Name: name, URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}
}

// open produces a chip_id_card session with a selfie (image, and video when full), and
// when full an nfc read, a document front with a face crop and a chip result with the
// chip face, storing every blob as the edge and the processors do.
func (e *env) open(tenant, id, trk string, openedAt time.Time, full bool) *sess {
	e.t.Helper()
	s := &sess{tenant: tenant, id: id, trk: trk, openedAt: openedAt}
	at := openedAt
	e.produce(schemas.TopicSessions, id, &schemas.SessionEvent{Envelope: envelope(tenant, id, "evt_open_"+id, at), Opened: &schemas.SessionOpened{
		Flow: "chip_id_card", Steps: []string{"document_front", "document_back", "nfc", "selfie"}, TrackingID: &trk,
		Locale: "en", DataRetention: "service", CreatedAt: openedAt, ExpiresAt: openedAt.Add(24 * time.Hour), Nonce: make([]byte, 8),
	}})
	selfie := []schemas.BlobRef{e.put(s, "cap_s", "image", true)}
	if full {
		selfie = append(selfie, e.put(s, "cap_s", "video", true))
	}
	e.produce(schemas.TopicCaptures, id, &schemas.CaptureSubmitted{Envelope: envelope(tenant, id, "evt_cs_"+id, at.Add(time.Second)),
		CaptureID: "cap_s", Step: "selfie", Blobs: selfie})
	e.produce(schemas.TopicChip, id, &schemas.ChipVerified{Envelope: envelope(tenant, id, "evt_chip_"+id, at.Add(3*time.Second)),
		CaptureID: "cap_n", FaceImage: ptr(e.put(s, "cap_n", "chip_face.jpg", true))})
	if full {
		nfc := []schemas.BlobRef{e.put(s, "cap_n", "sod", false), e.put(s, "cap_n", "dg1", false), e.put(s, "cap_n", "dg2", true)}
		e.produce(schemas.TopicCaptures, id, &schemas.CaptureSubmitted{Envelope: envelope(tenant, id, "evt_cn_"+id, at.Add(2*time.Second)),
			CaptureID: "cap_n", Step: "nfc", Blobs: nfc})
		e.produce(schemas.TopicCaptures, id, &schemas.CaptureSubmitted{Envelope: envelope(tenant, id, "evt_cf_"+id, at.Add(2*time.Second)),
			CaptureID: "cap_f", Step: "document_front", Blobs: []schemas.BlobRef{e.put(s, "cap_f", "image", false)}})
		e.produce(schemas.TopicDocuments, id, &schemas.DocumentRead{Envelope: envelope(tenant, id, "evt_doc_"+id, at.Add(4*time.Second)),
			CaptureID: "cap_f", Step: "document_front", FaceCrop: ptr(e.put(s, "cap_f", "face", true))})
	}
	return s
}

func (e *env) withdraw(tenant, trk, consentID string, at time.Time) {
	e.produce(schemas.TopicErasures, trk, &schemas.BiometricErasureRequested{
		Envelope:   schemas.Envelope{EventID: "evt_erasure_" + consentID, TenantID: tenant, OccurredAt: at, Producer: "consent"},
		TrackingID: trk, ConsentID: consentID, Categories: schemas.BiometricCategories(), RequestedAt: at,
	})
}

func (e *env) state(id string) *schemas.SessionState {
	e.t.Helper()
	raw, ok := e.states.Get(id)
	if !ok {
		e.t.Fatalf("no state for %s", id)
	}
	st := new(schemas.SessionState)
	if err := e.codec.Decode(schemas.TopicSessionState, raw, st); err != nil {
		e.t.Fatal(err)
	}
	return st
}

// waitState waits until the state of id satisfies pred.
func (e *env) waitState(id, what string, pred func(*schemas.SessionState) bool) *schemas.SessionState {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw, _, err := e.states.Wait(ctx, id, func(v []byte, ok bool) bool {
		st := new(schemas.SessionState)
		return ok && e.codec.Decode(schemas.TopicSessionState, v, st) == nil && pred(st)
	})
	if err != nil {
		e.t.Fatalf("%s: %s: %v", id, what, err)
	}
	st := new(schemas.SessionState)
	_ = e.codec.Decode(schemas.TopicSessionState, raw, st)
	return st
}

// waitTracked waits until the erasure table row of trk satisfies pred.
func (e *env) waitTracked(trk, what string, pred func(*schemas.TrackingErasureState) bool) *schemas.TrackingErasureState {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw, _, err := e.table.Wait(ctx, trk, func(v []byte, ok bool) bool {
		st := new(schemas.TrackingErasureState)
		return ok && e.codec.Decode(schemas.TopicErasureState, v, st) == nil && pred(st)
	})
	if err != nil {
		e.t.Fatalf("%s: %s: %v", trk, what, err)
	}
	st := new(schemas.TrackingErasureState)
	_ = e.codec.Decode(schemas.TopicErasureState, raw, st)
	return st
}

func tracked(st *schemas.TrackingErasureState, sid string) (schemas.TrackedSession, bool) {
	for _, s := range st.Sessions {
		if s.SessionID == sid {
			return s, true
		}
	}
	return schemas.TrackedSession{}, false
}

func erased(st *schemas.SessionState) bool {
	return st.BiometricErasure != nil && st.BiometricErasure.ErasedAt != nil
}

// assertBlobs checks that present exist and absent are gone from the store.
func (e *env) assertBlobs(label string, present, absent []string) {
	e.t.Helper()
	for _, uri := range present {
		if _, err := e.blobs.Get(context.Background(), uri); err != nil {
			e.t.Errorf("%s: %s: %v, want it kept", label, uri, err)
		}
	}
	for _, uri := range absent {
		if _, err := e.blobs.Get(context.Background(), uri); !errors.Is(err, blob.ErrNotFound) {
			e.t.Errorf("%s: %s: %v, want it deleted", label, uri, err)
		}
	}
}

// orders counts the EraseBiometrics orders on ekyc.sessions.v1 per session.
func (e *env) orders() map[string]int {
	e.t.Helper()
	var mu sync.Mutex
	n := map[string]int{}
	e.view(schemas.TopicSessions, func(key string, value []byte) {
		var ev schemas.SessionEvent
		if value != nil && e.codec.Decode(schemas.TopicSessions, value, &ev) == nil && ev.EraseBiometrics != nil {
			mu.Lock()
			n[key]++
			mu.Unlock()
		}
	})
	mu.Lock()
	defer mu.Unlock()
	return n
}

func ptr[T any](v T) *T { return &v }

// TestWithdrawalErasesBiometrics: the withdrawal for tracking id T of tenant ten_1 erases
// the biometric blobs of T's two sessions opened before it, and records the erasure in
// their states; a session of another tracking id, one of T in another tenant and one of T
// opened after the withdrawal keep their blobs; running the groups again from the start
// changes nothing.
func TestWithdrawalErasesBiometrics(t *testing.T) {
	e := newEnv(t)
	e.runStateful(session.NewGroup(e.codec))
	stopErasure := e.runErasureGroups("")

	before := e.now.Add(-10 * time.Minute)
	a := e.open("ten_1", "ses_a", "trk_T", before, true)
	b := e.open("ten_1", "ses_b", "trk_T", before.Add(time.Minute), false)
	c := e.open("ten_1", "ses_c", "trk_U", before, true)
	d := e.open("ten_2", "ses_d", "trk_T", before, false)
	for _, s := range []*sess{a, b, c, d} {
		e.waitState(s.id, "chip folded", func(st *schemas.SessionState) bool { return st.Chip != nil })
	}
	e.waitState(a.id, "document folded", func(st *schemas.SessionState) bool { return len(st.Documents) == 1 && len(st.Captures) == 3 })

	e.withdraw("ten_1", "trk_T", "con_w", e.now)
	for _, s := range []*sess{a, b} {
		st := e.waitState(s.id, "biometrics erased", erased)
		be := st.BiometricErasure
		if be.ConsentID != "con_w" || be.TrackingID != "trk_T" || len(be.Pending) != 0 || len(be.BlobsDeleted) != len(s.face) ||
			st.Status != schemas.StatusCancelled || st.Chip.FaceImage != nil {
			t.Errorf("%s: state %s, erasure %+v", s.id, st.Status, be)
		}
		e.assertBlobs(s.id, s.other, s.face)
	}
	// The table shows every session of T known and the request applied: d (other tenant)
	// was not ordered erased, and orders are written with the table, so none exists.
	row := e.waitTracked("trk_T", "request and sessions", func(st *schemas.TrackingErasureState) bool {
		_, ok := tracked(st, d.id)
		return ok && len(st.Erasures) == 1
	})
	for id, want := range map[string]bool{a.id: true, b.id: true, d.id: false} {
		if s, _ := tracked(row, id); (s.ErasureConsentID != nil) != want {
			t.Errorf("table: %s erased %v, want %v", id, s.ErasureConsentID != nil, want)
		}
	}
	e.waitTracked("trk_U", "session c", func(st *schemas.TrackingErasureState) bool { _, ok := tracked(st, c.id); return ok })
	for _, s := range []*sess{c, d} {
		if st := e.state(s.id); st.BiometricErasure != nil || st.Chip.FaceImage == nil {
			t.Errorf("%s: touched: %+v", s.id, st.BiometricErasure)
		}
		e.assertBlobs(s.id, append(s.face, s.other...), nil)
	}

	// A session of T opened after the withdrawal keeps its blobs.
	late := e.open("ten_1", "ses_late", "trk_T", e.now.Add(time.Second), false)
	e.waitTracked("trk_T", "late session", func(st *schemas.TrackingErasureState) bool {
		s, ok := tracked(st, late.id)
		if ok && s.ErasureConsentID != nil {
			t.Errorf("late session ordered erased")
		}
		return ok
	})
	e.waitState(late.id, "chip folded", func(st *schemas.SessionState) bool { return st.Chip != nil })
	if st := e.state(late.id); st.BiometricErasure != nil {
		t.Errorf("late session erased: %+v", st.BiometricErasure)
	}
	e.assertBlobs(late.id, late.face, nil)

	// Replay: the erasure groups run again from the start of their inputs.
	stopErasure()
	all := []*sess{a, b, c, d, late}
	versions := map[string]int64{}
	for _, s := range all {
		versions[s.id] = e.state(s.id).Version
	}
	e.runErasureGroups("-replay")
	// A sentinel withdrawal behind everything (one partition): once it is recorded, every
	// replayed record has been handled and its outputs folded.
	sentinel := e.open("ten_9", "ses_sentinel", "trk_sentinel", e.now, false)
	e.withdraw("ten_9", "trk_sentinel", "con_sentinel", e.now.Add(time.Second))
	e.waitState(sentinel.id, "sentinel erased", erased)
	for _, s := range all {
		if v := e.state(s.id).Version; v != versions[s.id] {
			t.Errorf("%s: version %d after the replay, was %d", s.id, v, versions[s.id])
		}
	}
	if got := e.orders(); len(got) != 3 || got[a.id] != 1 || got[b.id] != 1 || got[sentinel.id] != 1 {
		t.Errorf("erase orders per session: %v, want one each for %s, %s and the sentinel", got, a.id, b.id)
	}
	e.assertBlobs("after replay", append(append(append(c.other, c.face...), d.face...), late.face...), append(a.face, b.face...))
	e.assertBlobs("after replay", append(a.other, b.other...), nil)
}
