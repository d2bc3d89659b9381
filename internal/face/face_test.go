package face

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/idstream/idstream/internal/imagecheck"
)

// Test images (see MODELS.md): crops of the group photos, each around one person's face.
var (
	portraitA = image.Rect(400, 150, 1000, 850) // sample3.jpg, the woman on the left
	portraitB = image.Rect(300, 250, 720, 750)  // sample1.jpg, the woman on the left
)

func portrait(t testing.TB) image.Image { return crop(photo(t, "sample3.jpg"), portraitA) }

func onlyFace(t testing.TB, e *Engine, img image.Image) Face {
	t.Helper()
	faces, err := e.Detect(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(faces) != 1 {
		t.Fatalf("want exactly one face, got %d: %+v", len(faces), faces)
	}
	return faces[0]
}

func TestLoadRefusesBadModelFiles(t *testing.T) {
	skipIfAsked(t)
	good := DefaultModels(modelsDir)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	det, err := os.ReadFile(good.DetectorPath)
	if err != nil {
		t.Fatalf("%v (fetch the models with: make deps)", err)
	}
	random := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	cases := map[string]func(m *Models){
		"missing":         func(m *Models) { m.DetectorPath = filepath.Join(dir, "nope.onnx") },
		"empty":           func(m *Models) { m.DetectorPath = write("empty.onnx", nil) },
		"tiny":            func(m *Models) { m.DetectorPath = write("tiny.onnx", det[:100]) },
		"truncated":       func(m *Models) { m.DetectorPath = write("trunc.onnx", det[:len(det)/2]) },
		"random bytes":    func(m *Models) { m.DetectorPath = write("random.onnx", random) },
		"directory":       func(m *Models) { m.DetectorPath = dir },
		"landmark as det": func(m *Models) { m.DetectorPath = good.LandmarkPath },
		"det as embedder": func(m *Models) { m.EmbedderPath = good.DetectorPath },
		"liveness as lm":  func(m *Models) { m.LandmarkPath = good.LivenessPath },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			m := good
			mutate(&m)
			e, err := Load(m)
			if err == nil {
				e.Close()
				t.Fatal("Load accepted a bad model file")
			}
			if !errors.Is(err, ErrBadModel) {
				t.Fatalf("error %v does not wrap ErrBadModel", err)
			}
			t.Log(err)
		})
	}
}

func TestDetect(t *testing.T) {
	e := testEngine(t)
	t.Run("portrait has one face with plausible points", func(t *testing.T) {
		f := onlyFace(t, e, portrait(t))
		t.Logf("box %v score %.3f points %.0f", f.Box, f.Score, f.Points)
		if len(f.Landmarks) != 68 {
			t.Fatalf("%d landmarks", len(f.Landmarks))
		}
		for i, p := range f.Points {
			if !(image.Pt(int(p.X), int(p.Y)).In(f.Box)) {
				t.Errorf("point %d %v outside the box %v", i, p, f.Box)
			}
		}
		le, re, nose, ml, mr := f.Points[0], f.Points[1], f.Points[2], f.Points[3], f.Points[4]
		if !(le.X < re.X && ml.X < mr.X && nose.Y > le.Y && nose.Y > re.Y && ml.Y > nose.Y && mr.Y > nose.Y) {
			t.Errorf("points not in face order: %v", f.Points)
		}
	})
	t.Run("texture has no face", func(t *testing.T) {
		img := image.NewRGBA(image.Rect(0, 0, 640, 480))
		r := rand.New(rand.NewPCG(3, 4))
		for y := 0; y < 480; y++ {
			for x := 0; x < 640; x++ {
				v := 128 + 60*math.Sin(float64(x)/7)*math.Cos(float64(y)/11) + float64(r.IntN(40))
				img.Set(x, y, color.RGBA{uint8(v), uint8(v * 0.8), uint8(255 - v), 255})
			}
		}
		faces, err := e.Detect(img)
		if err != nil || len(faces) != 0 {
			t.Fatalf("faces %+v, err %v", faces, err)
		}
	})
	t.Run("side-by-side composite has two faces", func(t *testing.T) {
		a, b := portrait(t), crop(photo(t, "sample1.jpg"), portraitB)
		img := image.NewRGBA(image.Rect(0, 0, a.Bounds().Dx()+b.Bounds().Dx(), a.Bounds().Dy()))
		draw.Draw(img, a.Bounds(), a, image.Point{}, draw.Src)
		draw.Draw(img, b.Bounds().Add(image.Pt(a.Bounds().Dx(), 0)), b, image.Point{}, draw.Src)
		faces, err := e.Detect(img)
		if err != nil || len(faces) != 2 {
			t.Fatalf("want 2 faces, got %+v, err %v", faces, err)
		}
	})
	t.Run("group photos", func(t *testing.T) {
		// The counts the face-api.js demo reports for the same files.
		want := map[string]int{"sample1.jpg": 3, "sample2.jpg": 3, "sample3.jpg": 3, "sample4.jpg": 4, "sample5.jpg": 5, "sample6.jpg": 4}
		for name, n := range want {
			faces, err := e.Detect(photo(t, name))
			if err != nil || len(faces) != n {
				t.Errorf("%s: want %d faces, got %d (err %v)", name, n, len(faces), err)
			}
		}
	})
}

