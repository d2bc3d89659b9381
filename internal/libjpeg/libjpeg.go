// Package libjpeg decodes JPEG with the system's libjpeg-turbo (SIMD), 3–5× faster than Go's
// image/jpeg, into the same images Go's decoder returns: *image.YCbCr with the file's chroma
// subsampling (planes as stored, no colour conversion, no upsampling) or *image.Gray, laid
// out as image/jpeg lays them out, each sample within a level or two of image/jpeg's (the
// two IDCTs, libjpeg's integer one and the MPEG-2 reference decoder's in image/jpeg, round
// differently; TestMatchesImageJPEG compares them). Files image/jpeg decodes otherwise (RGB,
// CMYK, unusual sampling factors) are reported as ErrUnsupported for the caller to hand to
// image/jpeg.
//
// It is a decoder of untrusted bytes: libjpeg's fatal errors return an error instead of
// exiting, and so does any warning (truncated data, a bad Huffman code, extraneous bytes),
// where libjpeg would otherwise fill in what it could not read. Callers bound the declared
// dimensions before calling (imagecheck does). Decode is safe for concurrent use.
package libjpeg

/*
#cgo pkg-config: libjpeg
#include <stdlib.h>
#include "decode.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"image"
	"unsafe"
)

var (
	// ErrUnsupported is returned for a JPEG this package does not decode (not YCbCr or grey,
	// or sampling factors image/jpeg lays out otherwise).
	ErrUnsupported = errors.New("libjpeg: unsupported JPEG layout")
	// ErrCorrupt is returned when libjpeg fails or warns.
	ErrCorrupt = errors.New("libjpeg: corrupt JPEG")
)

const msgLen = 256 // above JMSG_LENGTH_MAX (200)

// Header is what a JPEG's frame header declares.
type Header struct {
	Width, Height int
	Components    int
	Ratio         image.YCbCrSubsampleRatio // for 3 components
	supported     bool
	h0, v0        int
}

// ReadHeader reads the frame header of data. It returns ErrCorrupt when libjpeg cannot.
func ReadHeader(data []byte) (Header, error) {
	if len(data) == 0 {
		return Header{}, fmt.Errorf("%w: empty", ErrCorrupt)
	}
	var hdr C.ij_header
	msg := (*C.char)(C.malloc(msgLen))
	defer C.free(unsafe.Pointer(msg))
	if C.ij_read_header((*C.uchar)(unsafe.Pointer(&data[0])), C.size_t(len(data)), &hdr, msg) != 0 {
		return Header{}, fmt.Errorf("%w: %s", ErrCorrupt, C.GoString(msg))
	}
	h := Header{Width: int(hdr.width), Height: int(hdr.height), Components: int(hdr.components),
		h0: int(hdr.h[0]), v0: int(hdr.v[0])}
	switch {
	case hdr.ycbcr == 0:
	case h.Components == 1:
		// image/jpeg treats a single component as 1×1 whatever its factors say; libjpeg
		// reads such a file in taller strips. Only the ordinary case is taken here.
		h.supported = hdr.h[0] == 1 && hdr.v[0] == 1
	case h.Components == 3 && hdr.h[1] == 1 && hdr.v[1] == 1 && hdr.h[2] == 1 && hdr.v[2] == 1:
		h.Ratio, h.supported = ratioOf(h.h0, h.v0)
	}
	return h, nil
}

// ratioOf maps the luma sampling factors (chroma at 1×1) to image/jpeg's ratio.
func ratioOf(h0, v0 int) (image.YCbCrSubsampleRatio, bool) {
	switch h0<<4 | v0 {
	case 0x11:
		return image.YCbCrSubsampleRatio444, true
	case 0x12:
		return image.YCbCrSubsampleRatio440, true
	case 0x21:
		return image.YCbCrSubsampleRatio422, true
	case 0x22:
		return image.YCbCrSubsampleRatio420, true
	case 0x41:
		return image.YCbCrSubsampleRatio411, true
	case 0x42:
		return image.YCbCrSubsampleRatio410, true
	}
	return 0, false
}

// Decode decodes data into an *image.YCbCr (3 components) or *image.Gray (1), laid out as
// image/jpeg lays it out (planes padded to whole MCUs, the image a SubImage of them). It
// returns ErrUnsupported for layouts image/jpeg should decode, ErrCorrupt for anything
// libjpeg fails or warns on.
func Decode(data []byte) (image.Image, error) {
	h, err := ReadHeader(data)
	if err != nil {
		return nil, err
	}
	if !h.supported || h.Width <= 0 || h.Height <= 0 {
		return nil, ErrUnsupported
	}
	bounds := image.Rect(0, 0, h.Width, h.Height)
	if h.Components == 1 {
		mxx, myy := (h.Width+7)/8, (h.Height+7)/8
		m := image.NewGray(image.Rect(0, 0, 8*mxx, 8*myy))
		if err := decodeRaw(data, [][]byte{m.Pix}, []int{m.Stride}, []int{8 * myy}); err != nil {
			return nil, err
		}
		return m.SubImage(bounds), nil
	}
	mxx := (h.Width + 8*h.h0 - 1) / (8 * h.h0)
	myy := (h.Height + 8*h.v0 - 1) / (8 * h.v0)
	m := image.NewYCbCr(image.Rect(0, 0, 8*h.h0*mxx, 8*h.v0*myy), h.Ratio)
	yRows, cRows := 8*h.v0*myy, 8*myy
	err = decodeRaw(data, [][]byte{m.Y, m.Cb, m.Cr}, []int{m.YStride, m.CStride, m.CStride}, []int{yRows, cRows, cRows})
	if err != nil {
		return nil, err
	}
	return m.SubImage(bounds), nil
}

// decodeRaw has libjpeg write each component into its plane. The planes are Go memory
// without pointers, passed as arguments and used for the call only (cgo's pointer rules);
// the C side builds its row pointers in C memory and frees them before returning.
func decodeRaw(data []byte, planes [][]byte, strides, rows []int) error {
	var p [3]*C.uchar
	var s, r [3]C.int
	for i := range planes {
		if len(planes[i]) < strides[i]*rows[i] || rows[i] == 0 {
			return fmt.Errorf("libjpeg: plane %d holds %d bytes, needs %d", i, len(planes[i]), strides[i]*rows[i])
		}
		p[i] = (*C.uchar)(unsafe.Pointer(&planes[i][0]))
		s[i], r[i] = C.int(strides[i]), C.int(rows[i])
	}
	msg := (*C.char)(C.malloc(msgLen))
	defer C.free(unsafe.Pointer(msg))
	rc := C.ij_decode_raw((*C.uchar)(unsafe.Pointer(&data[0])), C.size_t(len(data)), C.int(len(planes)),
		p[0], p[1], p[2], s[0], s[1], s[2], r[0], r[1], r[2], msg)
	if rc != 0 {
		return fmt.Errorf("%w: %s", ErrCorrupt, C.GoString(msg))
	}
	return nil
}
