package docread

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"sort"

	"github.com/idstream/idstream/internal/homography"
	"github.com/idstream/idstream/internal/imagequality"
)

// Located is a picture whose document was located once (Locate): every read of it that
// takes the picture (the page, its zone, a card's number) rectifies from that outline and
// that grey image instead of searching the picture again. It is the picture itself as an
// image.Image. Safe for concurrent reads; the picture must not change.
type Located struct {
	image.Image
	gray *image.Gray
	q    quad
}

// Locate finds the document in img (as every read does) for the reads to come; a Located
// img is returned as it is.
func Locate(img image.Image) *Located {
	if l, ok := img.(*Located); ok {
		return l
	}
	g := toGray(img)
	return &Located{Image: img, gray: g, q: findDocument(img, g)}
}

// toGray converts img to 8-bit luminance with bounds starting at (0, 0); a Located picture's
// was made once, and is shared: callers must not write to it.
func toGray(img image.Image) *image.Gray {
	if l, ok := img.(*Located); ok {
		return l.gray
	}
	b := img.Bounds()
	g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	switch src := img.(type) {
	case *image.Gray:
		for y := 0; y < b.Dy(); y++ {
			copy(g.Pix[y*g.Stride:y*g.Stride+b.Dx()], src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):])
		}
	case *image.YCbCr:
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				g.Pix[y*g.Stride+x] = src.Y[src.YOffset(b.Min.X+x, b.Min.Y+y)]
			}
		}
	case *image.RGBA:
		for y := 0; y < b.Dy(); y++ {
			o := src.PixOffset(b.Min.X, b.Min.Y+y)
			for x := 0; x < b.Dx(); x++ {
				p := src.Pix[o+4*x : o+4*x+3]
				g.Pix[y*g.Stride+x] = uint8((299*int(p[0]) + 587*int(p[1]) + 114*int(p[2]) + 500) / 1000)
			}
		}
	default:
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				g.Pix[y*g.Stride+x] = color.GrayModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y
			}
		}
	}
	return g
}

// quad is a document outline: top-left, top-right, bottom-right, bottom-left.
type quad [4][2]float64

// framer finds documents by their straight edges (the quality gate's document search).
var framer = imagequality.NewGate(imagequality.DefaultThresholds())

// findDocument locates the document in img (g is img in grey): the quality gate's document
// search (a card- or page-shaped quadrilateral whose sides lie on straight edges), which
// holds on tables lighter than the card and under uneven light, given the picture in colour
// as the gate is (a grey card on a cream table of its brightness shows its sides by hue
// alone); when it finds none, the largest bright connected region (a card or page is lighter
// than the surface it lies on), its corners taken as the region's extreme points along the
// diagonals. When no such region stands out (an image already cropped to the document), the
// whole image is the document.
func findDocument(img image.Image, g *image.Gray) quad {
	if l, ok := img.(*Located); ok {
		return l.q
	}
	if res := framer.Assess(img, imagequality.Document); res.DocumentArea > 0.1 && res.DocumentArea < 0.98 {
		return orderedCorners(res.Document)
	}
	return findBright(g)
}

// orderedCorners returns the corners of q as top-left, top-right, bottom-right, bottom-left (the
// extremes along the diagonals; documents are photographed roughly upright).
func orderedCorners(q [4][2]float64) quad {
	var out quad
	minS, maxS, minD, maxD := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range q {
		s, d := p[0]+p[1], p[0]-p[1]
		if s < minS {
			minS, out[0] = s, p
		}
		if s > maxS {
			maxS, out[2] = s, p
		}
		if d > maxD {
			maxD, out[1] = d, p
		}
		if d < minD {
			minD, out[3] = d, p
		}
	}
	return out
}

// findBright locates the document in g as the largest bright connected region.
func findBright(g *image.Gray) quad {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	whole := quad{{0, 0}, {float64(w), 0}, {float64(w), float64(h)}, {0, float64(h)}}
	step := max(1, max(w, h)/400)
	sw, sh := w/step, h/step
	if sw < 20 || sh < 20 {
		return whole
	}
	small := make([]uint8, sw*sh)
	var hist [256]int
	for y := 0; y < sh; y++ {
		for x := 0; x < sw; x++ {
			sum := 0
			for dy := 0; dy < step; dy++ {
				row := g.Pix[(y*step+dy)*g.Stride+x*step:]
				for dx := 0; dx < step; dx++ {
					sum += int(row[dx])
				}
			}
			v := uint8(sum / (step * step))
			small[y*sw+x] = v
			hist[v]++
		}
	}
	// From Otsu's threshold upwards, the first largest bright region whose shape is a
	// document's (it fills its corner quadrilateral, card or page proportions): under uneven
	// light a lit part of the table joins the document at the lower thresholds.
	thr := int(otsu(hist[:], sw*sh))
	var fallback *quad
	for t := thr; t < 250; t += 6 {
		best := largestAbove(small, sw, sh, uint8(t))
		if len(best) < sw*sh/20 {
			break
		}
		q := extremes(best, sw)
		if t == thr && len(best) >= sw*sh/5 {
			fallback = &q
		}
		if documentShaped(q, len(best)) {
			return scaleQuad(q, step)
		}
	}
	if fallback == nil {
		return whole
	}
	return scaleQuad(*fallback, step)
}

