// Package stream is the Kafka runtime every processor group runs on: topic bootstrap,
// the embedded broker, stateless at-least-once groups, exactly-once stateful groups with a
// table restored from a compacted topic, materialised views, producers, retries, dead-letter
// topics and metrics. The processor packages (processors/session, decision, quality, ...) hold
// domain logic only and declare themselves with Group or StatefulGroup, their inputs typed
// by the topic handles of schemas (On, OnTable: the topic guard, tombstones and decoding are
// the runtime's) and their outputs made with Emit.
package stream

import (
	"context"
	"time"
)

// Header is one Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// Record is one consumed record.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte // nil for a tombstone
	Headers   []Header
	Timestamp time.Time
}

// Output is one record a handler asks the runtime to produce. A nil Value is a tombstone.
type Output struct {
	Topic   string
	Key     []byte
	Value   []byte
	Headers []Header
}

// Handler processes one record and returns what to produce. Returning an error makes the
// runtime retry the record with backoff, then send it to "<topic>.dlq". A handler must be
// deterministic for a given record (and, for stateful groups, table contents): it may be
// called again for the same record after a crash or a retry.
type Handler func(ctx context.Context, rec *Record) ([]Output, error)

// Group declares a stateless, at-least-once consumer group: every output of a record is
// acknowledged by the brokers before the record's offset is committed. Records of one
// partition are handled in order.
type Group struct {
	Name    string   // consumer group id, e.g. "quality"
	Inputs  []string // topics consumed
	Outputs []string // topics produced to (documentation and bootstrap checks)
	Handler Handler
}

// Codec encodes and decodes the record values of a topic (schemas.Codec satisfies it): what
// a group turns its records into schema types and back with.
type Codec interface {
	Encode(topic string, v any) ([]byte, error)
	Decode(topic string, data []byte, v any) error
}

// Table is the in-memory view of a StatefulGroup's compacted table topic, holding the
// partitions the member currently owns. Values are the raw record values.
type Table interface {
	// Get returns the latest value for key, or false when there is none (or a tombstone).
	Get(key []byte) ([]byte, bool)
	// Range calls fn for every key the member owns until fn returns false.
	Range(fn func(key, value []byte) bool)
}

// StatefulHandler is Handler with access to the group's table. Outputs addressed to the
// table topic update the table: the runtime applies them before the next record is handled,
// and rolls them back (by restoring the partition from the topic) if the transaction aborts.
type StatefulHandler func(ctx context.Context, rec *Record, table Table) ([]Output, error)

// TickHandler runs every Tick on the member, with the table of the partitions it owns; its
// outputs are produced in a transaction of their own.
type TickHandler func(ctx context.Context, now time.Time, table Table) ([]Output, error)

// StatefulGroup declares an exactly-once group (goka's group table): it consumes Inputs,
// keeps a table in the compacted topic Table (co-partitioned with the inputs: same key, same
// partition count), and writes outputs, table updates and input offsets in one Kafka
// transaction. As soon as a partition is assigned (whether or not input is waiting) the
// runtime restores the table's partition from the topic, read_committed, up to its last
// stable offset once no transaction is open on it (so a previous owner's last transaction
// is committed or aborted first), before any record of the partition is handled and before
// OnTick sees it.
type StatefulGroup struct {
	Name    string
	Inputs  []string
	Outputs []string
	Table   string
	Handler StatefulHandler
	Tick    time.Duration // 0: no tick
	OnTick  TickHandler
}
