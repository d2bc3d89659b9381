// Package lds reads the data groups of an ICAO Doc 9303 Logical Data Structure (the files of
// an eMRTD chip): DG1 (the MRZ), DG2 (the face image in an ISO/IEC 19794-5 record, JPEG or
// JPEG2000, with DecodeFaceJPEG to turn the latter into a JPEG through openjpeg), DG13 as the
// Vietnamese chip ID card (CCCD) fills it, and DG14 (security infos). It only parses: it does
// not verify hashes or signatures (passive and active authentication live in internal/mrtd),
// so callers must verify a data group before trusting what it says. The parsers never panic,
// allocate no more than a small multiple of their input, and are safe for concurrent use.
package lds

import (
	"errors"
	"fmt"

	"github.com/idstream/idstream/internal/tlv"
)

// Errors of the parsers, wrapped with context; test with errors.Is.
var (
	// ErrMalformed: the bytes are not the data group they were given as.
	ErrMalformed = errors.New("lds: malformed data group")
	// ErrUnsupported: a well-formed structure this package cannot read (an unknown face
	// record version or image encoding).
	ErrUnsupported = errors.New("lds: unsupported content")
	// ErrTooLarge: an image beyond the configured limits.
	ErrTooLarge = errors.New("lds: image too large")
	// ErrDecoderMissing: opj_decompress is not installed (Debian package libopenjp2-tools).
	ErrDecoderMissing = errors.New("lds: JPEG2000 decoder opj_decompress not found (install the Debian package libopenjp2-tools)")
	// ErrDecode: the JPEG2000 decoder failed or produced no usable image.
	ErrDecode = errors.New("lds: JPEG2000 decoding failed")
)

// Tags of the elementary files (EF) of the LDS, the first byte of each file.
const (
	TagCOM  = 0x60
	TagDG1  = 0x61
	TagDG2  = 0x75
	TagDG13 = 0x6D
	TagDG14 = 0x6E
	TagDG15 = 0x6F
	TagSOD  = 0x77
)

// DataGroupNumber returns the data group number (1–16) whose file starts with tag, and false
// for any other tag (EF.COM and EF.SOD included).
func DataGroupNumber(tag byte) (int, bool) {
	switch tag {
	case 0x61:
		return 1, true
	case 0x75:
		return 2, true
	case 0x63:
		return 3, true
	case 0x76:
		return 4, true
	case 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x6B, 0x6C, 0x6D, 0x6E, 0x6F, 0x70:
		return int(tag-0x65) + 5, true
	}
	return 0, false
}

// openFile parses the outer TLV of a data group file and checks its tag. Bytes after the
// element (padding some readers append) are ignored.
func openFile(b []byte, tag uint32, name string) (tlv.TLV, error) {
	if len(b) == 0 {
		return tlv.TLV{}, fmt.Errorf("%w: %s is empty", ErrMalformed, name)
	}
	t, _, err := tlv.Parse(b)
	if err != nil {
		return tlv.TLV{}, fmt.Errorf("%w: %s: %w", ErrMalformed, name, err)
	}
	if t.Tag != tag {
		return tlv.TLV{}, fmt.Errorf("%w: %s starts with tag %X, want %X", ErrMalformed, name, t.Tag, tag)
	}
	return t, nil
}

// children returns the elements inside a constructed TLV, as an ErrMalformed error otherwise.
func children(t tlv.TLV, what string) ([]tlv.TLV, error) {
	cs, err := t.Children()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, what, err)
	}
	return cs, nil
}

// find returns the element tagged tag among ts, as an ErrMalformed error when absent.
func find(ts []tlv.TLV, tag uint32, what string) (tlv.TLV, error) {
	t, ok := tlv.Find(ts, tag)
	if !ok {
		return tlv.TLV{}, fmt.Errorf("%w: %s has no tag %X", ErrMalformed, what, tag)
	}
	return t, nil
}
