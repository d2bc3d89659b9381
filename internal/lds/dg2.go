package lds

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/idstream/idstream/internal/tlv"
)

// Tags of the biometric templates of DG2 (ICAO Doc 9303 Part 10, ISO/IEC 7816-11).
const (
	tagBIGT          = 0x7F61 // biometric information group template
	tagBIT           = 0x7F60 // biometric information template
	tagBDB           = 0x5F2E // biometric data block
	tagBDBEnciphered = 0x7F2E // biometric data block (enciphered / constructed form)
)

// Media types of FaceImage.MediaType.
const (
	MediaTypeJPEG = "image/jpeg"
	MediaTypeJP2  = "image/jp2"   // JPEG2000 file format (JP2 boxes)
	MediaTypeJ2C  = "image/x-j2c" // bare JPEG2000 codestream
)

// FaceImage is the first facial image of a DG2: the encoded image exactly as stored on the
// chip, and what the ISO/IEC 19794-5 record says about it.
type FaceImage struct {
	MediaType string // MediaTypeJPEG, MediaTypeJP2 or MediaTypeJ2C, from the image's own signature
	Data      []byte // the encoded image (a copy, not aliasing the input)
	Width     int    // as declared by the record's image information
	Height    int    // as declared by the record's image information
	Images    int    // number of facial images the record declares
}

// Sizes of the fixed parts of an ISO/IEC 19794-5:2005 facial record.
const (
	facHeaderLen    = 14 // "FAC\0", version, record length (4), number of images (2)
	facInfoLen      = 20 // facial information block
	facFeatureLen   = 8  // one feature point
	facImageInfoLen = 12 // image information block
)

// Signatures of the image encodings a facial record may hold.
const (
	sigJPEG = "\xFF\xD8\xFF"
	sigJP2  = "\x00\x00\x00\x0CjP  \r\n\x87\n"
	sigJ2C  = "\xFF\x4F\xFF\x51" // SOC then SIZ marker
)

// hasPrefix reports whether b starts with sig.
func hasPrefix(b []byte, sig string) bool { return len(b) >= len(sig) && string(b[:len(sig)]) == sig }

// ParseDG2 reads EF.DG2: tag 0x75 → biometric information group template 0x7F61 → the first
// biometric information template 0x7F60 → its biometric data block (0x5F2E, or 0x7F2E),
// which holds an ISO/IEC 19794-5:2005 facial record ("FAC\0", version "010\0"). It returns
// the record's first image. The media type comes from the image bytes' signature (JPEG, JP2
// or a bare JPEG2000 codestream), not from the record's image data type, which chips do not
// always fill right; other encodings are ErrUnsupported, broken structure ErrMalformed.
func ParseDG2(b []byte) (*FaceImage, error) {
	dg, err := openFile(b, TagDG2, "DG2")
	if err != nil {
		return nil, err
	}
	cs, err := children(dg, "DG2")
	if err != nil {
		return nil, err
	}
	bigt, err := find(cs, tagBIGT, "DG2")
	if err != nil {
		return nil, err
	}
	cs, err = children(bigt, "DG2 biometric information group template")
	if err != nil {
		return nil, err
	}
	bit, err := find(cs, tagBIT, "DG2 biometric information group template")
	if err != nil {
		return nil, err
	}
	cs, err = children(bit, "DG2 biometric information template")
	if err != nil {
		return nil, err
	}
	bdb, ok := tlv.Find(cs, tagBDB)
	if !ok {
		if bdb, ok = tlv.Find(cs, tagBDBEnciphered); !ok {
			return nil, fmt.Errorf("%w: DG2 biometric information template has no biometric data block", ErrMalformed)
		}
	}
	return parseFacialRecord(bdb.Value)
}

// parseFacialRecord reads the first image of an ISO/IEC 19794-5:2005 facial record.
func parseFacialRecord(r []byte) (*FaceImage, error) {
	if len(r) < facHeaderLen {
		return nil, fmt.Errorf("%w: facial record of %d bytes", ErrMalformed, len(r))
	}
	if !hasPrefix(r, "FAC\x00") {
		return nil, fmt.Errorf("%w: facial record does not start with FAC", ErrMalformed)
	}
	if !hasPrefix(r[4:], "010\x00") {
		return nil, fmt.Errorf("%w: facial record version %q, only ISO/IEC 19794-5:2005 (010) is read", ErrUnsupported, bytes.TrimRight(r[4:8], "\x00"))
	}
	recLen := binary.BigEndian.Uint32(r[8:12])
	if recLen < facHeaderLen || uint64(recLen) > uint64(len(r)) {
		return nil, fmt.Errorf("%w: facial record length %d with %d bytes present", ErrMalformed, recLen, len(r))
	}
	r = r[:recLen]
	images := int(binary.BigEndian.Uint16(r[12:14]))
	if images < 1 {
		return nil, fmt.Errorf("%w: facial record holds no image", ErrMalformed)
	}
	block := r[facHeaderLen:]
	if len(block) < facInfoLen {
		return nil, fmt.Errorf("%w: facial information block truncated", ErrMalformed)
	}
	blockLen := binary.BigEndian.Uint32(block[0:4])
	features := int(binary.BigEndian.Uint16(block[4:6]))
	fixed := uint64(facInfoLen + features*facFeatureLen + facImageInfoLen)
	if uint64(blockLen) < fixed || uint64(blockLen) > uint64(len(block)) {
		return nil, fmt.Errorf("%w: facial record data length %d (%d feature points, %d bytes present)", ErrMalformed, blockLen, features, len(block))
	}
	info := block[facInfoLen+features*facFeatureLen:]
	img := &FaceImage{
		Width:  int(binary.BigEndian.Uint16(info[2:4])),
		Height: int(binary.BigEndian.Uint16(info[4:6])),
		Images: images,
	}
	data := block[fixed:blockLen]
	switch {
	case hasPrefix(data, sigJPEG):
		img.MediaType = MediaTypeJPEG
	case hasPrefix(data, sigJP2):
		img.MediaType = MediaTypeJP2
	case hasPrefix(data, sigJ2C):
		img.MediaType = MediaTypeJ2C
	default:
		return nil, fmt.Errorf("%w: face image (record data type %d) is neither JPEG nor JPEG2000", ErrUnsupported, info[1])
	}
	img.Data = bytes.Clone(data)
	return img, nil
}
