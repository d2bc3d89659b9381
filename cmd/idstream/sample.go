package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math/rand/v2"
)

// runSampleImage writes a synthetic document-like JPEG to stdout, for trying the API by hand
// (README's curl session) and for the tests: a mid-tone card with dense, high-contrast
// text-like strokes. It holds no real person's data.
func runSampleImage(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sample-image", flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "varies the strokes, so that two images differ")
	if err := parse(fs, args); err != nil {
		return err
	}
	b, err := sampleDocument(*seed)
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// sampleDocument renders the synthetic document image for seed.
func sampleDocument(seed uint64) ([]byte, error) {
	rng := rand.New(rand.NewPCG(seed, 42))
	const w, h = 1000, 630
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	bg := color.RGBA{150, 160, 170, 255}
	ink := color.RGBA{20, 20, 30, 255}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, bg)
		}
	}
	for line := 0; line < 18; line++ {
		y0 := 40 + line*32
		for x := 40; x < w-40; x += 7 {
			if rng.IntN(4) == 0 {
				continue
			}
			stroke := 10 + rng.IntN(12)
			for y := y0; y < y0+stroke; y++ {
				for dx := 0; dx < 3; dx++ {
					img.SetRGBA(x+dx, y, ink)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		return nil, fmt.Errorf("encode sample image: %w", err)
	}
	return buf.Bytes(), nil
}
