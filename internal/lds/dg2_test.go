package lds

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/lds/ldstest"
	"github.com/idstream/idstream/internal/tlv"
)

func TestParseDG2JPEG(t *testing.T) {
	img := ldstest.JPEG(48, 64)
	face, err := ParseDG2(ldstest.DG2(img))
	if err != nil {
		t.Fatal(err)
	}
	if face.MediaType != MediaTypeJPEG || !bytes.Equal(face.Data, img) || face.Width != 48 || face.Height != 64 || face.Images != 1 {
		t.Fatalf("got %s %dx%d, %d images, %d bytes", face.MediaType, face.Width, face.Height, face.Images, len(face.Data))
	}
	out, err := DecodeFaceJPEG(context.Background(), face, WithDecoder(filepath.Join(t.TempDir(), "absent")))
	if err != nil || !bytes.Equal(out, img) {
		t.Fatalf("DecodeFaceJPEG of a JPEG: %d bytes, %v; want the JPEG as it is without a decoder", len(out), err)
	}
}

// TestParseDG2FeaturePoints checks that the image is found after feature points.
func TestParseDG2FeaturePoints(t *testing.T) {
	img := ldstest.JPEG(8, 8)
	rec := ldstest.FacialRecord(img)
	// Insert two feature points (8 bytes each) between the facial information and image information.
	fp := make([]byte, 16)
	rec = slices.Concat(rec[:14+20], fp, rec[14+20:])
	binary.BigEndian.PutUint32(rec[8:12], uint32(len(rec)))
	binary.BigEndian.PutUint32(rec[14:18], binary.BigEndian.Uint32(rec[14:18])+16)
	binary.BigEndian.PutUint16(rec[18:20], 2)
	face, err := ParseDG2(ldstest.DG2Record(rec))
	if err != nil || !bytes.Equal(face.Data, img) || face.Width != 8 {
		t.Fatalf("with feature points: %+v, %v", face, err)
	}
}

func TestParseDG2Errors(t *testing.T) {
	img := ldstest.JPEG(8, 8)
	rec := ldstest.FacialRecord(img)
	patch := func(off int, b ...byte) []byte {
		r := slices.Clone(rec)
		copy(r[off:], b)
		return r
	}
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"wrong tag", tlv.Encode(0x61, nil), ErrMalformed},
		{"no group template", tlv.Encode(0x75, tlv.Encode(0x02, []byte{1})), ErrMalformed},
		{"no data block", tlv.Encode(0x75, tlv.Encode(0x7F61, tlv.Encode(0x7F60, tlv.Encode(0xA1, nil)))), ErrMalformed},
		{"short record", ldstest.DG2Record(rec[:10]), ErrMalformed},
		{"not FAC", ldstest.DG2Record(patch(0, 'F', 'A', 'X')), ErrMalformed},
		{"2011 version", ldstest.DG2Record(patch(4, '0', '3', '0')), ErrUnsupported},
		{"record length beyond", ldstest.DG2Record(patch(8, 0x7F, 0xFF, 0xFF, 0xFF)), ErrMalformed},
		{"record length too small", ldstest.DG2Record(patch(8, 0, 0, 0, 4)), ErrMalformed},
		{"no images", ldstest.DG2Record(patch(12, 0, 0)), ErrMalformed},
		{"block length beyond", ldstest.DG2Record(patch(14, 0xFF, 0xFF, 0xFF, 0xFF)), ErrMalformed},
		{"feature points beyond", ldstest.DG2Record(patch(18, 0xFF, 0xFF)), ErrMalformed},
		{"truncated record", ldstest.DG2Record(rec[:40]), ErrMalformed},
		{"not an image", ldstest.DG2(bytes.Repeat([]byte{'x'}, 64)), ErrUnsupported},
	} {
		if face, err := ParseDG2(c.b); !errors.Is(err, c.want) || face != nil {
			t.Errorf("%s: ParseDG2 = %v, %v; want %v", c.name, face, err, c.want)
		}
	}
}

