package stream

import (
	"context"
	"fmt"

	"github.com/idstream/idstream/schemas"
)

// Input declares one topic a group consumes and what the group does with its records, typed
// by the topic's handle (On, OnTable). Handle and HandleTable make a group's handler from its
// inputs: the topic guard, tombstones and decoding are theirs, not each handler's.
type Input struct {
	topic     string
	lazy      bool // the function takes its background turn itself (Lazy)
	value     func(ctx context.Context, codec Codec, rec *Record, table Table) ([]Output, error)
	tombstone func(ctx context.Context, rec *Record, table Table) ([]Output, error)
}

// Topic returns the name of the input's topic.
func (in Input) Topic() string { return in.topic }

// On declares input t of a stateless group: the value of each record is decoded into a new T
// and handed to h with its record. Tombstones are skipped (nothing is produced) unless
// WithTombstones says otherwise.
func On[T any](t schemas.Topic[T], h func(ctx context.Context, rec *Record, v *T) ([]Output, error)) Input {
	return OnTable(t, func(ctx context.Context, rec *Record, v *T, _ Table) ([]Output, error) { return h(ctx, rec, v) })
}

// OnTable is On for a stateful group: h gets the group's table too.
func OnTable[T any](t schemas.Topic[T], h func(ctx context.Context, rec *Record, v *T, table Table) ([]Output, error)) Input {
	return Input{topic: t.Name(), value: func(ctx context.Context, codec Codec, rec *Record, table Table) ([]Output, error) {
		v := t.New()
		if err := codec.Decode(rec.Topic, rec.Value, v); err != nil {
			return nil, fmt.Errorf("decode %s record at offset %d: %w", rec.Topic, rec.Offset, err)
		}
		return h(ctx, rec, v, table)
	}}
}

// WithTombstones returns the input handing its tombstones (records with a nil value) to h
// instead of skipping them; table is nil in a stateless group.
func (in Input) WithTombstones(h func(ctx context.Context, rec *Record, table Table) ([]Output, error)) Input {
	in.tombstone = h
	return in
}

// Lazy returns the input with its function taking its background turn itself (Compute) once
// it knows a record is worth its work, so that the records it only glances at (a capture of
// a step it does not read, a snapshot with nothing new for it) do not wait in line for a
// turn behind other groups' work. Without it Handle takes the turn before the function is
// called. Outside a Background it changes nothing.
func (in Input) Lazy() Input {
	in.lazy = true
	return in
}

// Topics returns the topics of inputs, in their order: a group's Inputs.
func Topics(inputs ...Input) []string {
	out := make([]string, len(inputs))
	for i, in := range inputs {
		out[i] = in.topic
	}
	return out
}

// Handle returns the handler of the stateless group named group that consumes inputs (see
// HandleTable).
func Handle(group string, codec Codec, inputs ...Input) Handler {
	h := HandleTable(group, codec, inputs...)
	return func(ctx context.Context, rec *Record) ([]Output, error) { return h(ctx, rec, nil) }
}

// HandleTable returns the handler of the stateful group named group that consumes inputs. A
// record is handed to the input of its topic; it returns an error (retried, then
// dead-lettered) for a record of a topic no input declares and for a value that does not
// decode into the topic's type, both prefixed with the group's name, as is every error of an
// input's function. In a background call (WithBackground) it takes the call's turn before
// the input's function, unless the input is Lazy.
func HandleTable(group string, codec Codec, inputs ...Input) StatefulHandler {
	byTopic := make(map[string]Input, len(inputs))
	for _, in := range inputs {
		byTopic[in.topic] = in
	}
	return func(ctx context.Context, rec *Record, table Table) ([]Output, error) {
		in, ok := byTopic[rec.Topic]
		if !ok {
			return nil, fmt.Errorf("%s: record from unexpected topic %q", group, rec.Topic)
		}
		var (
			out []Output
			err error
		)
		if !in.lazy {
			if err := Compute(ctx); err != nil {
				return nil, fmt.Errorf("%s: %w", group, err)
			}
		}
		switch {
		case rec.Value != nil:
			out, err = in.value(ctx, codec, rec, table)
		case in.tombstone != nil:
			out, err = in.tombstone(ctx, rec, table)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", group, err)
		}
		return out, nil
	}
}

// Emit returns the record of v on topic t with key key, its value encoded by codec.
func Emit[T any](codec Codec, t schemas.Topic[T], key []byte, v *T) (Output, error) {
	value, err := codec.Encode(t.Name(), v)
	if err != nil {
		return Output{}, fmt.Errorf("encode %s record: %w", t.Name(), err)
	}
	return Output{Topic: t.Name(), Key: key, Value: value}, nil
}
