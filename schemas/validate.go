package schemas

import (
	"errors"
	"fmt"
	"math"

	"github.com/hamba/avro/v2"
)

// maxDepth bounds the nesting of values the validator follows (writer schemas fetched from a
// registry may be recursive).
const maxDepth = 64

var errTruncated = errors.New("truncated")

// validator walks an Avro binary body with the writer schema before it is decoded, so that
// the decoder only ever sees well-formed data: every length and block count is
// non-negative, fits in the bytes that remain and in the configured bounds, every union
// branch and enum symbol exists, block byte sizes are exact, and nothing trails the value.
type validator struct {
	b        []byte
	pos      int
	maxSize  int // largest string or bytes value
	maxItems int // most elements of one array or map
}

// validateBody reports whether body is exactly one well-formed value of schema.
func validateBody(schema avro.Schema, body []byte, maxSize, maxItems int) error {
	v := validator{b: body, maxSize: maxSize, maxItems: maxItems}
	if err := v.value(schema, 0); err != nil {
		return fmt.Errorf("at byte %d: %w", v.pos, err)
	}
	if v.pos != len(v.b) {
		return fmt.Errorf("%d trailing bytes after the value", len(v.b)-v.pos)
	}
	return nil
}

func (v *validator) remaining() int { return len(v.b) - v.pos }

func (v *validator) long() (int64, error) {
	var u uint64
	for i := 0; i < 10; i++ {
		if v.pos >= len(v.b) {
			return 0, errTruncated
		}
		c := v.b[v.pos]
		v.pos++
		if i == 9 && c > 1 {
			return 0, errors.New("varint overflows 64 bits")
		}
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
	return 0, errors.New("varint longer than 10 bytes")
}

func (v *validator) int() (int64, error) {
	n, err := v.long()
	if err == nil && (n < math.MinInt32 || n > math.MaxInt32) {
		return 0, fmt.Errorf("int %d out of 32-bit range", n)
	}
	return n, err
}

func (v *validator) skip(n int) error {
	if n < 0 || n > v.remaining() {
		return errTruncated
	}
	v.pos += n
	return nil
}

func (v *validator) value(s avro.Schema, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested deeper than %d", maxDepth)
	}
	switch s := s.(type) {
	case *avro.RefSchema:
		return v.value(s.Schema(), depth+1)
	case *avro.NullSchema:
		return nil
	case *avro.PrimitiveSchema:
		return v.primitive(s.Type())
	case *avro.RecordSchema:
		for _, f := range s.Fields() {
			if err := v.value(f.Type(), depth+1); err != nil {
				return fmt.Errorf("field %s: %w", f.Name(), err)
			}
		}
		return nil
	case *avro.ArraySchema:
		return v.blocks(minEncodedSize(s.Items(), 0), func() error { return v.value(s.Items(), depth+1) })
	case *avro.MapSchema:
		return v.blocks(1+minEncodedSize(s.Values(), 0), func() error {
			if err := v.primitive(avro.String); err != nil {
				return fmt.Errorf("map key: %w", err)
			}
			return v.value(s.Values(), depth+1)
		})
	case *avro.UnionSchema:
		i, err := v.long()
		if err != nil {
			return err
		}
		types := s.Types()
		if i < 0 || i >= int64(len(types)) {
			return fmt.Errorf("union branch %d of %d", i, len(types))
		}
		return v.value(types[i], depth+1)
	case *avro.EnumSchema:
		i, err := v.int()
		if err != nil {
			return err
		}
		if i < 0 || i >= int64(len(s.Symbols())) {
			return fmt.Errorf("enum symbol %d of %d", i, len(s.Symbols()))
		}
		return nil
	case *avro.FixedSchema:
		return v.skip(s.Size())
	default:
		return fmt.Errorf("unsupported schema type %s", s.Type())
	}
}

func (v *validator) primitive(t avro.Type) error {
	switch t {
	case avro.Null:
		return nil
	case avro.Boolean:
		if v.remaining() < 1 {
			return errTruncated
		}
		if b := v.b[v.pos]; b > 1 {
			return fmt.Errorf("boolean byte %#x", b)
		}
		v.pos++
		return nil
	case avro.Int:
		_, err := v.int()
		return err
	case avro.Long:
		_, err := v.long()
		return err
	case avro.Float:
		return v.skip(4)
	case avro.Double:
		return v.skip(8)
	case avro.String, avro.Bytes:
		n, err := v.long()
		if err != nil {
			return err
		}
		if n < 0 || n > int64(v.remaining()) {
			return fmt.Errorf("length %d with %d bytes left", n, v.remaining())
		}
		if n > int64(v.maxSize) {
			return fmt.Errorf("length %d exceeds max size %d", n, v.maxSize)
		}
		v.pos += int(n)
		return nil
	default:
		return fmt.Errorf("unsupported primitive %s", t)
	}
}

// blocks validates the blocks of an array or map whose items take at least minItem bytes.
func (v *validator) blocks(minItem int, item func() error) error {
	total := int64(0)
	for {
		count, err := v.long()
		if err != nil {
			return err
		}
		if count == 0 {
			return nil
		}
		size := int64(-1)
		if count < 0 {
			if count == math.MinInt64 {
				return errors.New("block count out of range")
			}
			count = -count
			if size, err = v.long(); err != nil {
				return err
			}
			if size < 0 || size > int64(v.remaining()) {
				return fmt.Errorf("block size %d with %d bytes left", size, v.remaining())
			}
		}
		total += count
		if total > int64(v.maxItems) {
			return fmt.Errorf("more than %d items", v.maxItems)
		}
		if minItem > 0 && count > int64(v.remaining()/minItem) {
			return fmt.Errorf("%d items with %d bytes left", count, v.remaining())
		}
		start := v.pos
		for i := int64(0); i < count; i++ {
			if err := item(); err != nil {
				return fmt.Errorf("item %d: %w", total-count+i, err)
			}
		}
		if size >= 0 && int64(v.pos-start) != size {
			return fmt.Errorf("block size %d, items took %d bytes", size, v.pos-start)
		}
	}
}

// minEncodedSize returns the fewest bytes a value of s takes (0 for recursion it stops at).
func minEncodedSize(s avro.Schema, depth int) int {
	if depth > maxDepth {
		return 0
	}
	switch s := s.(type) {
	case *avro.RefSchema:
		return minEncodedSize(s.Schema(), depth+1)
	case *avro.NullSchema:
		return 0
	case *avro.PrimitiveSchema:
		switch s.Type() {
		case avro.Null:
			return 0
		case avro.Float:
			return 4
		case avro.Double:
			return 8
		default:
			return 1
		}
	case *avro.RecordSchema:
		n := 0
		for _, f := range s.Fields() {
			n += minEncodedSize(f.Type(), depth+1)
		}
		return n
	case *avro.FixedSchema:
		return s.Size()
	default: // array, map, union, enum
		return 1
	}
}