// largestAbove returns the pixels (indices) of the largest 4-connected region of small
// (sw × sh) brighter than thr.
func largestAbove(small []uint8, sw, sh int, thr uint8) []int {
	label := make([]bool, sw*sh)
	var best, comp []int
	stack := []int{}
	for i := range small {
		if small[i] <= thr || label[i] {
			continue
		}
		comp = comp[:0]
		stack = append(stack[:0], i)
		label[i] = true
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			comp = append(comp, p)
			x, y := p%sw, p/sw
			for _, q := range [4][2]int{{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}} {
				if q[0] < 0 || q[1] < 0 || q[0] >= sw || q[1] >= sh {
					continue
				}
				n := q[1]*sw + q[0]
				if small[n] > thr && !label[n] {
					label[n] = true
					stack = append(stack, n)
				}
			}
		}
		if len(comp) > len(best) {
			best = append(best[:0:0], comp...)
		}
	}
	return best
}

// extremes returns a region's corners as its extreme points along x+y and x−y.
func extremes(pix []int, sw int) quad {
	minS, maxS, minD, maxD := math.MaxInt, math.MinInt, math.MaxInt, math.MinInt
	var q quad
	for _, p := range pix {
		x, y := p%sw, p/sw
		if s := x + y; s < minS {
			minS, q[0] = s, [2]float64{float64(x), float64(y)}
		}
		if s := x + y; s > maxS {
			maxS, q[2] = s, [2]float64{float64(x + 1), float64(y + 1)}
		}
		if d := x - y; d > maxD {
			maxD, q[1] = d, [2]float64{float64(x + 1), float64(y)}
		}
		if d := x - y; d < minD {
			minD, q[3] = d, [2]float64{float64(x), float64(y + 1)}
		}
	}
	return q
}

// documentShaped reports whether a region of n pixels with corners q is a document: it
// fills 85 % of its quadrilateral, whose sides are in card or passport-page proportions.
func documentShaped(q quad, n int) bool {
	var area float64
	for i := range q {
		j := (i + 1) % 4
		area += q[i][0]*q[j][1] - q[j][0]*q[i][1]
	}
	area = math.Abs(area) / 2
	w := (dist(q[0], q[1]) + dist(q[3], q[2])) / 2
	h := (dist(q[0], q[3]) + dist(q[1], q[2])) / 2
	if area <= 0 || h <= 0 {
		return false
	}
	r := w / h
	return float64(n) >= 0.85*area && r >= 1.25 && r <= 1.8
}

func scaleQuad(q quad, step int) quad {
	for i := range q {
		q[i][0] *= float64(step)
		q[i][1] *= float64(step)
	}
	return q
}

// otsu returns the threshold that best separates the histogram into two classes.
func otsu(hist []int, total int) uint8 {
	var sum float64
	for i, n := range hist {
		sum += float64(i * n)
	}
	var sumB, wB float64
	best, thr := -1.0, 0
	for t, n := range hist {
		wB += float64(n)
		if wB == 0 {
			continue
		}
		wF := float64(total) - wB
		if wF == 0 {
			break
		}
		sumB += float64(t * n)
		mB, mF := sumB/wB, (sum-sumB)/wF
		if v := wB * wF * (mB - mF) * (mB - mF); v > best {
			best, thr = v, t
		}
	}
	return uint8(thr)
}

