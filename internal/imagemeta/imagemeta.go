// Package imagemeta reads what an image file says about its own origin, without decoding
// pixels: the container format and, for JPEG, the EXIF camera make, model and software
// tags of IFD0. It is the evidence behind the fraud group's not_from_camera signal. Read
// never panics on hostile input and bounds its work by the input's size.
package imagemeta

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// Formats reported in Meta.Format.
const (
	FormatJPEG    = "jpeg"
	FormatPNG     = "png"
	FormatUnknown = "unknown"
)

// Meta is an image's self-description.
type Meta struct {
	Format   string
	HasEXIF  bool
	Make     string // EXIF 0x010F, trimmed
	Model    string // EXIF 0x0110, trimmed
	Software string // EXIF 0x0131, trimmed
}

// EXIF tags read from IFD0.
const (
	tagMake     = 0x010F
	tagModel    = 0x0110
	tagSoftware = 0x0131
)

// maxTagLen bounds the length of a string tag kept.
const maxTagLen = 128

// Read returns the format of data and, for a JPEG, the IFD0 tags of its first EXIF APP1
// segment. Malformed or truncated metadata yields what could be read, never an error.
func Read(data []byte) Meta {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return Meta{Format: FormatPNG}
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		m := Meta{Format: FormatJPEG}
		if exif, ok := exifSegment(data); ok {
			m.HasEXIF = true
			readIFD0(exif, &m)
		}
		return m
	}
	return Meta{Format: FormatUnknown}
}

// exifSegment returns the TIFF payload of the first APP1 "Exif\0\0" segment before the
// image data.
func exifSegment(data []byte) ([]byte, bool) {
	i := 2
	for i+4 <= len(data) {
		if data[i] != 0xFF {
			return nil, false
		}
		marker := data[i+1]
		if marker == 0xFF { // fill byte
			i++
			continue
		}
		if marker == 0xDA || marker == 0xD9 { // start of scan, end of image: no more headers
			return nil, false
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if n < 2 || i+2+n > len(data) {
			return nil, false
		}
		seg := data[i+4 : i+2+n]
		if marker == 0xE1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return seg[6:], true
		}
		i += 2 + n
	}
	return nil, false
}

// readIFD0 reads the ASCII tags of interest from the first IFD of a TIFF structure.
func readIFD0(tiff []byte, m *Meta) {
	if len(tiff) < 8 {
		return
	}
	var bo binary.ByteOrder
	switch string(tiff[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return
	}
	off := int(bo.Uint32(tiff[4:]))
	if off < 8 || off+2 > len(tiff) {
		return
	}
	count := int(bo.Uint16(tiff[off:]))
	for k := 0; k < count; k++ {
		e := off + 2 + 12*k
		if e+12 > len(tiff) {
			return
		}
		tag, typ, n := bo.Uint16(tiff[e:]), bo.Uint16(tiff[e+2:]), int(bo.Uint32(tiff[e+4:]))
		if typ != 2 || n <= 0 { // ASCII only
			continue
		}
		var val []byte
		if n <= 4 {
			val = tiff[e+8 : e+8+n]
		} else {
			vo := int(bo.Uint32(tiff[e+8:]))
			if vo < 0 || n > len(tiff) || vo > len(tiff)-n {
				continue
			}
			val = tiff[vo : vo+n]
		}
		s := cleanASCII(val)
		switch tag {
		case tagMake:
			m.Make = s
		case tagModel:
			m.Model = s
		case tagSoftware:
			m.Software = s
		}
	}
}

// cleanASCII cuts at the first NUL, keeps printable ASCII, trims and bounds the length.
func cleanASCII(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x20 && c < 0x7F {
			sb.WriteByte(c)
		}
		if sb.Len() >= maxTagLen {
			break
		}
	}
	return strings.TrimSpace(sb.String())
}

// DefaultEditors lists lower-case fragments of EXIF Software values written by image
// editors and generators (not by camera firmware or phone camera apps).
func DefaultEditors() []string {
	return []string{
		"photoshop", "gimp", "lightroom", "snapseed", "pixelmator", "paint.net", "affinity",
		"canva", "picsart", "meitu", "facetune", "photoscape", "fotor", "krita", "inkscape",
		"imagemagick", "graphicsmagick", "stable diffusion", "midjourney", "dall-e", "faceapp",
	}
}

// EditedBy returns the editor fragment of editors (lower-case) found in m.Software, or "".
func EditedBy(m Meta, editors []string) string {
	sw := strings.ToLower(m.Software)
	if sw == "" {
		return ""
	}
	for _, e := range editors {
		if strings.Contains(sw, e) {
			return e
		}
	}
	return ""
}
