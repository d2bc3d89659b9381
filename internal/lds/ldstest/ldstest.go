// Package ldstest builds synthetic eMRTD data groups for tests: DG1 from MRZ lines, DG2 from
// an encoded face image, DG13 as a Vietnamese chip ID card fills it, and DG14 with an
// active authentication info, plus a synthetic card holder whose MRZ and DG13 agree. Nothing
// in it describes a real person. It is test support only: it builds, it does not check.
package ldstest

import (
	"bytes"
	"encoding/asn1"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"maps"
	"slices"
	"strings"

	"github.com/idstream/idstream/internal/tlv"
)

// DG1 returns EF.DG1 (tag 0x61) holding the MRZ lines, concatenated, in element 0x5F1F.
func DG1(mrzLines []string) []byte {
	return tlv.Encode(0x61, tlv.Encode(0x5F1F, []byte(strings.Join(mrzLines, ""))))
}

// DG2 returns EF.DG2 (tag 0x75) holding img, a JPEG or JPEG2000 image, in an ISO/IEC
// 19794-5:2005 facial record with no feature points, inside the biometric templates of ICAO
// Doc 9303 Part 10. The record's image data type is 1 for JPEG2000 and 0 otherwise; its
// width and height are read from a JPEG's header (0 for other images).
func DG2(img []byte) []byte {
	return DG2Record(FacialRecord(img))
}

// DG2Record returns EF.DG2 with record, any bytes, as its biometric data block (0x5F2E).
func DG2Record(record []byte) []byte {
	bht := tlv.Encode(0xA1, slices.Concat(
		tlv.Encode(0x80, []byte{0x01, 0x01}), // ICAO header version
		tlv.Encode(0x81, []byte{0x02}),       // biometric type: facial features
		tlv.Encode(0x87, []byte{0x01, 0x01}), // format owner
		tlv.Encode(0x88, []byte{0x00, 0x08}), // format type
	))
	bit := tlv.Encode(0x7F60, slices.Concat(bht, tlv.Encode(0x5F2E, record)))
	bigt := tlv.Encode(0x7F61, slices.Concat(tlv.Encode(0x02, []byte{0x01}), bit))
	return tlv.Encode(0x75, bigt)
}

// FacialRecord returns an ISO/IEC 19794-5:2005 facial record holding one image.
func FacialRecord(img []byte) []byte {
	var w, h uint16
	dataType := byte(0)
	if bytes.HasPrefix(img, []byte{0x00, 0x00, 0x00, 0x0C, 'j', 'P'}) || bytes.HasPrefix(img, []byte{0xFF, 0x4F, 0xFF, 0x51}) {
		dataType = 1
	} else if cfg, err := jpeg.DecodeConfig(bytes.NewReader(img)); err == nil {
		w, h = uint16(cfg.Width), uint16(cfg.Height)
	}
	block := make([]byte, 20+12, 20+12+len(img))
	binary.BigEndian.PutUint32(block[0:4], uint32(len(block)+len(img)))
	// Image information: full frontal (1), data type, width, height, sRGB (1), source, device, quality.
	info := block[20:]
	info[0], info[1] = 1, dataType
	binary.BigEndian.PutUint16(info[2:4], w)
	binary.BigEndian.PutUint16(info[4:6], h)
	info[6] = 1
	block = append(block, img...)
	hdr := make([]byte, 14, 14+len(block))
	copy(hdr, "FAC\x00010\x00")
	binary.BigEndian.PutUint32(hdr[8:12], uint32(14+len(block)))
	binary.BigEndian.PutUint16(hdr[12:14], 1)
	return append(hdr, block...)
}

// DG13 returns a Vietnamese chip ID card's EF.DG13 (tag 0x6D) with one SEQUENCE
// {INTEGER id, UTF8String value} per entry, in increasing id order. The parents entry (id
// 13) is written nested: its value is split at "\n" and each part becomes a SEQUENCE holding
// one UTF8String (father first, then mother).
func DG13(fields map[int]string) []byte {
	var body []byte
	for _, id := range slices.Sorted(maps.Keys(fields)) {
		body = append(body, DG13Entry(id, fields[id])...)
	}
	return tlv.Encode(0x6D, body)
}

// DG13Entry returns one DG13 entry as DG13 writes it.
func DG13Entry(id int, value string) []byte {
	var v []byte
	if id == 13 {
		for _, p := range strings.Split(value, "\n") {
			v = append(v, tlv.Encode(0x30, tlv.Encode(0x0C, []byte(p)))...)
		}
	} else {
		v = tlv.Encode(0x0C, []byte(value))
	}
	return tlv.Encode(0x30, slices.Concat(Integer(id), v))
}

// Integer returns the DER INTEGER encoding of a non-negative n.
func Integer(n int) []byte {
	b, _ := asn1.Marshal(n) // an int always marshals
	return b
}

// DG14 returns EF.DG14 (tag 0x6E) whose SET OF SecurityInfo holds an ActiveAuthenticationInfo
// (version 1) naming signatureAlgorithm, followed by extra, each a DER SecurityInfo.
func DG14(signatureAlgorithm asn1.ObjectIdentifier, extra ...[]byte) []byte {
	aa, _ := asn1.Marshal(struct {
		Protocol  asn1.ObjectIdentifier
		Version   int
		Algorithm asn1.ObjectIdentifier
	}{asn1.ObjectIdentifier{2, 23, 136, 1, 1, 5}, 1, signatureAlgorithm}) // cannot fail for valid OIDs
	return tlv.Encode(0x6E, tlv.Encode(0x31, slices.Concat(append([][]byte{aa}, extra...)...)))
}

// SampleMRZ returns the TD1 MRZ of the synthetic card holder: a Vietnamese chip ID card whose
// document number is the last nine digits of the 12-digit ID 001099012345 and whose optional
// data is that ID. It agrees with SampleDG13Fields.
func SampleMRZ() []string {
	return []string{
		"IDVNM0990123459001099012345<<<",
		"9903159M3903157VNM<<<<<<<<<<<0",
		"NGUYEN<<VAN<A<<<<<<<<<<<<<<<<<",
	}
}

// SampleDG13Fields returns the DG13 entries of the synthetic card holder of SampleMRZ.
func SampleDG13Fields() map[int]string {
	return map[int]string{
		1:  "001099012345",
		2:  "Nguyễn Văn A",
		3:  "15/03/1999",
		4:  "Nam",
		5:  "Việt Nam",
		6:  "Kinh",
		7:  "Không",
		8:  "Phường Mẫu, Quận Thử, Hà Nội",
		9:  "Số 1 Đường Giả Định, Phường Mẫu, Quận Thử, Hà Nội",
		10: "Nốt ruồi C:2cm trên sau đuôi mắt trái",
		11: "01/07/2021",
		12: "15/03/2039",
		13: "Nguyễn Văn B\nTrần Thị C",
	}
}

// JPEG returns a w×h baseline JPEG of a smooth synthetic pattern (no face), for tests that
// need some valid image bytes.
func JPEG(w, h int) []byte {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.Set(x, y, color.RGBA{uint8(x * 255 / max(w, 1)), uint8(y * 255 / max(h, 1)), 128, 255})
		}
	}
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}) // writing to a buffer cannot fail
	return buf.Bytes()
}
