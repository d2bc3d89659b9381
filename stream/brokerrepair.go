package stream

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A broker killed with transactions open leaves their records on disk with no marker after
// them. kfake, loading such a log, treats them as aborted in memory but writes no ABORT
// marker, and that breaks two things (reproduced in TestCrashedTransactionGetsItsMarker):
//
//   - a read_committed reader that starts before them (a new consumer group, a table being
//     restored, kcat) skips every later record of the same producer id, committed or not,
//     until it meets an ABORT marker of that producer: a transactional producer keeps its
//     id across restarts (same transactional id), so the decisions it commits after the
//     restart vanish for such a reader;
//   - the next load after another crash pairs those records with the producer's next
//     COMMIT marker: the aborted records come back as committed (a duplicate decision).
//
// abortCrashedTransactions writes the missing ABORT markers, through the WriteTxnMarkers
// request, before the broker lets any other client in (gatedListener): then the marker
// directly follows the crashed records, as an abort by the coordinator would have.

// abortCrashedTransactions scans every partition of the broker at addr (read_uncommitted,
// raw batches) for transactions that have data and no end marker, and writes an ABORT
// marker for each. It returns how many it wrote.
func abortCrashedTransactions(ctx context.Context, addr string, gate *gatedListener) (int, error) {
	var d net.Dialer
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, host)
		if err == nil {
			gate.allow(c.LocalAddr().String())
		}
		return c, err
	}))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tds, err := adm.ListTopics(ctx)
	if err != nil {
		return 0, fmt.Errorf("list topics: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, tds.Names()...)
	if err != nil {
		return 0, fmt.Errorf("list end offsets: %w", err)
	}
	written := 0
	for _, td := range tds.Sorted() {
		ongoing, err := ongoingTransactions(ctx, cl, td.Topic, td.Partitions.Numbers())
		if err != nil {
			return written, err
		}
		for _, pd := range td.Partitions.Sorted() {
			end, ok := ends.Lookup(td.Topic, pd.Partition)
			if !ok || end.Offset <= 0 {
				continue
			}
			open, err := openTransactions(ctx, cl, td.Topic, td.ID, pd.Partition, end.Offset)
			if err != nil {
				return written, err
			}
			for pid, epoch := range open {
				if ongoing[pd.Partition][pid] {
					continue // restored after a clean shutdown: its producer may still commit it
				}
				if err := writeAbortMarker(ctx, cl, td.Topic, pd.Partition, pid, epoch); err != nil {
					return written, err
				}
				written++
			}
		}
	}
	return written, nil
}

// ongoingTransactions returns, per partition of topic, the producers the broker holds a
// transaction open for: those it restored from a clean shutdown (kfake keeps open
// transactions across one), not those a crash left, which it has aborted in memory.
func ongoingTransactions(ctx context.Context, cl *kgo.Client, topic string, parts []int32) (map[int32]map[int64]bool, error) {
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = topic, parts
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("describe producers of %s: %w", topic, err)
	}
	out := map[int32]map[int64]bool{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("describe producers of %s/%d: %w", topic, p.Partition, err)
			}
			for _, ap := range p.ActiveProducers {
				if out[p.Partition] == nil {
					out[p.Partition] = map[int64]bool{}
				}
				out[p.Partition][ap.ProducerID] = true
			}
		}
	}
	return out, nil
}

