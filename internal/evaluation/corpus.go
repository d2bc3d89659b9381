// Package evaluation measures idstream on a labelled corpus of documents, captures and faces
// that nobody tuned the readers on: the corpus format (a directory with corpus.json and the
// images it names), the figures (quality gate false rejection and catch rate, document type
// accuracy, per-field exact match, MRZ exact rate, face match FNMR/FMR and DET curve,
// liveness APCER/BPCER, end-to-end outcomes) and their report as a table, JSON and PNG plots.
// It knows neither Kafka nor the schemas: the `idstream eval` command runs the corpus through
// the real pipeline and hands this package what came out.
//
// # Corpus layout
//
//	<dir>/corpus.json   the labels (Corpus, below)
//	<dir>/<path>        every image named in it, JPEG or PNG, paths relative to <dir>
//
// corpus.json holds four lists. Every item has an id, a split ("calibration" or "heldout":
// thresholds and readers are tuned on calibration, figures are reported on heldout) and a
// source (its provenance: generator and template, or package@version/path and licence).
//
//   - documents: one identity document: doc_type (legacy_id_card, id_card, chip_id_card,
//     passport, vehicle_registration), images keyed by the step they are uploaded to
//     (document_front, document_back, passport), the truth fields normalised as the public
//     contract reports them (names with diacritics in capitals, dates YYYY-MM-DD, sex M/F,
//     nationality alpha-3, places joined across line breaks), field_sides (the step each
//     field is printed on), the MRZ lines when it has one, and face_identity, the identity of
//     the face printed on it.
//   - captures: a document side or selfie capture with the gate's expected answer: expect is
//     "good" or the reason the gate must give (blurry, glare, not_framed, no_document,
//     too_dark, no_face, multiple_faces, face_too_small).
//   - faces: a photograph of a real person (identity, licence) or an attack rendering made
//     from one (attack: print, replay, cutout, mask; attack_of: the source face's id).
//   - sessions: what to send as one verification session: the document, the selfie (a face
//     id), kind (genuine: the document's own person; impostor: another person; attack: a
//     presentation attack of the document's person), and bad captures to send first on some
//     steps (step → capture id), as a person retaking a picture would.
package evaluation

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Splits of a corpus.
const (
	Calibration = "calibration"
	HeldOut     = "heldout"
)

// Session kinds.
const (
	Genuine  = "genuine"
	Impostor = "impostor"
	Attack   = "attack"
)

// Expected gate answers beside a reason code: a good capture, and a presentation attack
// (judged by liveness, not by the gate).
const (
	ExpectGood   = "good"
	ExpectAttack = "attack"
)

// CorpusFile is the name of the label file in a corpus directory.
const CorpusFile = "corpus.json"

// Corpus is a labelled evaluation corpus. Paths are relative to Dir.
type Corpus struct {
	Dir       string     `json:"-"`
	Documents []Document `json:"documents"`
	Captures  []Capture  `json:"captures"`
	Faces     []Face     `json:"faces"`
	Sessions  []Session  `json:"sessions"`
}

// Document is one identity document and its truth.
type Document struct {
	ID           string            `json:"id"`
	Split        string            `json:"split"`
	Source       string            `json:"source"`
	Type         string            `json:"doc_type"`
	Images       map[string]string `json:"images"`
	Fields       map[string]string `json:"fields"`
	FieldSides   map[string]string `json:"field_sides,omitempty"`
	MRZ          []string          `json:"mrz,omitempty"`
	FaceIdentity string            `json:"face_identity,omitempty"`
}

// Capture is one capture with the gate's expected answer.
type Capture struct {
	ID     string `json:"id"`
	Split  string `json:"split"`
	Source string `json:"source"`
	Kind   string `json:"kind"` // document | selfie
	Image  string `json:"image"`
	Expect string `json:"expect"` // ExpectGood or a reason code
}

// Face is a photograph of a person or an attack rendering of one.
type Face struct {
	ID       string `json:"id"`
	Split    string `json:"split"`
	Source   string `json:"source"`
	Licence  string `json:"licence,omitempty"`
	Identity string `json:"identity"`
	Image    string `json:"image"`
	Attack   string `json:"attack,omitempty"`    // empty for a bona fide photo
	AttackOf string `json:"attack_of,omitempty"` // the bona fide face it was made from
}

// Session is one verification session to run.
type Session struct {
	ID       string            `json:"id"`
	Split    string            `json:"split"`
	Kind     string            `json:"kind"` // Genuine | Impostor | Attack
	Document string            `json:"document"`
	Selfie   string            `json:"selfie,omitempty"`       // a face id; empty for a flow without a selfie
	Retakes  map[string]string `json:"bad_captures,omitempty"` // step → capture id sent before the good one
}

