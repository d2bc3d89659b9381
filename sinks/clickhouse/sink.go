// Package clickhouse is the ClickHouse sink: it consumes the compacted session-state topic,
// the consent topic, the webhook-attempt topic and the fraud group's face-index topic, and
// writes the analyst tables of API.md section 3 (decisions, checks, consents,
// webhook_deliveries, and face_index: the faces of verified sessions) through the runtime's BatchRunner, at least once and
// idempotently (ReplacingMergeTree keyed on the session, the check, the consent id or the
// delivery attempt). A tombstone, or a snapshot carrying a biometric erasure (consent
// withdrawal), or a tombstone of the session's face-index entry, marks the session's
// face_index rows deleted. It also owns the embedded,
// versioned migrations of those tables.
// Writes use only the native protocol's PrepareBatch/Append/Send, the only insert path that
// works on ClickHouse 18.16 as well as current ClickHouse.
package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// DefaultGroupName is the consumer group of the sink.
const DefaultGroupName = "clickhouse-sink"

// Option configures New.
type Option func(*config)

type config struct {
	db         string
	hashKey    []byte
	group      string
	maxRecords int
	maxWait    time.Duration
	logger     *slog.Logger
	now        func() time.Time
}

// WithDatabase sets the database (default DefaultDatabase), migrated with the same name.
func WithDatabase(db string) Option { return func(c *config) { c.db = db } }

// WithIDHashKey sets the secret key of IDNumberHash. Required. Use the secret the
// blocklist's hashes are made with so both can be joined.
func WithIDHashKey(key []byte) Option {
	return func(c *config) { c.hashKey = append([]byte(nil), key...) }
}

// WithGroupName sets the consumer group (default DefaultGroupName).
func WithGroupName(name string) Option { return func(c *config) { c.group = name } }

// WithBatch sets the batch limits: at most maxRecords records, handed over at the latest
// maxWait after the first one arrived (default 5000 records, 1s).
func WithBatch(maxRecords int, maxWait time.Duration) Option {
	return func(c *config) { c.maxRecords, c.maxWait = maxRecords, maxWait }
}

// WithLogger sets the logger (default: discard). Record values are never logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithClock sets the clock of the ingested_at column (default time.Now).
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// Sink writes batches of records into ClickHouse. Safe for concurrent use.
type Sink struct {
	conn    driver.Conn
	codec   *schemas.Codec
	cfg     config
	skipped atomic.Int64
}

// Inputs are the topics the sink consumes.
func Inputs() []string {
	return []string{schemas.TopicSessionState, schemas.TopicConsents, schemas.TopicWebhookAttempts, schemas.TopicFaceIndex, schemas.TopicReviews}
}

// New returns a sink writing through conn into tables created by Migrate. Returns an error
// when conn or codec is nil, the hash key is missing, the database name is invalid or the
// batch limits are not positive.
func New(conn driver.Conn, codec *schemas.Codec, opts ...Option) (*Sink, error) {
	cfg := config{
		db: DefaultDatabase, group: DefaultGroupName, maxRecords: 5000, maxWait: time.Second,
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)), now: time.Now,
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	switch {
	case conn == nil || codec == nil:
		return nil, errors.New("new clickhouse sink: conn and codec are required")
	case len(cfg.hashKey) == 0:
		return nil, errors.New("new clickhouse sink: an id hash key is required (WithIDHashKey)")
	case !databaseName.MatchString(cfg.db):
		return nil, fmt.Errorf("new clickhouse sink: invalid database name %q", cfg.db)
	case cfg.maxRecords < 1 || cfg.maxWait <= 0:
		return nil, fmt.Errorf("new clickhouse sink: batch limits must be positive, got %d records, %s", cfg.maxRecords, cfg.maxWait)
	case cfg.group == "":
		return nil, errors.New("new clickhouse sink: empty group name")
	}
	return &Sink{conn: conn, codec: codec, cfg: cfg}, nil
}

// Group returns the sink as a batch group for stream.NewBatchRunner.
func (s *Sink) Group() stream.BatchGroup {
	return stream.BatchGroup{
		Name: s.cfg.group, Inputs: Inputs(), MaxRecords: s.cfg.maxRecords, MaxWait: s.cfg.maxWait,
		Handler: s.Write,
	}
}

