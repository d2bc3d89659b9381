package clickhouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/idstream/idstream/internal/chserver"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// stateOutputs returns, for sessions [from, to), a non-terminal snapshot then the decided
// one (as the session group writes them), plus a duplicate of the decided one.
func stateOutputs(t testing.TB, c *schemas.Codec, from, to int) []stream.Output {
	t.Helper()
	var outs []stream.Output
	for i := from; i < to; i++ {
		st := decidedState(i, []string{RetentionService, RetentionIntegrator}[i%2])
		open := *st
		open.Status, open.Decision, open.DecidedAt, open.Version = schemas.StatusProcessing, nil, nil, 7
		for _, v := range []*schemas.SessionState{&open, st, st} {
			b, err := c.Encode(schemas.TopicSessionState, v)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, stream.Output{Topic: schemas.TopicSessionState, Key: []byte(st.Envelope.SessionID), Value: b})
		}
	}
	return outs
}

func TestStreamOfDecisionsLandsOnce(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	brokers := startBroker(t)
	p, err := stream.NewProducer(kafkaOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	runSink(t, newSink(t, conn, db), brokers)
	const n = 300
	produce(t, p, stateOutputs(t, c, 0, n)...)
	for i := 0; i < 10; i++ {
		cr := consent(i)
		b, _ := c.Encode(schemas.TopicConsents, cr)
		produce(t, p, stream.Output{Topic: schemas.TopicConsents, Key: []byte(cr.TrackingID), Value: b})
	}
	eventually(t, "all decisions", func() bool {
		return queryInt(t, conn, "SELECT count() FROM "+db+".decisions FINAL") == n &&
			queryInt(t, conn, "SELECT count() FROM "+db+".consents FINAL") == 10
	})
	assertOnePerSession(t, conn, db, n)
}

// assertOnePerSession checks FINAL holds n sessions, each once, with its 4 checks, and
// that integrator sessions kept no raw PII.
func assertOnePerSession(t *testing.T, conn driver.Conn, db string, n int) {
	t.Helper()
	if got := queryInt(t, conn, "SELECT uniqExact(session_id) FROM "+db+".decisions FINAL"); got != int64(n) {
		t.Fatalf("%d distinct sessions, want %d", got, n)
	}
	// A batch writes its decisions before its checks: the checks may land a moment later.
	eventually(t, "every check", func() bool {
		return queryIntOK(conn, "SELECT count() FROM "+db+".checks FINAL") == int64(4*n)
	})
	if got := queryInt(t, conn, "SELECT count() FROM "+db+".decisions FINAL WHERE data_retention = 'integrator' AND (id_number IS NOT NULL OR full_name IS NOT NULL)"); got != 0 {
		t.Fatalf("%d integrator sessions hold raw PII", got)
	}
}

// TestClickHouseDownMidStream stops ClickHouse while decisions flow, keeps producing, starts
// it again on the same data dir and port: every session lands, none twice (FINAL).
func TestClickHouseDownMidStream(t *testing.T) {
	server(t) // skip without the binary
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := chserver.Start(ctx, chserver.WithDataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Close() }()
	conn := dial(t, srv.Addr())
	db := "restart"
	if err := Migrate(ctx, conn, MigrateDatabase(db)); err != nil {
		t.Fatal(err)
	}
	c := newCodec(t)
	brokers := startBroker(t)
	p, err := stream.NewProducer(kafkaOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	runSink(t, newSink(t, conn, db), brokers)

	const n = 400
	produce(t, p, stateOutputs(t, c, 0, n/4)...)
	eventually(t, "first quarter", func() bool { return queryInt(t, conn, "SELECT count() FROM "+db+".decisions FINAL") == n/4 })

	if err := srv.Close(); err != nil {
		t.Fatalf("stop clickhouse: %v", err)
	}
	for q := 1; q < 4; q++ { // produced while ClickHouse is down: the sink retries
		produce(t, p, stateOutputs(t, c, q*n/4, (q+1)*n/4)...)
		time.Sleep(300 * time.Millisecond)
	}
	srv, err = chserver.Start(ctx, chserver.WithDataDir(dir), chserver.WithTCPPort(srv.TCPPort()), chserver.WithHTTPPort(srv.HTTPPort()))
	if err != nil {
		t.Fatalf("restart clickhouse: %v", err)
	}
	eventually(t, "every decision after the restart", func() bool {
		return queryIntOK(conn, "SELECT count() FROM "+db+".decisions FINAL") == n
	})
	assertOnePerSession(t, conn, db, n)
	for i := 0; i < n; i += 37 {
		sid := fmt.Sprintf("ses_%06d", i)
		if queryInt(t, conn, "SELECT count() FROM "+db+".decisions FINAL WHERE session_id = '"+sid+"'") != 1 {
			t.Errorf("session %s: not exactly one row", sid)
		}
	}
}

// queryIntOK is queryInt that answers -1 on error (the server may still be starting).
func queryIntOK(conn driver.Conn, q string) int64 {
	var n uint64
	if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
		return -1
	}
	return int64(n)
}
