package imagequality

import (
	"image"
	"image/color"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
)

// fillRect paints r (clipped to img) with c.
func fillRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		i := img.PixOffset(r.Min.X, y)
		for x := r.Min.X; x < r.Max.X; x++ {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
			i += 4
		}
	}
}

// syntheticCard renders an ID-card-like scene w×h pixels: a card filling most of a darker
// table, a bordered photo box and lines of text-like glyph strokes. The geometry scales with
// w, so the same scene can be rendered at several resolutions.
func syntheticCard(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	s := float64(w) / 1280 // scale: geometry is laid out for 1280 px wide
	px := func(v float64) int { return int(v * s) }
	fillRect(img, img.Bounds(), color.RGBA{85, 78, 70, 255})
	card := image.Rect(px(90), px(60), w-px(90), h-px(60))
	fillRect(img, card, color.RGBA{30, 30, 36, 255})
	fillRect(img, card.Inset(max(1, px(4))), color.RGBA{222, 216, 200, 255})
	// Photo box with a face-like gradient.
	photo := image.Rect(card.Min.X+px(50), card.Min.Y+px(150), card.Min.X+px(330), card.Min.Y+px(500))
	for y := photo.Min.Y; y < photo.Max.Y; y++ {
		v := uint8(120 + 60*(y-photo.Min.Y)/max(1, photo.Dy()))
		fillRect(img, image.Rect(photo.Min.X, y, photo.Max.X, y+1), color.RGBA{v, v - 20, v - 40, 255})
	}
	// Text lines: glyphs of random widths, strokes ~2.5 px at 1280 px.
	rng := rand.New(rand.NewPCG(7, 11))
	ink := color.RGBA{28, 28, 40, 255}
	for line := 0; line < 12; line++ {
		y0 := float64(card.Min.Y)/s + 120 + float64(line)*48
		x := float64(card.Min.X)/s + 380
		for x < float64(card.Max.X)/s-60 {
			gw := 10 + rng.Float64()*12
			// A glyph: two vertical stems and a bar.
			fillRect(img, image.Rect(px(x), px(y0), px(x+2.5), px(y0+24)), ink)
			fillRect(img, image.Rect(px(x+gw-2.5), px(y0), px(x+gw), px(y0+24)), ink)
			fillRect(img, image.Rect(px(x), px(y0+10), px(x+gw), px(y0+12.5)), ink)
			x += gw + 5
			if rng.IntN(7) == 0 {
				x += 14 // word gap
			}
		}
	}
	return img
}

// boxBlur blurs img with three passes of a separable box filter of radius r (close to a
// Gaussian of σ = sqrt(r(r+1))), in place.
func boxBlur(img *image.RGBA, r int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	tmp := make([]uint8, len(img.Pix))
	pass := func(src, dst []uint8, n, lines int, at func(line, k int) int) {
		for line := range lines {
			for c := range 3 {
				for k := range n {
					sum, cnt := 0, 0
					for d := -r; d <= r; d++ {
						if j := k + d; j >= 0 && j < n {
							sum += int(src[at(line, j)+c])
							cnt++
						}
					}
					dst[at(line, k)+c] = uint8(sum / cnt)
				}
				for k := range n {
					dst[at(line, k)+3] = 255
				}
			}
		}
	}
	horiz := func(y, x int) int { return y*img.Stride + 4*x }
	vert := func(x, y int) int { return y*img.Stride + 4*x }
	for range 3 {
		pass(img.Pix, tmp, w, h, horiz)
		pass(tmp, img.Pix, h, w, vert)
	}
}

// scaleBrightness multiplies every colour channel by f (clamped).
func scaleBrightness(img *image.RGBA, f float64) {
	for i := range img.Pix {
		if i%4 == 3 {
			continue
		}
		img.Pix[i] = uint8(min(255, float64(img.Pix[i])*f))
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// inParallel runs fn(0) … fn(n-1) on two goroutines (the machines have two cores) and
// returns when all are done.
func inParallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
