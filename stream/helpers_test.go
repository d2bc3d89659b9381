package stream

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func startBroker(t testing.TB, opts ...EmbeddedOption) *Embedded {
	t.Helper()
	e, err := StartEmbedded(opts...)
	if err != nil {
		t.Fatalf("start embedded: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// testOpts are the options every client of a test uses: fast fetches and fast failure
// detection so that crash tests finish quickly. What a successor of a killed stateful
// member waits for, and why each setting is there:
//   - FetchMaxWait 250ms: a resumed member would otherwise stall 5s on its first poll;
//   - SessionTimeout 1.5s (heartbeat 150ms): the group notices the killed member and hands
//     its partitions over (kfake accepts session timeouts down to 100ms, see StartEmbedded);
//   - RebalanceTimeout 3s: the longest a join waits for members that do not rejoin;
//   - TransactionTimeout 2s: the broker aborts the killed member's open transaction, which
//     until then blocks both the successor's offset fetch (require-stable) and its table
//     restore (it waits until no transaction is open on the partition). A successor with
//     the same WithTransactionalID fences the transaction at once instead.
func testOpts(brokers []string, extra ...Option) []Option {
	o := []Option{
		WithBrokers(brokers),
		WithRetry(3, time.Millisecond),
		WithKgoOpts(
			kgo.FetchMaxWait(250*time.Millisecond),
			kgo.SessionTimeout(1500*time.Millisecond),
			kgo.HeartbeatInterval(150*time.Millisecond),
			kgo.RebalanceTimeout(3*time.Second),
			kgo.TransactionTimeout(2*time.Second),
		),
	}
	return append(o, extra...)
}

// testProducer is a producer with the test options, closed when the test ends.
func testProducer(t testing.TB, brokers []string) *Producer {
	t.Helper()
	p, err := NewProducer(testOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func ensure(t testing.TB, brokers []string, specs ...TopicSpec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := EnsureTopics(ctx, brokers, specs); err != nil {
		t.Fatalf("ensure topics: %v", err)
	}
}

// readAll reads every committed data record of topic from its start up to the last stable
// offset listed when it begins.
func readAll(t testing.TB, brokers []string, topic string) []*Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg, err := newConfig(testOpts(brokers))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(cfg.baseOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	targets, err := stableTargets(ctx, kadm.NewClient(cl), topic)
	if err != nil {
		t.Fatalf("read %s: %v", topic, err)
	}
	lr, err := newLogReader(ctx, cl, topic, nil)
	if err != nil {
		t.Fatalf("read %s: %v", topic, err)
	}
	var out []*Record
	for {
		var left []int32
		for p, tg := range targets {
			if lr.pos[p] < tg.end {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return out
		}
		if _, err := lr.fetch(ctx, left, 100*time.Millisecond, func(r *kgo.Record) {
			if r.Offset < targets[r.Partition].end {
				out = append(out, fromKgoRecord(r))
			}
		}); err != nil {
			t.Fatalf("read %s: %v", topic, err)
		}
	}
}

func headerValue(r *Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
