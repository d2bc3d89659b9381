package stream

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxFetchFailures is how many fetch rounds in a row may fail with retriable errors
// (connection loss, leader moves) before a logReader gives up; with the backoff below that
// is about half a minute.
const maxFetchFailures = 30

// logReader reads partitions of one topic, read_committed, with plain Fetch requests (no
// consumer group, no fetch session) and knows, per partition, its position: the next offset
// to fetch. Records of aborted transactions, transaction markers and offsets removed by
// compaction advance the position without being delivered, so "caught up with offset X"
// is decided by the position, never by having seen a record at X-1 (which never happens
// when the last records before X are markers or aborted data). Not safe for concurrent
// use.
type logReader struct {
	cl      *kgo.Client
	adm     *kadm.Client
	topic   string
	topicID [16]byte
	leaders map[int32]int32
	pos     map[int32]int64 // next offset to fetch
	hwm     map[int32]int64 // high watermark in the latest response, -1 before
	lso     map[int32]int64 // last stable offset in the latest response, -1 before
	fails   int
}

// newLogReader positions a reader at the log start of every partition of topic in parts
// (every partition when parts is nil). cl must not consume anything itself.
func newLogReader(ctx context.Context, cl *kgo.Client, topic string, parts []int32) (*logReader, error) {
	r := &logReader{
		cl: cl, adm: kadm.NewClient(cl), topic: topic,
		pos: make(map[int32]int64), hwm: make(map[int32]int64), lso: make(map[int32]int64),
	}
	if err := r.refreshMetadata(ctx); err != nil {
		return nil, err
	}
	if parts == nil {
		for p := range r.leaders {
			parts = append(parts, p)
		}
	}
	starts, err := r.adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: list start offsets: %w", topic, err)
	}
	for _, p := range parts {
		if _, ok := r.leaders[p]; !ok {
			return nil, fmt.Errorf("read %s: partition %d does not exist", topic, p)
		}
		r.pos[p], r.hwm[p], r.lso[p] = 0, -1, -1
		if s, ok := starts.Lookup(topic, p); ok && s.Offset > 0 {
			r.pos[p] = s.Offset
		}
	}
	return r, nil
}

// refreshMetadata reloads the topic's id and partition leaders.
func (r *logReader) refreshMetadata(ctx context.Context) error {
	tds, err := r.adm.ListTopics(ctx, r.topic)
	if err != nil {
		return fmt.Errorf("read %s: metadata: %w", r.topic, err)
	}
	td, ok := tds[r.topic]
	if !ok || td.Err != nil {
		err := errors.New("topic not found")
		if ok {
			err = td.Err
		}
		return fmt.Errorf("read %s: metadata: %w", r.topic, err)
	}
	r.topicID = td.ID
	r.leaders = make(map[int32]int32, len(td.Partitions))
	for _, pd := range td.Partitions {
		r.leaders[pd.Partition] = pd.Leader
	}
	return nil
}

