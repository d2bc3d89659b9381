package chaos

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Session is one session the client drove through the edge.
type Session struct {
	ID   string
	Flow string
	// Completed: every step of the flow was uploaded and the edge took it (200 or 202). Only
	// a completed session must have a decision; one the client gave up on may expire.
	Completed bool
	Erased    bool // the client asked for its erasure (DELETE) and the edge took it
	// TrackingID is the consent tracking id the session was opened with; ConsentIDs the
	// records the consent API accepted for it (201), ConsentPosts how many times the client
	// posted (a retried post whose answer was lost may have been recorded too).
	TrackingID   string
	ConsentIDs   []string
	ConsentPosts int
}

// Decided is what Data Get says of a session.
type Decided struct {
	Status  string // verified | rejected | expired | ... ; "" when not found (404)
	Outcome string // the decision's outcome, "" while undecided
}

// ClickHouseRow is one row of `decisions FINAL`.
type ClickHouseRow struct {
	SessionID, DecisionID, Outcome string
}

// Sources is where Check reads what the pipeline left behind.
type Sources struct {
	Brokers    []string
	Codec      *schemas.Codec
	DataGet    func(ctx context.Context, sessionID string) (Decided, error)
	ClickHouse func(ctx context.Context) ([]ClickHouseRow, error) // every row of decisions FINAL
	Deliveries []Delivery
	BlobDir    string // the blob store's root (blob.NewFS)
	// Consents returns the consent ids Get Consent Data lists for a tracking id.
	Consents func(ctx context.Context, trackingID string) ([]string, error)
	// ClickHouseConsents returns the rows of consents FINAL per consent id.
	ClickHouseConsents func(ctx context.Context) (map[string]int, error)
}

// Invariant is one property the run must keep, with what was checked and what broke it.
type Invariant struct {
	Name    string
	Checked int      // sessions, rows or records looked at
	Broken  []string // one line per violation; empty: kept
}

// OK reports whether the invariant held.
func (i Invariant) OK() bool { return len(i.Broken) == 0 }

// Report is the invariants of one run.
type Report struct {
	Invariants []Invariant
	Decisions  map[string]schemas.Decision // session id → its decision on the topic (the last one)
}

// OK reports whether every invariant held.
func (r Report) OK() bool {
	for _, i := range r.Invariants {
		if !i.OK() {
			return false
		}
	}
	return true
}

// Print writes one line per invariant (✓ or ✗, its name, the count), then at most limit
// violations of each broken one.
func (r Report) Print(w io.Writer, limit int) {
	for _, i := range r.Invariants {
		mark := "ok    "
		if !i.OK() {
			mark = "BROKEN"
		}
		fmt.Fprintf(w, "  %s %-62s checked %4d  broken %d\n", mark, i.Name, i.Checked, len(i.Broken))
		for n, b := range i.Broken {
			if n == limit {
				fmt.Fprintf(w, "           … %d more\n", len(i.Broken)-limit)
				break
			}
			fmt.Fprintf(w, "           %s\n", b)
		}
	}
}