// openTransactions reads partition p of topic up to end and returns the producers whose
// last transactional data has no control batch after it, with their epoch.
func openTransactions(ctx context.Context, cl *kgo.Client, topic string, id [16]byte, p int32, end int64) (map[int64]int16, error) {
	open := map[int64]int16{}
	for pos := int64(0); pos < end; {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.IsolationLevel = -1, 0, 64<<20, 0
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch, rp.LogStartOffset, rp.PartitionMaxBytes = p, pos, -1, -1, 32<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kresp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, fmt.Errorf("fetch %s/%d: %w", topic, p, err)
		}
		if len(kresp.Topics) != 1 || len(kresp.Topics[0].Partitions) != 1 {
			return nil, fmt.Errorf("fetch %s/%d: unexpected response", topic, p)
		}
		part := kresp.Topics[0].Partitions[0]
		switch err := kerr.ErrorForCode(part.ErrorCode); {
		case err == nil:
		case err == kerr.OffsetOutOfRange && pos == 0:
			pos = part.LogStartOffset // below the log start (deleted records): from it
			if pos <= 0 {
				return nil, fmt.Errorf("fetch %s/%d: %w", topic, p, err)
			}
			continue
		default:
			return nil, fmt.Errorf("fetch %s/%d at %d: %w", topic, p, pos, err)
		}
		next := pos
		for raw := part.RecordBatches; len(raw) >= 12; {
			size := 12 + int(int32(binary.BigEndian.Uint32(raw[8:12])))
			if size > len(raw) || size < 12 {
				break // a partial batch at the end of the response
			}
			var b kmsg.RecordBatch
			if err := b.ReadFrom(raw[:size]); err != nil {
				return nil, fmt.Errorf("fetch %s/%d: batch at %d: %w", topic, p, pos, err)
			}
			raw = raw[size:]
			switch {
			case b.Attributes&0x20 != 0: // control: ends the producer's transaction
				delete(open, b.ProducerID)
			case b.Attributes&0x10 != 0: // transactional data
				open[b.ProducerID] = b.ProducerEpoch
			}
			next = b.FirstOffset + int64(b.LastOffsetDelta) + 1
		}
		if next <= pos {
			return nil, fmt.Errorf("fetch %s/%d: no progress at %d", topic, p, pos)
		}
		pos = next
	}
	return open, nil
}

// writeAbortMarker writes an ABORT marker of producer pid at epoch to topic/p.
func writeAbortMarker(ctx context.Context, cl *kgo.Client, topic string, p int32, pid int64, epoch int16) error {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed = pid, epoch, false
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, []int32{p}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("abort marker %s/%d: %w", topic, p, err)
	}
	for _, rm := range resp.Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return fmt.Errorf("abort marker %s/%d: %w", topic, p, err)
				}
			}
		}
	}
	return nil
}

// gatedListener hands the broker only the connections of allowed remote addresses until
// Open; the others wait, accepted by the kernel, and are handed over when it opens.
type gatedListener struct {
	net.Listener
	accepted chan acceptResult
	release  chan net.Conn

	mu      sync.Mutex
	open    bool
	allowed map[string]bool
	held    []net.Conn
}

type acceptResult struct {
	c   net.Conn
	err error
}

func newGatedListener(inner net.Listener) *gatedListener {
	g := &gatedListener{Listener: inner, accepted: make(chan acceptResult, 1), release: make(chan net.Conn, 1024), allowed: map[string]bool{}}
	go func() {
		for {
			c, err := inner.Accept()
			g.accepted <- acceptResult{c, err}
			if err != nil {
				return
			}
		}
	}()
	return g
}

// Accept returns the next connection the gate lets through.
func (g *gatedListener) Accept() (net.Conn, error) {
	for {
		select {
		case c := <-g.release:
			return c, nil
		case r := <-g.accepted:
			if r.err != nil {
				return nil, r.err
			}
			g.mu.Lock()
			pass := g.open || g.allowed[r.c.RemoteAddr().String()]
			if !pass {
				g.held = append(g.held, r.c)
			}
			g.mu.Unlock()
			if pass {
				return r.c, nil
			}
		}
	}
}

// allow lets the connection from addr through (also when it is already held).
func (g *gatedListener) allow(addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.allowed[addr] = true
	g.releaseLocked(func(c net.Conn) bool { return c.RemoteAddr().String() == addr })
}

// Open lets every connection through, those held first.
func (g *gatedListener) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = true
	g.releaseLocked(func(net.Conn) bool { return true })
}

func (g *gatedListener) releaseLocked(match func(net.Conn) bool) {
	kept := g.held[:0]
	for _, c := range g.held {
		if match(c) {
			go func() { g.release <- c }()
		} else {
			kept = append(kept, c)
		}
	}
	g.held = kept
}

// repairTimeout bounds the scan for crashed transactions at start.
const repairTimeout = 2 * time.Minute
