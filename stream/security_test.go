package stream

import (
	"context"
	"crypto/tls"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/idstream/idstream/internal/tlsfiles/tlstest"
)

// TestSecuredCluster runs a producer, a runner and a stateful runner (transactions) against a
// broker that requires TLS and SASL, and checks that a client with a wrong password, without
// TLS, or not trusting the broker's CA is refused with an error that says why.
func TestSecuredCluster(t *testing.T) {
	ca := tlstest.NewCA(t, "kafka test CA")
	c, err := kfake.NewCluster(kfake.NumBrokers(1),
		kfake.TLS(ca.ServerConfig(t, "broker", false)),
		kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "idstream", "s3cret"),
		kfake.User("PLAIN", "plain-user", "pl4in"),
		kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	trusted := WithTLS(&tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12})
	scram512 := WithSASL(scram.Auth{User: "idstream", Pass: "s3cret"}.AsSha512Mechanism())
	secured := []Option{trusted, scram512}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	specs := []TopicSpec{{Name: "sec.in", Partitions: 2}, {Name: "sec.out", Partitions: 2},
		{Name: "s.in", Partitions: 2}, {Name: "s.out", Partitions: 2}, {Name: "s.table", Partitions: 2, Compacted: true}}
	if err := EnsureTopics(ctx, brokers, specs, secured...); err != nil {
		t.Fatalf("ensure topics over TLS and SCRAM-SHA-512: %v", err)
	}

	p, err := NewProducer(testOpts(brokers, secured...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 20
	var outs []Output
	for i := range n {
		k := []byte("k" + strconv.Itoa(i%3))
		outs = append(outs, Output{Topic: "sec.in", Key: k, Value: []byte(strconv.Itoa(i))},
			Output{Topic: "s.in", Key: k, Value: []byte(strconv.Itoa(i))})
	}
	if err := p.Produce(ctx, outs...); err != nil {
		t.Fatalf("produce: %v", err)
	}

	handled := make(chan struct{}, n)
	r, err := NewRunner(Group{Name: "sec.group", Inputs: []string{"sec.in"}, Outputs: []string{"sec.out"},
		Handler: func(_ context.Context, rec *Record) ([]Output, error) {
			handled <- struct{}{}
			return []Output{{Topic: "sec.out", Key: rec.Key, Value: rec.Value}}, nil
		}}, testOpts(brokers, secured...)...)
	if err != nil {
		t.Fatal(err)
	}
	cnt := &counter{}
	sr, err := NewStatefulRunner(counterGroup(cnt), testOpts(brokers, secured...)...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	errc := make(chan error, 2)
	go func() { errc <- r.Run(runCtx) }()
	go func() { errc <- sr.Run(runCtx) }()
	for i := range n {
		select {
		case <-handled:
		case <-ctx.Done():
			t.Fatalf("runner handled %d of %d records over TLS and SASL", i, n)
		}
	}
	for cnt.handled.Load() < n && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if got := cnt.handled.Load(); got < n {
		t.Fatalf("stateful runner handled %d of %d records", got, n)
	}
	stop()
	for range 2 {
		if err := <-errc; err != nil {
			t.Errorf("runner: %v", err)
		}
	}

	// kfake closes the connection on a wrong password (Kafka answers
	// SASL_AUTHENTICATION_FAILED), and a broker that wants SASL or TLS closes it too: those
	// are refused, but not told apart from a broker that restarts.
	refused := []struct {
		name    string
		opts    []Option
		forGood bool
	}{
		{"wrong password", []Option{trusted, WithSASL(scram.Auth{User: "idstream", Pass: "guess"}.AsSha512Mechanism())}, false},
		{"no SASL", []Option{trusted}, false},
		{"no TLS", []Option{scram512}, false},
		{"broker's CA not trusted", []Option{WithTLS(&tls.Config{RootCAs: tlstest.NewCA(t, "other CA").Pool()}), scram512}, true},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := EnsureTopics(ctx, brokers, specs[:1], tt.opts...)
			if err == nil {
				t.Fatal("the broker accepted the client")
			}
			if IsConnectionRefused(err) != tt.forGood {
				t.Errorf("IsConnectionRefused(%v) = %v, want %v", err, !tt.forGood, tt.forGood)
			}
		})
	}

	t.Run("PLAIN", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var m sasl.Mechanism = plain.Auth{User: "plain-user", Pass: "pl4in"}.AsMechanism()
		if err := EnsureTopics(ctx, brokers, specs[:1], trusted, WithSASL(m)); err != nil {
			t.Fatalf("PLAIN over TLS: %v", err)
		}
	})
}
