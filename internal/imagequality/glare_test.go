package imagequality

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idstream/idstream/internal/cardrender"
	"github.com/idstream/idstream/internal/homography"
)

// glareDocs renders the card sides the glare set is built on: the project's renders and
// variants of them that are white where the renders are not (a white or tinted MRZ zone, a
// white card, a card lying on white paper).
func glareDocs(t testing.TB) map[string]*image.RGBA {
	t.Helper()
	r, err := cardrender.New()
	if err != nil {
		t.Skipf("fonts for the card renderer: %v", err)
	}
	p := cardrender.SyntheticPerson(7)
	rgba := func(img image.Image, _ cardrender.Truth) *image.RGBA { return toRGBA(img) }
	back := rgba(r.ChipIDBack(p))
	front := rgba(r.ChipIDFront(p))
	docs := map[string]*image.RGBA{
		"chip-back":  back,
		"chip-front": front,
		"passport":   rgba(r.Passport(p)),
		"id-back":    rgba(r.IDCardBack(cardrender.SyntheticIDCardPerson(7))),
	}
	// The MRZ zone (rows 520 and below of the card) white, and tinted light blue.
	white, tinted := cloneRGBA(back), cloneRGBA(back)
	mapPixels(white, image.Rect(0, 520, cardrender.CardWidth, cardrender.CardHeight), func(c color.RGBA) color.RGBA {
		if c.R >= 235 && c.G >= 235 && c.B >= 235 {
			return color.RGBA{255, 255, 255, 255}
		}
		return c
	})
	mapPixels(tinted, image.Rect(0, 520, cardrender.CardWidth, cardrender.CardHeight), func(c color.RGBA) color.RGBA {
		if c.R >= 235 && c.G >= 235 && c.B >= 235 {
			return color.RGBA{222, 234, 248, 255}
		}
		return c
	})
	docs["chip-back-white-mrz"], docs["chip-back-tinted-mrz"] = white, tinted
	// A white card: every channel lifted by 10 % (the background clips to 255, ink stays dark).
	wcard := cloneRGBA(front)
	mapPixels(wcard, wcard.Bounds(), func(c color.RGBA) color.RGBA {
		f := func(v uint8) uint8 { return uint8(min(255, float64(v)*1.1)) }
		return color.RGBA{f(c.R), f(c.G), f(c.B), 255}
	})
	docs["white-card"] = wcard
	// The back lying on a sheet of white paper (the sheet fills the document's quadrilateral:
	// Place puts the sheet on the table).
	sheet := image.NewRGBA(image.Rect(0, 0, cardrender.CardWidth+240, cardrender.CardHeight+160))
	mapPixels(sheet, sheet.Bounds(), func(color.RGBA) color.RGBA { return color.RGBA{255, 255, 255, 255} })
	for y := range cardrender.CardHeight {
		copy(sheet.Pix[sheet.PixOffset(120, y+80):], back.Pix[back.PixOffset(0, y):back.PixOffset(0, y)+4*cardrender.CardWidth])
	}
	docs["on-white-paper"] = sheet
	return docs
}

func cloneRGBA(img *image.RGBA) *image.RGBA {
	out := image.NewRGBA(img.Bounds())
	copy(out.Pix, img.Pix)
	return out
}

func mapPixels(img *image.RGBA, r image.Rectangle, f func(color.RGBA) color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, f(img.RGBAAt(x, y)))
		}
	}
}