// Check reads the decision topic, every dead-letter topic, Data Get of every session, the
// ClickHouse decisions and the deliveries, and returns the invariants of the run: every
// completed session has exactly one decision on ekyc.decisions.v1 and the same in Data Get;
// exactly one webhook id per decided session (the decision's), delivered (answered 200) at
// least once, every delivery signed; one ClickHouse row per decided session, no other; no
// record on a dead-letter topic; no blob left of an erased session. It returns an error
// only when a source cannot be read.
func Check(ctx context.Context, sessions []Session, src Sources) (Report, error) {
	decisions, counts, err := readDecisions(ctx, src)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Decisions: decisions}
	opened := make(map[string]Session, len(sessions))
	for _, s := range sessions {
		opened[s.ID] = s
	}

	onTopic := Invariant{Name: "exactly one decision on ekyc.decisions.v1 per completed session"}
	dataGet := Invariant{Name: "Data Get shows the topic's decision"}
	for _, s := range sessions {
		if !s.Completed || s.Erased {
			continue
		}
		onTopic.Checked++
		switch n := counts[s.ID]; {
		case n == 0:
			onTopic.Broken = append(onTopic.Broken, fmt.Sprintf("%s (%s): no decision", s.ID, s.Flow))
		case n > 1:
			onTopic.Broken = append(onTopic.Broken, fmt.Sprintf("%s (%s): %d decisions", s.ID, s.Flow, n))
		}
		dataGet.Checked++
		d, err := src.DataGet(ctx, s.ID)
		if err != nil {
			return rep, fmt.Errorf("data get %s: %w", s.ID, err)
		}
		want, ok := decisions[s.ID]
		switch {
		case d.Outcome == "":
			dataGet.Broken = append(dataGet.Broken, fmt.Sprintf("%s (%s): status %q, no decision", s.ID, s.Flow, d.Status))
		case ok && d.Outcome != want.Outcome:
			dataGet.Broken = append(dataGet.Broken, fmt.Sprintf("%s: outcome %s, the topic's %s", s.ID, d.Outcome, want.Outcome))
		}
	}
	for id := range counts {
		if _, ok := opened[id]; !ok {
			onTopic.Broken = append(onTopic.Broken, fmt.Sprintf("%s: a decision for a session the client never opened", id))
		}
	}
	sort.Strings(onTopic.Broken)
	rep.Invariants = append(rep.Invariants, onTopic, dataGet)
	rep.Invariants = append(rep.Invariants, checkWebhooks(decisions, opened, src.Deliveries))

	rows, err := src.ClickHouse(ctx)
	if err != nil {
		return rep, fmt.Errorf("clickhouse: %w", err)
	}
	rep.Invariants = append(rep.Invariants, checkClickHouse(decisions, opened, rows))

	dlq, err := readDeadLetters(ctx, src)
	if err != nil {
		return rep, err
	}
	rep.Invariants = append(rep.Invariants, dlq)

	blobs, err := checkErased(sessions, src.BlobDir)
	if err != nil {
		return rep, err
	}
	rep.Invariants = append(rep.Invariants, blobs)

	consents, err := checkConsents(ctx, sessions, src)
	if err != nil {
		return rep, err
	}
	rep.Invariants = append(rep.Invariants, consents)
	return rep, nil
}

// checkConsents: every consent record the API accepted is in Get Consent Data and has one
// row in ClickHouse's consents FINAL; a tracking id holds no more records than were posted.
func checkConsents(ctx context.Context, sessions []Session, src Sources) (Invariant, error) {
	inv := Invariant{Name: "consent records: the accepted ones in the API and ClickHouse, no more"}
	if src.Consents == nil || src.ClickHouseConsents == nil {
		return inv, nil
	}
	rows, err := src.ClickHouseConsents(ctx)
	if err != nil {
		return inv, fmt.Errorf("clickhouse consents: %w", err)
	}
	for _, s := range sessions {
		if s.TrackingID == "" || len(s.ConsentIDs) == 0 {
			continue
		}
		inv.Checked++
		listed, err := src.Consents(ctx, s.TrackingID)
		if err != nil {
			return inv, fmt.Errorf("get consent data %s: %w", s.TrackingID, err)
		}
		for _, id := range s.ConsentIDs {
			if !slices.Contains(listed, id) {
				inv.Broken = append(inv.Broken, fmt.Sprintf("%s: accepted %s missing from Get Consent Data", s.TrackingID, id))
			}
			if rows[id] != 1 {
				inv.Broken = append(inv.Broken, fmt.Sprintf("%s: accepted %s has %d ClickHouse rows", s.TrackingID, id, rows[id]))
			}
		}
		if len(listed) > s.ConsentPosts {
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: %d records for %d posts", s.TrackingID, len(listed), s.ConsentPosts))
		}
	}
	sort.Strings(inv.Broken)
	return inv, nil
}

// readDecisions reads ekyc.decisions.v1 to its end: the last decision of each key and how
// many decisions (not tombstones) each key has.
func readDecisions(ctx context.Context, src Sources) (map[string]schemas.Decision, map[string]int, error) {
	decisions, counts := map[string]schemas.Decision{}, map[string]int{}
	var decodeErr error
	err := readTopic(ctx, src.Brokers, schemas.TopicDecisions, func(r *stream.Record) {
		if r.Value == nil {
			return
		}
		var d schemas.Decision
		if err := src.Codec.Decode(schemas.TopicDecisions, r.Value, &d); err != nil {
			decodeErr = fmt.Errorf("decision %s: %w", r.Key, err)
			return
		}
		decisions[string(r.Key)] = d
		counts[string(r.Key)]++
	})
	if err == nil {
		err = decodeErr
	}
	return decisions, counts, err
}

// readTopic calls fn for every committed record of topic, from its start to its end as of
// the call.
func readTopic(ctx context.Context, brokers []string, topic string, fn func(*stream.Record)) error {
	h, err := stream.NewHistory(topic, stream.WithBrokers(brokers))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	caughtUp := false
	err = h.Run(ctx, fn, func() { caughtUp = true; cancel() })
	if err == nil && !caughtUp {
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", topic, err)
	}
	return nil
}

