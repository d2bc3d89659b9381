package schemas

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// Errors returned by the Codec; they are wrapped with context, test with errors.Is.
var (
	// ErrUnknownTopic: the topic is not one of the contract's topics.
	ErrUnknownTopic = errors.New("unknown topic")
	// ErrWrongType: the value is not the topic's Go type.
	ErrWrongType = errors.New("value is not the topic's type")
	// ErrEmpty: the record value is empty (a tombstone carries no event).
	ErrEmpty = errors.New("empty record value")
	// ErrTooLarge: the record value is larger than the codec's maximum size.
	ErrTooLarge = errors.New("record value too large")
	// ErrUnknownFormat: the value starts with neither the single-object nor the Confluent magic.
	ErrUnknownFormat = errors.New("unknown wire format")
	// ErrUnknownFingerprint: single-object data names a writer schema the codec does not know.
	ErrUnknownFingerprint = errors.New("unknown schema fingerprint")
	// ErrNoRegistry: Confluent-framed data arrived but the codec has no schema registry.
	ErrNoRegistry = errors.New("no schema registry configured")
	// ErrIncompatible: the writer schema cannot be resolved into the topic's current schema.
	ErrIncompatible = errors.New("writer schema incompatible with topic schema")
	// ErrMalformed: the Avro body does not decode with the writer schema.
	ErrMalformed = errors.New("malformed avro data")
)

const (
	// DefaultMaxSize bounds decoded strings and bytes, and whole record values.
	DefaultMaxSize = 16 << 20
	// DefaultMaxItems bounds the number of elements of one decoded array.
	DefaultMaxItems = 1 << 16
	// DefaultRegistryTimeout bounds one schema registry request.
	DefaultRegistryTimeout = 10 * time.Second

	soeMagic0, soeMagic1 = 0xC3, 0x01
	soeHeaderLen         = 10
	confluentMagic       = 0x00
	confluentHeaderLen   = 5
)

// CodecOption configures a Codec.
type CodecOption func(*codecConfig)

type codecConfig struct {
	registryURL     string
	registryOpts    []sr.ClientOpt
	registryTimeout time.Duration
	maxSize         int
	maxItems        int
	writerSchemas   []string
}

// WithRegistry makes Encode write the Confluent wire format, registering schemas with the
// Confluent-compatible schema registry at url (subject "<topic>-value"), and lets Decode
// fetch writer schemas by id. Extra sr options (auth, TLS, HTTP client) may follow the url.
func WithRegistry(url string, opts ...sr.ClientOpt) CodecOption {
	return func(c *codecConfig) {
		c.registryURL = url
		c.registryOpts = opts
	}
}

// WithRegistryTimeout bounds each schema registry request (default DefaultRegistryTimeout).
func WithRegistryTimeout(d time.Duration) CodecOption {
	return func(c *codecConfig) { c.registryTimeout = d }
}

// WithMaxSize bounds, in bytes, every decoded string or bytes value and every record value
// Decode accepts (default DefaultMaxSize).
func WithMaxSize(n int) CodecOption {
	return func(c *codecConfig) { c.maxSize = n }
}

// WithMaxItems bounds the number of elements of one decoded array (default DefaultMaxItems).
// Decode also never allocates more array elements than the record value has bytes (rounded
// up to a power of two), so junk input cannot cause large allocations.
func WithMaxItems(n int) CodecOption {
	return func(c *codecConfig) { c.maxItems = n }
}

// WithWriterSchemas adds schema texts the codec recognises by fingerprint in single-object
// data, besides the embedded and released ones (e.g. versions written by other deployments).
func WithWriterSchemas(schemas ...string) CodecOption {
	return func(c *codecConfig) { c.writerSchemas = append(c.writerSchemas, schemas...) }
}

// topicCodec is the per-topic part of a Codec.
type topicCodec struct {
	info        TopicInfo
	typ         reflect.Type // the struct type
	header      []byte       // single-object header of the current schema
	fingerprint uint64
	subject     string
}

