// Package schemas is the event contract of idstream: the Go types every component shares
// (types.go), one Avro schema per topic (the embedded *.avsc files, namespace
// dev.idstream.ekyc, or dev.idstream.cmp for consent), the topic table (Topics) and the Codec
// that turns events into Kafka record values and back.
//
// # Schemas
//
// Every .avsc file is self-contained: a data team can read it alone. Its record's first field
// is "envelope", the record dev.idstream.common.Envelope {event_id, session_id, tenant_id,
// occurred_at (timestamp-millis), producer}, defined identically in every file. Field names
// are exactly the avro struct tags of types.go; optional (pointer) fields are ["null", T] with
// default null; statuses are strings, not enums, so adding a value stays compatible; times
// are timestamp-millis (sub-millisecond precision is dropped, decoded times are UTC).
//
// Schemas only change backward compatibly: data written with any earlier committed version
// of a file (git history, and the frozen copies in released/) must stay readable by the
// current one, which compat_test.go enforces. When a schema changes, copy the version that
// was released to released/<file>.v<N>.avsc: the codec recognises every released version in
// single-object data and resolves it into the current Go types.
//
// # Wire formats
//
// Encode writes one of two formats; Decode accepts both, whatever the codec's configuration:
//
//   - Avro single-object encoding (the default, no registry): 0xC3 0x01, then the 8-byte
//     little-endian CRC-64-AVRO fingerprint of the writer schema's Parsing Canonical Form, then
//     the Avro binary body. The reader finds the writer schema by fingerprint among the
//     embedded and released schemas (and any passed with WithWriterSchemas).
//   - Confluent wire format (when WithRegistry is set): 0x00, then the 4-byte big-endian schema
//     id the registry assigned, then the Avro binary body. The schema is registered under the
//     subject "<topic>-value" on first use; ids are cached, and writer schemas fetched by id
//     when decoding are cached too.
//
// When the writer schema differs from the topic's current schema, the two are resolved (Avro
// schema resolution) so that old data decodes into the current types. A nil or empty value
// (a tombstone) is not an event and does not decode.
package schemas
