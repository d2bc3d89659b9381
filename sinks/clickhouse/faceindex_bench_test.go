package clickhouse

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkFaceIndexSearchClickHouse measures the alternative the fraud group's in-memory
// FaceIndex was chosen over: a duplicate-face (1:N) search as one query on face_index (the
// cosine of unit vectors as arraySum(arrayMap(...)), the best 10 of the tenant's live
// rows), at 10k and 100k stored 512-d faces. Reports p50 and p99 latency per search.
func BenchmarkFaceIndexSearchClickHouse(b *testing.B) {
	conn, db := newDB(b)
	ctx := context.Background()
	const dim = 512
	stored := 0
	for _, n := range []int{10_000, 100_000} {
		// Server-side generated random rows: 512 uniform floats each (unnormalised; the cost
		// is the same).
		fill := fmt.Sprintf("INSERT INTO %s.face_index (tenant_id, session_id, id_number_hash, embedding, model_version, created_at, created_at_ms, deleted, version) "+
			"SELECT 'acme', concat('ses_', toString(number)), '', arrayMap(i -> toFloat32((rand(i + number) %% 2000) / 1000.0 - 1), range(%d)), 'm', now(), 0, 0, 1 "+
			"FROM system.numbers WHERE number >= %d LIMIT %d", db, dim, stored, n-stored)
		if err := conn.Exec(ctx, fill); err != nil {
			b.Fatal(err)
		}
		stored = n
		r := rand.New(rand.NewPCG(1, 2))
		q := make([]string, dim)
		for i := range q {
			q[i] = strconv.FormatFloat(r.Float64()*2-1, 'f', 4, 32)
		}
		query := "SELECT session_id, arraySum(arrayMap((x, y) -> x * y, embedding, [" + strings.Join(q, ",") + "])) AS sim " +
			"FROM " + db + ".face_index FINAL WHERE tenant_id = 'acme' AND deleted = 0 AND model_version = 'm' ORDER BY sim DESC LIMIT 10"
		b.Run(fmt.Sprintf("faces=%dk", n/1000), func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				rows, err := conn.Query(ctx, query)
				if err != nil {
					b.Fatal(err)
				}
				hits := 0
				for rows.Next() {
					hits++
				}
				if err := rows.Err(); err != nil || hits != 10 {
					b.Fatalf("%d hits, %v", hits, err)
				}
				rows.Close()
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
