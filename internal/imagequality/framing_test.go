package imagequality

import (
	"fmt"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/idstream/idstream/internal/cardrender"
)

// framingCase is one generated document picture and the framing answer it must get.
type framingCase struct {
	name  string
	img   image.Image
	truth [4][2]float64 // the document's corners; zero when there is none
	want  string        // "" (framing ok), ReasonNotFramed or ReasonNoDocument
}

// documentRenders renders one side of each document the service reads.
func documentRenders(t testing.TB) map[string]image.Image {
	t.Helper()
	r, err := cardrender.New()
	if err != nil {
		t.Skipf("fonts for the card renderer: %v", err)
	}
	p := cardrender.SyntheticPerson(3)
	v := cardrender.SyntheticVehicle(3)
	front, _ := r.ChipIDFront(p)
	back, _ := r.ChipIDBack(p)
	pass, _ := r.Passport(p)
	vf, _ := r.VehicleRegistration(v)
	vb, _ := r.VehicleRegistrationBack(v)
	return map[string]image.Image{"id-front": front, "id-back": back, "passport": pass, "vehicle-front": vf, "vehicle-back": vb}
}

var backgrounds = []struct {
	name string
	bg   cardrender.Background
}{
	{"dark", cardrender.DarkSmooth}, {"light", cardrender.LightTable}, {"wood", cardrender.Wood},
	{"fabric", cardrender.Fabric}, {"desk", cardrender.DeskEdge},
}

// frames are the picture sizes: 4:3, 16:9 and portrait 3:4 (the gate measures at 640 px
// wide whatever the size, so these smaller sizes stand for the cameras' larger ones).
var frames = []image.Point{{1280, 960}, {1280, 720}, {960, 1280}}

// framingCases generates the framing set: every document on every background, framed well
// (with rotation, perspective, blur, noise and JPEG), cut off by each edge of the frame, and
// too far; and each background with no document, in each frame shape.
func framingCases(t testing.TB) []framingCase {
	t.Helper()
	docs := documentRenders(t)
	names := sortedKeys(docs)
	type job struct {
		name string
		doc  image.Image
		s    cardrender.Scene
		seed uint64
		want string
	}
	var jobs []job
	rng := rand.New(rand.NewPCG(2024, 4))
	photo := func(s cardrender.Scene) cardrender.Scene {
		if rng.IntN(2) == 0 {
			s.BlurSigma = 0.5 + rng.Float64()
		}
		s.NoiseStdDev = 2 + 4*rng.Float64()
		s.JPEGQuality = 70 + rng.IntN(23)
		return s
	}
	seed := uint64(0)
	for bi, bg := range backgrounds {
		for di, name := range names {
			f := frames[(bi+di)%len(frames)]
			aspect := float64(docs[name].Bounds().Dx()) / float64(docs[name].Bounds().Dy())
			// Well framed: the document's bounding box (rotated up to ±12°, perspective up to
			// 4 %) within 92 % of the frame, the document covering at least a quarter of it.
			rot, skew := 24*(rng.Float64()-0.5), 0.04*rng.Float64()
			a := math.Abs(rot) * math.Pi / 180
			boxW := math.Cos(a) + math.Sin(a)/aspect + 2*skew // per unit of document width
			boxH := math.Sin(a) + math.Cos(a)/aspect + 2*skew
			fit := 0.92 * math.Min(1/boxW, float64(f.Y)/float64(f.X)/boxH)
			least := math.Sqrt(0.25 * float64(f.Y) * aspect / float64(f.X))
			scale := fit
			if least < fit {
				scale = least + (fit-least)*rng.Float64()
			}
			seed++
			jobs = append(jobs, job{fmt.Sprintf("good/%s/%s", bg.name, name), docs[name], photo(cardrender.Scene{
				Width: f.X, Height: f.Y, Background: bg.bg, CenterX: 0.5 + 0.04*(rng.Float64()-0.5), CenterY: 0.5 + 0.04*(rng.Float64()-0.5),
				Scale: scale, RotationDeg: rot, Skew: skew,
			}), seed, ""})
			// Cut off: the centre moved so that about a quarter of the document is outside.
			seed++
			edge := (bi + di) % 4
			cx, cy := 0.5, 0.5
			switch edge {
			case 0:
				cx = 0.2
			case 1:
				cx = 0.8
			case 2:
				cy = 0.15
			case 3:
				cy = 0.85
			}
			jobs = append(jobs, job{fmt.Sprintf("cut/%s/%s/edge%d", bg.name, name, edge), docs[name], photo(cardrender.Scene{
				Width: f.X, Height: f.Y, Background: bg.bg, CenterX: cx, CenterY: cy,
				Scale: 0.6, RotationDeg: 10 * (rng.Float64() - 0.5), Skew: 0.02 * rng.Float64(),
			}), seed, ReasonNotFramed})
			// Too far: the document a quarter of the frame's width or less.
			seed++
			jobs = append(jobs, job{fmt.Sprintf("far/%s/%s", bg.name, name), docs[name], photo(cardrender.Scene{
				Width: f.X, Height: f.Y, Background: bg.bg, CenterX: 0.3 + 0.4*rng.Float64(), CenterY: 0.3 + 0.4*rng.Float64(),
				Scale: 0.18 + 0.07*rng.Float64(), RotationDeg: 20 * (rng.Float64() - 0.5), Skew: 0.02 * rng.Float64(),
			}), seed, ReasonNotFramed})
		}
		for fi, f := range frames {
			seed++
			jobs = append(jobs, job{fmt.Sprintf("none/%s/%dx%d", bg.name, f.X, f.Y), nil, photo(cardrender.Scene{
				Width: f.X, Height: f.Y, Background: bg.bg,
			}), seed + uint64(fi), ReasonNoDocument})
		}
	}
	out := make([]framingCase, len(jobs))
	var mu sync.Mutex
	var firstErr error
	inParallel(len(jobs), func(i int) {
		j := jobs[i]
		img, corners, err := cardrender.Place(j.doc, j.s, j.seed)
		if err != nil {
			mu.Lock()
			firstErr = err
			mu.Unlock()
			return
		}
		out[i] = framingCase{name: j.name, img: img, truth: corners, want: expectFraming(j.want, corners, j.s)}
	})
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	return out
}

