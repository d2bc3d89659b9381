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

	"github.com/idstream/idstream/internal/cardrender"
)

// runSampleImage writes a synthetic document JPEG to stdout, for trying the API by hand
// (README's curl session): a vehicle registration card's front or back, the front or back of
// a chip ID card, of a 12-digit ID card without chip or of a 9-digit ID card, or a passport
// data page, rendered by internal/cardrender for a synthetic
// person or vehicle of the given seed; or a plain text-like texture (which the quality gate
// takes for a document only because its shape is a card's). None holds a real person's data.
func runSampleImage(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sample-image", flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "picks the synthetic person or vehicle, so that two images differ")
	kind := fs.String("kind", "vehicle-front", "vehicle-front, vehicle-back, id-front, id-back (chip ID card), id12-front, id12-back (12-digit card without chip), id9-front, id9-back (9-digit card), passport or texture")
	if err := parse(fs, args); err != nil {
		return err
	}
	var b []byte
	var err error
	if *kind == "texture" {
		b, err = sampleDocument(*seed)
	} else {
		b, err = sampleCard(*kind, *seed)
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// sampleCard renders one side of a synthetic document as a JPEG.
func sampleCard(kind string, seed uint64) ([]byte, error) {
	r, err := cardrender.New()
	if err != nil {
		return nil, fmt.Errorf("sample card: %w", err)
	}
	var img image.Image
	switch kind {
	case "vehicle-front":
		img, _ = r.VehicleRegistration(cardrender.SyntheticVehicle(seed))
	case "vehicle-back":
		img, _ = r.VehicleRegistrationBack(cardrender.SyntheticVehicle(seed))
	case "id-front":
		img, _ = r.ChipIDFront(cardrender.SyntheticPerson(seed))
	case "id-back":
		img, _ = r.ChipIDBack(cardrender.SyntheticPerson(seed))
	case "passport":
		img, _ = r.Passport(cardrender.SyntheticPerson(seed))
	case "id12-front":
		img, _ = r.IDCardFront(cardrender.SyntheticIDCardPerson(seed))
	case "id12-back":
		img, _ = r.IDCardBack(cardrender.SyntheticIDCardPerson(seed))
	case "id9-front":
		img, _ = r.LegacyIDFront(cardrender.SyntheticLegacyPerson(seed))
	case "id9-back":
		img, _ = r.LegacyIDBack(cardrender.SyntheticLegacyPerson(seed))
	default:
		return nil, fmt.Errorf("%w: unknown --kind %q", errUsage, kind)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 92}); err != nil {
		return nil, fmt.Errorf("encode sample card: %w", err)
	}
	return buf.Bytes(), nil
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
