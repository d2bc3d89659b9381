package lds

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// decodeConfig is the configuration of DecodeFaceJPEG.
type decodeConfig struct {
	decoder      string
	tempDir      string
	timeout      time.Duration
	maxInput     int
	maxDimension int
	maxPixels    int
	quality      int
}

// DecodeOption configures DecodeFaceJPEG.
type DecodeOption func(*decodeConfig)

// WithDecoder sets the opj_decompress executable: a path, or a name looked up in PATH
// (default "opj_decompress").
func WithDecoder(path string) DecodeOption { return func(c *decodeConfig) { c.decoder = path } }

// WithTempDir sets the directory under which each decoding gets its own temporary directory
// (default os.TempDir()).
func WithTempDir(dir string) DecodeOption { return func(c *decodeConfig) { c.tempDir = dir } }

// WithTimeout bounds one run of the decoder (default 10 s); the context can end it sooner.
func WithTimeout(d time.Duration) DecodeOption { return func(c *decodeConfig) { c.timeout = d } }

// WithMaxInputBytes bounds the encoded JPEG2000 image accepted (default 2 MiB).
func WithMaxInputBytes(n int) DecodeOption { return func(c *decodeConfig) { c.maxInput = n } }

// WithMaxDimensions bounds the width and height (each at most maxDimension, default 4000) and
// their product (default 8 megapixels) of a JPEG2000 image, checked on its header before it
// is decoded and again on the decoder's output.
func WithMaxDimensions(maxDimension, maxPixels int) DecodeOption {
	return func(c *decodeConfig) { c.maxDimension, c.maxPixels = maxDimension, maxPixels }
}

// WithJPEGQuality sets the quality (1–100, default 92) of the JPEG made from a JPEG2000 image.
func WithJPEGQuality(q int) DecodeOption { return func(c *decodeConfig) { c.quality = q } }

// DecodeFaceJPEG returns img as a JPEG. A JPEG is returned as it is. A JPEG2000 image (JP2 or
// bare codestream) is checked against the limits on its header, decoded by running
// opj_decompress (Debian package libopenjp2-tools) in a fresh temporary directory that is
// removed afterwards, under ctx and a timeout, and re-encoded as a baseline JPEG. Errors wrap
// ErrUnsupported (not an image this reads), ErrTooLarge, ErrMalformed (no JPEG2000 header),
// ErrDecoderMissing or ErrDecode.
func DecodeFaceJPEG(ctx context.Context, img *FaceImage, opts ...DecodeOption) ([]byte, error) {
	c := decodeConfig{
		decoder: "opj_decompress", timeout: 10 * time.Second, maxInput: 2 << 20,
		maxDimension: 4000, maxPixels: 8_000_000, quality: 92,
	}
	for _, o := range opts {
		o(&c)
	}
	if img == nil {
		return nil, fmt.Errorf("%w: no face image", ErrUnsupported)
	}
	var ext string
	switch {
	case img.MediaType == MediaTypeJPEG && hasPrefix(img.Data, sigJPEG):
		return img.Data, nil
	case img.MediaType == MediaTypeJP2 && hasPrefix(img.Data, sigJP2):
		ext = ".jp2"
	case img.MediaType == MediaTypeJ2C && hasPrefix(img.Data, sigJ2C):
		ext = ".j2k"
	default:
		return nil, fmt.Errorf("%w: face image of media type %q does not carry its signature", ErrUnsupported, img.MediaType)
	}
	if len(img.Data) > c.maxInput {
		return nil, fmt.Errorf("%w: JPEG2000 image of %d bytes, at most %d", ErrTooLarge, len(img.Data), c.maxInput)
	}
	w, h, err := j2kSize(img.Data)
	if err != nil {
		return nil, err
	}
	if err := c.checkSize(w, h); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(c.decoder)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDecoderMissing, err)
	}
	dir, err := os.MkdirTemp(c.tempDir, "idstream-j2k-")
	if err != nil {
		return nil, fmt.Errorf("lds: JPEG2000 work directory: %w", err)
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "face"+ext), filepath.Join(dir, "face.png")
	if err := os.WriteFile(in, img.Data, 0o600); err != nil {
		return nil, fmt.Errorf("lds: JPEG2000 work file: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-i", in, "-o", out)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	var stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w (%w)", ErrDecode, err, ctx.Err())
		}
		return nil, fmt.Errorf("%w: %w: %s", ErrDecode, err, strings.TrimSpace(stderr.String()))
	}
	return c.reencode(out)
}

// checkSize applies the dimension limits.
func (c decodeConfig) checkSize(w, h int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("%w: JPEG2000 image of %d×%d", ErrMalformed, w, h)
	}
	if w > c.maxDimension || h > c.maxDimension || w*h > c.maxPixels {
		return fmt.Errorf("%w: %d×%d, at most %d per side and %d pixels", ErrTooLarge, w, h, c.maxDimension, c.maxPixels)
	}
	return nil
}

// reencode reads the decoder's PNG (bounded by the pixel limit) and encodes it as JPEG.
func (c decodeConfig) reencode(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: no output: %w", ErrDecode, err)
	}
	// An uncompressed 16-bit RGBA image is 8 bytes a pixel; PNG output is never larger by much.
	if limit := int64(c.maxPixels)*8 + 1<<20; fi.Size() > limit {
		return nil, fmt.Errorf("%w: decoder output of %d bytes", ErrTooLarge, fi.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: reading output: %w", ErrDecode, err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: output: %w", ErrDecode, err)
	}
	if err := c.checkSize(cfg.Width, cfg.Height); err != nil {
		return nil, err
	}
	m, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: output: %w", ErrDecode, err)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: c.quality}); err != nil {
		return nil, fmt.Errorf("lds: encoding JPEG: %w", err)
	}
	return buf.Bytes(), nil
}

// j2kSize reads the image size from the SIZ marker segment of the JPEG2000 codestream in b
// (a bare codestream, or the one inside a JP2 file), without decoding anything.
func j2kSize(b []byte) (w, h int, err error) {
	i := bytes.Index(b, []byte(sigJ2C))
	// SOC (2) + SIZ marker (2) + Lsiz (2) + Rsiz (2) + Xsiz, Ysiz, XOsiz, YOsiz (4 each).
	if i < 0 || len(b)-i < 24 {
		return 0, 0, fmt.Errorf("%w: no JPEG2000 SIZ header", ErrMalformed)
	}
	siz := b[i+4:]
	x, y := binary.BigEndian.Uint32(siz[4:8]), binary.BigEndian.Uint32(siz[8:12])
	xo, yo := binary.BigEndian.Uint32(siz[12:16]), binary.BigEndian.Uint32(siz[16:20])
	if xo >= x || yo >= y {
		return 0, 0, fmt.Errorf("%w: JPEG2000 image offset beyond its size", ErrMalformed)
	}
	dw, dh := uint64(x-xo), uint64(y-yo)
	if dw > 1<<30 || dh > 1<<30 {
		return 0, 0, fmt.Errorf("%w: JPEG2000 image of %d×%d", ErrTooLarge, dw, dh)
	}
	return int(dw), int(dh), nil
}

// limitedBuffer keeps the first 4 KiB written to it (the decoder's diagnostics).
type limitedBuffer struct{ bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 4096 - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