// expectFraming returns the framing answer a generated picture must get, from where its
// document really lies: want for pictures with no document or a cut-off one; for a whole
// document, framed when it covers at least 11 % of the frame and not_framed (too far) at
// 7 % or less (MinDocumentArea is 0.09); "?" between, or with a corner within 1 % of the
// frame's edge, where either answer is right.
func expectFraming(want string, c [4][2]float64, s cardrender.Scene) string {
	if want == ReasonNoDocument {
		return want
	}
	inside, touching := true, false
	gap := 0.01 * float64(min(s.Width, s.Height))
	for _, p := range c {
		inside = inside && p[0] >= 0 && p[1] >= 0 && p[0] <= float64(s.Width) && p[1] <= float64(s.Height)
		touching = touching || p[0] < gap || p[1] < gap || p[0] > float64(s.Width)-gap || p[1] > float64(s.Height)-gap
	}
	if !inside {
		return ReasonNotFramed
	}
	if touching {
		// a corner on the frame's edge (cardrender.Place keeps the card inside): cut or not
		// is a matter of a pixel (minBorderGap)
		return "?"
	}
	area := 0.0
	for k := range 4 {
		a, b := c[k], c[(k+1)%4]
		area += a[0]*b[1] - b[0]*a[1]
	}
	switch share := math.Abs(area) / 2 / float64(s.Width*s.Height); {
	case share >= 0.11:
		return ""
	case share <= 0.07:
		return ReasonNotFramed
	}
	return "?"
}

