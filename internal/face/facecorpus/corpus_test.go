package facecorpus_test

import (
	"bufio"
	"image"
	"image/draw"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/idstream/idstream/internal/face/facecorpus"
	"github.com/idstream/idstream/internal/face/facetest"
)

func TestManifestSplitsByIdentity(t *testing.T) {
	m, err := facecorpus.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	split := map[string]string{}
	photos := map[string]int{}
	for _, r := range m.Records {
		if s, ok := split[r.Identity]; ok && s != r.Split {
			t.Errorf("identity %s in both %s and %s", r.Identity, s, r.Split)
		}
		split[r.Identity] = r.Split
		photos[r.Identity]++
		if r.Source.Registry != "npm" && r.Source.Registry != "debian" || r.Source.Version == "" || r.Licence == "" || r.IdentityBasis == "" {
			t.Errorf("%s: incomplete provenance %+v", r.ID, r)
		}
		if r.FaceBox().Empty() {
			t.Errorf("%s: no face box", r.ID)
		}
	}
	halves := map[string]int{}
	multi := map[string]int{}
	for id, s := range split {
		halves[s]++
		if photos[id] >= 2 {
			multi[s]++
		}
	}
	t.Logf("%d photos of %d identities; identities per half %v; with two or more photos %v", len(m.Records), len(split), halves, multi)
	if len(m.Records) < 60 || len(split) < 45 {
		t.Errorf("corpus shrank: %d photos of %d identities", len(m.Records), len(split))
	}
	if halves[facecorpus.Calibration] < 20 || halves[facecorpus.HeldOut] < 20 || multi[facecorpus.Calibration] < 2 || multi[facecorpus.HeldOut] < 2 {
		t.Errorf("unbalanced split: %v, multi-photo identities %v", halves, multi)
	}
}

// The fetch script's list and the manifest must name the same files.
func TestFetchScriptMatchesManifest(t *testing.T) {
	m, err := facecorpus.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, r := range m.Records {
		want[strings.Join([]string{r.Source.Registry, r.Source.Package, r.Source.Version, r.Source.Path, r.SHA256}, " ")] = true
		if r.File != r.Source.Registry+"/"+strings.ReplaceAll(r.Source.Package, "/", "+")+"@"+r.Source.Version+"/"+r.Source.Path {
			t.Errorf("%s: file %s does not follow the fetch script's layout", r.ID, r.File)
		}
	}
	f, err := os.Open(filepath.Join("..", "testdata", "fetch-corpus.sh"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]bool{}
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "files=(":
			in = true
		case in && line == ")":
			in = false
		case in:
			got[strings.Trim(line, `"`)] = true
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("fetch-corpus.sh lacks %s", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("fetch-corpus.sh fetches %s, which the manifest does not name", k)
		}
	}
}

func TestLoad(t *testing.T) {
	env := facetest.New(t)
	c := env.Corpus(t)
	if len(c.Photos) != len(c.Manifest.Records) {
		t.Fatalf("%d photos for %d records", len(c.Photos), len(c.Manifest.Records))
	}
	for _, p := range c.Photos {
		b := p.Image.Bounds()
		if b.Dx() < 100 || b.Dy() < 100 || !p.FaceBox().In(b) {
			t.Errorf("%s: image %v, face %v", p.ID, b, p.FaceBox())
		}
	}
	cal, held := c.Identities(facecorpus.Calibration), c.Identities(facecorpus.HeldOut)
	both := map[string]bool{}
	for _, id := range cal {
		both[id] = true
	}
	for _, id := range held {
		if both[id] {
			t.Errorf("identity %s in both halves", id)
		}
	}
	for _, s := range []string{facecorpus.Calibration, facecorpus.HeldOut} {
		g, i := c.GenuinePairs(s), c.ImpostorPairs(s)
		t.Logf("%s: %d photos, %d genuine pairs, %d impostor pairs", s, len(c.Split(s)), len(g), len(i))
		if len(g) == 0 || len(i) < 100 {
			t.Errorf("%s: %d genuine and %d impostor pairs", s, len(g), len(i))
		}
		for _, p := range g {
			if c.Photos[p.A].Identity != c.Photos[p.B].Identity || c.Photos[p.A].Split != s {
				t.Errorf("genuine pair %v is not one identity of %s", p, s)
			}
		}
	}
}

func TestRenderIsDeterministicAndDiffers(t *testing.T) {
	env := facetest.New(t)
	c := env.Corpus(t)
	// the three smallest photos of different sources (rendering is per pixel: keep the test short)
	photos := append([]facecorpus.Photo(nil), c.Photos...)
	sort.Slice(photos, func(i, j int) bool {
		a, b := photos[i].Image.Bounds(), photos[j].Image.Bounds()
		return a.Dx()*a.Dy() < b.Dx()*b.Dy()
	})
	photos = photos[:3]
	for _, p := range photos {
		for _, kind := range facecorpus.Attacks {
			a, err := facecorpus.Render(kind, p.Image, p.Geometry(), 7)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := facecorpus.Render(kind, p.Image, p.Geometry(), 7)
			other, _ := facecorpus.Render(kind, p.Image, p.Geometry(), 8)
			if a.Bounds().Size() != p.Image.Bounds().Size() {
				t.Errorf("%s %s: size %v, want %v", p.ID, kind, a.Bounds(), p.Image.Bounds())
			}
			if d := meanDiff(a, b); d != 0 {
				t.Errorf("%s %s: same seed differs by %.2f", p.ID, kind, d)
			}
			if d := meanDiff(a, other); d < 1 {
				t.Errorf("%s %s: another seed differs by only %.2f", p.ID, kind, d)
			}
			// the face region itself must change (not only the surroundings)
			if d := meanDiff(sub(a, p.FaceBox()), sub(p.Image, p.FaceBox())); d < 8 {
				t.Errorf("%s %s: face region differs from the photo by only %.2f", p.ID, kind, d)
			}
		}
	}
	if _, err := facecorpus.Render("hologram", photos[0].Image, photos[0].Geometry(), 1); err == nil {
		t.Error("an unknown attack kind rendered")
	}
	if _, err := facecorpus.Render(facecorpus.Print, photos[0].Image, facecorpus.Geometry{Box: image.Rect(-5, 0, 10, 10)}, 1); err == nil {
		t.Error("a face box outside the image rendered")
	}
}

func sub(img image.Image, r image.Rectangle) image.Image {
	return img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(r)
}

// meanDiff is the mean absolute difference of two equally sized images, per channel, 0..255.
func meanDiff(a, b image.Image) float64 {
	ra, rb := rgba(a), rgba(b)
	var s float64
	n := 0
	for y := 0; y < min(ra.Rect.Dy(), rb.Rect.Dy()); y++ {
		for x := 0; x < min(ra.Rect.Dx(), rb.Rect.Dx()); x++ {
			pa, pb := ra.Pix[y*ra.Stride+4*x:], rb.Pix[y*rb.Stride+4*x:]
			for c := 0; c < 3; c++ {
				s += math.Abs(float64(pa[c]) - float64(pb[c]))
			}
			n += 3
		}
	}
	return s / float64(n)
}

func rgba(img image.Image) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), img, b.Min, draw.Src)
	return out
}