// rectify maps the document outline q of g onto a w × h upright image.
func rectify(g *image.Gray, q quad, w, h int) *image.Gray {
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
		row := out.Pix[y*out.Stride : y*out.Stride+w]
		for x := range row {
			sx, sy := hm.Apply(float64(x)+0.5, float64(y)+0.5)
			sx, sy = sx-0.5, sy-0.5
			x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
			fx, fy := sx-float64(x0), sy-float64(y0)
			var a, b, c, d float64
			if x0 >= 0 && y0 >= 0 && x0 < gw-1 && y0 < gh-1 { // inside: no clamping (and no x0+1 to overflow)
				i := y0*g.Stride + x0
				a, b, c, d = float64(g.Pix[i]), float64(g.Pix[i+1]), float64(g.Pix[i+g.Stride]), float64(g.Pix[i+g.Stride+1])
			} else {
				a, b, c, d = at(x0, y0), at(x0+1, y0), at(x0, y0+1), at(x0+1, y0+1)
			}
			v := a*(1-fx)*(1-fy) + b*fx*(1-fy) + c*(1-fx)*fy + d*fx*fy + 0.5
			// min(255, max(0, v)) without math.Min and math.Max's calls (NaN passes either way).
			if v < 0 {
				v = 0
			} else if v > 255 {
				v = 255
			}
			row[x] = uint8(v)
		}
	}
	return out
}

// crop returns a copy of the part of g inside r (clipped to g).
func crop(g *image.Gray, r image.Rectangle) *image.Gray {
	r = r.Intersect(g.Rect)
	out := image.NewGray(image.Rect(0, 0, r.Dx(), r.Dy()))
	for y := 0; y < r.Dy(); y++ {
		copy(out.Pix[y*out.Stride:y*out.Stride+r.Dx()], g.Pix[(r.Min.Y+y)*g.Stride+r.Min.X:])
	}
	return out
}

// padWhite returns g inside a white border n pixels wide.
func padWhite(g *image.Gray, n int) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	out := image.NewGray(image.Rect(0, 0, w+2*n, h+2*n))
	for i := range out.Pix {
		out.Pix[i] = 255
	}
	for y := 0; y < h; y++ {
		copy(out.Pix[(y+n)*out.Stride+n:(y+n)*out.Stride+n+w], g.Pix[y*g.Stride:y*g.Stride+w])
	}
	return out
}

// binarise returns g thresholded at its Otsu level: ink black, paper white.
func binarise(g *image.Gray) *image.Gray {
	var hist [256]int
	for _, v := range g.Pix {
		hist[v]++
	}
	thr := otsu(hist[:], len(g.Pix))
	out := image.NewGray(g.Rect)
	for i, v := range g.Pix {
		if v > thr {
			out.Pix[i] = 255
		}
	}
	return out
}

// flatten returns g with every pixel lighter than halfway between the ink's level (the
// darkest percent) and the paper's (the median) painted in the paper's: print stays as it
// is, mid-grey patterns go.
func flatten(g *image.Gray) *image.Gray {
	out := image.NewGray(g.Rect)
	copy(out.Pix, g.Pix)
	ink, paper := int(darkestLevel(g.Pix, 0.01)), median(g.Pix)
	for i, v := range out.Pix {
		if 2*int(v) > ink+int(paper) {
			out.Pix[i] = paper
		}
	}
	return out
}

// binariseLocal returns g thresholded against the local mean (localDark): ink black, the rest
// white, whatever the light across g.
func binariseLocal(g *image.Gray) *image.Gray {
	dark := localDark(g)
	out := image.NewGray(image.Rect(0, 0, g.Rect.Dx(), g.Rect.Dy()))
	for i := range out.Pix {
		if !dark(i) {
			out.Pix[i] = 255
		}
	}
	return out
}

// pgm encodes g as a binary PGM (P5), which Leptonica reads without decompression work.
func pgm(g *image.Gray) []byte {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	hdr := fmt.Sprintf("P5\n%d %d\n255\n", w, h)
	out := make([]byte, 0, len(hdr)+w*h)
	out = append(out, hdr...)
	for y := 0; y < h; y++ {
		out = append(out, g.Pix[y*g.Stride:y*g.Stride+w]...)
	}
	return out
}

// dist returns the distance between two points.
func dist(a, b [2]float64) float64 { return math.Hypot(a[0]-b[0], a[1]-b[1]) }

// localDark returns whether each pixel of g (index y·w+x) is ink: darker by more than 12
// levels than the mean of the 31 × 31 window around it (at 1200 px wide), so that uneven
// light and tinted backgrounds do not turn whole areas dark.
func localDark(g *image.Gray) func(int) bool {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	sum := make([]int64, (w+1)*(h+1)) // integral image
	for y := 0; y < h; y++ {
		var row int64
		for x := 0; x < w; x++ {
			row += int64(g.Pix[y*g.Stride+x])
			sum[(y+1)*(w+1)+x+1] = sum[y*(w+1)+x+1] + row
		}
	}
	r := max(7, w/80)
	return func(i int) bool {
		x, y := i%w, i/w
		x0, y0, x1, y1 := max(0, x-r), max(0, y-r), min(w, x+r+1), min(h, y+r+1)
		s := sum[y1*(w+1)+x1] - sum[y0*(w+1)+x1] - sum[y1*(w+1)+x0] + sum[y0*(w+1)+x0]
		n := int64((x1 - x0) * (y1 - y0))
		return int64(g.Pix[y*g.Stride+x])*n < s-12*n
	}
}