// dumpImage writes img to $QUALITY_DUMP/name.png when that variable is set, for looking at.
func dumpImage(t testing.TB, name string, img image.Image) {
	dir := os.Getenv("QUALITY_DUMP")
	if dir == "" {
		return
	}
	path := filepath.Join(dir, filepath.FromSlash(name)+".png")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// framingAnswer is the framing part of a result: "" when framed, else the framing reason.
func framingAnswer(res Result) string {
	for _, r := range res.Reasons {
		if r == ReasonNotFramed || r == ReasonNoDocument {
			return r
		}
	}
	return ""
}

// TestDocumentFramingAccuracy runs the gate over the generated framing set, prints the
// confusion per category and the corner error of found documents, and asserts every answer.
func TestDocumentFramingAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("renders about a hundred photo-sized pictures")
	}
	g := NewGate(DefaultThresholds())
	cases := framingCases(t)
	type tally struct{ n, right int }
	per := map[string]*tally{}
	var cornerErr []float64
	for _, c := range cases {
		if c.want == "?" {
			continue
		}
		res := g.Assess(c.img, Document)
		got := framingAnswer(res)
		cat := c.name[:slices.Index([]byte(c.name), '/')]
		if per[cat] == nil {
			per[cat] = &tally{}
		}
		per[cat].n++
		if got == c.want {
			per[cat].right++
		} else {
			t.Errorf("%s: framing %q (reasons %v, area %.2f, quad %v), want %q", c.name, got, res.Reasons, res.DocumentArea, fmtQuad(res.Document), c.want)
			dumpImage(t, "wrong/"+c.name, c.img)
		}
		if c.want == "" && got == "" {
			ce := quadError(res.Document, c.truth) / float64(max(res.Width, res.Height))
			cornerErr = append(cornerErr, ce)
			if ce > 0.03 {
				t.Errorf("%s: corner error %.3f of the frame: found %s, truth %s", c.name, ce, fmtQuad(res.Document), fmtQuad(c.truth))
				dumpImage(t, "corners/"+c.name, c.img)
			}
		}
	}
	for _, cat := range []string{"good", "cut", "far", "none"} {
		if tl := per[cat]; tl != nil {
			t.Logf("%-5s %d/%d right", cat, tl.right, tl.n)
		}
	}
	if len(cornerErr) > 0 {
		slices.Sort(cornerErr)
		t.Logf("corner error of framed documents (share of the frame's long side): median %.4f, max %.4f", cornerErr[len(cornerErr)/2], cornerErr[len(cornerErr)-1])
	}
}

// quadError returns the largest distance between a corner of found and the nearest corner
// of truth.
func quadError(found Quad, truth [4][2]float64) float64 {
	worst := 0.0
	for _, f := range found {
		best := math.Inf(1)
		for _, c := range truth {
			best = math.Min(best, math.Hypot(f[0]-c[0], f[1]-c[1]))
		}
		worst = math.Max(worst, best)
	}
	return worst
}

func fmtQuad(q Quad) string {
	return fmt.Sprintf("(%.0f,%.0f)(%.0f,%.0f)(%.0f,%.0f)(%.0f,%.0f)", q[0][0], q[0][1], q[1][0], q[1][1], q[2][0], q[2][1], q[3][0], q[3][1])
}

// BenchmarkAssessDocument is the gate's time for a 1600×1200 document photo (decoded): a
// card on wood (striped, busy), and the bare fabric surface (no document: both search
// passes run in full).
func BenchmarkAssessDocument(b *testing.B) {
	docs := documentRenders(b)
	for _, bc := range []struct {
		name string
		doc  image.Image
		bg   cardrender.Background
	}{{"card-on-wood", docs["id-front"], cardrender.Wood}, {"no-document-fabric", nil, cardrender.Fabric}} {
		img, _, err := cardrender.Place(bc.doc, cardrender.Scene{Width: 1600, Height: 1200, Background: bc.bg,
			CenterX: 0.5, CenterY: 0.5, Scale: 0.7, RotationDeg: 5, Skew: 0.02, NoiseStdDev: 3, JPEGQuality: 85}, 1)
		if err != nil {
			b.Fatal(err)
		}
		g := NewGate(DefaultThresholds())
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g.Assess(img, Document)
			}
		})
	}
}
