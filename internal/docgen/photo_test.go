package docgen

import (
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// quadMask reports for each pixel whether it lies inside the capture's document quad,
// shrunk by inset pixels.
func inQuad(q [4]image.Point, x, y float64, inset float64) bool {
	for i := 0; i < 4; i++ {
		a, b := q[i], q[(i+1)%4]
		ex, ey := float64(b.X-a.X), float64(b.Y-a.Y)
		cross := ex*(y-float64(a.Y)) - ey*(x-float64(a.X))
		if cross/math.Hypot(ex, ey) < inset { // corners run clockwise in image coordinates
			return false
		}
	}
	return true
}

type capStats struct {
	inside, saturated int
	lum, sharp        float64
}

func stats(c Capture) capStats {
	img := c.Image
	b := img.Bounds()
	var s capStats
	lumAt := func(x, y int) float64 {
		r, g, bb, _ := img.At(x, y).RGBA()
		return (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bb)) / 257
	}
	for y := b.Min.Y + 1; y < b.Max.Y-1; y += 2 {
		for x := b.Min.X + 1; x < b.Max.X-1; x += 2 {
			if c.Reason != ReasonNoDocument && !inQuad(c.Corners, float64(x), float64(y), 6) {
				continue
			}
			s.inside++
			l := lumAt(x, y)
			s.lum += l
			r, g, bb, _ := img.At(x, y).RGBA()
			if r>>8 >= 250 && g>>8 >= 250 && bb>>8 >= 250 {
				s.saturated++
			}
			lap := 4*l - lumAt(x-1, y) - lumAt(x+1, y) - lumAt(x, y-1) - lumAt(x, y+1)
			s.sharp += lap * lap
		}
	}
	if s.inside > 0 {
		s.lum /= float64(s.inside)
		s.sharp /= float64(s.inside)
	}
	return s
}

func TestCaptures(t *testing.T) {
	rd := fastRenderer(t)
	rd.width = 700
	for seed := uint64(0); seed < 2; seed++ {
		split := Split(seed % 2)
		r := rand.New(rand.NewPCG(seed, 11))
		d, err := rd.Render(NewPerson(r, testRef), ChipIDCard, split, r, testFace())
		if err != nil {
			t.Fatal(err)
		}
		back := d.Sides[StepBack] // the side with the white MRZ zone: never glare
		good := shoot(back, split, r, "", 800)
		gs := stats(good)
		W, H := good.Image.Bounds().Dx(), good.Image.Bounds().Dy()
		minX, maxX := W, 0
		for _, p := range good.Corners {
			if p.X < 0 || p.Y < 0 || p.X >= W || p.Y >= H {
				t.Fatalf("seed %d: good capture's corner %v outside %dx%d", seed, p, W, H)
			}
			minX, maxX = min(minX, p.X), max(maxX, p.X)
		}
		if f := float64(maxX-minX) / float64(W); f < 0.3 || f > 0.85 {
			t.Errorf("seed %d: document spans %.2f of the width", seed, f)
		}
		if gs.lum < 90 || gs.saturated > gs.inside/500 {
			t.Errorf("seed %d: good capture luminance %.0f, %d of %d saturated", seed, gs.lum, gs.saturated, gs.inside)
		}
		if good.Quality < 70 || good.Quality > 95 || !slices.Contains(ScenesOf(split), good.Scene) {
			t.Errorf("seed %d: quality %d scene %q", seed, good.Quality, good.Scene)
		}
		for _, reason := range BadReasons() {
			c := shoot(back, split, r, reason, 800)
			s := stats(c)
			t.Logf("seed %d %s: lum %.0f sharp %.1f sat %d/%d (good: lum %.0f sharp %.1f sat %d)", seed, reason, s.lum, s.sharp, s.saturated, s.inside, gs.lum, gs.sharp, gs.saturated)
			switch reason {
			case ReasonBlurry:
				if s.sharp > gs.sharp/3 {
					t.Errorf("seed %d: blurry sharpness %.1f vs good %.1f", seed, s.sharp, gs.sharp)
				}
			case ReasonGlare:
				cardW := math.Hypot(float64(c.Corners[1].X-c.Corners[0].X), float64(c.Corners[1].Y-c.Corners[0].Y))
				core := math.Pi * math.Pow(0.04*cardW, 2) / 4 // pixels sampled every 2nd row and column
				if float64(s.saturated) < core {
					t.Errorf("seed %d: glare has %d saturated samples, want at least %.0f", seed, s.saturated, core)
				}
			case ReasonNotFramed:
				out := 0
				for _, p := range c.Corners {
					if p.X < 0 || p.Y < 0 || p.X >= W || p.Y >= H {
						out++
					}
				}
				if out == 0 {
					t.Errorf("seed %d: not_framed capture has every corner inside", seed)
				}
			case ReasonNoDocument:
				if c.Corners != [4]image.Point{} {
					t.Errorf("seed %d: no_document capture has corners", seed)
				}
			case ReasonTooDark:
				if s.lum > 40 {
					t.Errorf("seed %d: too_dark luminance %.0f", seed, s.lum)
				}
			}
		}
	}
}

func TestPhotographFrameSize(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	doc := image.NewRGBA(image.Rect(0, 0, 400, 252))
	c := Photograph(doc, HeldOut, r)
	b := c.Image.Bounds()
	if b.Dx() < 1280 || b.Dx() > 2000 || b.Dy() != b.Dx()*3/4 {
		t.Fatalf("frame %v", b)
	}
}
