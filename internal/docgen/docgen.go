// Package docgen renders labelled, fictional Vietnamese identity documents and photographs
// them like a phone would, for evaluating idstream on documents it was not tuned on.
//
// It is independent of the project's own renderer (internal/cardrender) and readers
// (internal/docread, processors/...): it imports none of them and its templates were drawn from
// the real cards' layouts, each described on its template. Everything is drawn from an
// explicit *rand.Rand (math/rand/v2): the same seed gives the same person, document and
// capture, byte for byte. The package holds no mutable global state; a Renderer is safe for
// concurrent use.
//
// The corpus is split in two (Split): Calibration, on which readers and thresholds may be
// tuned, and HeldOut, on which they are judged. Template variants, text typefaces, the
// cards' security-print backgrounds and the photographs' table textures are partitioned
// between the two halves (see Templates, FontsOf, TintsOf, ScenesOf); the only thing both
// share is the OCR-B face of the machine readable zone, which ICAO 9303 prescribes for every
// real document (each half also has its own monospace stand-ins).
//
// The partition:
//
//	                 Calibration                         HeldOut
//	templates        cmnd-a cccd2016-a cccd2021-a        cmnd-b cccd2016-b cccd2021-b
//	                 cancuoc2024-a passport-a vehreg-a   cancuoc2024-b passport-b vehreg-b
//	text typefaces   DejaVu Sans, DejaVu Serif,          Noto Sans, Noto Serif,
//	                 Liberation Sans, FreeSerif          Liberation Serif, FreeSans
//	MRZ typefaces    OCR-B, DejaVu Sans Mono Bold        OCR-B, Liberation Mono Bold, FreeMono Bold
//	card tints       waves, rosette                      crosshatch, ripples
//	table textures   wood, desk, paper                   fabric, marble, granite
//
// The fonts come from the Debian packages FontPackages lists (fonts-dejavu-core,
// fonts-liberation2, fonts-freefont-ttf, fonts-noto-core, fonts-ocr-b).
//
// Labels follow the public contract (see Document). Two things to know when scoring: the
// 2024 identity card prints "Nơi đăng ký khai sinh / Place of birth" instead of a place of
// origin, labelled place_of_birth; a 12-digit card issued from the holder's 58th birthday
// on is valid without time limit ("Không thời hạn"): it has no expiry_date, its MRZ
// expiry is the filler "<<<<<<" (check digit 0) and Document.NoExpiry is set.
//
// Typical use:
//
//	rd, err := docgen.NewRenderer(docgen.DefaultFontDir)
//	r := rand.New(rand.NewPCG(seed, 0))
//	p := docgen.NewPerson(r, ref)
//	doc, err := rd.Render(p, docgen.ChipIDCard, docgen.HeldOut, r, face)
//	cap := docgen.Photograph(doc.Sides[docgen.StepFront], docgen.HeldOut, r)
//	bad := docgen.BadCapture(doc.Sides[docgen.StepBack], docgen.ReasonGlare, docgen.HeldOut, r)
package docgen

import (
	"errors"
	"fmt"
	"image"
	"math/rand/v2"
	"slices"
	"sort"
)

// Split is one half of the corpus.
type Split int

const (
	// Calibration is the half readers and thresholds may be tuned on.
	Calibration Split = iota
	// HeldOut is the half they are judged on; it shares no template, text typeface,
	// card background or table texture with Calibration.
	HeldOut
)

// String returns "calibration" or "held_out".
func (s Split) String() string {
	switch s {
	case Calibration:
		return "calibration"
	case HeldOut:
		return "held_out"
	}
	return fmt.Sprintf("Split(%d)", int(s))
}

