// Package imagecheck validates untrusted image bytes before anything else looks at them: it
// accepts only JPEG and PNG, refuses declared dimensions beyond configured limits before a
// single pixel is decoded (decompression bombs), then decodes fully so that truncated or
// corrupt data is caught. It is the guard every image passes before it reaches OpenCV, whose
// errors abort the process. Inspect and Decode never panic and are safe for concurrent use.
package imagecheck

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"

	"github.com/idstream/idstream/internal/libjpeg"
)

// Errors of Inspect and Decode, wrapped with context; test with errors.Is.
var (
	ErrEmpty             = errors.New("imagecheck: empty image")
	ErrUnsupportedFormat = errors.New("imagecheck: unsupported image format")
	ErrTooLarge          = errors.New("imagecheck: image too large")
	ErrCorrupt           = errors.New("imagecheck: corrupt image")
)

// Formats and media types reported in Info.
const (
	FormatJPEG    = "jpeg"
	FormatPNG     = "png"
	MediaTypeJPEG = "image/jpeg"
	MediaTypePNG  = "image/png"
)

// Limits bounds what Inspect accepts. A zero (or negative) field takes its value from
// DefaultLimits, so a zero Limits is never "unlimited".
type Limits struct {
	MaxWidth  int // pixels
	MaxHeight int // pixels
	MaxPixels int // width × height
	MaxBytes  int // encoded size
}

// DefaultLimits returns 8000×8000 pixels, at most 40 megapixels, and 10 MiB of encoded data
// (the API's per-image body limit).
func DefaultLimits() Limits {
	return Limits{MaxWidth: 8000, MaxHeight: 8000, MaxPixels: 40_000_000, MaxBytes: 10 << 20}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxWidth <= 0 {
		l.MaxWidth = d.MaxWidth
	}
	if l.MaxHeight <= 0 {
		l.MaxHeight = d.MaxHeight
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = d.MaxPixels
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	return l
}

// Info describes a validated image.
type Info struct {
	Format    string // FormatJPEG | FormatPNG
	MediaType string // MediaTypeJPEG | MediaTypePNG
	Width     int
	Height    int
}

var (
	magicJPEG = []byte{0xFF, 0xD8, 0xFF}
	magicPNG  = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}
)

// Inspect validates data as described in the package comment and returns its format and
// dimensions. Errors: ErrEmpty for no data, ErrUnsupportedFormat for anything but JPEG and
// PNG, ErrTooLarge for data or declared dimensions beyond lim, ErrCorrupt for data that
// does not decode (including a decoder panic).
func Inspect(data []byte, lim Limits) (Info, error) {
	_, info, err := Decode(data, lim)
	return info, err
}

// Decode is Inspect that also returns the decoded image. On error the image is nil.
func Decode(data []byte, lim Limits) (image.Image, Info, error) {
	info, err := checkHeader(data, lim.withDefaults())
	if err != nil {
		return nil, Info{}, err
	}
	img, err := decode(data, info.Format)
	if err != nil {
		return nil, Info{}, err
	}
	if b := img.Bounds(); b.Dx() != info.Width || b.Dy() != info.Height {
		return nil, Info{}, fmt.Errorf("decode %s: %w: decoded %dx%d, header declares %dx%d",
			info.Format, ErrCorrupt, b.Dx(), b.Dy(), info.Width, info.Height)
	}
	return img, info, nil
}

// checkHeader sniffs the format and checks the declared dimensions without decoding pixels.
func checkHeader(data []byte, lim Limits) (info Info, err error) {
	if len(data) == 0 {
		return Info{}, ErrEmpty
	}
	if len(data) > lim.MaxBytes {
		return Info{}, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), lim.MaxBytes)
	}
	var decodeConfig func(r *bytes.Reader) (image.Config, error)
	switch {
	case bytes.HasPrefix(data, magicJPEG):
		info = Info{Format: FormatJPEG, MediaType: MediaTypeJPEG}
		decodeConfig = func(r *bytes.Reader) (image.Config, error) { return jpeg.DecodeConfig(r) }
	case bytes.HasPrefix(data, magicPNG):
		info = Info{Format: FormatPNG, MediaType: MediaTypePNG}
		decodeConfig = func(r *bytes.Reader) (image.Config, error) { return png.DecodeConfig(r) }
	default:
		return Info{}, fmt.Errorf("%w: not JPEG or PNG", ErrUnsupportedFormat)
	}
	defer func() {
		if r := recover(); r != nil {
			info, err = Info{}, fmt.Errorf("read %s header: %w: decoder panic", info.Format, ErrCorrupt)
		}
	}()
	cfg, err := decodeConfig(bytes.NewReader(data))
	if err != nil {
		return Info{}, fmt.Errorf("read %s header: %w: %v", info.Format, ErrCorrupt, err)
	}
	w, h := cfg.Width, cfg.Height
	if w <= 0 || h <= 0 {
		return Info{}, fmt.Errorf("read %s header: %w: dimensions %dx%d", info.Format, ErrCorrupt, w, h)
	}
	// w and h are each below 2^32 for both formats, so compare without overflow.
	if w > lim.MaxWidth || h > lim.MaxHeight || int64(w)*int64(h) > int64(lim.MaxPixels) {
		return Info{}, fmt.Errorf("%w: %dx%d pixels, limit %dx%d and %d pixels",
			ErrTooLarge, w, h, lim.MaxWidth, lim.MaxHeight, lim.MaxPixels)
	}
	info.Width, info.Height = w, h
	return info, nil
}

// decode decodes the pixels: JPEG with libjpeg-turbo (4× faster than image/jpeg), PNG with
// image/png. A JPEG libjpeg does not take (a layout it leaves to image/jpeg, such as RGB and
// CMYK files, or anything it fails or warns on) goes to image/jpeg, which decides: the
// files accepted are image/jpeg's and those libjpeg reads without a warning.
func decode(data []byte, format string) (img image.Image, err error) {
	if format == FormatJPEG {
		if img, err := libjpeg.Decode(data); err == nil {
			return img, nil
		}
	}
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("decode %s: %w: decoder panic", format, ErrCorrupt)
		}
	}()
	r := bytes.NewReader(data)
	if format == FormatJPEG {
		img, err = jpeg.Decode(r)
	} else {
		img, err = png.Decode(r)
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w: %v", format, ErrCorrupt, err)
	}
	return img, nil
}
