package imagecheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"runtime"
	"testing"
)

// testImage is a 64×48 gradient with noise, so that encoders produce real scan data.
func testImage() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := range 48 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), uint8(rng.IntN(256)), 255})
		}
	}
	return img
}

func encodeJPEG(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, testImage(), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodePNG(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, testImage()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pngChunk returns one PNG chunk with a correct CRC.
func pngChunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	_ = binary.Write(&b, binary.BigEndian, crc.Sum32())
	return b.Bytes()
}

// pngBomb is a well-formed PNG header declaring w×h RGBA pixels, with a tiny IDAT.
func pngBomb(w, h uint32) []byte {
	var b bytes.Buffer
	b.Write(magicPNG)
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	b.Write(pngChunk("IHDR", ihdr))
	b.Write(pngChunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}))
	b.Write(pngChunk("IEND", nil))
	return b.Bytes()
}

// jpegWithSize rewrites the frame header (SOF0) of a baseline JPEG to declare w×h.
func jpegWithSize(t testing.TB, w, h uint16) []byte {
	t.Helper()
	data := bytes.Clone(encodeJPEG(t))
	i := bytes.Index(data, []byte{0xFF, 0xC0})
	if i < 0 || i+9 > len(data) {
		t.Fatal("no SOF0 marker in the encoded JPEG")
	}
	// FF C0, length (2), precision (1), height (2), width (2)
	binary.BigEndian.PutUint16(data[i+5:], h)
	binary.BigEndian.PutUint16(data[i+7:], w)
	return data
}

func TestInspectValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want Info
	}{
		{"jpeg", encodeJPEG(t), Info{Format: "jpeg", MediaType: "image/jpeg", Width: 64, Height: 48}},
		{"png", encodePNG(t), Info{Format: "png", MediaType: "image/png", Width: 64, Height: 48}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Inspect(tc.data, DefaultLimits())
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Inspect = %+v, want %+v", got, tc.want)
			}
			img, info, err := Decode(tc.data, DefaultLimits())
			if err != nil || info != tc.want {
				t.Fatalf("Decode = %+v, %v", info, err)
			}
			if b := img.Bounds(); b.Dx() != 64 || b.Dy() != 48 {
				t.Fatalf("decoded bounds %v", b)
			}
		})
	}
}

func TestInspectRejects(t *testing.T) {
	jpg := encodeJPEG(t)
	pngData := encodePNG(t)
	var gifBuf bytes.Buffer
	if err := gif.Encode(&gifBuf, testImage(), nil); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	randomAfterJPEGMagic := append(bytes.Clone(magicJPEG), random...)
	randomAfterPNGMagic := append(bytes.Clone(magicPNG), random...)
	badCRC := bytes.Clone(pngData)
	badCRC[len(badCRC)-20] ^= 0xFF // inside the last IDAT or its CRC

	for _, tc := range []struct {
		name string
		data []byte
		lim  Limits
		want error
	}{
		{"nil", nil, DefaultLimits(), ErrEmpty},
		{"empty", []byte{}, DefaultLimits(), ErrEmpty},
		{"truncated jpeg", jpg[:len(jpg)/2], DefaultLimits(), ErrCorrupt},
		{"jpeg header only", jpg[:200], DefaultLimits(), ErrCorrupt},
		{"truncated png", pngData[:len(pngData)/2], DefaultLimits(), ErrCorrupt},
		{"png with bad crc", badCRC, DefaultLimits(), ErrCorrupt},
		{"random bytes", random, DefaultLimits(), ErrUnsupportedFormat},
		{"random after jpeg magic", randomAfterJPEGMagic, DefaultLimits(), ErrCorrupt},
		{"random after png magic", randomAfterPNGMagic, DefaultLimits(), ErrCorrupt},
		{"gif", gifBuf.Bytes(), DefaultLimits(), ErrUnsupportedFormat},
		{"text", []byte("<svg xmlns='http://www.w3.org/2000/svg'/>"), DefaultLimits(), ErrUnsupportedFormat},
		{"png bomb", pngBomb(100000, 100000), DefaultLimits(), ErrTooLarge},
		{"png too many pixels", pngBomb(7000, 7000), DefaultLimits(), ErrTooLarge},
		{"png zero width", pngBomb(0, 10), DefaultLimits(), ErrCorrupt},
		{"jpeg huge header", jpegWithSize(t, 60000, 60000), DefaultLimits(), ErrTooLarge},
		{"jpeg too tall", jpegWithSize(t, 100, 9000), DefaultLimits(), ErrTooLarge},
		{"jpeg lies about its size", jpegWithSize(t, 640, 480), DefaultLimits(), ErrCorrupt},
		{"over byte limit", jpg, Limits{MaxBytes: len(jpg) - 1}, ErrTooLarge},
		{"over width limit", pngData, Limits{MaxWidth: 63}, ErrTooLarge},
		{"over height limit", pngData, Limits{MaxHeight: 47}, ErrTooLarge},
		{"over pixel limit", pngData, Limits{MaxPixels: 64*48 - 1}, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := Inspect(tc.data, tc.lim)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Inspect error = %v, want %v", err, tc.want)
			}
			if info != (Info{}) {
				t.Fatalf("Inspect returned %+v with an error", info)
			}
			img, _, err := Decode(tc.data, tc.lim)
			if !errors.Is(err, tc.want) || img != nil {
				t.Fatalf("Decode = %v, %v; want nil, %v", img, err, tc.want)
			}
		})
	}
}

