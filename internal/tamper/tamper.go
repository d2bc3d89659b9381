// Package tamper looks for traces of editing in a document image, in pure Go: double JPEG
// compression (the file was decoded and saved again with another quantisation table, as an
// editor does). It is the evidence behind the fraud group's fraud.tamper.<step> check.
//
// Analyze validates the bytes (imagecheck: JPEG or PNG, dimensions checked before any pixel
// is decoded), decodes once and analyses the luminance. Its work is bounded for any image the
// edge accepts (40 megapixels): the analysis samples at most MaxDCTBlocks 8×8 blocks per
// grid.
//
// How reliable the signal is, is measured in tamper_test.go on generated images (card
// renders made camera-like and encoded once; the same decoded and saved again at other
// qualities); the figures are in DoubleCompression's doc comment. It does not prove an edit
// alone: a legitimate pipeline may re-encode an image.
//
// Copy-move detection (block matching) is not here: a first implementation (16×16 blocks,
// sub-block-mean features, lexicographic sort, shift voting) flagged 17 of 18 clean
// camera-like card renders, because cards repeat text and line structure at fixed offsets.
package tamper

import (
	"errors"
	"fmt"
	"image"

	"github.com/idstream/idstream/internal/imagecheck"
)

// ErrNotImage wraps every error of Analyze about the input (not JPEG or PNG, too large,
// corrupt); test with errors.Is.
var ErrNotImage = errors.New("tamper: not an analysable image")

// Report is the result of Analyze.
type Report struct {
	Format            string // imagecheck.FormatJPEG or FormatPNG
	Width, Height     int
	DoubleCompression DoubleCompression
}

// Analyze runs the analysis on data (see the package comment). lim bounds the input (zero
// fields take imagecheck.DefaultLimits). It returns an error wrapping ErrNotImage for input
// that is not a decodable JPEG or PNG within lim; it never panics.
func Analyze(data []byte, lim imagecheck.Limits) (Report, error) {
	img, info, err := imagecheck.Decode(data, lim)
	if err != nil {
		return Report{}, fmt.Errorf("%w: %w", ErrNotImage, err)
	}
	return AnalyzeDecoded(data, img, info), nil
}

// AnalyzeDecoded is Analyze of data already decoded (imagecheck.Decode, or a decode shared
// with the process's other readers: imagecheck.Decoded) to img and info.
func AnalyzeDecoded(data []byte, img image.Image, info imagecheck.Info) Report {
	r := Report{Format: info.Format, Width: info.Width, Height: info.Height}
	if info.Format == imagecheck.FormatJPEG {
		if q, ok := LuminanceTable(data); ok {
			r.DoubleCompression = AnalyzeDoubleCompression(lumaOf(img), q)
		}
	}
	return r
}

// Plane is an 8-bit luminance image, row-major, Stride == W.
type Plane struct {
	W, H int
	Pix  []uint8
}

func (p *Plane) at(x, y int) uint8 { return p.Pix[y*p.W+x] }

// lumaOf returns the luminance of img: the decoder's own Y samples for a YCbCr or gray
// JPEG (exactly what the inverse DCT produced), else Rec. 601 luma.
func lumaOf(img image.Image) *Plane {
	b := img.Bounds()
	p := &Plane{W: b.Dx(), H: b.Dy(), Pix: make([]uint8, b.Dx()*b.Dy())}
	switch m := img.(type) {
	case *image.YCbCr:
		for y := range p.H {
			copy(p.Pix[y*p.W:(y+1)*p.W], m.Y[m.YOffset(b.Min.X, b.Min.Y+y):])
		}
	case *image.Gray:
		for y := range p.H {
			copy(p.Pix[y*p.W:(y+1)*p.W], m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):])
		}
	default:
		for y := range p.H {
			for x := range p.W {
				r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
				p.Pix[y*p.W+x] = uint8((19595*r + 38470*g + 7471*bl + 1<<15) >> 24)
			}
		}
	}
	return p
}