// transformed returns img mirrored, scaled by s, rotated by deg degrees about its centre, and
// re-encoded as JPEG quality 70: the same person in a different capture.
func transformed(t testing.TB, img image.Image, s, deg float64) image.Image {
	b := img.Bounds()
	w, h := int(float64(b.Dx())*s), int(float64(b.Dy())*s)
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	sin, cos := math.Sincos(deg * math.Pi / 180)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := float64(x)-float64(w)/2, float64(y)-float64(h)/2
			sx := (cos*dx + sin*dy) / s
			sy := (-sin*dx + cos*dy) / s
			px := b.Max.X - 1 - int(sx+float64(b.Dx())/2) // mirrored
			py := b.Min.Y + int(sy+float64(b.Dy())/2)
			if image.Pt(px, py).In(b) {
				out.Set(x, y, img.At(px, py))
			}
		}
	}
	return reencode(t, out, 70)
}

func TestEmbedSamePersonAboveThreshold(t *testing.T) {
	e := testEngine(t)
	a := portrait(t)
	va, err := e.Embed(a, onlyFace(t, e, a))
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, x := range va {
		n += float64(x) * float64(x)
	}
	if len(va) != EmbeddingSize || math.Abs(n-1) > 1e-4 {
		t.Fatalf("embedding of %d values, squared norm %v", len(va), n)
	}
	for _, tc := range []struct{ scale, deg float64 }{{1, 0}, {0.7, 8}, {1.3, -10}, {0.5, 4}} {
		b := transformed(t, a, tc.scale, tc.deg)
		vb, err := e.Embed(b, onlyFace(t, e, b))
		if err != nil {
			t.Fatal(err)
		}
		sim := Cosine(va, vb)
		t.Logf("same person, mirrored, scale %.1f, rotated %+.0f°, JPEG 70: cosine %.3f", tc.scale, tc.deg, sim)
		if sim < e.Config().MatchThreshold {
			t.Errorf("same person below the threshold %.2f: %.3f", e.Config().MatchThreshold, sim)
		}
	}
}

func TestEmbedDifferentPeopleBelowThreshold(t *testing.T) {
	e := testEngine(t)
	// People in one group photo are different people: every pair must stay below the threshold.
	worst, pairs := -1.0, 0
	for i := 1; i <= 6; i++ {
		img := photo(t, fmt.Sprintf("sample%d.jpg", i))
		faces, err := e.Detect(img)
		if err != nil {
			t.Fatal(err)
		}
		var vs [][]float32
		for _, f := range faces {
			v, err := e.Embed(img, f)
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v)
		}
		for a := range vs {
			for b := a + 1; b < len(vs); b++ {
				sim := Cosine(vs[a], vs[b])
				pairs++
				worst = max(worst, sim)
				if sim >= e.Config().MatchThreshold {
					t.Errorf("sample%d faces %d and %d: different people at %.3f ≥ threshold", i, a, b, sim)
				}
			}
		}
	}
	t.Logf("different people: %d pairs, highest cosine %.3f (threshold %.2f)", pairs, worst, e.Config().MatchThreshold)
	if pairs < 20 {
		t.Fatalf("only %d pairs", pairs)
	}
}

// screen re-renders img as if photographed off a display: an RGB sub-pixel stripe grid with
// dark row gaps every 3 pixels and a faint moiré beat, then JPEG.
func screen(t testing.TB, img image.Image) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			c := [3]float64{float64(r >> 8), float64(g >> 8), float64(bl >> 8)}
			moire := 10 * math.Sin(2*math.Pi*(0.29*float64(x)+0.05*float64(y)))
			for i := range c {
				k := 0.6
				if x%3 == i {
					k = 1.1
				}
				if y%3 == 2 {
					k *= 0.7
				}
				c[i] = c[i]*k + moire
			}
			out.Set(x, y, color.RGBA{clamp8(float32(c[0])), clamp8(float32(c[1])), clamp8(float32(c[2])), 255})
		}
	}
	return reencode(t, out, 90)
}