// Codec encodes and decodes the events of every topic. It is safe for concurrent use.
type Codec struct {
	topics   map[string]*topicCodec
	known    map[uint64]avro.Schema // writer schemas by CRC-64-AVRO fingerprint
	encAPI   avro.API
	decAPI   avro.API
	maxSize  int
	maxItems int

	registry *registry // nil without WithRegistry

	resolvedMu sync.RWMutex
	resolved   map[resolveKey]avro.Schema
}

// resolveKey identifies a resolved (reader, writer) schema pair.
type resolveKey struct {
	topic  string
	writer uint64 // fingerprint of the writer schema
}

// NewCodec returns a Codec for every topic of the contract. It returns an error when an
// option is invalid or a schema (embedded, released or passed in) does not parse.
func NewCodec(opts ...CodecOption) (*Codec, error) {
	cfg := codecConfig{
		registryTimeout: DefaultRegistryTimeout,
		maxSize:         DefaultMaxSize,
		maxItems:        DefaultMaxItems,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxSize <= 0 {
		return nil, fmt.Errorf("new codec: max size must be positive, got %d", cfg.maxSize)
	}
	if cfg.maxItems <= 0 {
		return nil, fmt.Errorf("new codec: max items must be positive, got %d", cfg.maxItems)
	}
	if cfg.registryTimeout <= 0 {
		return nil, fmt.Errorf("new codec: registry timeout must be positive, got %s", cfg.registryTimeout)
	}

	topics, err := loadTopics()
	if err != nil {
		return nil, fmt.Errorf("new codec: %w", err)
	}
	c := &Codec{
		topics:   make(map[string]*topicCodec, len(topics)),
		known:    make(map[uint64]avro.Schema),
		encAPI:   avro.Config{MaxByteSliceSize: cfg.maxSize}.Freeze(),
		maxSize:  cfg.maxSize,
		maxItems: cfg.maxItems,
		resolved: make(map[resolveKey]avro.Schema),
	}
	c.decAPI = avro.Config{MaxByteSliceSize: cfg.maxSize, MaxSliceAllocSize: cfg.maxItems}.Freeze()

	for _, t := range topics {
		fp, err := fingerprintOf(t.Schema)
		if err != nil {
			return nil, fmt.Errorf("new codec: topic %s: %w", t.Name, err)
		}
		header := make([]byte, soeHeaderLen)
		header[0], header[1] = soeMagic0, soeMagic1
		binary.LittleEndian.PutUint64(header[2:], fp)
		c.topics[t.Name] = &topicCodec{
			info:        t,
			typ:         t.goType(),
			header:      header,
			fingerprint: fp,
			subject:     t.Name + "-value",
		}
		c.known[fp] = t.Schema
	}

	released, err := loadReleased()
	if err != nil {
		return nil, fmt.Errorf("new codec: %w", err)
	}
	extra := make([][]byte, 0, len(released)+len(cfg.writerSchemas))
	for _, r := range released {
		extra = append(extra, r.Source)
	}
	for _, s := range cfg.writerSchemas {
		extra = append(extra, []byte(s))
	}
	for i, src := range extra {
		s, err := ParseSchema(src)
		if err != nil {
			return nil, fmt.Errorf("new codec: writer schema %d: %w", i, err)
		}
		fp, err := fingerprintOf(s)
		if err != nil {
			return nil, fmt.Errorf("new codec: writer schema %d: %w", i, err)
		}
		if _, ok := c.known[fp]; !ok {
			c.known[fp] = s
		}
	}

	if cfg.registryURL != "" {
		c.registry, err = newRegistry(cfg.registryURL, cfg.registryTimeout, cfg.maxSize, cfg.registryOpts)
		if err != nil {
			return nil, fmt.Errorf("new codec: %w", err)
		}
	}
	return c, nil
}

// Topic returns the table entry of one topic, or false if the topic is not in the contract.
func (c *Codec) Topic(name string) (TopicInfo, bool) {
	t, ok := c.topics[name]
	if !ok {
		return TopicInfo{}, false
	}
	return t.info, true
}

// Encode returns the record value of v for topic. v must be the topic's Go type, as a value
// or a non-nil pointer; otherwise Encode returns ErrWrongType. Without a registry the value is
// in single-object encoding; with one, in the Confluent wire format (registering the schema
// on first use, which can fail with the registry's error).
func (c *Codec) Encode(topic string, v any) ([]byte, error) {
	t, ok := c.topics[topic]
	if !ok {
		return nil, fmt.Errorf("encode: %w: %q", ErrUnknownTopic, topic)
	}
	if err := checkEncodeType(t.typ, v); err != nil {
		return nil, fmt.Errorf("encode %s: %w", topic, err)
	}
	var header []byte
	if c.registry != nil {
		id, err := c.registry.idFor(t.subject, string(t.info.Source), t.info.Schema, t.fingerprint)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", topic, err)
		}
		header = make([]byte, confluentHeaderLen)
		header[0] = confluentMagic
		binary.BigEndian.PutUint32(header[1:], uint32(id))
	} else {
		header = t.header
	}
	body, err := c.encAPI.Marshal(t.info.Schema, v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", topic, err)
	}
	out := make([]byte, 0, len(header)+len(body))
	out = append(out, header...)
	return append(out, body...), nil
}

