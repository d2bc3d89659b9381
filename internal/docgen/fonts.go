package docgen

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
)

// DefaultFontDir is where Debian installs font packages.
const DefaultFontDir = "/usr/share/fonts"

// fontFamily is a typeface with its Debian package and its files under the font directory.
type fontFamily struct {
	Name    string
	Package string
	Regular string // path relative to the font directory
	Bold    string // "" when the family has no bold; Regular is used
}

// Text typefaces. Every one covers the Vietnamese alphabet (checked by a test).
//
// Calibration: DejaVu Sans, DejaVu Serif, Liberation Sans, FreeSerif.
// HeldOut: Noto Sans, Noto Serif, Liberation Serif, FreeSans.
var textFamilies = map[Split][]fontFamily{
	Calibration: {
		{"DejaVu Sans", "fonts-dejavu-core", "truetype/dejavu/DejaVuSans.ttf", "truetype/dejavu/DejaVuSans-Bold.ttf"},
		{"DejaVu Serif", "fonts-dejavu-core", "truetype/dejavu/DejaVuSerif.ttf", "truetype/dejavu/DejaVuSerif-Bold.ttf"},
		{"Liberation Sans", "fonts-liberation2", "truetype/liberation2/LiberationSans-Regular.ttf", "truetype/liberation2/LiberationSans-Bold.ttf"},
		{"FreeSerif", "fonts-freefont-ttf", "truetype/freefont/FreeSerif.ttf", "truetype/freefont/FreeSerifBold.ttf"},
	},
	HeldOut: {
		{"Noto Sans", "fonts-noto-core", "truetype/noto/NotoSans-Regular.ttf", "truetype/noto/NotoSans-Bold.ttf"},
		{"Noto Serif", "fonts-noto-core", "truetype/noto/NotoSerif-Regular.ttf", "truetype/noto/NotoSerif-Bold.ttf"},
		{"Liberation Serif", "fonts-liberation2", "truetype/liberation2/LiberationSerif-Regular.ttf", "truetype/liberation2/LiberationSerif-Bold.ttf"},
		{"FreeSans", "fonts-freefont-ttf", "truetype/freefont/FreeSans.ttf", "truetype/freefont/FreeSansBold.ttf"},
	},
}

// ocrB is the MRZ typeface ICAO 9303 prescribes. It is the one face both splits share: every
// real machine readable zone is printed in it, so a held-out half without it would not be a
// sample of real documents. OCRBS.otf (the "Sharp" cut) because OCRB.otf's '8' and '<' use a
// CFF operator golang.org/x/image/font/sfnt cannot draw.
var ocrB = fontFamily{"OCR-B", "fonts-ocr-b", "opentype/ocr-b/OCRBS.otf", ""}

// SharedMRZFont names the only typeface both splits use (see ocrB).
const SharedMRZFont = "OCR-B"

// mrzFamilies are the MRZ typefaces of each split: OCR-B in both (see ocrB) and monospace
// stand-ins (bold cuts, as a zone's print is dense) that differ: DejaVu Sans Mono Bold for
// Calibration; Liberation Mono Bold and FreeMono Bold for HeldOut.
var mrzFamilies = map[Split][]fontFamily{
	Calibration: {ocrB, {"DejaVu Sans Mono Bold", "fonts-dejavu-core", "truetype/dejavu/DejaVuSansMono-Bold.ttf", ""}},
	HeldOut: {ocrB,
		{"Liberation Mono Bold", "fonts-liberation2", "truetype/liberation2/LiberationMono-Bold.ttf", ""},
		{"FreeMono Bold", "fonts-freefont-ttf", "truetype/freefont/FreeMonoBold.ttf", ""}},
}

// FontPackages lists the Debian packages whose fonts the renderer loads.
func FontPackages() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[Split][]fontFamily{textFamilies, mrzFamilies} {
		for _, s := range []Split{Calibration, HeldOut} {
			for _, f := range m[s] {
				if !seen[f.Package] {
					seen[f.Package] = true
					out = append(out, f.Package)
				}
			}
		}
	}
	return out
}

// loadedFamily is a family with its parsed files.
type loadedFamily struct {
	fontFamily
	regular, bold *opentype.Font
}

func loadFamily(dir string, f fontFamily) (*loadedFamily, error) {
	read := func(rel string) (*opentype.Font, error) {
		path := filepath.Join(dir, rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("docgen: font %s (Debian package %s): %w", f.Name, f.Package, err)
		}
		ft, err := opentype.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("docgen: font %s (%s, Debian package %s): %w", f.Name, path, f.Package, err)
		}
		return ft, nil
	}
	lf := &loadedFamily{fontFamily: f}
	var err error
	if lf.regular, err = read(f.Regular); err != nil {
		return nil, err
	}
	lf.bold = lf.regular
	if f.Bold != "" {
		if lf.bold, err = read(f.Bold); err != nil {
			return nil, err
		}
	}
	return lf, nil
}

// faceCache makes font faces for one rendering; faces are not safe for concurrent use, so
// each rendering has its own cache.
type faceCache map[faceKey]font.Face

type faceKey struct {
	f    *opentype.Font
	size int // tenths of a pixel
}

func (fc faceCache) face(f *opentype.Font, px float64) font.Face {
	k := faceKey{f, int(px*10 + 0.5)}
	if fa, ok := fc[k]; ok {
		return fa
	}
	fa, err := opentype.NewFace(f, &opentype.FaceOptions{Size: float64(k.size) / 10, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		// NewFace fails only for invalid options; the size is always positive here.
		panic(err)
	}
	fc[k] = fa
	return fa
}