// cleanForText prepares a rectified document for a full-page text pass. It paints out, in
// the paper's level:
//   - the dotted leader lines printed after a label for the value to sit on ("Họ tên
//     ........"): runs of at least five small dots of ink, evenly spaced along one height.
//     Tesseract reads such rows as noise and loses the text on them. Isolated dots (of an
//     i, below a vowel) and accents along a row stay;
//   - dark shapes taller than any printed character (over 9 % of the height): the photo, the
//     emblem, a QR code, the chip, fingerprint frames, a stamp. Solid ones (filling over a
//     third of their box) go with their box, thin ones (rings, frames, strokes) pixel by
//     pixel. Tesseract segments text lines around them badly and reads them as junk, which
//     also costs time.
func cleanForText(g *image.Gray) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	dark := localDark(g)
	maxDot := max(3, w/200) // a dot is under 6 px across at 1200 px
	tall := h * 9 / 100
	comps, label := components(w, h, dark)
	out := image.NewGray(g.Rect)
	copy(out.Pix, g.Pix)
	// What is painted out is painted in the paper's level (the page's median), not white:
	// on a photographed card, grey at 100–200, white strokes where a chip's or a frame's
	// outline was pull Tesseract's global threshold above the card, which then reads as one
	// dark area with no words.
	paper := median(out.Pix)
	erase := make([]bool, len(comps)+1) // components painted pixel by pixel
	fillBox := func(x0, y0, x1, y1 int) {
		for y := max(0, y0); y <= min(h-1, y1); y++ {
			for x := max(0, x0); x <= min(w-1, x1); x++ {
				out.Pix[y*out.Stride+x] = paper
			}
		}
	}
	for k, c := range comps {
		bw, bh := c.x1-c.x0+1, c.y1-c.y0+1
		switch {
		case 4*bw*bh > w*h:
			// Larger than a photo: shading of the card itself, not a picture on it.
		case bh > tall && 3*c.n > bw*bh:
			fillBox(c.x0-2, c.y0-2, c.x1+2, c.y1+2)
		case bh > tall:
			erase[k+1] = true
		}
	}
	// Dots are found among the pixels nearer the ink's level than the paper's: a card's
	// guilloche lines are dark beside the paper too, and a leader's dot touching one is
	// part of a shape that is no dot at that level (a 9-digit card's leaders on its wavy
	// lines made "thùng" of "Trung").
	ink := darkestLevel(g.Pix, 0.01)
	strong := func(i int) bool { return 2*int(g.Pix[(i/w)*g.Stride+i%w]) < int(ink)+int(paper) && dark(i) }
	inked, _ := components(w, h, strong)
	var dots []comp
	for _, c := range inked {
		if bw, bh := c.x1-c.x0+1, c.y1-c.y0+1; bw < maxDot && bh < maxDot && c.n >= 2 {
			dots = append(dots, c)
		}
	}
	for i, l := range label {
		if l != 0 && erase[l] {
			out.Pix[(i/w)*out.Stride+i%w] = paper
		}
	}
	// Dense patches (a QR code, a chip's contacts): cells of a grid more than 35 % dark,
	// in a block at least 4 × 4 cells, whose box is more than half such cells.
	cell := max(8, w/50)
	gw, gh := (w+cell-1)/cell, (h+cell-1)/cell
	dense := make([]bool, gw*gh)
	for cy := 0; cy < gh; cy++ {
		for cx := 0; cx < gw; cx++ {
			n, tot := 0, 0
			for y := cy * cell; y < min(h, (cy+1)*cell); y++ {
				for x := cx * cell; x < min(w, (cx+1)*cell); x++ {
					tot++
					if label[y*w+x] != 0 {
						n++
					}
				}
			}
			dense[cy*gw+cx] = 100*n > 35*tot
		}
	}
	seenCell := make([]bool, gw*gh)
	for i := range dense {
		if !dense[i] || seenCell[i] {
			continue
		}
		x0, y0, x1, y1, n := gw, gh, -1, -1, 0
		stack := []int{i}
		seenCell[i] = true
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n++
			px, py := p%gw, p/gw
			x0, y0, x1, y1 = min(x0, px), min(y0, py), max(x1, px), max(y1, py)
			for _, q := range [4][2]int{{px - 1, py}, {px + 1, py}, {px, py - 1}, {px, py + 1}} {
				if q[0] < 0 || q[1] < 0 || q[0] >= gw || q[1] >= gh {
					continue
				}
				if k := q[1]*gw + q[0]; dense[k] && !seenCell[k] {
					seenCell[k] = true
					stack = append(stack, k)
				}
			}
		}
		bw, bh := x1-x0+1, y1-y0+1
		if bw >= 4 && bh >= 4 && 2*n > bw*bh && 8*n < gw*gh {
			fillBox(x0*cell-cell/2, y0*cell-cell/2, (x1+1)*cell+cell/2, (y1+1)*cell+cell/2)
		}
	}
	// Leaders: runs of ≥ 5 evenly spaced dots (each step within a quarter, or 2 px, of the
	// one before), each within 2 px of the height of the one before it (a leader on a page
	// rectified a little off drifts along its length) and less than 3 % of the width after
	// it. Accents and the dots below vowels along a row of print are at one height too, but
	// not evenly spaced.
	cyOf := func(k int) int { return (dots[k].y0 + dots[k].y1) / 2 }
	cxOf := func(k int) int { return (dots[k].x0 + dots[k].x1) / 2 }
	sort.Slice(dots, func(i, j int) bool { return dots[i].x0 < dots[j].x0 })
	maxGap := max(12, w*3/100)
	used := make([]bool, len(dots))
	run := make([]int, 0, 64)
	eraseRun := func(seg []int) {
		if len(seg) < 5 {
			return
		}
		for _, r := range seg {
			used[r] = true
			c := dots[r]
			fillBox(c.x0-1, c.y0-1, c.x1+1, c.y1+1)
		}
	}
	for i := range dots {
		if used[i] {
			continue
		}
		run = append(run[:0], i)
		for last := i; ; {
			next := -1
			for j := last + 1; j < len(dots) && dots[j].x0-dots[last].x1 <= maxGap; j++ {
				if d := cyOf(j) - cyOf(last); used[j] || d > 2 || d < -2 || dots[j].x0 <= dots[last].x1 {
					continue
				}
				next = j
				break
			}
			if next < 0 {
				break
			}
			run = append(run, next)
			last = next
		}
		start := 0
		for k := 2; k < len(run); k++ {
			step, before := cxOf(run[k])-cxOf(run[k-1]), cxOf(run[k-1])-cxOf(run[k-2])
			if d := step - before; d > max(2, before/4) || -d > max(2, before/4) {
				eraseRun(run[start:k]) // dots start … k-1, evenly spaced
				start = k - 1
			}
		}
		eraseRun(run[start:])
	}
	return out
}