// checkWebhooks: per decided session of the run, the distinct webhook ids of its
// ekyc.session.completed deliveries are exactly the decision's, and one was answered 200;
// every delivery is signed.
func checkWebhooks(decisions map[string]schemas.Decision, opened map[string]Session, ds []Delivery) Invariant {
	inv := Invariant{Name: "one webhook id per decided session, delivered, signatures valid"}
	ids, delivered := map[string][]string{}, map[string]bool{}
	for _, d := range ds {
		if !d.SignedOK {
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: delivery %s with a bad signature", d.SessionID, d.WebhookID))
		}
		if !slices.Contains(ids[d.SessionID], d.WebhookID) {
			ids[d.SessionID] = append(ids[d.SessionID], d.WebhookID)
		}
		if d.Answered == 200 {
			delivered[d.SessionID] = true
		}
	}
	for id, dec := range decisions {
		if s, ok := opened[id]; !ok || s.Erased {
			continue
		}
		inv.Checked++
		want := readmodel.WebhookID(dec.DecisionID)
		switch got := ids[id]; {
		case len(got) == 0:
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: no webhook", id))
		case len(got) > 1 || got[0] != want:
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: webhook ids %v, want %s", id, got, want))
		case !delivered[id]:
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: never answered 200", id))
		}
	}
	for id := range ids {
		if _, ok := decisions[id]; !ok {
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: webhook of a session without a decision on the topic", id))
		}
	}
	sort.Strings(inv.Broken)
	return inv
}

// checkClickHouse: one row of decisions FINAL per decided session, with its decision id;
// no row of any other session.
func checkClickHouse(decisions map[string]schemas.Decision, opened map[string]Session, rows []ClickHouseRow) Invariant {
	inv := Invariant{Name: "ClickHouse decisions FINAL: one row per decided session"}
	n := map[string]int{}
	for _, r := range rows {
		n[r.SessionID]++
		dec, ok := decisions[r.SessionID]
		switch {
		case !ok:
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: a row of a session without a decision on the topic", r.SessionID))
		case r.DecisionID != dec.DecisionID || r.Outcome != dec.Outcome:
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: row %s %s, topic %s %s", r.SessionID, r.DecisionID, r.Outcome, dec.DecisionID, dec.Outcome))
		}
	}
	for id := range decisions {
		if s, ok := opened[id]; !ok || s.Erased {
			continue
		}
		inv.Checked++
		if n[id] != 1 {
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: %d rows", id, n[id]))
		}
	}
	sort.Strings(inv.Broken)
	return inv
}

// readDeadLetters lists every record on a dead-letter topic (the contract's topics + ".dlq",
// and the webhook sink's): with the inputs the run sends, none is poison, so none may be
// there.
func readDeadLetters(ctx context.Context, src Sources) (Invariant, error) {
	inv := Invariant{Name: "no record dead-lettered"}
	topics := []string{schemas.TopicWebhookDLQ}
	for _, t := range schemas.Topics() {
		topics = append(topics, t.Name+".dlq")
	}
	for _, t := range topics {
		inv.Checked++
		err := readTopic(ctx, src.Brokers, t, func(r *stream.Record) {
			var why []string
			for _, h := range r.Headers {
				if strings.Contains(strings.ToLower(h.Key), "error") || strings.Contains(strings.ToLower(h.Key), "reason") {
					why = append(why, h.Key+"="+string(h.Value))
				}
			}
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s key %s %s", t, r.Key, strings.Join(why, " ")))
		})
		if err != nil {
			return inv, err
		}
	}
	return inv, nil
}

// checkErased: no blob of an erased session is left (the blob store keeps a session's
// blobs under a directory named by its id). The store is walked once.
func checkErased(sessions []Session, dir string) (Invariant, error) {
	inv := Invariant{Name: "no blob left of an erased session"}
	var erased []string
	for _, s := range sessions {
		if s.Erased {
			erased = append(erased, s.ID)
		}
	}
	inv.Checked = len(erased)
	if len(erased) == 0 {
		return inv, nil
	}
	left := map[string]int{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		for _, id := range erased {
			if strings.Contains(path, id) {
				left[id]++
			}
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return inv, fmt.Errorf("blobs: %w", err)
	}
	for _, id := range erased {
		if left[id] > 0 {
			inv.Broken = append(inv.Broken, fmt.Sprintf("%s: %d blobs left", id, left[id]))
		}
	}
	return inv, nil
}
