package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/processors/session"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// crashClientOpts make a killed member's partitions and open transaction come back in
// seconds rather than the production defaults of tens of seconds.
func crashClientOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.FetchMaxWait(250 * time.Millisecond),
		kgo.SessionTimeout(1500 * time.Millisecond),
		kgo.HeartbeatInterval(150 * time.Millisecond),
		kgo.RebalanceTimeout(3 * time.Second),
		kgo.TransactionTimeout(2 * time.Second),
	}
}

// TestSessionGroupCrash kills the session group mid-stream (its client closed without
// committing or leaving; a new member started) while sessions flow through the edge. Every
// session must still end with exactly one decision, and its final state must equal the
// state of the same sessions in a run without the crash.
func TestSessionGroupCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a group member")
	}
	const sessions = 15
	baseline := crashRun(t, sessions, false)
	crashed := crashRun(t, sessions, true)
	for i := range sessions {
		if baseline[i] != crashed[i] {
			t.Errorf("session %d differs after the crash:\n  without crash: %s\n  with crash:    %s", i, baseline[i], crashed[i])
		}
	}
}

// crashRun drives n sessions (flows in rotation) with the session group run by hand, kills
// it after a third of the uploads when crash is set, and returns each session's final state
// reduced to what must not depend on the crash.
func crashRun(t *testing.T, n int, crash bool) []string {
	t.Helper()
	s := testService(t, slices.DeleteFunc(slices.Clone(allGroups), func(g string) bool { return g == "session" }))
	c := newClient(t, s)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	member := func() *stream.StatefulRunner {
		r, err := stream.NewStatefulRunner(session.NewGroup(s.codec),
			stream.WithBrokers(s.brokers), stream.WithLogger(log),
			stream.WithKgoOpts(crashClientOpts()...))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ctx, cancel := context.WithCancel(context.Background())
	var members sync.WaitGroup
	run := func(r *stream.StatefulRunner) {
		members.Add(1)
		go func() { defer members.Done(); _ = r.Run(ctx) }()
	}
	t.Cleanup(func() { cancel(); members.Wait() })
	first := member()
	run(first)

	flows := []string{"id_card", "vehicle_registration", "passport", "nfc_only", "chip_id_card"}
	total := 0
	for i := range n {
		total += len(flowUploads[flows[i%len(flows)]])
	}
	var uploads atomic.Int64
	killed := make(chan struct{})
	var once sync.Once
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flow := flows[i%len(flows)]
			init := c.openSession(flow)
			id, token := str(init["session_id"]), str(init["sdk_token"])
			ids[i] = id
			for _, up := range flowUploads[flow] {
				var r response
				if up.endpoint == "nfc" {
					r = c.do(http.MethodPost, "/v1/ekyc/sessions/"+id+"/nfc", token, "application/json", s.chipRead(t, str(init["nonce"])))
				} else {
					var img []byte
					if up.endpoint == "selfie" {
						img = s.selfie(t)
					} else {
						img = s.documentFor(t, flow, up.side)
					}
					r = c.upload(id, up.endpoint, up.side, img, token)
				}
				if r.status >= 300 {
					t.Errorf("session %d %s: %d %s", i, up.endpoint, r.status, r.body)
					return
				}
				if crash && uploads.Add(1) == int64(total/3) {
					once.Do(func() {
						first.Kill()
						run(member())
						close(killed)
					})
				}
			}
		}()
	}
	wg.Wait()
	if crash {
		select {
		case <-killed:
		default:
			t.Fatal("the crash never happened")
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range ids {
				if st, ok, _ := s.states.Get(context.Background(), id); !ok || st.Decision == nil {
					dumpSession(t, s, id)
				}
			}
		}
	})
	out := make([]string, n)
	for i, id := range ids {
		got := c.waitStatus(id, "verified", "rejected")
		if got["status"] != "verified" {
			t.Errorf("session %d: %v", i, got["status"])
		}
		st, ok, err := s.states.Get(context.Background(), id)
		if err != nil || !ok {
			t.Fatalf("state of %s: %v %v", id, ok, err)
		}
		out[i] = reduceState(st)
	}
	counts := countDecisions(t, s.brokers)
	for i, id := range ids {
		if counts[id] != 1 {
			t.Errorf("session %d has %d decisions on %s, want exactly 1", i, counts[id], schemas.TopicDecisions)
		}
	}
	return out
}

// reduceState keeps what must not depend on a crash: flow, status, each step's status, each
// check's name and status, the outcome and its reasons. (Not Version: it counts the events
// that changed the state, and whether a capture or its assessment is consumed first changes
// that count with or without a crash.)
func reduceState(st *schemas.SessionState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "flow=%s status=%s", st.Flow, st.Status)
	for _, c := range st.Captures {
		fmt.Fprintf(&b, " step:%s=%s", c.Step, c.Status)
	}
	var checks []string
	for _, c := range st.Checks {
		checks = append(checks, c.Name+"="+c.Status)
	}
	slices.Sort(checks)
	fmt.Fprintf(&b, " checks=%v", checks)
	if st.Decision != nil {
		fmt.Fprintf(&b, " outcome=%s reasons=%v", st.Decision.Outcome, st.Decision.Reasons)
	}
	return b.String()
}

// countDecisions reads the whole decisions topic as a data team would (read_committed) and
// counts decisions per session.
func countDecisions(t *testing.T, brokers []string) map[string]int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(schemas.TopicDecisions),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	counts := map[string]int{}
	idle := 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for idle < 2 && ctx.Err() == nil {
		pollCtx, pollCancel := context.WithTimeout(ctx, time.Second) // PollFetches waits for data
		fs := cl.PollFetches(pollCtx)
		pollCancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if r.Value != nil {
				counts[string(r.Key)]++
			}
		})
		if n == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	return counts
}

// dumpSession logs every committed record of a session on the session group's inputs and
// its table, in the order each partition holds them: what a failed crash run needs to tell
// a lost event from a stale state.
func dumpSession(t *testing.T, s *testEnv, id string) {
	topics := append(slices.Clone(session.NewGroup(s.codec).Inputs), schemas.TopicSessionState)
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Logf("dump %s: %v", id, err)
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) != id {
				return
			}
			line := fmt.Sprintf("%s p%d o%d ts=%s len=%d", r.Topic, r.Partition, r.Offset, r.Timestamp.Format("15:04:05.000"), len(r.Value))
			if r.Topic == schemas.TopicSessionState && r.Value != nil {
				var st schemas.SessionState
				if err := s.codec.Decode(r.Topic, r.Value, &st); err == nil {
					line += fmt.Sprintf(" version=%d status=%s captures=%d checks=%d", st.Version, st.Status, len(st.Captures), len(st.Checks))
				}
			}
			t.Log(line)
		})
	}
}