func TestZeroLimitsMeanDefaults(t *testing.T) {
	if _, err := Inspect(pngBomb(100000, 100000), Limits{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("zero Limits: error = %v, want ErrTooLarge", err)
	}
	if _, err := Inspect(encodePNG(t), Limits{}); err != nil {
		t.Fatalf("zero Limits on a small PNG: %v", err)
	}
}

// The bomb must be refused from its header: decoding 100000×100000 RGBA would allocate 40 GB.
func TestBombRefusedWithoutAllocating(t *testing.T) {
	bomb := pngBomb(100000, 100000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := Inspect(bomb, DefaultLimits()); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("error = %v, want ErrTooLarge", err)
		}
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("refusing the bomb 10 times allocated %d bytes, want under 1 MiB", alloc)
	}
}

// TestDecodeJPEGAsImageJPEGDecides: files libjpeg warns or fails on go to image/jpeg, which
// decides, so the JPEGs accepted are those image/jpeg accepts: two stray bytes before a
// marker (libjpeg warns, image/jpeg reads on), an unknown marker after the scan (libjpeg
// fails in jpeg_finish_decompress), a truncated scan (both refuse).
func TestDecodeJPEGAsImageJPEGDecides(t *testing.T) {
	base := encodeJPEG(t)
	dqt := bytes.Index(base, []byte{0xFF, 0xC0}) // the frame header, after the tables
	if dqt < 0 || !bytes.HasSuffix(base, []byte{0xFF, 0xD9}) {
		t.Fatal("unexpected encoding")
	}
	stray := append(append(append([]byte{}, base[:dqt]...), 0x00, 0x00), base[dqt:]...)
	marker := append(append([]byte{}, base[:len(base)-2]...), 0xFF, 0x37, 0x00, 0x02, 0xFF, 0xD9)
	truncated := base[:len(base)*2/3]
	for name, data := range map[string][]byte{"stray bytes": stray, "unknown marker": marker, "truncated": truncated} {
		_, goErr := jpeg.Decode(bytes.NewReader(data))
		img, _, err := Decode(data, Limits{})
		switch {
		case goErr == nil && err != nil:
			t.Errorf("%s: image/jpeg decodes it, Decode: %v", name, err)
		case goErr != nil && err == nil:
			t.Errorf("%s: image/jpeg refuses it (%v), Decode accepts", name, goErr)
		case err == nil && img.Bounds() != testImage().Bounds():
			t.Errorf("%s: bounds %v", name, img.Bounds())
		case goErr != nil && !errors.Is(err, ErrCorrupt):
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}
