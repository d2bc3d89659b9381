package webhook

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// tenantBusyDelay is how long a due delivery waits when its tenant already has
// PerTenantConcurrency attempts in flight.
const tenantBusyDelay = 20 * time.Millisecond

// item is one record of the retry topic, from Take until finished.
type item struct {
	rec        *stream.Record
	d          schemas.WebhookDelivery
	due        time.Time
	index      int  // position in the heap, -1 when not in it
	inflight   bool // an attempt is running
	superseded bool // a later attempt of the same webhook is already on the topic
}

// partState is what the deliverer holds for one partition of the retry topic it took
// records of.
type partState struct {
	pending  map[int64]*item  // records not finished yet, by offset
	latest   map[string]*item // newest unfinished retry (attempt > 0) per webhook id
	inflight sync.WaitGroup
}

// deliverer is the delivery group: a stream.AsyncRunner hands it the records of the retry
// topic and commits, per partition, up to the lowest record the deliverer has not finished;
// the deliverer keeps them in a timer heap and attempts them as they fall due. See the
// package comment.
type deliverer struct {
	s      *Sink
	runner *stream.AsyncRunner

	mu        sync.Mutex
	parts     map[int32]*partState
	queue     itemHeap
	inflight  int
	perTenant map[string]int

	wake    chan struct{}
	workers sync.WaitGroup
	workCtx context.Context // attempts and their produces; outlives Run's ctx for a grace period
	stop    context.CancelFunc
}

func newDeliverer(s *Sink, opts ...stream.Option) (*deliverer, error) {
	d := &deliverer{
		s:         s,
		parts:     make(map[int32]*partState),
		perTenant: make(map[string]int),
		wake:      make(chan struct{}, 1),
	}
	d.workCtx, d.stop = context.WithCancel(context.Background())
	runner, err := stream.NewAsyncRunner(stream.AsyncGroup{
		Name:           s.cfg.DeliveryGroup,
		Input:          schemas.TopicWebhookRetry,
		Take:           d.ingest,
		Release:        d.release,
		CommitInterval: s.cfg.CommitInterval,
	}, opts...)
	if err != nil {
		d.stop()
		return nil, fmt.Errorf("delivery group: %w", err)
	}
	d.runner = runner
	return d, nil
}

// run delivers until ctx ends, then lets the attempts in flight finish (for at most one
// attempt timeout and a few seconds; the rest stay unfinished and are handed over again
// after the restart), commits and leaves the group.
func (d *deliverer) run(ctx context.Context) error {
	defer d.stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	finished := make(chan struct{})
	defer close(finished)
	go func() { // once ctx ends, the attempts in flight have a grace period, then are cancelled
		select {
		case <-finished:
			return
		case <-ctx.Done():
		}
		grace := time.NewTimer(d.s.cfg.Timeout + 5*time.Second)
		defer grace.Stop()
		select {
		case <-finished:
		case <-grace.C:
			d.stop()
		}
	}()
	var loops sync.WaitGroup
	loops.Go(func() { d.schedule(ctx) })
	err := d.runner.Run(ctx)
	cancel() // the runner may end on its own (client closed): the schedule stops with it
	loops.Wait()
	d.workers.Wait()
	return err
}