func toRGBA(img image.Image) *image.RGBA {
	if m, ok := img.(*image.RGBA); ok && m.Rect.Min == (image.Point{}) {
		return m
	}
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := range b.Dy() {
		for x := range b.Dx() {
			out.Set(x, y, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return out
}

// specular adds the light of a specular reflection centred on (cx, cy) to img: a Gaussian
// bump of peak amp (luma levels, added to every channel and clipped at 255) and standard
// deviation sigma pixels, plus a broad sheen a fifth as strong and three times as wide (the
// light the laminate scatters around the reflection).
func specular(img *image.RGBA, cx, cy, sigma, amp float64) {
	reach := 4 * 3 * sigma
	r := image.Rect(int(cx-reach), int(cy-reach), int(cx+reach)+1, int(cy+reach)+1).Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			d2 := (float64(x)-cx)*(float64(x)-cx) + (float64(y)-cy)*(float64(y)-cy)
			add := amp * (0.8*math.Exp(-d2/(2*sigma*sigma)) + 0.2*math.Exp(-d2/(18*sigma*sigma)))
			i := img.PixOffset(x, y)
			for c := range 3 {
				img.Pix[i+c] = uint8(min(255, float64(img.Pix[i+c])+add))
			}
		}
	}
}

// exposeGain multiplies every channel of img by gain (clipped): a longer or shorter exposure.
func exposeGain(img *image.RGBA, gain float64) {
	for i := range img.Pix {
		if i%4 != 3 {
			img.Pix[i] = uint8(max(0, min(255, math.Round(float64(img.Pix[i])*gain))))
		}
	}
}

// photograph adds sensor noise to img and passes it through JPEG.
func photograph(t testing.TB, img *image.RGBA, noise float64, quality int, seed uint64) image.Image {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 77))
	for i := range img.Pix {
		if i%4 != 3 {
			img.Pix[i] = uint8(max(0, min(255, math.Round(float64(img.Pix[i])+rng.NormFloat64()*noise))))
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	out, err := jpeg.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// glareCase is one generated capture of the glare set.
type glareCase struct {
	name  string
	img   image.Image
	glare bool // a specular highlight that hides print: must fail with "glare"
}

// Spot positions, as fractions of the document's width and height: over the ID number or
// the MRZ's first line, the name, the photo (or the fingerprint boxes), the MRZ's last line
// (or a residence line), and a blank-ish area in the middle.
var spotAt = [][2]float64{{0.55, 0.33}, {0.5, 0.47}, {0.15, 0.5}, {0.45, 0.9}, {0.62, 0.62}}

// glareCases generates the glare set: every document on every background, plainly lit, 5 %
// dimmer and over-exposed by 20 % (paper clipped white, print still legible), with and
// without a tiny glint (a stroke-sized highlight that hides nothing); and the same photos
// with a specular highlight of one of three sizes and two strengths over one of five places.
func glareCases(t testing.TB) []glareCase {
	t.Helper()
	docs := glareDocs(t)
	names := sortedKeys(docs)
	type job struct {
		name              string
		doc               *image.RGBA
		s                 cardrender.Scene
		gain              float64
		spots             [][4]float64 // x, y (document fractions), sigma (document px), amp
		seed              uint64
		glare             bool
		noise             float64
		quality           int
		docWidth, docHigh float64
	}
	rng := rand.New(rand.NewPCG(99, 3))
	var jobs []job
	seed := uint64(0)
	for bi, bg := range backgrounds {
		for di, name := range names {
			doc := docs[name]
			f := image.Pt(1280, 960) // the 4:3 photo; the scale range keeps every card whole and near enough
			scene := func() cardrender.Scene {
				return cardrender.Scene{Width: f.X, Height: f.Y, Background: bg.bg,
					CenterX: 0.5 + 0.06*(rng.Float64()-0.5), CenterY: 0.5 + 0.06*(rng.Float64()-0.5),
					Scale: 0.62 + 0.16*rng.Float64(), RotationDeg: 12 * (rng.Float64() - 0.5), Skew: 0.02 * rng.Float64()}
			}
			for gi, gain := range []float64{1, 0.95, 1.2} {
				var spots [][4]float64
				if (bi+gi)%2 == 0 { // a glint: σ 3 document px, hides a stroke
					at := spotAt[(bi+di+gi)%len(spotAt)]
					spots = append(spots, [4]float64{at[0], at[1], 3, 300})
				}
				seed++
				jobs = append(jobs, job{name: fmt.Sprintf("good/%s/%s/gain%.2f", bg.name, name, gain), doc: doc, s: scene(),
					gain: gain, spots: spots, seed: seed, noise: 2 + 3*rng.Float64(), quality: 75 + rng.IntN(18)})
			}
			for k := range 3 {
				sigma := []float64{18, 30, 50}[(bi+di+k)%3]
				amp := []float64{380, 600}[(bi+k)%2]
				at := spotAt[(bi*3+di+k)%len(spotAt)]
				gain := []float64{1, 0.95}[k%2]
				seed++
				jobs = append(jobs, job{name: fmt.Sprintf("glare/%s/%s/s%.0f-a%.0f-at%.2f,%.2f-gain%.2f", bg.name, name, sigma, amp, at[0], at[1], gain),
					doc: doc, s: scene(), gain: gain, spots: [][4]float64{{at[0], at[1], sigma, amp}},
					seed: seed, glare: true, noise: 2 + 3*rng.Float64(), quality: 75 + rng.IntN(18)})
			}
		}
	}
	out := make([]glareCase, len(jobs))
	inParallel(len(jobs), func(i int) {
		j := jobs[i]
		if img := loadCached(j.name); img != nil {
			out[i] = glareCase{name: j.name, img: img, glare: j.glare}
			return
		}
		img, corners, err := cardrender.Place(j.doc, j.s, j.seed)
		if err != nil {
			t.Error(err)
			return
		}
		rgba := toRGBA(img)
		w, h := float64(j.doc.Rect.Dx()), float64(j.doc.Rect.Dy())
		toFrame := homography.Solve([4][2]float64{{0, 0}, {w, 0}, {w, h}, {0, h}}, corners)
		docPx := math.Hypot(corners[1][0]-corners[0][0], corners[1][1]-corners[0][1]) / w // frame px per document px
		// The exposure scales the scene; the reflection's light clips after it.
		exposeGain(rgba, j.gain)
		for _, s := range j.spots {
			x, y := toFrame.Apply(s[0]*w, s[1]*h)
			specular(rgba, x, y, s[2]*docPx, s[3])
		}
		out[i] = glareCase{name: j.name, img: photograph(t, rgba, j.noise, j.quality, j.seed), glare: j.glare}
		saveCached(j.name, out[i].img)
	})
	return out
}

// whitePaper are the documents of the glare set whose paper (or MRZ zone) is itself clipped
// white: a highlight there has no paper left around it to show its halo on (see glare.go).
var whitePaper = map[string]bool{"white-card": true, "chip-back-white-mrz": true, "on-white-paper": true}

// TestGlareSet runs the gate over the glare set. No good capture (white and tinted MRZ zones,
// white cards, cards on white paper, 5 % dimmer, over-exposed but legible, stroke-sized
// glints) may be sent back for glare. Of the captures with a specular highlight, at least
// 95 % must be caught on documents with ordinary paper, and at least 65 % on documents whose
// paper is clipped white (the measure's known weakness); every miss is listed.
func TestGlareSet(t *testing.T) {
	if testing.Short() {
		t.Skip("renders about two hundred photo-sized pictures")
	}
	g := NewGate(DefaultThresholds())
	cases := glareCases(t)
	type tally struct{ n, hit int }
	var good, bad, badWhite tally
	var badMin = 1.0
	failed := 0 // good captures sent back for any reason
	for _, c := range cases {
		res := g.Assess(c.img, Document)
		got := slices.Contains(res.Reasons, ReasonGlare)
		if !c.glare {
			good.n++
			if !res.Passed {
				failed++
				t.Logf("%s: good capture sent back for %v", c.name, res.Reasons)
			}
			if got {
				good.hit++
				t.Errorf("%s: sent back for glare (glare %.5f, brightness %.0f, reasons %v)", c.name, res.Glare, res.Brightness, res.Reasons)
				dumpImage(t, "glare-false/"+c.name, c.img)
			}
			continue
		}
		tl := &bad
		if whitePaper[strings.Split(c.name, "/")[2]] {
			tl = &badWhite
		}
		tl.n++
		if got {
			tl.hit++
			badMin = min(badMin, res.Glare)
		} else {
			t.Logf("%s: not caught (glare %.5f, brightness %.0f, reasons %v)", c.name, res.Glare, res.Brightness, res.Reasons)
			dumpImage(t, "glare-missed/"+c.name, c.img)
		}
	}
	t.Logf("good captures sent back: for glare %d/%d, for any reason %d/%d", good.hit, good.n, failed, good.n)
	t.Logf("specular highlights caught: ordinary paper %d/%d, white paper %d/%d, all %d/%d (smallest glare caught %.4f, MaxGlare %.4f)",
		bad.hit, bad.n, badWhite.hit, badWhite.n, bad.hit+badWhite.hit, bad.n+badWhite.n, badMin, DefaultThresholds().MaxGlare)
	if bad.n == 0 || badWhite.n == 0 || good.n == 0 {
		t.Fatalf("empty glare set: %+v %+v %+v", good, bad, badWhite)
	}
	if 100*bad.hit < 95*bad.n {
		t.Errorf("highlights on ordinary paper caught %d/%d, want ≥ 95 %%", bad.hit, bad.n)
	}
	if 100*badWhite.hit < 65*badWhite.n {
		t.Errorf("highlights on white paper caught %d/%d, want ≥ 65 %%", badWhite.hit, badWhite.n)
	}
}

// loadCached and saveCached keep generated pictures in $QUALITY_CACHE (PNG), when set, so
// that tuning runs do not render them again.
func loadCached(name string) image.Image {
	dir := os.Getenv("QUALITY_CACHE")
	if dir == "" {
		return nil
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)+".png"))
	if err != nil {
		return nil
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil
	}
	return img
}

