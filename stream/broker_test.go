package stream

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestBrokersFromEnv(t *testing.T) {
	t.Setenv("KAFKA_BROKERS", "")
	if got := BrokersFromEnv(); got != nil {
		t.Fatalf("unset: got %v", got)
	}
	t.Setenv("KAFKA_BROKERS", " a:1, b:2 ,")
	got := BrokersFromEnv()
	if len(got) != 2 || got[0] != "a:1" || got[1] != "b:2" {
		t.Fatalf("got %v", got)
	}
}

func TestEnsureTopics(t *testing.T) {
	e := startBroker(t)
	ctx := context.Background()
	specs := []TopicSpec{
		{Name: "t.events", Partitions: 3, Retention: time.Hour},
		{Name: "t.state", Partitions: 3, Compacted: true},
	}
	ensure(t, e.Addrs(), specs...)
	ensure(t, e.Addrs(), specs...) // idempotent

	for topic, want := range map[string]string{"t.state": "compact", "t.events": "delete"} {
		if got := topicConfigs(t, e.Addrs(), topic)["cleanup.policy"]; got != want {
			t.Errorf("%s cleanup.policy = %q, want %q", topic, got, want)
		}
	}
	if got := topicConfigs(t, e.Addrs(), "t.events")["retention.ms"]; got != "3600000" {
		t.Errorf("retention.ms = %q", got)
	}

	err := EnsureTopics(ctx, e.Addrs(), []TopicSpec{{Name: "t.state", Partitions: 4, Compacted: true}})
	if !errors.Is(err, ErrPartitionMismatch) {
		t.Fatalf("want partition mismatch, got %v", err)
	}
	if err == nil || !contains(err.Error(), "t.state") {
		t.Fatalf("error should name the topic: %v", err)
	}
	if err := EnsureTopics(ctx, e.Addrs(), []TopicSpec{{Name: "", Partitions: 1}}); err == nil {
		t.Fatal("empty name accepted")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestEmbeddedPersistence restarts the broker on the same data dir: topics, records and
// committed group offsets survive.
func TestEmbeddedPersistence(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	e, err := StartEmbedded(WithDataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	addr := e.Addrs()[0]
	ensure(t, e.Addrs(), TopicSpec{Name: "p.topic", Partitions: 2})
	p, err := NewProducer(testOpts(e.Addrs())...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Produce(ctx, Output{Topic: "p.topic", Key: []byte("k"), Value: []byte("v1")},
		Output{Topic: "p.topic", Key: []byte("k2"), Value: []byte("v2")}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "p.topic", Partition: 0, At: 1, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "p.group", offs); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	e.Close()

	e2, err := StartEmbedded(WithDataDir(dir), WithListenAddr(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if got := e2.Addrs()[0]; got != addr {
		t.Fatalf("listen addr %s, want %s", got, addr)
	}
	if recs := readAll(t, e2.Addrs(), "p.topic"); len(recs) != 2 {
		t.Fatalf("after restart: %d records, want 2", len(recs))
	}
	cl2, err := kgo.NewClient(kgo.SeedBrokers(e2.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	fetched, err := kadm.NewClient(cl2).FetchOffsets(ctx, "p.group")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("p.topic", 0); !ok || o.At != 1 {
		t.Fatalf("committed offset after restart = %+v (ok %v), want 1", o, ok)
	}
}

// TestCrashedTransactionGetsItsMarker: a broker killed with a transaction open (its data
// dir copied while it runs, as SIGKILL leaves it: every write is in the files, no clean
// shutdown) and started again: a new reader from the log start sees what the same
// transactional producer commits after the restart, and after a second crash the aborted
// records do not come back as committed. Without the ABORT marker the restart writes, kfake
// got both wrong (decisions missing from, then duplicated on, ekyc.decisions.v1; issue 13).
func TestCrashedTransactionGetsItsMarker(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	crash := func(from, to string) { // the files as they are at a SIGKILL
		t.Helper()
		if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
			t.Fatalf("copy data dir: %v %s", err, out)
		}
	}
	values := func(e *Embedded) []string {
		var out []string
		for _, r := range readAll(t, e.Addrs(), "x.topic") {
			out = append(out, string(r.Value))
		}
		return out
	}
	producer := func(e *Embedded) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addrs()...), kgo.TransactionalID("x.txn"), kgo.DefaultProduceTopic("x.topic"))
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	commit := func(cl *kgo.Client, v string) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}

	e1, err := StartEmbedded(WithDataDir(filepath.Join(dir, "1")))
	if err != nil {
		t.Fatal(err)
	}
	ensure(t, e1.Addrs(), TopicSpec{Name: "x.topic", Partitions: 1})
	p1 := producer(e1)
	commit(p1, "before")
	if err := p1.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p1.ProduceSync(ctx, &kgo.Record{Value: []byte("crashed")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	crash(filepath.Join(dir, "1"), filepath.Join(dir, "2"))
	p1.Close()
	e1.Close()

	e2, err := StartEmbedded(WithDataDir(filepath.Join(dir, "2")))
	if err != nil {
		t.Fatal(err)
	}
	p2 := producer(e2)
	commit(p2, "after")
	if got := values(e2); !slices.Equal(got, []string{"before", "after"}) {
		t.Fatalf("after a crash, a reader from the start sees %q, want before, after", got)
	}
	crash(filepath.Join(dir, "2"), filepath.Join(dir, "3"))
	p2.Close()
	e2.Close()

	e3, err := StartEmbedded(WithDataDir(filepath.Join(dir, "3")))
	if err != nil {
		t.Fatal(err)
	}
	defer e3.Close()
	if got := values(e3); !slices.Equal(got, []string{"before", "after"}) {
		t.Fatalf("after a second crash: %q, want before, after", got)
	}
}

// TestCleanRestartKeepsAnOpenTransaction: a broker stopped cleanly keeps a transaction open
// across the restart (kfake restores it); the producer commits it afterwards and every
// record of it is read. The crash repair must not abort it (found by review).
func TestCleanRestartKeepsAnOpenTransaction(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e1, err := StartEmbedded(WithDataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	addr := e1.Addrs()[0]
	ensure(t, e1.Addrs(), TopicSpec{Name: "y.topic", Partitions: 1})
	p, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("y.txn"), kgo.DefaultProduceTopic("y.topic"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	e1.Close()
	e2, err := StartEmbedded(WithDataDir(dir), WithListenAddr(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if n := e2.CrashAborted(); n != 0 {
		t.Fatalf("%d markers written after a clean shutdown", n)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range readAll(t, e2.Addrs(), "y.topic") {
		got = append(got, string(r.Value))
	}
	if !slices.Equal(got, []string{"before", "after"}) {
		t.Fatalf("read %q, want before, after", got)
	}
}

// TestAlignTopicConfigs: a compacted topic gets its compaction lag (and segment roll) at
// creation; a changed retention or lag is set on the existing topics, the cleanup policy
// left alone, and a second run changes nothing.
func TestAlignTopicConfigs(t *testing.T) {
	e := startBroker(t)
	ctx := context.Background()
	specs := []TopicSpec{
		{Name: "a.events", Partitions: 2, Retention: time.Hour},
		{Name: "a.state", Partitions: 2, Compacted: true, MaxCompactionLag: 24 * time.Hour},
	}
	ensure(t, e.Addrs(), specs...)
	configs := func(topic string) map[string]string { return topicConfigs(t, e.Addrs(), topic) }
	if got := configs("a.state"); got["max.compaction.lag.ms"] != "86400000" || got["segment.ms"] != "86400000" {
		t.Fatalf("a.state created with max.compaction.lag.ms %q, segment.ms %q", got["max.compaction.lag.ms"], got["segment.ms"])
	}
	specs[0].Retention, specs[1].MaxCompactionLag = 2*time.Hour, time.Hour
	changed, err := AlignTopicConfigs(ctx, e.Addrs(), append(specs, TopicSpec{Name: "a.absent", Partitions: 1}))
	if err != nil || len(changed) != 2 {
		t.Fatalf("AlignTopicConfigs = %v, %v; want both topics changed", changed, err)
	}
	if got := configs("a.events"); got["retention.ms"] != "7200000" || got["cleanup.policy"] != "delete" {
		t.Errorf("a.events: retention.ms %q cleanup.policy %q", got["retention.ms"], got["cleanup.policy"])
	}
	if got := configs("a.state"); got["max.compaction.lag.ms"] != "3600000" || got["cleanup.policy"] != "compact" {
		t.Errorf("a.state: max.compaction.lag.ms %q cleanup.policy %q", got["max.compaction.lag.ms"], got["cleanup.policy"])
	}
	if changed, err := AlignTopicConfigs(ctx, e.Addrs(), specs); err != nil || len(changed) != 0 {
		t.Errorf("second run changed %v, %v", changed, err)
	}
}

// topicConfigs returns the configuration of topic, key by key, as the brokers describe it.
func topicConfigs(t *testing.T, brokers []string, topic string) map[string]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rcs, err := kadm.NewClient(cl).DescribeTopicConfigs(context.Background(), topic)
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("describe %s: %v %+v", topic, err, rcs)
	}
	kv := map[string]string{}
	for _, c := range rcs[0].Configs {
		kv[c.Key] = c.MaybeValue()
	}
	return kv
}
