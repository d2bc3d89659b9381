package fraud

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"sort"
	"testing"

	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/internal/imagecheck"
)

// TestDuplicateFaceThresholdSeparation measures the embedding model's same-person and
// different-person cosine similarities on the facetest photos, and asserts that
// DefaultDuplicateFaceThreshold separates them with margin on both sides (the figures are
// in DefaultDuplicateFaceThreshold's comment; run with -v to see them).
func TestDuplicateFaceThresholdSeparation(t *testing.T) {
	env := facetest.New(t)
	eng := env.Engine(t)
	embedAll := func(img image.Image) [][]float32 {
		t.Helper()
		faces, err := eng.Detect(img)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for _, f := range faces {
			v, err := eng.Embed(img, f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	largest := func(img image.Image) []float32 {
		t.Helper()
		v, reason, err := largestFaceEmbedding(eng, img)
		if err != nil || reason != "" {
			t.Fatalf("embed: %v %s", err, reason)
		}
		return v
	}
	reencode := func(img image.Image, q int) image.Image {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
			t.Fatal(err)
		}
		out, _, err := imagecheck.Decode(buf.Bytes(), imagecheck.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	// Same person: each portrait against other captures of it (mirrored, rescaled, rotated,
	// re-encoded; printed). Not the synthetic screen re-render: its sub-pixel stripes drag
	// the similarity down to 0.19–0.39, and a screen replay is the presentation check's case.
	var same []float64
	for pi, p := range []image.Image{env.PortraitA(t), env.PortraitB(t)} {
		ref := largest(p)
		for vi, v := range []image.Image{
			reencode(facetest.Transformed(p, 0.6, 8), 70), reencode(facetest.Transformed(p, 1.2, -10), 80),
			reencode(facetest.Transformed(p, 0.9, 0), 60), reencode(facetest.Printed(p), 85),
		} {
			sim := face.Cosine(ref, largest(v))
			t.Logf("portrait %d variant %d: %.3f", pi, vi, sim)
			same = append(same, sim)
		}
	}
	// Different people: every pair of faces within one photo.
	var diff []float64
	for i := 1; i <= 6; i++ {
		vs := embedAll(env.Photo(t, fmt.Sprintf("sample%d.jpg", i)))
		for a := range vs {
			for b := a + 1; b < len(vs); b++ {
				diff = append(diff, face.Cosine(vs[a], vs[b]))
			}
		}
	}
	sort.Float64s(same)
	sort.Float64s(diff)
	if len(same) < 8 || len(diff) < 20 {
		t.Fatalf("too few pairs: %d same, %d different", len(same), len(diff))
	}
	t.Logf("same person: %d pairs, min %.3f, median %.3f, max %.3f", len(same), same[0], same[len(same)/2], same[len(same)-1])
	t.Logf("different people: %d pairs, min %.3f, median %.3f, max %.3f", len(diff), diff[0], diff[len(diff)/2], diff[len(diff)-1])
	const margin = 0.1
	if same[0] < DefaultDuplicateFaceThreshold+margin {
		t.Errorf("same-person minimum %.3f is within %.2f of the threshold %.2f", same[0], margin, DefaultDuplicateFaceThreshold)
	}
	if diff[len(diff)-1] > DefaultDuplicateFaceThreshold-margin {
		t.Errorf("different-people maximum %.3f is within %.2f of the threshold %.2f", diff[len(diff)-1], margin, DefaultDuplicateFaceThreshold)
	}
}
