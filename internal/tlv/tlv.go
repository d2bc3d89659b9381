// Package tlv parses BER-TLV (ISO/IEC 8825-1 basic encoding rules, as used by ISO 7816 smart
// cards and ICAO 9303 eMRTD files) and normalises BER to DER.
//
// The parser is bounds-checked and never panics: every malformed input yields an error that
// wraps ErrMalformed. It accepts multi-byte tags (up to four tag bytes), definite lengths in
// short or long form (up to four length bytes, non-minimal forms accepted) and indefinite
// lengths on constructed encodings, nested at most MaxDepth levels deep. Parsing does not copy:
// Value and Raw alias the input.
//
// All functions are pure and safe for concurrent use.
package tlv

import (
	"errors"
	"fmt"
)

// MaxDepth is the deepest nesting of indefinite-length encodings Parse follows, and the deepest
// nesting of constructed encodings ToDER rewrites. Deeper input is rejected with ErrTooDeep.
const MaxDepth = 64

// maxTagBytes is the largest tag encoding accepted: it must fit a uint32.
const maxTagBytes = 4

// maxLengthBytes is the largest long-form length accepted (lengths up to 4 GiB - 1).
const maxLengthBytes = 4

var (
	// ErrMalformed is wrapped by every error about input that is not valid BER-TLV.
	ErrMalformed = errors.New("tlv: malformed encoding")
	// ErrTooDeep is returned (wrapping ErrMalformed) when nesting exceeds MaxDepth.
	ErrTooDeep = fmt.Errorf("%w: nesting deeper than %d levels", ErrMalformed, MaxDepth)
)

// TLV is one decoded BER-TLV element.
type TLV struct {
	// Tag holds all tag bytes big-endian, e.g. 0x61, 0x5F1F, 0x7F61. The class and the
	// constructed bit are part of it, exactly as encoded.
	Tag uint32
	// Constructed reports whether the element's contents are themselves TLVs.
	Constructed bool
	// Indefinite reports whether the element used the indefinite-length form.
	Indefinite bool
	// Value is the contents: for indefinite lengths, without the end-of-contents marker.
	Value []byte
	// Raw is the whole element: tag, length, contents (and end-of-contents marker).
	Raw []byte
}

// Class returns the tag class bits of the first tag byte: 0x00 universal, 0x40 application,
// 0x80 context-specific, 0xC0 private.
func (t TLV) Class() byte { return firstTagByte(t.Tag) & 0xC0 }

// Children parses the contents of a constructed element as a sequence of TLVs. It returns an
// error wrapping ErrMalformed when t is primitive or its contents are not a TLV sequence.
func (t TLV) Children() ([]TLV, error) {
	if !t.Constructed {
		return nil, fmt.Errorf("%w: tag %X is primitive and has no children", ErrMalformed, t.Tag)
	}
	children, err := ParseAll(t.Value)
	if err != nil {
		return nil, fmt.Errorf("children of tag %X: %w", t.Tag, err)
	}
	return children, nil
}

// Parse decodes one TLV from the start of b and returns it with the bytes that follow it.
// It returns an error wrapping ErrMalformed when b does not start with a complete, valid TLV
// (truncated, tag or length too long, indefinite length on a primitive element, stray
// end-of-contents marker), and ErrTooDeep when indefinite lengths nest deeper than MaxDepth.
func Parse(b []byte) (t TLV, rest []byte, err error) {
	return parse(b, 0)
}

// ParseAll decodes b as a sequence of TLVs that must use all of b. An empty b yields no TLVs.
func ParseAll(b []byte) ([]TLV, error) {
	var out []TLV
	for len(b) > 0 {
		t, rest, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", len(out), err)
		}
		out = append(out, t)
		b = rest
	}
	return out, nil
}

// Find returns the first element of ts whose tag is tag.
func Find(ts []TLV, tag uint32) (TLV, bool) {
	for _, t := range ts {
		if t.Tag == tag {
			return t, true
		}
	}
	return TLV{}, false
}

func firstTagByte(tag uint32) byte {
	for tag > 0xFF {
		tag >>= 8
	}
	return byte(tag)
}

