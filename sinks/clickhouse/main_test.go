package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/internal/chserver"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// shared is the package's ClickHouse server (one per test binary, started by TestMain);
// nil when the binary is missing, and then every test needing it skips.
var shared *chserver.Server

var dbSeq atomic.Int64

var testHashKey = []byte("test-id-hash-key")

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "idstream-ch-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := chserver.Start(ctx, chserver.WithDataDir(dir))
	switch {
	case errors.Is(err, chserver.ErrBinaryNotFound):
		fmt.Fprintln(os.Stderr, "clickhouse tests skipped:", err)
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return 1
	default:
		shared = srv
		defer srv.Close()
	}
	return m.Run()
}

// server returns the shared server or skips the test.
func server(t testing.TB) *chserver.Server {
	t.Helper()
	if shared == nil {
		t.Skip("clickhouse-server not installed")
	}
	return shared
}

func dial(t testing.TB, addr string) driver.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := Dial(ctx, addr, DialReadTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// newDB returns a connection to the shared server and a fresh, migrated database.
func newDB(t testing.TB) (driver.Conn, string) {
	t.Helper()
	conn := dial(t, server(t).Addr())
	db := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := Migrate(context.Background(), conn, MigrateDatabase(db)); err != nil {
		t.Fatal(err)
	}
	return conn, db
}

func newCodec(t testing.TB) *schemas.Codec {
	t.Helper()
	c, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newSink(t testing.TB, conn driver.Conn, db string, opts ...Option) *Sink {
	t.Helper()
	s, err := New(conn, newCodec(t), append([]Option{WithDatabase(db), WithIDHashKey(testHashKey), WithBatch(500, 200*time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

var base = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// decidedState returns the decided snapshot of session i: a chip_id_card flow with its
// captures, four checks (one failed when i%4 == 0, which rejects it) and extracted data.
func decidedState(i int, retention string) *schemas.SessionState {
	sid := fmt.Sprintf("ses_%06d", i)
	created := base.Add(time.Duration(i) * time.Minute).Add(123 * time.Millisecond)
	at := func(s float64) time.Time { return created.Add(time.Duration(s * float64(time.Second))) }
	outcome, status := schemas.StatusVerified, schemas.StatusVerified
	var reasons []schemas.Reason
	liveStatus := schemas.CheckPass
	if i%4 == 0 {
		outcome, status = schemas.StatusRejected, schemas.StatusRejected
		liveStatus = schemas.CheckFail
		reasons = []schemas.Reason{{Code: "liveness_failed", Message: "the selfie is not live"}}
	}
	fraudStatus := schemas.CheckPass
	if i%5 == 0 {
		fraudStatus = schemas.CheckWarn
	}
	flow := []string{"chip_id_card", "passport", "id_card"}[i%3]
	steps := []string{"document_front", "document_back", "selfie"}
	var caps []schemas.StepCapture
	for j, step := range steps {
		caps = append(caps, schemas.StepCapture{
			Step: step, CaptureID: fmt.Sprintf("cap_%d_%d", i, j), Status: schemas.CaptureAccepted,
			SubmittedAt: at(float64(10 * (j + 1))), UpdatedAt: at(float64(10*(j+1)) + 0.4),
			Quality: &schemas.QualityAssessed{Envelope: schemas.Envelope{OccurredAt: at(float64(10*(j+1)) + 0.3)}, Passed: true},
		})
	}
	decided := at(45.5)
	env := func(s float64) schemas.Envelope {
		return schemas.Envelope{EventID: fmt.Sprintf("ev_%d_%v", i, s), SessionID: sid, TenantID: "ten_a", OccurredAt: at(s), Producer: "test"}
	}
	idn := fmt.Sprintf("0010990%05d", i)
	return &schemas.SessionState{
		Envelope: env(45.5), Version: 12, Status: status, Flow: flow, Steps: steps,
		ReferenceID: ptr(fmt.Sprintf("order-%d", i)), Locale: "vi", DataRetention: retention,
		CreatedAt: created, ExpiresAt: created.Add(30 * time.Minute), UpdatedAt: decided, DecidedAt: &decided,
		Captures: caps,
		Checks: []schemas.Check{
			{Name: "quality.document_front", Status: schemas.CheckPass, Source: "quality"},
			{Name: "liveness.passive", Status: liveStatus, Score: ptr(0.91), Threshold: ptr(0.5), ModelVersion: ptr("fr_liveness@1"), Source: "liveness"},
			{Name: "facematch.selfie_document", Status: schemas.CheckPass, Score: ptr(0.88), Threshold: ptr(0.6), Source: "facematch"},
			{Name: "fraud.duplicate_face", Status: fraudStatus, ReasonCode: ptr("duplicate_face"), Source: "fraud"},
		},
		Documents: []schemas.DocumentRead{{Envelope: env(32), Step: "document_front"}},
		Liveness:  &schemas.LivenessAssessed{Envelope: env(38), Score: 0.91},
		Faces:     &schemas.FacesMatched{Envelope: env(41)},
		Decision: &schemas.DecisionResult{
			DecisionID: "dec_" + sid, Outcome: outcome, PolicyVersion: "2026-11-01", Reasons: reasons, DecidedAt: decided,
			Extracted: &schemas.Extracted{
				DocumentType: flow, IDNumber: ptr(idn), FullName: ptr("NGUYỄN VĂN A"), DateOfBirth: ptr("1999-03-15"),
				Sex: ptr("M"), Nationality: ptr("VNM"), PlaceOfOrigin: ptr("Hà Nội"), PlaceOfResidence: ptr("Hà Nội"),
				IssueDate: ptr("2021-01-01"), ExpiryDate: ptr("2036-01-01"), Other: map[string]string{"plate": "29A-12345"},
			},
		},
	}
}

func consent(i int) *schemas.ConsentRecorded {
	return &schemas.ConsentRecorded{
		Envelope:  schemas.Envelope{EventID: fmt.Sprintf("evc_%d", i), SessionID: "", TenantID: "ten_a", OccurredAt: base, Producer: "consent"},
		ConsentID: fmt.Sprintf("con_%d", i), TrackingID: fmt.Sprintf("trk_%d", i%3),
		PurposeID: []string{"ekyc_identity_verification", "marketing"}[i%2], Status: []string{"granted", "granted", "denied"}[i%3],
		NoticeVersion: "3", Channel: "web", IP: "203.0.113.7", UserAgent: "test", RecordedAt: base.Add(time.Duration(i) * time.Hour), ProofSHA256: "ab",
	}
}

func webhookAttempt(i, attempt int) *schemas.WebhookAttempt {
	sid := fmt.Sprintf("ses_%06d", i)
	a := &schemas.WebhookAttempt{
		Envelope:  schemas.Envelope{EventID: fmt.Sprintf("wh_%d/%d", i, attempt), SessionID: sid, TenantID: "ten_a", OccurredAt: base, Producer: "webhook"},
		WebhookID: fmt.Sprintf("wh_%d", i), DecisionEventID: "dec_" + sid, URL: "https://example.test/hook",
		Attempt: attempt, DurationMS: 42, AttemptedAt: base.Add(time.Duration(attempt) * time.Minute),
	}
	if attempt == 1 {
		a.StatusCode, a.Error, a.Outcome = ptr(500), ptr("status 500"), schemas.WebhookRetry
		a.NextAttemptAt = ptr(base.Add(2 * time.Minute))
	} else {
		a.StatusCode, a.Outcome = ptr(204), schemas.WebhookDelivered
	}
	return a
}

// rec encodes v as a record of topic (nil v: a tombstone).
func rec(t testing.TB, c *schemas.Codec, topic, key string, v any, offset int64) *stream.Record {
	t.Helper()
	r := &stream.Record{Topic: topic, Key: []byte(key), Offset: offset}
	if v != nil {
		b, err := c.Encode(topic, v)
		if err != nil {
			t.Fatal(err)
		}
		r.Value = b
	}
	return r
}

// queryInt runs a query returning one number.
func queryInt(t testing.TB, conn driver.Conn, q string) int64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return int64(n)
}

// eventually polls cond until it holds or 60s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitMutations waits until every mutation of db is done.
func waitMutations(t testing.TB, conn driver.Conn, db string) {
	t.Helper()
	eventually(t, "mutations", func() bool {
		return queryInt(t, conn, "SELECT count() FROM system.mutations WHERE database = '"+db+"' AND is_done = 0") == 0
	})
}

// kafkaOpts are the runtime options of the tests' clients.
func kafkaOpts(brokers []string) []stream.Option {
	return []stream.Option{
		stream.WithBrokers(brokers),
		stream.WithRetry(3, 20*time.Millisecond),
		stream.WithKgoOpts(kgo.FetchMaxWait(250*time.Millisecond), kgo.SessionTimeout(1500*time.Millisecond), kgo.HeartbeatInterval(150*time.Millisecond)),
	}
}

func startBroker(t testing.TB) []string {
	t.Helper()
	e, err := stream.StartEmbedded(stream.WithPartitionsDefault(4))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	specs := []stream.TopicSpec{}
	for _, tp := range Inputs() {
		specs = append(specs, stream.TopicSpec{Name: tp, Partitions: 4, Compacted: tp == schemas.TopicSessionState})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := stream.EnsureTopics(ctx, e.Addrs(), specs); err != nil {
		t.Fatal(err)
	}
	return e.Addrs()
}

func produce(t testing.TB, p *stream.Producer, outs ...stream.Output) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Produce(ctx, outs...); err != nil {
		t.Fatal(err)
	}
}

// runSink runs s under a BatchRunner until the test ends.
func runSink(t testing.TB, s *Sink, brokers []string) {
	t.Helper()
	r, err := stream.NewBatchRunner(s.Group(), kafkaOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sink runner: %v", err)
		}
	})
}