// ParseSplit reads "calibration" or "held_out".
func ParseSplit(name string) (Split, error) {
	for _, s := range []Split{Calibration, HeldOut} {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("%w: %q (want calibration or held_out)", ErrSplit, name)
}

// MarshalText writes the split's name (JSON labels carry "calibration" or "held_out").
func (s Split) MarshalText() ([]byte, error) {
	if s != Calibration && s != HeldOut {
		return nil, fmt.Errorf("%w: %d", ErrSplit, int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a split's name.
func (s *Split) UnmarshalText(b []byte) error {
	v, err := ParseSplit(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// Document types, as the public API names them (extracted.document_type).
const (
	LegacyIDCard        = "legacy_id_card"       // 9-digit CMND
	IDCard              = "id_card"              // 12-digit citizen identity card without chip (2016)
	ChipIDCard          = "chip_id_card"         // chip citizen identity card (2021) and identity card (2024)
	Passport            = "passport"             // passport data page
	VehicleRegistration = "vehicle_registration" // vehicle registration certificate
)

// DocumentTypes lists every document type Render accepts.
var documentTypes = []string{LegacyIDCard, IDCard, ChipIDCard, Passport, VehicleRegistration}

// DocumentTypes returns the document types Render accepts.
func DocumentTypes() []string { return slices.Clone(documentTypes) }

// Step names of the public API under which a document's sides are captured.
const (
	StepFront    = "document_front"
	StepBack     = "document_back"
	StepPassport = "passport"
)

// Field names of Document.Fields (the public contract's extracted fields).
const (
	FieldIDNumber         = "id_number"
	FieldFullName         = "full_name"
	FieldDateOfBirth      = "date_of_birth"
	FieldSex              = "sex"
	FieldNationality      = "nationality"
	FieldPlaceOfOrigin    = "place_of_origin"
	FieldPlaceOfBirth     = "place_of_birth"
	FieldPlaceOfResidence = "place_of_residence"
	FieldIssueDate        = "issue_date"
	FieldExpiryDate       = "expiry_date"
	FieldIdentifyingMarks = "identifying_marks"
	FieldEthnicity        = "ethnicity"
	FieldReligion         = "religion"
	FieldPassportNumber   = "passport_number"
	FieldOwner            = "owner"
	FieldAddress          = "address"
	FieldBrand            = "brand"
	FieldModel            = "model"
	FieldEngineNumber     = "engine_number"
	FieldChassisNumber    = "chassis_number"
	FieldColor            = "color"
	FieldRegistrationDate = "registration_date"
	FieldPlate            = "plate"
)

// Document is a rendered document with its labels.
//
// Fields holds the truth as the public contract writes it: names in capitals with
// diacritics as printed; dates as YYYY-MM-DD; sex M or F; nationality VNM; places and
// addresses exactly as printed, lines joined with single spaces. A field is present only
// when the document prints it (a card without expiry, "Không thời hạn", has no expiry_date;
// the 9-digit card prints no sex, nationality or expiry). FieldSides tells on which side
// (step name) each field is printed, so an evaluator can score per capture.
type Document struct {
	Type       string                 `json:"document_type"` // one of the document type constants
	Template   string                 `json:"template"`      // template name (see Templates)
	Split      Split                  `json:"split"`         // the half the template, fonts and background belong to
	Sides      map[string]image.Image `json:"-"`             // the flat, unphotographed sides keyed by step name
	MRZ        []string               `json:"mrz,omitempty"` // the machine readable zone's lines, nil when none
	MRZSide    string                 `json:"mrz_side,omitempty"`
	Fields     map[string]string      `json:"fields"`      // truth, normalised as above
	FieldSides map[string]string      `json:"field_sides"` // field name → step name
	Fonts      []string               `json:"fonts"`       // typeface families used (text and MRZ)
	Background string                 `json:"background"`  // the security-print pattern (see TintsOf)
	NoExpiry   bool                   `json:"no_expiry,omitempty"`

	layout map[string][]textBox // text drawn per side (tests)
}

// TemplateInfo describes a template.
type TemplateInfo struct {
	Name  string
	Type  string
	Split Split
	Sides []string // step names in the order they are rendered
	Real  string   // the real document whose layout it follows
}

// template is a TemplateInfo with its drawing function.
type template struct {
	TemplateInfo
	draw func(g *gen) error
}

// Templates returns every template, sorted by name.
func Templates() []TemplateInfo {
	var out []TemplateInfo
	for _, t := range allTemplates() {
		out = append(out, t.TemplateInfo)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FontsOf returns the typeface family names a split uses (text and MRZ).
func FontsOf(s Split) []string {
	var out []string
	for _, f := range textFamilies[s] {
		out = append(out, f.Name)
	}
	for _, f := range mrzFamilies[s] {
		out = append(out, f.Name)
	}
	return out
}

// TintsOf returns the security-print background patterns a split uses.
func TintsOf(s Split) []string { return slices.Clone(tintPatterns[s]) }

// Renderer draws documents. It holds the parsed fonts; create it with NewRenderer. It is
// safe for concurrent use.
type Renderer struct {
	text map[Split][]*loadedFamily
	mrz  map[Split][]*loadedFamily
	// width, when non-zero, fixes the rendering width in pixels (tests).
	width int
	// plain skips the security-print lines (tests of layout and labels over many seeds).
	plain bool
}

// NewRenderer loads every typeface both splits use from fontDir (DefaultFontDir on Debian).
// A missing or unreadable font file is an error naming the family and its Debian package.
func NewRenderer(fontDir string) (*Renderer, error) {
	rd := &Renderer{text: map[Split][]*loadedFamily{}, mrz: map[Split][]*loadedFamily{}}
	var errs []error
	cache := map[string]*loadedFamily{}
	load := func(f fontFamily) *loadedFamily {
		if lf, ok := cache[f.Regular]; ok {
			return lf
		}
		lf, err := loadFamily(fontDir, f)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		cache[f.Regular] = lf
		return lf
	}
	for _, s := range []Split{Calibration, HeldOut} {
		for _, f := range textFamilies[s] {
			rd.text[s] = append(rd.text[s], load(f))
		}
		for _, f := range mrzFamilies[s] {
			rd.mrz[s] = append(rd.mrz[s], load(f))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rd, nil
}

// Errors of Render.
var (
	ErrDocumentType = errors.New("docgen: unknown document type")
	ErrSplit        = errors.New("docgen: unknown split")
)

// Render draws a document of docType for p with one of split's templates, chosen with r,
// which also draws the fonts, background, issue date and rendering width (900–1400 px for
// the card's long side). face fills the portrait box (scaled to cover it and cropped); nil
// draws a neutral silhouette. The same p, arguments and r state give the same Document.
func (rd *Renderer) Render(p Person, docType string, split Split, r *rand.Rand, face image.Image) (Document, error) {
	if split != Calibration && split != HeldOut {
		return Document{}, fmt.Errorf("%w: %d", ErrSplit, int(split))
	}
	var cands []template
	for _, t := range allTemplates() {
		if t.Type == docType && t.Split == split {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return Document{}, fmt.Errorf("%w: %q (have %v)", ErrDocumentType, docType, documentTypes)
	}
	return rd.render(p, pick(r, cands), r, face)
}

// RenderTemplate is Render with a named template (see Templates).
func (rd *Renderer) RenderTemplate(p Person, name string, r *rand.Rand, face image.Image) (Document, error) {
	for _, t := range allTemplates() {
		if t.Name == name {
			return rd.render(p, t, r, face)
		}
	}
	return Document{}, fmt.Errorf("docgen: unknown template %q", name)
}

func (rd *Renderer) render(p Person, t template, r *rand.Rand, face image.Image) (Document, error) {
	g := &gen{
		p: p, r: r, face: face, faces: faceCache{}, plain: rd.plain,
		doc: Document{
			Type: t.Type, Template: t.Name, Split: t.Split, Sides: map[string]image.Image{},
			Fields: map[string]string{}, FieldSides: map[string]string{},
			layout: map[string][]textBox{},
		},
	}
	g.width = 900 + r.IntN(501)
	g.textScale = 0.96 + r.Float64()*0.07
	if rd.width > 0 {
		g.width = rd.width
	}
	texts := rd.text[t.Split]
	g.label = pick(r, texts)
	g.value = g.label
	if r.IntN(3) == 0 {
		g.value = pick(r, texts)
	}
	g.mrzFont = pick(r, rd.mrz[t.Split])
	if r.IntN(3) != 0 { // OCR-B most of the time, as on real documents
		g.mrzFont = rd.mrz[t.Split][0]
	}
	g.tint = pick(r, tintPatterns[t.Split])
	g.doc.Background = g.tint
	if err := t.draw(g); err != nil {
		return Document{}, err
	}
	fonts := []string{g.label.Name}
	if g.value != g.label {
		fonts = append(fonts, g.value.Name)
	}
	if g.doc.MRZ != nil {
		fonts = append(fonts, g.mrzFont.Name)
	}
	g.doc.Fonts = fonts
	return g.doc, nil
}

// gen is the state of one rendering.
type gen struct {
	p       Person
	r       *rand.Rand
	face    image.Image
	faces   faceCache
	width   int // pixels of the long side
	label   *loadedFamily
	value   *loadedFamily
	mrzFont *loadedFamily
	tint    string
	plain   bool
	// textScale varies all type sizes of a document by a few per cent (print runs differ).
	textScale float64
	doc       Document
}

// field records a printed value as truth.
func (g *gen) field(name, side, value string) {
	g.doc.Fields[name] = value
	g.doc.FieldSides[name] = side
}

// canvas starts a side of wmm × hmm millimetres, with its personalisation layer's offset.
func (g *gen) canvas(wmm, hmm float64) *canvas {
	c := newCanvas(wmm, hmm, g.width, g.faces)
	c.poff = pt{(g.r.Float64()*2 - 1) * 0.35, (g.r.Float64()*2 - 1) * 0.25}
	return c
}

func (g *gen) st(f *loadedFamily, bold bool, size float64, col interface {
	RGBA() (r, g, b, a uint32)
}) textStyle {
	ft := f.regular
	if bold {
		ft = f.bold
	}
	return textStyle{f: ft, size: size * g.textScale, col: col}
}

// vst is the style of a personalised value (g.value's family, printed in the second pass).
func (g *gen) vst(bold bool, size float64, col interface {
	RGBA() (r, g, b, a uint32)
}) textStyle {
	st := g.st(g.value, bold, size, col)
	st.personal = true
	return st
}

// side stores a finished side under its step name.
func (g *gen) side(step string, c *canvas) {
	g.doc.Sides[step] = c.img
	g.doc.layout[step] = c.texts
}

// FieldsOn returns the truth fields printed on the side captured at step.
func (d Document) FieldsOn(step string) map[string]string {
	out := map[string]string{}
	for f, s := range d.FieldSides {
		if s == step {
			out[f] = d.Fields[f]
		}
	}
	return out
}
