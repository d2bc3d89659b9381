package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// guard bounds how long a test waits for the pipeline before failing (a hang guard, not an
// assertion on speed).
const guard = 60 * time.Second

func newKey(t testing.TB) (raw []byte, secret string) {
	t.Helper()
	raw = make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	return raw, "whsec_" + base64.StdEncoding.EncodeToString(raw)
}

// verifySpec is an implementation of the Standard Webhooks verification written from the
// spec, independently of Signature: every space-separated "v1,<base64>" entry is checked
// against HMAC-SHA256(key, id "." timestamp "." body); it returns, per key, whether one
// entry matched.
func verifySpec(h http.Header, body []byte, keys [][]byte) []bool {
	signed := h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)
	ok := make([]bool, len(keys))
	for _, entry := range strings.Split(h.Get("webhook-signature"), " ") {
		version, sig, found := strings.Cut(entry, ",")
		if !found || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err != nil {
			continue
		}
		for i, k := range keys {
			m := hmac.New(sha256.New, k)
			io.WriteString(m, signed)
			if hmac.Equal(got, m.Sum(nil)) {
				ok[i] = true
			}
		}
	}
	return ok
}

// delivery is one request the receiver accepted.
type delivery struct {
	ID, Timestamp string
	Signatures    int
	Body          []byte
	At            time.Time
}

// receiver is a real local HTTP endpoint that verifies every request with verifySpec
// against all of keys and answers status (200 unless set).
type receiver struct {
	t      testing.TB
	keys   [][]byte
	addr   string
	mu     sync.Mutex
	status int
	got    []delivery
	bad    []string
	srv    *http.Server
	notify chan struct{}
}

// newReceiver reserves a free 127.0.0.1 port; the receiver is down until start.
func newReceiver(t testing.TB, keys ...[]byte) *receiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return &receiver{t: t, keys: keys, addr: addr, status: 200, notify: make(chan struct{}, 1)}
}

func (r *receiver) URL() string { return "http://" + r.addr + "/hook" }

func (r *receiver) start() {
	l, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("receiver listen: %v", err)
	}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go r.srv.Serve(l)
	r.t.Cleanup(func() { r.srv.Close() })
}

func (r *receiver) setStatus(code int) {
	r.mu.Lock()
	r.status = code
	r.mu.Unlock()
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	ok := verifySpec(req.Header, body, r.keys)
	d := delivery{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
		Signatures: len(strings.Fields(req.Header.Get("webhook-signature"))), Body: body, At: time.Now()}
	r.mu.Lock()
	for i, v := range ok {
		if !v {
			r.bad = append(r.bad, d.ID+": signature of key "+strconv.Itoa(i)+" missing or wrong")
		}
	}
	if _, err := strconv.ParseInt(d.Timestamp, 10, 64); err != nil {
		r.bad = append(r.bad, d.ID+": bad webhook-timestamp")
	}
	r.got = append(r.got, d)
	status := r.status
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
	w.WriteHeader(status)
}

func (r *receiver) deliveries() ([]delivery, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...), append([]string(nil), r.bad...)
}

// env is one broker, codec, producer and tenant registry for a test.
type env struct {
	t       testing.TB
	brokers []string
	codec   *schemas.Codec
	prod    *stream.Producer
	// registry holds the metrics of the sink startSink runs.
	registry *prometheus.Registry
}

func kgoTestOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.FetchMaxWait(250 * time.Millisecond),
		kgo.SessionTimeout(1500 * time.Millisecond),
		kgo.HeartbeatInterval(150 * time.Millisecond),
		kgo.RebalanceTimeout(3 * time.Second),
	}
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e, err := stream.StartEmbedded(stream.WithDataDir(t.TempDir()), stream.WithPartitionsDefault(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	brokers := e.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var specs []stream.TopicSpec
	for _, ti := range schemas.Topics() {
		specs = append(specs, stream.TopicSpec{Name: ti.Name, Partitions: 3, Compacted: ti.Compacted},
			stream.TopicSpec{Name: ti.Name + stream.DLQSuffix, Partitions: 3})
	}
	if err := stream.EnsureTopics(ctx, brokers, specs); err != nil {
		t.Fatal(err)
	}
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	prod, err := stream.NewProducer(stream.WithBrokers(brokers), stream.WithKgoOpts(kgoTestOpts()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return &env{t: t, brokers: brokers, codec: codec, prod: prod, registry: prometheus.NewRegistry()}
}

// startSink runs a sink with a millisecond schedule until the test ends.
func (e *env) startSink(tenants *tenant.Registry, schedule Schedule) *Sink {
	e.t.Helper()
	s, err := NewSink(Config{
		Tenants: tenants, Codec: e.codec, Producer: e.prod,
		Schedule: schedule, Timeout: 5 * time.Second, CommitInterval: 50 * time.Millisecond,
		Registerer: e.registry,
		Runtime: []stream.Option{
			stream.WithBrokers(e.brokers), stream.WithKgoOpts(kgoTestOpts()...), stream.WithRetry(3, time.Millisecond),
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("sink run: %v", err)
		}
	})
	return s
}

// decided returns the snapshot the session group writes when it folds a decision.
func decided(sessionID, tenantID string, webhookURL *string) *schemas.SessionState {
	at := time.UnixMilli(time.Now().UnixMilli()).UTC()
	ref := "order-" + sessionID
	return &schemas.SessionState{
		Envelope: schemas.Envelope{EventID: "evt_dec_" + sessionID, SessionID: sessionID, TenantID: tenantID,
			OccurredAt: at, Producer: "decision"},
		Version: 7, Status: schemas.StatusVerified, Flow: "vehicle_registration",
		Steps: []string{"document_front", "document_back"}, ReferenceID: &ref, WebhookURL: webhookURL,
		Locale: "vi", DataRetention: "service", CreatedAt: at.Add(-time.Minute), ExpiresAt: at.Add(time.Hour),
		UpdatedAt: at, DecidedAt: &at,
		Captures: []schemas.StepCapture{{Step: "document_front", CaptureID: "cap_1", Status: schemas.CaptureAccepted,
			SubmittedAt: at, UpdatedAt: at}},
		Checks: []schemas.Check{{Name: "quality.document_front", Status: schemas.CheckPass, Source: "quality"}},
		Decision: &schemas.DecisionResult{DecisionID: "dec_" + sessionID, Outcome: schemas.StatusVerified,
			PolicyVersion: "p1", Reasons: []schemas.Reason{}, Extracted: &schemas.Extracted{DocumentType: "vehicle_registration"},
			DecidedAt: at},
	}
}

func (e *env) produce(topic, key string, v any) {
	e.t.Helper()
	val, err := e.codec.Encode(topic, v)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.prod.Produce(ctx, stream.Output{Topic: topic, Key: []byte(key), Value: val}); err != nil {
		e.t.Fatal(err)
	}
}

// tail reads a topic from its start as it grows.
type tail struct {
	e  *env
	cl *kgo.Client
}

func (e *env) tail(topic string) *tail {
	cl, err := kgo.NewClient(append(kgoTestOpts(), kgo.SeedBrokers(e.brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(cl.Close)
	return &tail{e: e, cl: cl}
}

// until polls records, decoding each into a new T, until done(all so far) is true.
func until[T any](tl *tail, topic string, done func([]*T) bool) []*T {
	tl.e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var all []*T
	for !done(all) {
		fs := tl.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			tl.e.t.Fatalf("%s: condition not met before the hang guard; %d records", topic, len(all))
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := new(T)
			if err := tl.e.codec.Decode(topic, r.Value, v); err != nil {
				tl.e.t.Fatalf("decode %s: %v", topic, err)
			}
			all = append(all, v)
		})
	}
	return all
}

func bodyOf(t testing.TB, raw []byte) (typ, ts, sessionID, status string) {
	t.Helper()
	var b struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      struct {
			SessionID string `json:"session_id"`
			Status    string `json:"status"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("webhook body: %v", err)
	}
	return b.Type, b.Timestamp, b.Data.SessionID, b.Data.Status
}

// attemptsCounted returns idstream_webhook_attempts_total{outcome} of the env's sink.
func (e *env) attemptsCounted(outcome string) float64 {
	e.t.Helper()
	mfs, err := e.registry.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "idstream_webhook_attempts_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