// printed re-renders img as a print photographed on paper: colours mostly washed out, a blur,
// the luminance range compressed towards paper white, faint paper grain, then JPEG.
func printed(t testing.TB, img image.Image) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	src := make([][3]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			c := [3]float64{float64(r >> 8), float64(g >> 8), float64(bl >> 8)}
			l := 0.299*c[0] + 0.587*c[1] + 0.114*c[2]
			for i := range c {
				c[i] = 90 + 0.45*(l+0.15*(c[i]-l))
			}
			src[y*w+x] = c
		}
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	rnd := rand.New(rand.NewPCG(5, 6))
	const rad = 3
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var s [3]float64
			n := 0.0
			for dy := -rad; dy <= rad; dy++ {
				for dx := -rad; dx <= rad; dx++ {
					xx, yy := min(max(x+dx, 0), w-1), min(max(y+dy, 0), h-1)
					for i := range s {
						s[i] += src[yy*w+xx][i]
					}
					n++
				}
			}
			grain := rnd.Float64()*2 - 1
			out.Set(x, y, color.RGBA{clamp8(float32(s[0]/n + grain)), clamp8(float32(s[1]/n + grain)), clamp8(float32(s[2]/n + grain)), 255})
		}
	}
	return reencode(t, out, 85)
}

func TestLivenessSignals(t *testing.T) {
	e := testEngine(t)
	real := portrait(t)
	assess := func(name string, img image.Image) Liveness {
		f := onlyFace(t, e, img)
		l, err := e.Liveness(img, f)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-7s P(live) %.3f replay %.2f print %.2f live %v attack %q", name, l.Score, l.Replay, l.Print, l.Live, l.AttackType)
		for _, v := range []float64{l.Score, l.Replay, l.Print} {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("%s: value %v outside [0,1]", name, v)
			}
		}
		return l
	}
	lr := assess("real", real)
	ls := assess("screen", screen(t, real))
	lp := assess("print", printed(t, real))
	if !lr.Live || lr.AttackType != AttackNone {
		t.Errorf("real photo not live: %+v", lr)
	}
	if !(ls.Replay > lr.Replay) || ls.Replay < 0.5 || ls.Live || ls.AttackType != AttackReplay {
		t.Errorf("screen version: replay %.2f (real %.2f), live %v, attack %q", ls.Replay, lr.Replay, ls.Live, ls.AttackType)
	}
	if !(lp.Print > lr.Print) || lp.Print < 0.5 || lp.Live || lp.AttackType != AttackPrint {
		t.Errorf("print version: print %.2f (real %.2f), live %v, attack %q", lp.Print, lr.Print, lp.Live, lp.AttackType)
	}
}

func TestLivenessOnGroupPhotos(t *testing.T) {
	// Figures for MODELS.md: every face in the group photos is a live person photographed by a
	// camera; the signals must not call any of them a screen or a print.
	e := testEngine(t)
	live, total := 0, 0
	for i := 1; i <= 6; i++ {
		img := photo(t, fmt.Sprintf("sample%d.jpg", i))
		faces, err := e.Detect(img)
		if err != nil {
			t.Fatal(err)
		}
		for j, f := range faces {
			l, err := e.Liveness(img, f)
			if err != nil {
				t.Fatal(err)
			}
			total++
			if l.Score >= l.Threshold {
				live++
			}
			t.Logf("sample%d face %d: P(live) %.3f replay %.2f print %.2f", i, j, l.Score, l.Replay, l.Print)
			if l.Replay >= 0.5 || l.Print >= 0.5 {
				t.Errorf("sample%d face %d: camera photo read as attack: %+v", i, j, l)
			}
		}
	}
	t.Logf("model P(live) ≥ threshold on %d of %d camera faces", live, total)
}