func (d *deliverer) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// ingest adds one record to its partition's pending set and to the timer heap.
func (d *deliverer) ingest(rec *stream.Record) {
	defer d.signal()
	var del schemas.WebhookDelivery
	if err := d.s.cfg.Codec.Decode(schemas.TopicWebhookRetry, rec.Value, &del); err != nil {
		// Not a delivery we can read: nothing to retry. Logged without its content.
		d.s.log.Error("webhook delivery: undecodable retry record skipped", "partition", rec.Partition, "offset", rec.Offset, "err", err)
		d.runner.Done(rec)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.parts[rec.Partition]
	if st == nil {
		st = &partState{pending: make(map[int64]*item), latest: make(map[string]*item)}
		d.parts[rec.Partition] = st
	}
	it := &item{rec: rec, d: del, due: del.NotBefore, index: -1}
	if del.Attempt > 0 {
		if prev := st.latest[del.WebhookID]; prev != nil {
			if prev.d.Attempt >= del.Attempt {
				d.runner.Done(rec) // a repeat of a retry already pending (a restart re-ran its attempt)
				return
			}
			if prev.inflight {
				prev.superseded = true
			} else {
				if prev.index >= 0 {
					heap.Remove(&d.queue, prev.index)
				}
				delete(st.pending, prev.rec.Offset)
				d.runner.Done(prev.rec)
			}
		}
		st.latest[del.WebhookID] = it
	}
	st.pending[rec.Offset] = it
	heap.Push(&d.queue, it)
}

// release forgets partitions handed over: their not-yet-due records leave the heap and,
// unless lost, the attempts in flight finish first; the runner then commits.
func (d *deliverer) release(parts []int32, lost bool) {
	var waits []*partState
	d.mu.Lock()
	for _, p := range parts {
		st := d.parts[p]
		if st == nil {
			continue
		}
		for _, it := range st.pending {
			if it.index >= 0 {
				heap.Remove(&d.queue, it.index)
			}
		}
		delete(d.parts, p)
		waits = append(waits, st)
	}
	d.mu.Unlock()
	if !lost {
		for _, st := range waits {
			st.inflight.Wait()
		}
	}
}

// schedule starts attempts as they fall due, within the global and per-tenant limits.
func (d *deliverer) schedule(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d.mu.Lock()
		wait := time.Hour
		for d.queue.Len() > 0 && d.inflight < d.s.cfg.Concurrency {
			now := d.s.cfg.Now()
			it := d.queue[0]
			if it.due.After(now) {
				wait = it.due.Sub(now)
				break
			}
			heap.Pop(&d.queue)
			if d.perTenant[it.d.Envelope.TenantID] >= d.s.cfg.PerTenantConcurrency {
				it.due = now.Add(tenantBusyDelay)
				heap.Push(&d.queue, it)
				continue
			}
			d.dispatch(it)
		}
		d.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// dispatch starts the attempt of it. d.mu is held.
func (d *deliverer) dispatch(it *item) {
	st := d.parts[it.rec.Partition]
	it.inflight = true
	d.inflight++
	d.perTenant[it.d.Envelope.TenantID]++
	st.inflight.Add(1)
	d.workers.Add(1)
	go func() {
		defer d.workers.Done()
		defer st.inflight.Done()
		finished := d.attempt(it)
		d.mu.Lock()
		d.inflight--
		if d.perTenant[it.d.Envelope.TenantID]--; d.perTenant[it.d.Envelope.TenantID] <= 0 {
			delete(d.perTenant, it.d.Envelope.TenantID)
		}
		it.inflight = false
		if finished {
			delete(st.pending, it.rec.Offset)
			if st.latest[it.d.WebhookID] == it {
				delete(st.latest, it.d.WebhookID)
			}
			d.runner.Done(it.rec)
		}
		d.mu.Unlock()
		d.signal()
	}()
}

// attempt makes one delivery attempt of it and produces its attempt record and follow-up
// (the next retry or the dead letter). It reports whether both were acknowledged; if not
// (shutdown), the record stays unfinished and is attempted again after a restart.
func (d *deliverer) attempt(it *item) bool {
	del := it.d
	n := del.Attempt + 1
	now := d.s.cfg.Now().UTC().Truncate(time.Millisecond)
	res := d.send(del, now)

	// Attempt ids are unique per chain: the decision's first delivery keeps the short form
	// "<webhook-id>/<n>"; a replay's attempts carry the replay's id, so they never replace
	// the first delivery's records where attempts are stored by event id.
	chain := del.Envelope.EventID
	if del.Chain != nil {
		chain = *del.Chain
	}
	idPrefix := del.WebhookID + "/"
	if chain != del.WebhookID+"/0" {
		idPrefix += chain + "/"
	}
	rec := schemas.WebhookAttempt{
		Envelope: schemas.Envelope{
			EventID: idPrefix + strconv.Itoa(n), SessionID: del.Envelope.SessionID,
			TenantID: del.Envelope.TenantID, OccurredAt: now, Producer: Producer,
		},
		WebhookID: del.WebhookID, DecisionEventID: del.DecisionEventID, URL: del.URL, Attempt: n,
		StatusCode: res.status, DurationMS: res.duration.Milliseconds(), AttemptedAt: now,
	}
	var follow *schemas.WebhookDelivery
	var followTopic string
	next := del
	next.Chain = &chain
	next.Attempt = n
	next.LastStatus = res.status
	next.Envelope.OccurredAt = now
	next.Envelope.Producer = Producer
	if res.err != nil {
		msg := res.err.Error()
		rec.Error, next.LastError = &msg, &msg
	}
	backoff, more := d.s.cfg.Schedule.Backoff(n)
	switch {
	case res.err == nil:
		rec.Outcome = schemas.WebhookDelivered
	case errors.Is(res.err, ErrRefusedTarget):
		rec.Outcome = schemas.WebhookRefused
		next.NotBefore = now
		follow, followTopic = &next, schemas.TopicWebhookDLQ
	case more:
		due := now.Add(backoff)
		rec.Outcome, rec.NextAttemptAt = schemas.WebhookRetry, &due
		next.NotBefore = due
		follow, followTopic = &next, schemas.TopicWebhookRetry
	default:
		rec.Outcome = schemas.WebhookDeadLettered
		next.NotBefore = now
		follow, followTopic = &next, schemas.TopicWebhookDLQ
	}
	d.mu.Lock()
	superseded := it.superseded
	d.mu.Unlock()
	if superseded && followTopic == schemas.TopicWebhookRetry {
		follow = nil // the retry this attempt would schedule is already on the topic
	}
	outs := make([]stream.Output, 0, 2)
	out, err := d.s.output(schemas.TopicWebhookAttempts, del.Envelope.SessionID, rec)
	if err != nil {
		d.s.log.Error("webhook delivery: encode attempt", "err", err)
		return false
	}
	outs = append(outs, out)
	if follow != nil {
		follow.Envelope.EventID = idPrefix + followTopic + "/" + strconv.Itoa(n)
		out, err := d.s.output(followTopic, del.Envelope.SessionID, *follow)
		if err != nil {
			d.s.log.Error("webhook delivery: encode follow-up", "err", err)
			return false
		}
		outs = append(outs, out)
	}
	d.s.attempts.WithLabelValues(rec.Outcome).Inc()
	d.s.duration.WithLabelValues(rec.Outcome).Observe(res.duration.Seconds())
	if rec.Outcome != schemas.WebhookDelivered {
		d.s.log.Info("webhook delivery failed", "webhook_id", del.WebhookID, "tenant_id", del.Envelope.TenantID,
			"attempt", n, "outcome", rec.Outcome, "err", res.err)
	}
	return d.produce(outs)
}

// send resolves the tenant's keys and settings and posts the webhook.
func (d *deliverer) send(del schemas.WebhookDelivery, now time.Time) sendResult {
	t, ok := d.s.cfg.Tenants.Get(del.Envelope.TenantID)
	if !ok {
		return sendResult{err: fmt.Errorf("%w: unknown tenant", ErrRefusedTarget)}
	}
	keys, err := signingKeys(t.WebhookSecrets)
	if err != nil {
		return sendResult{err: fmt.Errorf("%w: %w", ErrRefusedTarget, err)}
	}
	return d.s.sender.send(d.workCtx, del.URL, t.AllowPrivateWebhooks, del.WebhookID, now, keys, del.Body)
}

// produce sends outs, retrying with backoff until they are acknowledged or the deliverer
// stops.
func (d *deliverer) produce(outs []stream.Output) bool {
	wait := 50 * time.Millisecond
	for {
		err := d.s.cfg.Producer.Produce(d.workCtx, outs...)
		if err == nil {
			return true
		}
		if d.workCtx.Err() != nil {
			return false
		}
		d.s.log.Warn("webhook delivery: produce failed, retrying", "err", err)
		select {
		case <-d.workCtx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// itemHeap orders items by due time (container/heap).
type itemHeap []*item

func (h itemHeap) Len() int           { return len(h) }
func (h itemHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h itemHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *itemHeap) Push(x any) {
	it := x.(*item)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	it.index = -1
	*h = old[:len(old)-1]
	return it
}