// Load reads dir/corpus.json and checks it (Validate).
func Load(dir string) (*Corpus, error) {
	b, err := os.ReadFile(filepath.Join(dir, CorpusFile))
	if err != nil {
		return nil, fmt.Errorf("evaluation: read corpus: %w", err)
	}
	c := &Corpus{Dir: dir}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("evaluation: %s: %w", CorpusFile, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Save writes c's labels to c.Dir/corpus.json (the images must already be there).
func (c *Corpus) Save() error {
	if err := c.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.Dir, CorpusFile), append(b, '\n'), 0o644)
}

// Validate checks that ids are unique, splits known, every reference resolves, every image
// path stays inside the corpus directory, a session's parts share its split and no identity
// is in both halves. It returns every problem found, joined.
func (c *Corpus) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("evaluation: "+format, a...)) }
	ids := map[string]string{}
	seen := func(kind, id, split string) {
		switch {
		case id == "":
			bad("a %s has no id", kind)
		case ids[id] != "":
			bad("id %q is used twice", id)
		}
		ids[id] = kind
		if split != Calibration && split != HeldOut {
			bad("%s %q: split %q is neither %q nor %q", kind, id, split, Calibration, HeldOut)
		}
	}
	path := func(id, p string) {
		if p == "" || filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "..") {
			bad("%s: image path %q is not inside the corpus", id, p)
		}
	}
	docs := map[string]Document{}
	for _, d := range c.Documents {
		seen("document", d.ID, d.Split)
		docs[d.ID] = d
		if len(d.Images) == 0 {
			bad("document %q has no image", d.ID)
		}
		for _, p := range d.Images {
			path(d.ID, p)
		}
	}
	caps := map[string]Capture{}
	for _, x := range c.Captures {
		seen("capture", x.ID, x.Split)
		caps[x.ID] = x
		path(x.ID, x.Image)
		if x.Kind != "document" && x.Kind != "selfie" {
			bad("capture %q: kind %q", x.ID, x.Kind)
		}
		if x.Expect == "" {
			bad("capture %q has no expected answer", x.ID)
		}
	}
	faces := map[string]Face{}
	identitySplit := map[string]string{}
	for _, f := range c.Faces {
		seen("face", f.ID, f.Split)
		faces[f.ID] = f
		path(f.ID, f.Image)
		if f.Identity == "" {
			bad("face %q has no identity", f.ID)
		}
		if s, ok := identitySplit[f.Identity]; ok && s != f.Split {
			bad("identity %q is in both halves", f.Identity)
		}
		identitySplit[f.Identity] = f.Split
	}
	for _, f := range c.Faces {
		if f.AttackOf != "" {
			if src, ok := faces[f.AttackOf]; !ok || src.Attack != "" {
				bad("face %q: attack_of %q is not a bona fide face", f.ID, f.AttackOf)
			}
		}
	}
	for _, s := range c.Sessions {
		seen("session", s.ID, s.Split)
		d, ok := docs[s.Document]
		if !ok {
			bad("session %q: no document %q", s.ID, s.Document)
		} else if d.Split != s.Split {
			bad("session %q mixes splits with document %q", s.ID, d.ID)
		}
		if s.Selfie != "" {
			if f, ok := faces[s.Selfie]; !ok {
				bad("session %q: no face %q", s.ID, s.Selfie)
			} else if f.Split != s.Split {
				bad("session %q mixes splits with face %q", s.ID, f.ID)
			}
		}
		switch s.Kind {
		case Genuine, Impostor, Attack:
		default:
			bad("session %q: kind %q", s.ID, s.Kind)
		}
		for step, id := range s.Retakes {
			if x, ok := caps[id]; !ok {
				bad("session %q: step %s: no capture %q", s.ID, step, id)
			} else if x.Split != s.Split {
				bad("session %q mixes splits with capture %q", s.ID, id)
			}
		}
	}
	return errors.Join(errs...)
}

// Document returns the document with id.
func (c *Corpus) Document(id string) (Document, bool) {
	for _, d := range c.Documents {
		if d.ID == id {
			return d, true
		}
	}
	return Document{}, false
}

// Face returns the face with id.
func (c *Corpus) Face(id string) (Face, bool) {
	for _, f := range c.Faces {
		if f.ID == id {
			return f, true
		}
	}
	return Face{}, false
}

// Capture returns the capture with id.
func (c *Corpus) Capture(id string) (Capture, bool) {
	for _, x := range c.Captures {
		if x.ID == id {
			return x, true
		}
	}
	return Capture{}, false
}

// Read returns the bytes of the image at path p, relative to the corpus directory; a path
// that leaves the directory (through "..", an absolute path or a symbolic link) is an error.
func (c *Corpus) Read(p string) ([]byte, error) {
	f, err := os.OpenInRoot(c.Dir, p)
	if err != nil {
		return nil, fmt.Errorf("evaluation: image: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxImageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("evaluation: image %s: %w", p, err)
	}
	if len(b) > maxImageBytes {
		return nil, fmt.Errorf("evaluation: image %s is larger than %d bytes", p, maxImageBytes)
	}
	return b, nil
}

// maxImageBytes bounds one corpus image (the API takes 10 MiB per image).
const maxImageBytes = 10 << 20
