package tamper

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/idstream/idstream/internal/cardrender"
	"github.com/idstream/idstream/internal/imagecheck"
)

// camera returns seed's camera-like document picture before encoding: a card render (front,
// back or passport page of a synthetic person) placed on a background, rotated, seen in
// perspective, blurred and noisy (cardrender.Degrade without its JPEG step).
func camera(t testing.TB, seed uint64) *image.RGBA {
	t.Helper()
	r := renderer(t)
	p := cardrender.SyntheticPerson(seed)
	var img image.Image
	switch seed % 3 {
	case 0:
		img, _ = r.ChipIDFront(p)
	case 1:
		img, _ = r.ChipIDBack(p)
	default:
		img, _ = r.Passport(p)
	}
	d := cardrender.MildDegradation(seed)
	d.JPEGQuality = 0
	out, err := cardrender.Degrade(img, d, seed)
	if err != nil {
		t.Fatal(err)
	}
	rgba := image.NewRGBA(out.Bounds())
	draw.Draw(rgba, rgba.Bounds(), out, out.Bounds().Min, draw.Src)
	return rgba
}

var (
	rendOnce sync.Once
	rend     *cardrender.Renderer
	rendErr  error
)

func renderer(t testing.TB) *cardrender.Renderer {
	rendOnce.Do(func() { rend, rendErr = cardrender.New() })
	if rendErr != nil {
		t.Fatalf("card renderer: %v", rendErr)
	}
	return rend
}

func encode(t testing.TB, img image.Image, q int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// resave decodes a JPEG and encodes it again at quality q, as an editor saving does.
func resave(t testing.TB, data []byte, q int) []byte {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return encode(t, img, q)
}

func analyze(t testing.TB, data []byte) Report {
	t.Helper()
	r, err := Analyze(data, imagecheck.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// qualities are the JPEG qualities of the generated sets: camera apps save at 85–95, SDKs
// and editors at 70–95.
var qualities = []int{70, 75, 80, 85, 90, 95}

const sampleSize = 18

// TestDoubleCompressionRates measures the double-compression analysis: clean camera-like
// pictures encoded once must not be flagged; the same decoded and saved again at another
// quality should be. It prints the rates and fails when they fall below what the fraud
// check's choice (warn) was based on.
func TestDoubleCompressionRates(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and analyses ~70 images")
	}
	var clean, cleanFP, double, doubleTP, down, downTP, same, sameTP int
	var scoresClean, scoresDouble []float64
	for seed := uint64(1); seed <= sampleSize; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		img := camera(t, seed)
		q1 := qualities[rng.IntN(len(qualities))]
		once := encode(t, img, q1)
		r := analyze(t, once)
		clean++
		scoresClean = append(scoresClean, r.DoubleCompression.Score)
		if r.DoubleCompression.Detected {
			cleanFP++
			t.Logf("false positive: seed %d q%d score %.2f", seed, q1, r.DoubleCompression.Score)
		}
		for _, q2 := range qualities {
			if q2 == q1 {
				continue
			}
			if rng.IntN(2) == 0 && q2 != 95 && q1 != 95 {
				continue // about half the pairs, keeping the time bounded
			}
			r := analyze(t, resave(t, once, q2))
			double++
			scoresDouble = append(scoresDouble, r.DoubleCompression.Score)
			if q2 < q1 {
				down++
				if r.DoubleCompression.Detected {
					downTP++
				}
			}
			if r.DoubleCompression.Detected {
				doubleTP++
			}
		}
		r = analyze(t, resave(t, once, q1))
		same++
		if r.DoubleCompression.Detected {
			sameTP++
		}
	}
	t.Logf("double compression: clean %d, flagged %d (%.0f%%); re-saved at another quality %d, detected %d (%.0f%%); re-saved at the same quality %d, detected %d",
		clean, cleanFP, pct(cleanFP, clean), double, doubleTP, pct(doubleTP, double), same, sameTP)
	t.Logf("of which saved at a lower quality than the original: %d, detected %d (%.0f%%); at a higher quality: %d, detected %d (%.0f%%)",
		down, downTP, pct(downTP, down), double-down, doubleTP-downTP, pct(doubleTP-downTP, double-down))
	t.Logf("scores: clean%s; re-saved%s", fmtScores(scoresClean), fmtScores(scoresDouble))
	// What the warn-level choice rests on (measured: 1 of 18 clean flagged, the q70 picture
	// of seed 17; 60 % of re-saves found overall, every re-save at a higher quality).
	if cleanFP > 1 {
		t.Errorf("false positives on clean pictures: %d of %d", cleanFP, clean)
	}
	if pct(doubleTP, double) < 55 || pct(doubleTP-downTP, double-down) < 90 {
		t.Errorf("detection rates fell: %.0f%% overall, %.0f%% at a higher quality", pct(doubleTP, double), pct(doubleTP-downTP, double-down))
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func fmtScores(s []float64) string {
	out := ""
	for _, v := range s {
		out += fmt.Sprintf(" %.2f", v)
	}
	return out
}

func TestAnalyzeBadInput(t *testing.T) {
	var pngData bytes.Buffer
	_ = png.Encode(&pngData, image.NewGray(image.Rect(0, 0, 100, 100)))
	for name, data := range map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("not an image"),
		"truncated": encode(t, image.NewGray(image.Rect(0, 0, 100, 100)), 90)[:200],
		"huge":      {0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0xFF, 0xFF, 0xFF, 0xFF, 1, 1, 0x11, 0},
	} {
		if _, err := Analyze(data, imagecheck.Limits{}); !errors.Is(err, ErrNotImage) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	// A PNG has no quantisation table; a tiny JPEG too few blocks.
	if r := analyze(t, pngData.Bytes()); r.DoubleCompression.Applicable {
		t.Errorf("png: %+v", r)
	}
	if r := analyze(t, encode(t, image.NewGray(image.Rect(0, 0, 20, 20)), 90)); r.DoubleCompression.Applicable {
		t.Errorf("tiny: %+v", r)
	}
	if _, ok := LuminanceTable([]byte{0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x00}); ok {
		t.Error("truncated DQT accepted")
	}
}

func TestLuminanceTable(t *testing.T) {
	// Go's encoder writes the IJG tables scaled by quality; at 50 the luminance DC step is 16.
	q, ok := LuminanceTable(encode(t, image.NewGray(image.Rect(0, 0, 16, 16)), 50))
	if !ok || q[0] != 16 || q[1] != 11 || q[8] != 12 {
		t.Fatalf("table %v %v", q[:9], ok)
	}
}

// BenchmarkAnalyze measures Analyze on a camera-like card picture (about 1120×750) and on a
// 12-megapixel picture (the block sampling bounds the work; decoding dominates).
func BenchmarkAnalyze(b *testing.B) {
	card := camera(b, 3)
	big := image.NewRGBA(image.Rect(0, 0, 4000, 3000))
	for y := 0; y < 3000; y++ {
		for x := 0; x < 4000; x++ {
			big.SetRGBA(x, y, card.RGBAAt(x*card.Bounds().Dx()/4000, y*card.Bounds().Dy()/3000))
		}
	}
	for name, data := range map[string][]byte{"card": encode(b, card, 85), "12MP": encode(b, big, 85)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Analyze(data, imagecheck.Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