// Decode decodes a record value of topic, in either wire format, into v, which must be a
// non-nil pointer to the topic's Go type (ErrWrongType otherwise). v is only written when
// Decode succeeds, and then holds exactly the decoded event. Data written with an older
// compatible schema is resolved into the current type. Junk input yields an error wrapping
// ErrEmpty, ErrTooLarge, ErrUnknownFormat, ErrUnknownFingerprint, ErrNoRegistry,
// ErrIncompatible or ErrMalformed (or the registry's error), never a panic.
func (c *Codec) Decode(topic string, data []byte, v any) error {
	t, ok := c.topics[topic]
	if !ok {
		return fmt.Errorf("decode: %w: %q", ErrUnknownTopic, topic)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Type() != t.typ {
		return fmt.Errorf("decode %s: %w: want *%s, got %T", topic, ErrWrongType, t.typ.Name(), v)
	}
	fresh, err := c.decode(t, data)
	if err != nil {
		return fmt.Errorf("decode %s: %w", topic, err)
	}
	rv.Elem().Set(fresh.Elem())
	return nil
}

// DecodeEnvelope decodes a record value of topic and returns its envelope, with the same
// errors as Decode.
func (c *Codec) DecodeEnvelope(topic string, data []byte) (Envelope, error) {
	t, ok := c.topics[topic]
	if !ok {
		return Envelope{}, fmt.Errorf("decode envelope: %w: %q", ErrUnknownTopic, topic)
	}
	fresh, err := c.decode(t, data)
	if err != nil {
		return Envelope{}, fmt.Errorf("decode envelope %s: %w", topic, err)
	}
	env, ok := fresh.Elem().FieldByName("Envelope").Interface().(Envelope)
	if !ok {
		return Envelope{}, fmt.Errorf("decode envelope %s: type %s has no envelope", topic, t.typ.Name())
	}
	return env, nil
}

// decode returns a pointer to a new value of the topic's type holding the decoded event.
func (c *Codec) decode(t *topicCodec, data []byte) (_ reflect.Value, err error) {
	if len(data) == 0 {
		return reflect.Value{}, ErrEmpty
	}
	if len(data) > c.maxSize {
		return reflect.Value{}, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), c.maxSize)
	}
	view, err := c.writerView(t, data)
	if err != nil {
		return reflect.Value{}, err
	}
	// hamba/avro treats a truncated body as complete and trusts block counts; the validator
	// makes sure it only ever sees one complete, well-formed value within the bounds.
	if err := validateBody(view.writer, view.body, c.maxSize, c.maxItems); err != nil {
		return reflect.Value{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	defer func() {
		// Defence in depth: a decoder bug must not take the process down on junk input.
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: decoder failed: %v", ErrMalformed, r)
		}
	}()
	fresh := reflect.New(t.typ)
	if err := c.decAPI.Unmarshal(view.read, view.body, fresh.Interface()); err != nil {
		return reflect.Value{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return fresh, nil
}

// writerView is a record value split by its wire header.
type writerView struct {
	writer avro.Schema // the schema the body was written with
	read   avro.Schema // the schema to decode it with: the topic's, or writer resolved into it
	body   []byte
}

// writerView parses the wire header of data and finds the writer and read schemas.
func (c *Codec) writerView(t *topicCodec, data []byte) (writerView, error) {
	var (
		writer avro.Schema
		fp     uint64
		body   []byte
	)
	switch {
	case len(data) >= 2 && data[0] == soeMagic0 && data[1] == soeMagic1:
		if len(data) < soeHeaderLen {
			return writerView{}, fmt.Errorf("%w: single-object header truncated (%d bytes)", ErrMalformed, len(data))
		}
		fp = binary.LittleEndian.Uint64(data[2:soeHeaderLen])
		body = data[soeHeaderLen:]
		var ok bool
		if writer, ok = c.known[fp]; !ok {
			return writerView{}, fmt.Errorf("%w: %016x", ErrUnknownFingerprint, fp)
		}
	case data[0] == confluentMagic:
		if len(data) < confluentHeaderLen {
			return writerView{}, fmt.Errorf("%w: confluent header truncated (%d bytes)", ErrMalformed, len(data))
		}
		if c.registry == nil {
			return writerView{}, ErrNoRegistry
		}
		id := int(binary.BigEndian.Uint32(data[1:confluentHeaderLen]))
		body = data[confluentHeaderLen:]
		var err error
		if writer, fp, err = c.registry.schemaByID(id); err != nil {
			return writerView{}, err
		}
	default:
		return writerView{}, fmt.Errorf("%w: first byte 0x%02x", ErrUnknownFormat, data[0])
	}
	if fp == t.fingerprint {
		return writerView{writer: t.info.Schema, read: t.info.Schema, body: body}, nil
	}
	read, err := c.resolve(t, fp, writer)
	if err != nil {
		return writerView{}, err
	}
	return writerView{writer: writer, read: read, body: body}, nil
}

// resolve returns the topic schema resolved against writer, cached per (topic, writer).
func (c *Codec) resolve(t *topicCodec, fp uint64, writer avro.Schema) (avro.Schema, error) {
	key := resolveKey{topic: t.info.Name, writer: fp}
	c.resolvedMu.RLock()
	s, ok := c.resolved[key]
	c.resolvedMu.RUnlock()
	if ok {
		return s, nil
	}
	s, err := avro.NewSchemaCompatibility().Resolve(t.info.Schema, writer)
	if err != nil {
		return nil, fmt.Errorf("%w: writer %016x: %w", ErrIncompatible, fp, err)
	}
	c.resolvedMu.Lock()
	c.resolved[key] = s
	c.resolvedMu.Unlock()
	return s, nil
}

// checkEncodeType reports whether v is a value of typ or a non-nil pointer to one.
func checkEncodeType(typ reflect.Type, v any) error {
	rv := reflect.ValueOf(v)
	switch {
	case !rv.IsValid():
		return fmt.Errorf("%w: want %s, got nil", ErrWrongType, typ.Name())
	case rv.Type() == typ:
		return nil
	case rv.Kind() == reflect.Pointer && rv.Type().Elem() == typ:
		if rv.IsNil() {
			return fmt.Errorf("%w: nil *%s", ErrWrongType, typ.Name())
		}
		return nil
	default:
		return fmt.Errorf("%w: want %s, got %T", ErrWrongType, typ.Name(), v)
	}
}

// fingerprintOf returns the CRC-64-AVRO fingerprint of the schema's canonical form.
func fingerprintOf(s avro.Schema) (uint64, error) {
	b, err := s.FingerprintUsing(avro.CRC64Avro)
	if err != nil {
		return 0, fmt.Errorf("fingerprint schema: %w", err)
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("fingerprint schema: got %d bytes, want 8", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}