// comp is a connected component's box and pixel count.
type comp struct {
	x0, y0, x1, y1, n int
}

// components labels the 8-connected components of the pixels of a w × h page for which in
// holds (in takes the pixel's index y·w + x): their boxes, and each pixel's component
// (1-based; 0 for pixels not in).
func components(w, h int, in func(int) bool) ([]comp, []int32) {
	var comps []comp
	label := make([]int32, w*h)
	member := make([]bool, w*h) // in, asked once a pixel (not once for each neighbour)
	for i := range member {
		member[i] = in(i)
	}
	stack := make([]int, 0, 256)
	for i := range label {
		if label[i] != 0 || !member[i] {
			continue
		}
		id := int32(len(comps) + 1)
		label[i] = id
		stack = append(stack[:0], i)
		c := comp{w, h, -1, -1, 0}
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c.n++
			px, py := p%w, p/w
			c.x0, c.y0, c.x1, c.y1 = min(c.x0, px), min(c.y0, py), max(c.x1, px), max(c.y1, py)
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					qx, qy := px+dx, py+dy
					if qx < 0 || qy < 0 || qx >= w || qy >= h {
						continue
					}
					if q := qy*w + qx; label[q] == 0 && member[q] {
						label[q] = id
						stack = append(stack, q)
					}
				}
			}
		}
		comps = append(comps, c)
	}
	return comps, label
}

// darkestLevel returns the grey level below which the share q of pix lies (255 when empty).
func darkestLevel(pix []uint8, q float64) uint8 {
	var hist [256]int
	for _, v := range pix {
		hist[v]++
	}
	limit, n := int(q*float64(len(pix))), 0
	for v, c := range hist {
		if n += c; n > limit {
			return uint8(v)
		}
	}
	return 255
}