// Skipped returns how many records could not be decoded and were skipped (logged).
func (s *Sink) Skipped() int64 { return s.skipped.Load() }

// batchRows is what one batch writes.
type batchRows struct {
	decisions, checks, consents, webhooks [][]any
	faces                                 [][]any  // face_index rows of verified sessions
	reviews                               [][]any  // review_actions rows
	eraseBefore, eraseAfter               []string // session ids to erase before / after the inserts
	faceErase                             []string // session ids whose biometrics were erased (consent withdrawal)
}

// Write writes one batch: the rows of every terminal session snapshot (the latest of a
// session within the batch), consent record and webhook attempt, then the erasure
// mutations of the tombstones, then the face_index mutation of the sessions whose latest
// snapshot in the batch carries a biometric erasure (consent withdrawal). It returns the first ClickHouse error, having written
// possibly part of the batch: writing the batch again is harmless, rows replace
// themselves. A record that cannot be decoded is logged and skipped (it never will be).
func (s *Sink) Write(ctx context.Context, recs []*stream.Record) error {
	b := s.collect(recs)
	if err := s.erase(ctx, b.eraseBefore); err != nil {
		return err
	}
	for _, t := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"decisions", decisionColumns, b.decisions},
		{"checks", checkColumns, b.checks},
		{"consents", consentColumns, b.consents},
		{"webhook_deliveries", webhookColumns, b.webhooks},
		{"face_index", faceColumns, b.faces},
		{"review_actions", reviewColumns, b.reviews},
	} {
		if err := s.insert(ctx, t.table, t.cols, t.rows); err != nil {
			return err
		}
	}
	if err := s.erase(ctx, b.eraseAfter); err != nil {
		return err
	}
	return s.eraseFaces(ctx, b.faceErase)
}

// collect decodes recs into rows. Of several snapshots of one session only the last is
// kept; a tombstone erases the session after the inserts, or before them when a snapshot of
// the same session follows it in the batch.
func (s *Sink) collect(recs []*stream.Record) batchRows {
	var b batchRows
	type last struct {
		st        *schemas.SessionState // nil: tombstone
		tombstone bool                  // a tombstone was seen in this batch
	}
	sessions := map[string]*last{}
	var order []string
	faces := map[string]*schemas.FaceIndexEntry{} // session → latest face-index entry (nil: tombstone)
	var faceOrder []string
	now := s.cfg.now()
	for _, r := range recs {
		switch r.Topic {
		case schemas.TopicSessionState:
			key := string(r.Key)
			l, ok := sessions[key]
			if !ok {
				l = &last{}
				sessions[key] = l
				order = append(order, key)
			}
			if r.Value == nil {
				l.st, l.tombstone = nil, true
				continue
			}
			var st schemas.SessionState
			if err := s.codec.Decode(r.Topic, r.Value, &st); err != nil {
				s.skip(r, err)
				continue
			}
			l.st = &st
		case schemas.TopicConsents:
			var c schemas.ConsentRecorded
			if err := s.codec.Decode(r.Topic, r.Value, &c); err != nil {
				s.skip(r, err)
				continue
			}
			b.consents = append(b.consents, consentRow(&c))
		case schemas.TopicWebhookAttempts:
			var a schemas.WebhookAttempt
			if err := s.codec.Decode(r.Topic, r.Value, &a); err != nil {
				s.skip(r, err)
				continue
			}
			b.webhooks = append(b.webhooks, webhookRow(&a))
		case schemas.TopicReviews:
			var ev schemas.ReviewEvent
			if err := s.codec.Decode(r.Topic, r.Value, &ev); err != nil {
				s.skip(r, err)
				continue
			}
			if row := reviewRow(&ev); row != nil {
				b.reviews = append(b.reviews, row)
			}
		case schemas.TopicFaceIndex:
			key := string(r.Key)
			if _, seen := faces[key]; !seen {
				faceOrder = append(faceOrder, key)
			}
			if r.Value == nil {
				faces[key] = nil
				continue
			}
			e := new(schemas.FaceIndexEntry)
			if err := s.codec.Decode(r.Topic, r.Value, e); err != nil {
				s.skip(r, err)
				continue
			}
			faces[key] = e
		default:
			s.skip(r, errors.New("topic not consumed by the sink"))
		}
	}
	for _, key := range faceOrder {
		switch e := faces[key]; {
		case e == nil:
			b.faceErase = append(b.faceErase, key) // erased: after the inserts
		case faceIndexed(e):
			b.faces = append(b.faces, faceRow(e))
		}
	}
	for _, key := range order {
		l := sessions[key]
		if l.st != nil && l.st.BiometricErasure != nil && !slices.Contains(b.faceErase, key) {
			b.faceErase = append(b.faceErase, key)
		}
		switch {
		case l.st == nil:
			b.eraseAfter = append(b.eraseAfter, key)
		case isTerminal(l.st):
			if l.tombstone {
				b.eraseBefore = append(b.eraseBefore, key)
			}
			b.decisions = append(b.decisions, decisionRow(l.st, s.cfg.hashKey, now))
			b.checks = append(b.checks, checkRows(l.st)...)
		case l.tombstone:
			b.eraseBefore = append(b.eraseBefore, key)
		}
	}
	return b
}

