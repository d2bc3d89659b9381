package schemas

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// registry wraps a Confluent schema registry client with the codec's caches: the id of each
// subject's schema (registered on first use) and writer schemas by id. Safe for concurrent use.
type registry struct {
	client  *sr.Client
	timeout time.Duration
	maxSize int

	mu   sync.RWMutex
	ids  map[string]int         // subject → id of the current schema
	byID map[int]registrySchema // id → parsed writer schema
}

// registrySchema is a writer schema fetched from the registry.
type registrySchema struct {
	schema      avro.Schema
	fingerprint uint64
}

func newRegistry(url string, timeout time.Duration, maxSize int, opts []sr.ClientOpt) (*registry, error) {
	cl, err := sr.NewClient(append([]sr.ClientOpt{sr.URLs(url)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("schema registry client: %w", err)
	}
	return &registry{
		client:  cl,
		timeout: timeout,
		maxSize: maxSize,
		ids:     make(map[string]int),
		byID:    make(map[int]registrySchema),
	}, nil
}

// idFor returns the id of schema (text, parsed, fingerprint) under subject, registering it on
// first use. The registry returns the existing id when the schema is already registered.
func (r *registry) idFor(subject, text string, schema avro.Schema, fp uint64) (int, error) {
	r.mu.RLock()
	id, ok := r.ids[subject]
	r.mu.RUnlock()
	if ok {
		return id, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	id, err := r.client.RegisterSchema(ctx, subject, sr.Schema{Schema: text, Type: sr.TypeAvro}, -1, -1)
	if err != nil {
		return 0, fmt.Errorf("register schema under subject %s: %w", subject, err)
	}
	if id <= 0 || uint64(id) > 1<<32-1 {
		return 0, fmt.Errorf("register schema under subject %s: registry returned invalid id %d", subject, id)
	}
	r.mu.Lock()
	r.ids[subject] = id
	if _, ok := r.byID[id]; !ok {
		r.byID[id] = registrySchema{schema: schema, fingerprint: fp}
	}
	r.mu.Unlock()
	return id, nil
}

// schemaByID returns the writer schema with the given id and its fingerprint, fetching it
// from the registry on first use.
func (r *registry) schemaByID(id int) (avro.Schema, uint64, error) {
	r.mu.RLock()
	s, ok := r.byID[id]
	r.mu.RUnlock()
	if ok {
		return s.schema, s.fingerprint, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	got, err := r.client.SchemaByID(ctx, id)
	if err != nil {
		return nil, 0, fmt.Errorf("fetch schema id %d: %w", id, err)
	}
	if got.Type != sr.TypeAvro {
		return nil, 0, fmt.Errorf("fetch schema id %d: %w: schema type %s is not avro", id, ErrIncompatible, got.Type)
	}
	if len(got.References) > 0 {
		return nil, 0, fmt.Errorf("fetch schema id %d: %w: schema references are not supported", id, ErrIncompatible)
	}
	if len(got.Schema) > r.maxSize {
		return nil, 0, fmt.Errorf("fetch schema id %d: %w: schema text of %d bytes", id, ErrTooLarge, len(got.Schema))
	}
	parsed, err := ParseSchema([]byte(got.Schema))
	if err != nil {
		return nil, 0, fmt.Errorf("fetch schema id %d: %w", id, err)
	}
	fp, err := fingerprintOf(parsed)
	if err != nil {
		return nil, 0, fmt.Errorf("fetch schema id %d: %w", id, err)
	}
	r.mu.Lock()
	r.byID[id] = registrySchema{schema: parsed, fingerprint: fp}
	r.mu.Unlock()
	return parsed, fp, nil
}