// parseHeader decodes tag and length. length is -1 for the indefinite form.
func parseHeader(b []byte) (tag uint32, constructed bool, length int, headerLen int, err error) {
	if len(b) == 0 {
		return 0, false, 0, 0, fmt.Errorf("%w: empty input", ErrMalformed)
	}
	first := b[0]
	constructed = first&0x20 != 0
	tag = uint32(first)
	i := 1
	if first&0x1F == 0x1F {
		for {
			if i >= len(b) {
				return 0, false, 0, 0, fmt.Errorf("%w: truncated tag", ErrMalformed)
			}
			if i >= maxTagBytes {
				return 0, false, 0, 0, fmt.Errorf("%w: tag longer than %d bytes", ErrMalformed, maxTagBytes)
			}
			c := b[i]
			tag = tag<<8 | uint32(c)
			i++
			if c&0x80 == 0 {
				break
			}
		}
	}
	if i >= len(b) {
		return 0, false, 0, 0, fmt.Errorf("%w: tag %X: missing length", ErrMalformed, tag)
	}
	l := b[i]
	i++
	switch {
	case l < 0x80:
		length = int(l)
	case l == 0x80:
		length = -1
	case l == 0xFF:
		return 0, false, 0, 0, fmt.Errorf("%w: tag %X: reserved length byte 0xFF", ErrMalformed, tag)
	default:
		n := int(l & 0x7F)
		if n > maxLengthBytes {
			return 0, false, 0, 0, fmt.Errorf("%w: tag %X: length of %d bytes", ErrMalformed, tag, n)
		}
		if len(b)-i < n {
			return 0, false, 0, 0, fmt.Errorf("%w: tag %X: truncated length", ErrMalformed, tag)
		}
		var v uint64
		for _, c := range b[i : i+n] {
			v = v<<8 | uint64(c)
		}
		i += n
		if v > uint64(len(b)-i) {
			return 0, false, 0, 0, fmt.Errorf("%w: tag %X: length %d exceeds the %d bytes available", ErrMalformed, tag, v, len(b)-i)
		}
		length = int(v)
	}
	return tag, constructed, length, i, nil
}

func parse(b []byte, depth int) (TLV, []byte, error) {
	if depth > MaxDepth {
		return TLV{}, nil, ErrTooDeep
	}
	tag, constructed, length, h, err := parseHeader(b)
	if err != nil {
		return TLV{}, nil, err
	}
	if tag == 0 {
		return TLV{}, nil, fmt.Errorf("%w: unexpected end-of-contents marker", ErrMalformed)
	}
	if length >= 0 {
		if length > len(b)-h {
			return TLV{}, nil, fmt.Errorf("%w: tag %X: length %d exceeds the %d bytes available", ErrMalformed, tag, length, len(b)-h)
		}
		end := h + length
		return TLV{Tag: tag, Constructed: constructed, Value: b[h:end], Raw: b[:end]}, b[end:], nil
	}
	if !constructed {
		return TLV{}, nil, fmt.Errorf("%w: tag %X: indefinite length on a primitive encoding", ErrMalformed, tag)
	}
	// Indefinite length: children until the end-of-contents marker 00 00.
	pos := h
	for {
		if len(b)-pos >= 2 && b[pos] == 0 && b[pos+1] == 0 {
			return TLV{Tag: tag, Constructed: true, Indefinite: true, Value: b[h:pos], Raw: b[:pos+2]}, b[pos+2:], nil
		}
		if pos >= len(b) {
			return TLV{}, nil, fmt.Errorf("%w: tag %X: missing end-of-contents marker", ErrMalformed, tag)
		}
		_, rest, err := parse(b[pos:], depth+1)
		if err != nil {
			return TLV{}, nil, fmt.Errorf("in tag %X: %w", tag, err)
		}
		pos = len(b) - len(rest)
	}
}

// AppendHeader appends the DER tag and minimal definite length for a contents of n bytes.
func AppendHeader(dst []byte, tag uint32, n int) []byte {
	switch {
	case tag > 0xFFFFFF:
		dst = append(dst, byte(tag>>24), byte(tag>>16), byte(tag>>8), byte(tag))
	case tag > 0xFFFF:
		dst = append(dst, byte(tag>>16), byte(tag>>8), byte(tag))
	case tag > 0xFF:
		dst = append(dst, byte(tag>>8), byte(tag))
	default:
		dst = append(dst, byte(tag))
	}
	switch {
	case n < 0x80:
		return append(dst, byte(n))
	case n <= 0xFF:
		return append(dst, 0x81, byte(n))
	case n <= 0xFFFF:
		return append(dst, 0x82, byte(n>>8), byte(n))
	case n <= 0xFFFFFF:
		return append(dst, 0x83, byte(n>>16), byte(n>>8), byte(n))
	default:
		return append(dst, 0x84, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// Encode returns the DER encoding of a TLV with the given tag and contents.
func Encode(tag uint32, value []byte) []byte {
	out := AppendHeader(make([]byte, 0, len(value)+8), tag, len(value))
	return append(out, value...)
}
