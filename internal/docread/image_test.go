package docread

import (
	"bytes"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idstream/idstream/internal/homography"
)

// TestDocumentFoundByHue: a pale blue card on a cream table of the same brightness has no
// edge in grey; the document is found by its hue, as the quality gate finds it, and not left
// to the bright-region fallback that a picture in grey gets.
func TestDocumentFoundByHue(t *testing.T) {
	const w, h = 1200, 900
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	table := color.RGBA{226, 214, 168, 255} // luma 212
	card := color.RGBA{200, 214, 236, 255}  // luma 212
	want := quad{{180, 150}, {1020, 150}, {1020, 680}, {180, 680}}
	for y := range h {
		for x := range w {
			c := table
			if x >= 180 && x < 1020 && y >= 150 && y < 680 {
				c = card
				if y%60 >= 40 && y%60 < 48 && x >= 240 && x < 700 && y < 600 {
					c = color.RGBA{40, 40, 50, 255} // rows of print
				}
			}
			img.SetRGBA(x, y, c)
		}
	}
	got := findDocument(img, toGray(img))
	for k := range 4 {
		if d := math.Hypot(got[k][0]-want[k][0], got[k][1]-want[k][1]); d > 20 {
			t.Fatalf("document found at %v, want about %v", got, want)
		}
	}
}

// TestLeadersOnGuillocheLinesPainted: a dotted leader whose dots touch a card's grey line
// pattern is painted out (at the dark pixels' level each dot is part of the line, and was
// left, and Tesseract read "thùng" for "Trung" above it), and so is a short one followed by
// a mark at its height; a row of accents at one height but unevenly spaced stays, as does
// the grey line itself.
func TestLeadersOnGuillocheLinesPainted(t *testing.T) {
	const w, h = 1200, 756
	g := image.NewGray(image.Rect(0, 0, w, h))
	for i := range g.Pix {
		g.Pix[i] = 200
	}
	fill := func(x0, y0, x1, y1 int, v uint8) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				g.Pix[y*g.Stride+x] = v
			}
		}
	}
	// Print: 40 letters 16 × 20 px, so that ink is the darkest percent of the page.
	for k := range 40 {
		x := 100 + 26*(k%20)
		y := 100 + 60*(k/20)
		fill(x, y, x+16, y+20, 40)
	}
	// A leader of 3 × 3 dots 12 px apart, along a grey line of the guilloche running under
	// them, touching each; rising 1 px every 5 dots, as on a page rectified a little off.
	var leader [][2]int
	for k := range 40 {
		x, y := 300+12*k, 400-k/5
		leader = append(leader, [2]int{x, y})
		fill(x, y, x+3, y+3, 45)
	}
	for x := 250; x < 850; x++ {
		y := 403 - (x-300)/60
		fill(x, y, x+1, y+2, 150)
	}
	// A short leader, five dots 14 px apart, then a mark of the value's at its height 5 px on.
	var short [][2]int
	for k := range 5 {
		short = append(short, [2]int{300 + 14*k, 600})
		fill(300+14*k, 600, 303+14*k, 603, 45)
	}
	fill(364, 600, 367, 603, 45)
	// Accents: 3 × 3 marks at one height, 7 to 25 px apart.
	var accents [][2]int
	x := 300
	for _, gap := range []int{7, 19, 9, 25, 11, 16, 8, 22} {
		accents = append(accents, [2]int{x, 500})
		fill(x, 500, x+3, 503, 45)
		x += 3 + gap
	}
	out := cleanForText(g)
	at := func(p [2]int) uint8 { return out.Pix[(p[1]+1)*out.Stride+p[0]+1] }
	for _, p := range leader {
		if v := at(p); v < 150 {
			t.Errorf("leader dot at %v left (%d)", p, v)
			break
		}
	}
	for _, p := range short {
		if v := at(p); v < 150 {
			t.Errorf("short leader's dot at %v left (%d)", p, v)
			break
		}
	}
	for _, p := range accents {
		if v := at(p); v != 45 {
			t.Errorf("accent at %v painted out (%d)", p, v)
			break
		}
	}
	if v := out.Pix[403*out.Stride+260]; v != 150 {
		t.Errorf("grey line before the leader changed to %d", v)
	}
}

// TestFlattenKeepsPrintDropsGreyLines: flatten paints a mid-grey line pattern in the paper's
// level and keeps print, dark or anti-aliased up to halfway to the paper.
func TestFlattenKeepsPrintDropsGreyLines(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 200, 100))
	for i := range g.Pix {
		g.Pix[i] = 200
	}
	for y := range 100 {
		for x := range 200 {
			switch {
			case x < 40 && y < 10: // print: 2 % of the page
				g.Pix[y*200+x] = 30
			case x < 40 && y < 12: // its anti-aliased edge
				g.Pix[y*200+x] = 100
			case (x+y)%9 == 0: // a guilloche line
				g.Pix[y*200+x] = 160
			}
		}
	}
	out := flatten(g)
	for _, c := range []struct {
		x, y int
		want uint8
	}{{5, 5, 30}, {5, 11, 100}, {100, 53, 200}, {150, 30, 200}} {
		if got := out.Pix[c.y*200+c.x]; got != c.want {
			t.Errorf("pixel (%d, %d) = %d, want %d", c.x, c.y, got, c.want)
		}
	}
}

// TestRectifyAsBefore: rectify gives, pixel for pixel, what its first form gave (every
// sample clamped through a function, math.Min and math.Max), for outlines inside the picture,
// across its edges and beyond them: the pages Tesseract reads are the same.
func TestRectifyAsBefore(t *testing.T) {
	before := func(g *image.Gray, q quad, w, h int) *image.Gray {
		dst := quad{{0, 0}, {float64(w), 0}, {float64(w), float64(h)}, {0, float64(h)}}
		hm := homography.Solve(dst, q)
		out := image.NewGray(image.Rect(0, 0, w, h))
		gw, gh := g.Rect.Dx(), g.Rect.Dy()
		at := func(x, y int) float64 {
			x = min(max(x, 0), gw-1)
			y = min(max(y, 0), gh-1)
			return float64(g.Pix[y*g.Stride+x])
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				sx, sy := hm.Apply(float64(x)+0.5, float64(y)+0.5)
				sx, sy = sx-0.5, sy-0.5
				x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
				fx, fy := sx-float64(x0), sy-float64(y0)
				v := at(x0, y0)*(1-fx)*(1-fy) + at(x0+1, y0)*fx*(1-fy) + at(x0, y0+1)*(1-fx)*fy + at(x0+1, y0+1)*fx*fy
				out.Pix[y*out.Stride+x] = uint8(math.Min(255, math.Max(0, v+0.5)))
			}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(3, 4))
	g := image.NewGray(image.Rect(0, 0, 320, 200))
	for i := range g.Pix {
		g.Pix[i] = uint8(rng.IntN(256))
	}
	quads := []quad{
		{{20, 15}, {300, 25}, {290, 190}, {10, 180}},     // inside, in perspective
		{{-40, -30}, {350, 10}, {330, 240}, {-20, 210}},  // across every edge
		{{0, 0}, {320, 0}, {320, 200}, {0, 200}},         // the whole picture
		{{400, 300}, {500, 300}, {500, 380}, {400, 380}}, // wholly outside
	}
	for _, q := range quads {
		got, want := rectify(g, q, 240, 151), before(g, q, 240, 151)
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Fatalf("outline %v: rectified pixels differ from the first form's", q)
		}
	}
}