func TestOddImagesNeverAbort(t *testing.T) {
	e := testEngine(t)
	p := portrait(t)
	f := onlyFace(t, e, p)

	nrgba := image.NewNRGBA(p.Bounds()) // PNG-style alpha: half transparent
	draw.Draw(nrgba, nrgba.Bounds(), p, image.Point{}, draw.Src)
	for i := 3; i < len(nrgba.Pix); i += 4 {
		nrgba.Pix[i] = 128
	}
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, nrgba); err != nil {
		t.Fatal(err)
	}
	alphaPNG, _, err := imagecheck.Decode(pngBuf.Bytes(), imagecheck.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	gray := image.NewGray(p.Bounds())
	draw.Draw(gray, gray.Bounds(), p, image.Point{}, draw.Src)
	pal := image.NewPaletted(image.Rect(0, 0, 200, 200), color.Palette{color.Black, color.White})
	offset := image.NewRGBA(image.Rect(-50, -70, 550, 630)) // non-zero origin
	draw.Draw(offset, offset.Bounds(), p, image.Point{}, draw.Src)

	cases := []struct {
		name    string
		img     image.Image
		wantErr bool
	}{
		{"nil", nil, true},
		{"1x1", image.NewRGBA(image.Rect(0, 0, 1, 1)), true},
		{"empty", image.NewRGBA(image.Rectangle{}), true},
		{"tiny 20x20", image.NewGray(image.Rect(0, 0, 20, 20)), true},
		{"too large 9000x40", image.NewGray(image.Rect(0, 0, 9000, 40)), true},
		{"huge aspect 4000x40", image.NewGray(image.Rect(0, 0, 4000, 40)), false},
		{"huge aspect 40x4000", image.NewRGBA(image.Rect(0, 0, 40, 4000)), false},
		{"black", image.NewRGBA(image.Rect(0, 0, 320, 240)), false},
		{"gray portrait", gray, false},
		{"png with alpha", alphaPNG, false},
		{"paletted", pal, false},
		{"offset origin", offset, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			faces, err := e.Detect(tc.img)
			if tc.wantErr != (err != nil) {
				t.Fatalf("Detect: err %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrBadImage) {
				t.Fatalf("error %v does not wrap ErrBadImage", err)
			}
			// Embed and Liveness with a face from another image: an error or a result, never a crash.
			for _, g := range append(faces, f) {
				_, err1 := e.Embed(tc.img, g)
				_, err2 := e.Liveness(tc.img, g)
				if tc.wantErr && (err1 == nil || err2 == nil) {
					t.Fatalf("Embed/Liveness accepted a refused image: %v %v", err1, err2)
				}
			}
			t.Logf("faces %d, err %v", len(faces), err)
		})
	}
	t.Run("degenerate face", func(t *testing.T) {
		bad := f
		bad.Points = [5]Point{}
		if _, err := e.Embed(p, bad); !errors.Is(err, ErrBadFace) {
			t.Fatalf("Embed with collapsed points: %v", err)
		}
		bad = f
		bad.Box = image.Rect(-10, -10, 5000, 5000)
		if _, err := e.Liveness(p, bad); !errors.Is(err, ErrBadFace) {
			t.Fatalf("Liveness with a box outside the image: %v", err)
		}
		bad.Points[0].X = math.NaN()
		if _, err := e.Embed(p, bad); !errors.Is(err, ErrBadFace) {
			t.Fatalf("Embed with NaN point: %v", err)
		}
	})
	t.Run("truncated and random bytes stop at imagecheck", func(t *testing.T) {
		var buf bytes.Buffer
		_ = png.Encode(&buf, p)
		for _, data := range [][]byte{buf.Bytes()[:buf.Len()/3], {0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3}, bytes.Repeat([]byte{7}, 1000)} {
			if img, _, err := imagecheck.Decode(data, imagecheck.Limits{}); err == nil {
				if _, err := e.Detect(img); err != nil {
					t.Log(err)
				}
			}
		}
	})
}

func TestCosine(t *testing.T) {
	if c := Cosine([]float32{1, 0}, []float32{0, 1}); c != 0 {
		t.Error(c)
	}
	if c := Cosine([]float32{1, 2}, []float32{2, 4}); math.Abs(c-1) > 1e-9 {
		t.Error(c)
	}
	if c := Cosine([]float32{1}, []float32{1, 2}); c != 0 {
		t.Error(c)
	}
	if c := Cosine([]float32{0, 0}, []float32{1, 2}); c != 0 {
		t.Error(c)
	}
}

func TestLargest(t *testing.T) {
	a := Face{Box: image.Rect(0, 0, 10, 10)}
	b := Face{Box: image.Rect(0, 0, 20, 5)}  // same area as a: the first wins
	c := Face{Box: image.Rect(5, 5, 17, 17)} // the largest
	if got := Largest([]Face{a, b, c}); got.Box != c.Box {
		t.Fatalf("largest %v, want %v", got.Box, c.Box)
	}
	if got := Largest([]Face{a, b}); got.Box != a.Box {
		t.Fatalf("of equals %v, want the first %v", got.Box, a.Box)
	}
	if got := Largest(nil); !got.Box.Empty() {
		t.Fatalf("of none %v", got.Box)
	}
}
