package phash

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	xdraw "golang.org/x/image/draw"

	"github.com/idstream/idstream/internal/cardrender"
	"github.com/idstream/idstream/internal/face/facetest"
)

func reencode(t testing.TB, img image.Image, q int) image.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	out, err := jpeg.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func resize(img image.Image, f float64) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, int(float64(b.Dx())*f), int(float64(b.Dy())*f)))
	xdraw.CatmullRom.Scale(out, out.Bounds(), img, b, xdraw.Src, nil)
	return out
}

// crop cuts frac of each side away (left/top/right/bottom weighted by the sides' pattern).
func crop(img image.Image, l, t, r, btm float64) image.Image {
	b := img.Bounds()
	rect := image.Rect(b.Min.X+int(l*float64(b.Dx())), b.Min.Y+int(t*float64(b.Dy())),
		b.Max.X-int(r*float64(b.Dx())), b.Max.Y-int(btm*float64(b.Dy())))
	return facetest.Crop(img, rect)
}

func brighten(img image.Image, gain, offset float64) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), img, b.Min, draw.Src)
	for i := range out.Pix {
		if i%4 != 3 {
			out.Pix[i] = uint8(math.Max(0, math.Min(255, float64(out.Pix[i])*gain+offset)))
		}
	}
	return out
}

// variants are the edits a replayed image may go through and must survive.
func variants(t testing.TB, img image.Image) map[string]image.Image {
	return map[string]image.Image{
		"jpeg q95":         reencode(t, img, 95),
		"jpeg q75":         reencode(t, img, 75),
		"jpeg q50":         reencode(t, img, 50),
		"resize 50%":       resize(img, 0.5),
		"resize 75% q80":   reencode(t, resize(img, 0.75), 80),
		"resize 150%":      resize(img, 1.5),
		"crop 1%":          crop(img, 0.01, 0.01, 0.01, 0.01),
		"crop 1% one side": crop(img, 0.01, 0.01, 0, 0),
		"crop 0.5% q85":    reencode(t, crop(img, 0.005, 0, 0.005, 0.005), 85),
		"brighter 10%":     brighten(img, 1.1, 0),
		"darker q85":       reencode(t, brighten(img, 0.9, -5), 85),
	}
}

// corpus returns distinct images: the face photos (whole and the two portraits), and card
// renders (front, back, passport) of different synthetic people, with the template's
// placeholder photo and with a face photo pasted in.
func corpus(t testing.TB) (photos, docs map[string]image.Image) {
	faces := facetest.New(t)
	photos, docs = map[string]image.Image{}, map[string]image.Image{}
	for i := 1; i <= 6; i++ {
		name := fmt.Sprintf("sample%d.jpg", i)
		photos[name] = resize(faces.Photo(t, name), 0.5) // selfie-sized, and faster
	}
	photos["portraitA"], photos["portraitB"] = faces.PortraitA(t), faces.PortraitB(t)
	r, err := cardrender.New()
	if err != nil {
		t.Fatalf("card renderer: %v", err)
	}
	portraits := []image.Image{faces.PortraitA(t), faces.PortraitB(t)}
	for seed := uint64(1); seed <= 6; seed++ {
		p := cardrender.SyntheticPerson(seed)
		front, _ := r.ChipIDFront(p)
		back, _ := r.ChipIDBack(p)
		pass, _ := r.Passport(p)
		withPhoto := image.NewRGBA(front.Bounds())
		draw.Draw(withPhoto, withPhoto.Bounds(), front, front.Bounds().Min, draw.Src)
		ph := portraits[seed%2]
		xdraw.CatmullRom.Scale(withPhoto, image.Rect(50, 230, 300, 560), ph, ph.Bounds(), xdraw.Src, nil)
		for k, v := range map[string]image.Image{"front": front, "front+photo": withPhoto, "back": back, "passport": pass} {
			docs[fmt.Sprintf("%s/%d", k, seed)] = v
		}
	}
	return photos, docs
}