// partitions returns the partitions the reader follows, sorted.
func (r *logReader) partitions() []int32 {
	out := make([]int32, 0, len(r.pos))
	for p := range r.pos {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// quiet reports whether partition p has been read up to its last stable offset and has no
// transaction open (last stable offset == high watermark), both as of the latest response.
func (r *logReader) quiet(p int32) bool {
	return r.lso[p] >= 0 && r.pos[p] >= r.lso[p] && r.lso[p] == r.hwm[p]
}

// fetch issues one Fetch per leader of parts (concurrently, waiting up to maxWait for data)
// and calls fn, in offset order per partition, for every committed data record returned
// (tombstones included, transaction markers and aborted records excluded). It reports
// whether any position advanced. Retriable errors (lost connections, moved leaders) are
// retried on later calls, up to maxFetchFailures rounds in a row; other errors, and ctx
// ending, are returned.
func (r *logReader) fetch(ctx context.Context, parts []int32, maxWait time.Duration, fn func(*kgo.Record)) (bool, error) {
	byLeader := make(map[int32][]int32)
	for _, p := range parts {
		byLeader[r.leaders[p]] = append(byLeader[r.leaders[p]], p)
	}
	type result struct {
		resp *kmsg.FetchResponse
		err  error
	}
	results := make([]result, 0, len(byLeader))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for leader, ps := range byLeader {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = int32(maxWait.Milliseconds())
		req.MinBytes = 1
		req.MaxBytes = 64 << 20
		req.IsolationLevel = 1 // read_committed
		req.SessionID = 0
		req.SessionEpoch = -1 // no fetch session: every request is a full fetch
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = r.topic
		rt.TopicID = r.topicID
		for _, p := range ps {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition = p
			rp.FetchOffset = r.pos[p]
			rp.CurrentLeaderEpoch = -1
			rp.LogStartOffset = -1
			rp.PartitionMaxBytes = 8 << 20
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		wg.Add(1)
		go func(leader int32, req *kmsg.FetchRequest) {
			defer wg.Done()
			var res result
			kresp, err := r.cl.Broker(int(leader)).Request(ctx, req)
			if err != nil {
				res.err = err
			} else {
				res.resp = kresp.(*kmsg.FetchResponse)
				if ec := res.resp.ErrorCode; ec != 0 {
					res.err = kerr.ErrorForCode(ec)
				}
			}
			mu.Lock()
			results = append(results, res)
			mu.Unlock()
		}(leader, req)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("read %s: %w", r.topic, err)
	}

	progress, retry := false, false
	var fatal error
	for _, res := range results {
		if res.err != nil {
			retry = true
			continue
		}
		for i := range res.resp.Topics {
			for j := range res.resp.Topics[i].Partitions {
				rp := &res.resp.Topics[i].Partitions[j]
				adv, rt, err := r.handlePartition(ctx, rp, fn)
				progress = progress || adv
				retry = retry || rt
				if err != nil && fatal == nil {
					fatal = err
				}
			}
		}
	}
	if fatal != nil {
		return progress, fatal
	}
	if !retry {
		r.fails = 0
		return progress, nil
	}
	r.fails++
	if r.fails > maxFetchFailures {
		for _, res := range results {
			if res.err != nil {
				return progress, fmt.Errorf("read %s: fetch keeps failing: %w", r.topic, res.err)
			}
		}
		return progress, fmt.Errorf("read %s: fetch keeps failing", r.topic)
	}
	backoff := time.Duration(r.fails) * 100 * time.Millisecond
	if backoff > time.Second {
		backoff = time.Second
	}
	if err := sleepCtx(ctx, backoff); err != nil {
		return progress, fmt.Errorf("read %s: %w", r.topic, err)
	}
	if err := r.refreshMetadata(ctx); err != nil && ctx.Err() != nil {
		return progress, err
	}
	return progress, nil
}

// handlePartition applies one partition of a fetch response. It returns whether the
// position advanced, whether the partition should be retried, and a fatal error.
func (r *logReader) handlePartition(ctx context.Context, rp *kmsg.FetchResponseTopicPartition, fn func(*kgo.Record)) (bool, bool, error) {
	p := rp.Partition
	from, ok := r.pos[p]
	if !ok {
		return false, false, nil
	}
	switch err := kerr.ErrorForCode(rp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.OffsetOutOfRange):
		// Below the log start (retention, or kfake moving it after compaction): what was
		// before it is gone or superseded, continue from it. Past the end: data loss.
		starts, lerr := r.adm.ListStartOffsets(ctx, r.topic)
		if lerr == nil {
			lerr = starts.Error()
		}
		if lerr != nil {
			return false, true, nil
		}
		if s, ok := starts.Lookup(r.topic, p); ok && s.Offset > from {
			r.pos[p] = s.Offset
			return true, false, nil
		}
		return false, false, fmt.Errorf("read %s partition %d: offset %d out of range: %w", r.topic, p, from, err)
	case kerr.IsRetriable(err):
		return false, true, nil
	default:
		return false, false, fmt.Errorf("read %s partition %d: %w", r.topic, p, err)
	}
	r.hwm[p], r.lso[p] = rp.HighWatermark, rp.LastStableOffset
	if r.lso[p] < 0 { // brokers before read_committed support
		r.lso[p] = r.hwm[p]
	}
	fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		Offset:         from,
		IsolationLevel: kgo.ReadCommitted(),
		Topic:          r.topic,
		Partition:      p,
	}, rp, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil && len(fp.Records) == 0 {
		return false, false, fmt.Errorf("read %s partition %d at %d: %w", r.topic, p, from, fp.Err)
	}
	for _, rec := range fp.Records {
		fn(rec)
	}
	if next > from {
		r.pos[p] = next
		return true, false, nil
	}
	return false, false, nil
}