func (s *Sink) skip(r *stream.Record, err error) {
	s.skipped.Add(1)
	s.cfg.logger.Warn("clickhouse sink: record skipped", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
}

// insert writes rows into table with one PrepareBatch/Append/Send.
func (s *Sink) insert(ctx context.Context, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+s.cfg.db+"."+table+" ("+strings.Join(cols, ", ")+")")
	if err != nil {
		return fmt.Errorf("clickhouse sink: prepare insert into %s: %w", table, err)
	}
	for _, row := range rows {
		if err := batch.Append(row...); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("clickhouse sink: append to %s: %w", table, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("clickhouse sink: insert %d rows into %s: %w", len(rows), table, err)
	}
	return nil
}

// erase clears the PII of sessions in decisions and marks their face_index rows deleted
// with an empty embedding (ALTER TABLE ... UPDATE mutations, applied asynchronously by the
// server to every part existing when they are issued).
func (s *Sink) erase(ctx context.Context, sessionIDs []string) error {
	if len(sessionIDs) == 0 {
		return nil
	}
	in := quoteList(sessionIDs)
	if err := s.conn.Exec(ctx, "ALTER TABLE "+s.cfg.db+".decisions UPDATE "+erasureSet+" WHERE session_id IN ("+in+")"); err != nil {
		return fmt.Errorf("clickhouse sink: erase %d sessions: %w", len(sessionIDs), err)
	}
	if err := s.conn.Exec(ctx, "ALTER TABLE "+s.cfg.db+".review_actions UPDATE note = NULL WHERE session_id IN ("+in+")"); err != nil {
		return fmt.Errorf("clickhouse sink: erase the review notes of %d sessions: %w", len(sessionIDs), err)
	}
	return s.eraseFaces(ctx, sessionIDs)
}

// eraseFaces marks the face_index rows of sessions deleted with an empty embedding (an
// ALTER TABLE ... UPDATE mutation). The sink issues it for a tombstone (see erase) and for
// every snapshot carrying a BiometricErasure (a consent withdrawal; at most once per
// session and batch): such a session is terminal, so it seldom has a later snapshot, and a
// repeated mutation changes nothing.
func (s *Sink) eraseFaces(ctx context.Context, sessionIDs []string) error {
	if len(sessionIDs) == 0 {
		return nil
	}
	st := "ALTER TABLE " + s.cfg.db + ".face_index UPDATE deleted = 1, embedding = emptyArrayFloat32() WHERE session_id IN (" + quoteList(sessionIDs) + ")"
	if err := s.conn.Exec(ctx, st); err != nil {
		return fmt.Errorf("clickhouse sink: erase the faces of %d sessions: %w", len(sessionIDs), err)
	}
	return nil
}

// quoteList renders ids as ClickHouse string literals separated by commas.
func quoteList(ids []string) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('\'')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(id))
		b.WriteByte('\'')
	}
	return b.String()
}

// Spec is the ClickHouse sink: the topics analysts query, written to ClickHouse tables.
func Spec() topology.Node {
	return topology.Node{Name: DefaultGroupName, Kind: topology.Sink, Inputs: Inputs(), To: []string{"ClickHouse"}}
}