// measure returns, over imgs, the largest distance between an image and one of its variants
// and the smallest distance between two different images (with the pairs' names).
func measure(t testing.TB, imgs map[string]image.Image) (worstSame int, worstSameName string, bestDiff int, bestDiffName string) {
	hashes := map[string]Hash{}
	for name, img := range imgs {
		h := Of(img)
		hashes[name] = h
		for vname, v := range variants(t, img) {
			if d := Distance(h, Of(v)); d > worstSame {
				worstSame, worstSameName = d, name+" "+vname
			}
		}
	}
	names := slices.Sorted(maps.Keys(imgs))
	bestDiff = 65
	for i, a := range names {
		for _, b := range names[i+1:] {
			if d := Distance(hashes[a], hashes[b]); d < bestDiff {
				bestDiff, bestDiffName = d, a+" vs "+b
			}
		}
	}
	return worstSame, worstSameName, bestDiff, bestDiffName
}

// TestNearDuplicateThreshold measures DefaultMaxDistance on photos (what the selfie step
// captures): every variant of every photo must be within it of the original, and every two
// different photos beyond it. It also measures card renders and asserts why the check does
// not apply to documents: renders of different people on one template hash alike.
func TestNearDuplicateThreshold(t *testing.T) {
	photos, docs := corpus(t)
	same, sameName, diff, diffName := measure(t, photos)
	t.Logf("photos: %d images × %d variants: largest variant distance %d (%s); %d pairs of different photos: smallest distance %d (%s); threshold %d",
		len(photos), len(variants(t, photos["portraitA"])), same, sameName, len(photos)*(len(photos)-1)/2, diff, diffName, DefaultMaxDistance)
	if same > DefaultMaxDistance {
		t.Errorf("a variant of a photo is %d bits away, beyond the threshold %d: it would not be found", same, DefaultMaxDistance)
	}
	if diff <= DefaultMaxDistance {
		t.Errorf("two different photos are %d bits apart, within the threshold %d: a false replay", diff, DefaultMaxDistance)
	}
	same, sameName, diff, diffName = measure(t, docs)
	t.Logf("card renders: %d images: largest variant distance %d (%s); smallest distance between different people's documents %d (%s)",
		len(docs), same, sameName, diff, diffName)
	if diff > DefaultMaxDistance {
		t.Errorf("card renders of different people are now %d bits apart: reconsider near-duplicates for documents", diff)
	}
}

func TestDistanceAndParse(t *testing.T) {
	if Distance(0, 0) != 0 || Distance(0, ^Hash(0)) != 64 || Distance(0b1011, 0b0001) != 2 {
		t.Fatal("distance")
	}
	h := Hash(0x0123456789abcdef)
	got, err := Parse(h.String())
	if err != nil || got != h {
		t.Fatalf("parse %v %v", got, err)
	}
	for _, bad := range []string{"", "xyz", "0123456789abcdeg", "0123456789abcdef0"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("parse %q: no error", bad)
		}
	}
	// Degenerate images hash without panicking.
	_ = Of(image.NewGray(image.Rect(0, 0, 0, 0)))
	_ = Of(image.NewGray(image.Rect(0, 0, 1, 1)))
	_ = Of(image.NewRGBA(image.Rect(0, 0, 3, 50)))
}

func TestSet(t *testing.T) {
	s := NewSet()
	s.Put("a", 0)
	s.Put("b", 0b111)
	s.Put("c", ^Hash(0))
	s.Put("a", 0b1) // replaces
	found := map[string]int{}
	s.Within(0, 3, func(id string, d int) bool { found[id] = d; return true })
	if len(found) != 2 || found["a"] != 1 || found["b"] != 3 {
		t.Fatalf("within: %v", found)
	}
	if !s.Delete("a") || s.Delete("a") || s.Len() != 2 {
		t.Fatal("delete")
	}
	found = map[string]int{}
	s.Within(0, 64, func(id string, d int) bool { found[id] = d; return true })
	if len(found) != 2 || found["c"] != 64 {
		t.Fatalf("after delete: %v", found)
	}
}

// BenchmarkSetWithin measures the linear near-duplicate scan at 10k, 100k and 1M hashes.
func BenchmarkSetWithin(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			s := NewSet()
			for i := range n {
				s.Put(fmt.Sprint(i), Hash(rng.Uint64()))
			}
			q := Hash(rng.Uint64())
			b.ResetTimer()
			for b.Loop() {
				s.Within(q, DefaultMaxDistance, func(string, int) bool { return true })
			}
		})
	}
}

// BenchmarkOf measures hashing a 1920×1350 photo (as *image.RGBA).
func BenchmarkOf(b *testing.B) {
	faces := facetest.New(b)
	img := resize(faces.Photo(b, "sample3.jpg"), 1)
	b.ResetTimer()
	for b.Loop() {
		Of(img)
	}
}
