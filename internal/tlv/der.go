package tlv

import "fmt"

// ToDER normalises a BER encoding (one TLV or a sequence of TLVs) to DER, so that strict parsers
// such as encoding/asn1 and crypto/x509 accept it:
//
//   - indefinite lengths become definite, and every length uses the minimal form;
//   - constructed encodings of universal string types (BIT STRING, OCTET STRING, the character
//     string types, UTCTime, GeneralizedTime) are flattened into one primitive encoding.
//
// Contents of primitive elements are copied as they are: an OCTET STRING that wraps further
// BER is not rewritten (its bytes may be what a digest was computed over). SET OF elements are
// not re-sorted, since reordering would change bytes that a signature may cover. Input that
// is already DER comes back byte-for-byte equal. It returns an error wrapping ErrMalformed
// when b is not BER-TLV, and ErrTooDeep when constructed encodings nest deeper than MaxDepth.
func ToDER(b []byte) ([]byte, error) {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		t, rest, err := Parse(b)
		if err != nil {
			return nil, err
		}
		if out, err = appendDER(out, t, 0); err != nil {
			return nil, err
		}
		b = rest
	}
	return out, nil
}

// isUniversalString reports whether tag is the constructed form of a universal string type,
// which DER requires in primitive form.
func isUniversalString(tag uint32) bool {
	if tag > 0xFF || tag&0xE0 != 0x20 {
		return false
	}
	switch tag & 0x1F {
	case 3, 4, 12, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 30:
		return true
	}
	return false
}

func appendDER(dst []byte, t TLV, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, ErrTooDeep
	}
	if !t.Constructed {
		dst = AppendHeader(dst, t.Tag, len(t.Value))
		return append(dst, t.Value...), nil
	}
	if isUniversalString(t.Tag) {
		var content []byte
		unused := -1
		var err error
		if t.Tag == 0x23 {
			content = append(content, 0) // placeholder for the unused-bits count
		}
		content, err = flattenString(content, t, t.Tag, depth, &unused)
		if err != nil {
			return nil, err
		}
		if t.Tag == 0x23 {
			if unused < 0 {
				unused = 0
			}
			content[0] = byte(unused)
		}
		dst = AppendHeader(dst, t.Tag&^0x20, len(content))
		return append(dst, content...), nil
	}
	children, err := ParseAll(t.Value)
	if err != nil {
		return nil, fmt.Errorf("in tag %X: %w", t.Tag, err)
	}
	var content []byte
	for _, c := range children {
		if content, err = appendDER(content, c, depth+1); err != nil {
			return nil, err
		}
	}
	dst = AppendHeader(dst, t.Tag, len(content))
	return append(dst, content...), nil
}

// flattenString appends the contents of the primitive segments of a constructed string.
// For BIT STRING (0x23) each segment starts with an unused-bits count that must be zero on
// all but the last segment; *unused receives the last segment's count.
func flattenString(dst []byte, t TLV, outerTag uint32, depth int, unused *int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, ErrTooDeep
	}
	children, err := ParseAll(t.Value)
	if err != nil {
		return nil, fmt.Errorf("in constructed string tag %X: %w", t.Tag, err)
	}
	primitiveTag := outerTag &^ 0x20
	for _, c := range children {
		switch c.Tag {
		case outerTag:
			if dst, err = flattenString(dst, c, outerTag, depth+1, unused); err != nil {
				return nil, err
			}
		case primitiveTag:
			if outerTag != 0x23 {
				dst = append(dst, c.Value...)
				continue
			}
			if len(c.Value) == 0 {
				return nil, fmt.Errorf("%w: BIT STRING segment without unused-bits count", ErrMalformed)
			}
			if *unused > 0 {
				return nil, fmt.Errorf("%w: BIT STRING segment with unused bits before the last one", ErrMalformed)
			}
			if c.Value[0] > 7 || (c.Value[0] > 0 && len(c.Value) == 1) {
				return nil, fmt.Errorf("%w: BIT STRING segment with invalid unused-bits count %d", ErrMalformed, c.Value[0])
			}
			*unused = int(c.Value[0])
			dst = append(dst, c.Value[1:]...)
		default:
			return nil, fmt.Errorf("%w: segment tag %X inside constructed string tag %X", ErrMalformed, c.Tag, outerTag)
		}
	}
	return dst, nil
}
