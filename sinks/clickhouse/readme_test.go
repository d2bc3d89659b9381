package clickhouse

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

var sqlBlock = regexp.MustCompile("(?s)```sql\n(.*?)```")

// TestReadmeQueriesRun runs every sql block of deploy/clickhouse/README.md against test
// data (the database name swapped for the test's) and expects rows from each.
func TestReadmeQueriesRun(t *testing.T) {
	conn, db := newDB(t)
	c := newCodec(t)
	s := newSink(t, conn, db)
	var recs []*stream.Record
	for i := 0; i < 40; i++ {
		st := decidedState(i, []string{RetentionService, RetentionIntegrator}[i%2])
		recs = append(recs, rec(t, c, schemas.TopicSessionState, st.Envelope.SessionID, st, int64(i)))
		cr := consent(i)
		recs = append(recs, rec(t, c, schemas.TopicConsents, cr.TrackingID, cr, int64(i)))
		recs = append(recs, rec(t, c, schemas.TopicWebhookAttempts, st.Envelope.SessionID, webhookAttempt(i, 1+i%2), int64(i)))
	}
	if err := s.Write(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../deploy/clickhouse/README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := sqlBlock.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 5 {
		t.Fatalf("README has %d sql blocks, want at least 5 (funnel, reject reasons, fraud hits, latency, consents)", len(blocks))
	}
	for i, b := range blocks {
		q := strings.ReplaceAll(b[1], "idstream.", db+".")
		t.Run(fmt.Sprintf("query%d", i+1), func(t *testing.T) {
			rows, err := conn.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("%v\n%s", err, q)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				n++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatalf("no rows from\n%s", q)
			}
		})
	}
}
