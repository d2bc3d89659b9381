package clickhouse

import (
	"context"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// BenchmarkSinkVsRawInsert writes batches of decided sessions (1 decisions row + 4 checks
// rows each) through the sink's batch handler (Avro decode, row building, PrepareBatch/
// Append/Send) and, in the same run, inserts the same rows with a raw clickhouse-go batch,
// reporting rows/s of each and their ratio.
func BenchmarkSinkVsRawInsert(b *testing.B) {
	conn, db := newDB(b)
	c := newCodec(b)
	s := newSink(b, conn, db)
	const sessions = 2000
	recs := make([]*stream.Record, sessions)
	var decRows, chkRows [][]any
	now := time.Now()
	for i := range recs {
		st := decidedState(i, RetentionService)
		recs[i] = rec(b, c, schemas.TopicSessionState, st.Envelope.SessionID, st, int64(i))
		decRows = append(decRows, decisionRow(st, testHashKey, now))
		chkRows = append(chkRows, checkRows(st)...)
	}
	rowsPerBatch := float64(len(decRows) + len(chkRows))
	ctx := context.Background()
	var sinkTime, rawTime time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		start := time.Now()
		if err := s.Write(ctx, recs); err != nil {
			b.Fatal(err)
		}
		sinkTime += time.Since(start)
		start = time.Now()
		if err := s.insert(ctx, "decisions", decisionColumns, decRows); err != nil {
			b.Fatal(err)
		}
		if err := s.insert(ctx, "checks", checkColumns, chkRows); err != nil {
			b.Fatal(err)
		}
		rawTime += time.Since(start)
	}
	b.StopTimer()
	sinkRate := rowsPerBatch * float64(b.N) / sinkTime.Seconds()
	rawRate := rowsPerBatch * float64(b.N) / rawTime.Seconds()
	b.ReportMetric(sinkRate, "sink_rows/s")
	b.ReportMetric(rawRate, "raw_rows/s")
	b.ReportMetric(sinkRate/rawRate, "sink/raw")
	b.ReportMetric(0, "ns/op")
}