// jpeg2000 writes a w×h grayscale gradient as PGM and compresses it with opj_compress into
// the format named by ext (".jp2" or ".j2k"). It skips the test when openjpeg's tools are
// not installed.
func jpeg2000(t *testing.T, w, h int, ext string) []byte {
	t.Helper()
	bin, err := exec.LookPath("opj_compress")
	if err != nil {
		t.Skip("opj_compress not found: install the Debian package libopenjp2-tools (make deps)")
	}
	if _, err := exec.LookPath("opj_decompress"); err != nil {
		t.Skip("opj_decompress not found: install the Debian package libopenjp2-tools (make deps)")
	}
	dir := t.TempDir()
	var pgm bytes.Buffer
	fmt.Fprintf(&pgm, "P5\n%d %d\n255\n", w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			pgm.WriteByte(byte(x * 255 / w))
		}
	}
	in, out := filepath.Join(dir, "face.pgm"), filepath.Join(dir, "face"+ext)
	if err := os.WriteFile(in, pgm.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(bin, "-i", in, "-o", out, "-n", "3").CombinedOutput(); err != nil {
		t.Fatalf("opj_compress: %v: %s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeFaceJPEG2000(t *testing.T) {
	for _, c := range []struct{ ext, mediaType string }{{".jp2", MediaTypeJP2}, {".j2k", MediaTypeJ2C}} {
		t.Run(c.ext, func(t *testing.T) {
			j2k := jpeg2000(t, 40, 30, c.ext)
			face, err := ParseDG2(ldstest.DG2(j2k))
			if err != nil {
				t.Fatal(err)
			}
			if face.MediaType != c.mediaType || !bytes.Equal(face.Data, j2k) {
				t.Fatalf("media type %q, %d bytes", face.MediaType, len(face.Data))
			}
			tmp := t.TempDir()
			out, err := DecodeFaceJPEG(context.Background(), face, WithTempDir(tmp))
			if err != nil {
				t.Fatal(err)
			}
			m, err := jpeg.Decode(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("output is not a JPEG: %v", err)
			}
			if b := m.Bounds(); b.Dx() != 40 || b.Dy() != 30 {
				t.Fatalf("decoded %v, want 40×30", b)
			}
			// The gradient survives: dark on the left, bright on the right.
			if l, r := gray(m, 2, 15), gray(m, 37, 15); l > 40 || r < 200 {
				t.Fatalf("left %d, right %d: not the encoded gradient", l, r)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Fatalf("work files left behind: %v", left)
			}
		})
	}
}

func gray(m image.Image, x, y int) int {
	r, g, b, _ := m.At(x, y).RGBA()
	return int((r + g + b) / 3 >> 8)
}

func TestDecodeFaceJPEGErrors(t *testing.T) {
	j2k := jpeg2000(t, 40, 30, ".jp2")
	face := &FaceImage{MediaType: MediaTypeJP2, Data: j2k}
	ctx := context.Background()
	absent := WithDecoder(filepath.Join(t.TempDir(), "no-such-opj_decompress"))

	if _, err := DecodeFaceJPEG(ctx, face, absent); !errors.Is(err, ErrDecoderMissing) {
		t.Errorf("missing decoder: %v", err)
	}
	// Limits apply to the header, before any decoder runs.
	if _, err := DecodeFaceJPEG(ctx, face, absent, WithMaxDimensions(39, 10000)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("width limit: %v", err)
	}
	if _, err := DecodeFaceJPEG(ctx, face, absent, WithMaxDimensions(100, 1000)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("pixel limit: %v", err)
	}
	if _, err := DecodeFaceJPEG(ctx, face, absent, WithMaxInputBytes(len(j2k)-1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("input limit: %v", err)
	}
	// A decompression bomb: a SIZ header declaring 60000×60000.
	bomb := slices.Clone(j2k)
	i := bytes.Index(bomb, []byte{0xFF, 0x4F, 0xFF, 0x51})
	binary.BigEndian.PutUint32(bomb[i+8:], 60000)
	binary.BigEndian.PutUint32(bomb[i+12:], 60000)
	if _, err := DecodeFaceJPEG(ctx, &FaceImage{MediaType: MediaTypeJP2, Data: bomb}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("bomb: %v", err)
	}
	// A header with nothing behind it: the decoder fails and says so.
	if _, err := DecodeFaceJPEG(ctx, &FaceImage{MediaType: MediaTypeJP2, Data: j2k[:i+60]}); !errors.Is(err, ErrDecode) {
		t.Errorf("truncated: %v", err)
	}
	// No codestream header at all.
	if _, err := DecodeFaceJPEG(ctx, &FaceImage{MediaType: MediaTypeJP2, Data: j2k[:i]}); !errors.Is(err, ErrMalformed) {
		t.Errorf("no SIZ: %v", err)
	}
	// Media type and bytes must agree.
	if _, err := DecodeFaceJPEG(ctx, &FaceImage{MediaType: MediaTypeJPEG, Data: j2k}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("mislabelled: %v", err)
	}
	if _, err := DecodeFaceJPEG(ctx, nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("nil: %v", err)
	}
}

// TestDecodeFaceJPEGTimeout runs a stand-in decoder that never finishes: the timeout ends it.
func TestDecodeFaceJPEGTimeout(t *testing.T) {
	j2k := jpeg2000(t, 16, 16, ".j2k")
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow-decoder")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nexec sleep 60\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	face := &FaceImage{MediaType: MediaTypeJ2C, Data: j2k}
	_, err := DecodeFaceJPEG(context.Background(), face, WithDecoder(slow), WithTimeout(50*time.Millisecond))
	if !errors.Is(err, ErrDecode) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow decoder: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DecodeFaceJPEG(ctx, face, WithDecoder(slow)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}