func saveCached(name string, img image.Image) {
	dir := os.Getenv("QUALITY_CACHE")
	if dir == "" {
		return
	}
	path := filepath.Join(dir, filepath.FromSlash(name)+".png")
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = png.Encode(f, img)
}

// BenchmarkAssessGlare is the gate's time for a 1920×1080 card photo with a white patch and a
// specular highlight, so that the glare measure runs in full (local maximum, distance
// transform, components and rays); BenchmarkAssess is the same card with nothing saturated.
func BenchmarkAssessGlare(b *testing.B) {
	img := syntheticCard(1920, 1080)
	fillRect(img, image.Rect(1300, 700, 1700, 950), color.RGBA{255, 255, 255, 255})
	specular(img, 900, 450, 35, 450)
	g := NewGate(DefaultThresholds())
	if res := g.Assess(img, Document); !slices.Contains(res.Reasons, ReasonGlare) {
		b.Fatalf("benchmark picture: %+v, want glare", res)
	}
	b.ReportAllocs()
	for b.Loop() {
		g.Assess(img, Document)
	}
}

// TestLargeHighlightWithAWideGlow: a large highlight (a saturated disc a tenth of the frame
// across) whose glow falls only a few levels over its own radius, hiding a line of print,
// is glare; the same card without it is not. Its halo fell 5 levels in the 24 px the rays
// used to look past the core, under HaloMinFall, and the capture passed.
func TestLargeHighlightWithAWideGlow(t *testing.T) {
	g := NewGate(DefaultThresholds())
	for _, lit := range []bool{false, true} {
		img := image.NewRGBA(image.Rect(0, 0, 1280, 960))
		for y := range 960 {
			for x := range 1280 {
				v := 110.0 // the table
				if x >= 190 && x < 1090 && y >= 200 && y < 768 {
					v = 228 // the card
					if (y-260)%112 < 14 && x >= 260 && x < 900 && (x/11)%3 != 2 {
						v = 60 // print
					}
					if lit {
						d := math.Hypot(float64(x-560), float64(y-430))
						if d < 70 {
							v = 255
						} else {
							v = min(255, v+20*math.Exp(-(d-70)*(d-70)/(2*110*110)))
						}
					}
				}
				i := img.PixOffset(x, y)
				img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(v), uint8(v), uint8(v), 255
			}
		}
		res := g.Assess(photograph(t, img, 2, 90, 5), Document)
		if got := slices.Contains(res.Reasons, ReasonGlare); got != lit {
			t.Errorf("highlight %v: glare %v (%.4f, reasons %v)", lit, got, res.Glare, res.Reasons)
		}
	}
}
