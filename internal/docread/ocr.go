// Package docread reads identity documents with Tesseract (through gosseract): the ICAO machine
// readable zone of cards and passports, validated by its check digits, and the printed fields
// of the Vietnamese identity cards (the 12-digit chip card, the 12-digit card without chip and
// the 9-digit card) and of the vehicle registration card, with per-field confidence and
// Vietnamese text normalisation.
//
// Printed fields are found by their labels, not by position: ReadPage rectifies the document
// and reads all of its text once (words with boxes), and Fields finds each field's label
// among the words (the Vietnamese label or its English subtitle, matched after folding case
// and diacritics with a few OCR edits tolerated) and takes the value right of it on its line,
// or on the line(s) below when the label ends its line, up to the next label; numbers and
// dates are read again from their boxes with a digit whitelist and validated. The fixed
// layouts (ChipIDFront, ...) and ReadCard remain for the fallback and for callers that know
// the template.
//
// A Reader holds pools of Tesseract clients, one pool per engine configuration (Vietnamese
// text, digits, codes, MRZ); a gosseract client is not safe for concurrent use, so each call
// takes a client from its pool and gives it back. A Reader is safe for concurrent use.
//
// Tesseract runs OpenMP threads unless the process starts with OMP_THREAD_LIMIT=1, which makes
// it about ten times slower on small machines; the variable must be set before the process
// starts (the Makefile exports it; tests re-execute themselves with it).
package docread

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/otiai10/gosseract/v2"
)

// DefaultTessdataDir is where Debian's tesseract-ocr-* packages put their models.
const DefaultTessdataDir = "/usr/share/tesseract-ocr/5/tessdata"

// Confidence is an OCR confidence in [0, 1] (Tesseract's word confidence / 100, averaged).
type Confidence float64

// Config configures New. Zero fields take the documented defaults except MRZModelDir.
type Config struct {
	// TessdataDir holds the text models (TextLanguage and CodeLanguage .traineddata);
	// default DefaultTessdataDir.
	TessdataDir string
	// MRZModelDir holds the MRZ model (MRZModel + ".traineddata"), e.g. the repository's
	// models/ directory. Required.
	MRZModelDir string
	// MRZModel is the MRZ model name; default "ocrb_int".
	MRZModel string
	// TextLanguage is the Tesseract language for printed Vietnamese text; default "vie".
	TextLanguage string
	// CodeLanguage is the language for digits, dates and alphanumeric codes (read with a
	// character whitelist); default "eng".
	CodeLanguage string
	// PoolSize is the number of clients per engine, the concurrency a Reader allows;
	// default 2.
	PoolSize int
}

// engine names one Tesseract configuration of a Reader.
type engine int

const (
	engineText   engine = iota // TextLanguage, no whitelist
	engineDigits               // CodeLanguage, digits, '/' and '-'
	engineCode                 // CodeLanguage, upper-case letters, digits, '-' and '.'
	engineMRZ                  // MRZ model, MRZ alphabet
	engineCount
)

const (
	mrzAlphabet  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<"
	digitsChars  = "0123456789/-"
	codeAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-."
)

// Reader reads documents. Create it with New and Close it when done.
type Reader struct {
	pools [engineCount]chan *gosseract.Client
}

// New checks the model files and builds the client pools. Models load lazily on each
// client's first use.
func New(cfg Config) (*Reader, error) {
	if cfg.TessdataDir == "" {
		cfg.TessdataDir = DefaultTessdataDir
	}
	if cfg.MRZModel == "" {
		cfg.MRZModel = "ocrb_int"
	}
	if cfg.TextLanguage == "" {
		cfg.TextLanguage = "vie"
	}
	if cfg.CodeLanguage == "" {
		cfg.CodeLanguage = "eng"
	}
	if cfg.PoolSize <= 0 {
		cfg.PoolSize = 2
	}
	if cfg.MRZModelDir == "" {
		return nil, errors.New("ocr: Config.MRZModelDir is required")
	}
	type spec struct {
		dir, lang, whitelist string
	}
	specs := [engineCount]spec{
		engineText:   {cfg.TessdataDir, cfg.TextLanguage, ""},
		engineDigits: {cfg.TessdataDir, cfg.CodeLanguage, digitsChars},
		engineCode:   {cfg.TessdataDir, cfg.CodeLanguage, codeAlphabet},
		engineMRZ:    {cfg.MRZModelDir, cfg.MRZModel, mrzAlphabet},
	}
	for _, s := range specs {
		p := filepath.Join(s.dir, s.lang+".traineddata")
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("ocr: model %s: %w", p, err)
		}
	}
	r := &Reader{}
	for e, s := range specs {
		r.pools[e] = make(chan *gosseract.Client, cfg.PoolSize)
		for i := 0; i < cfg.PoolSize; i++ {
			c := gosseract.NewClient()
			err := errors.Join(c.SetTessdataPrefix(s.dir), c.SetLanguage(s.lang), c.DisableOutput(),
				// Printed documents carry no white-on-dark text: Tesseract's second pass over
				// every low-confidence line, inverted, only costs time (a third of a page).
				c.SetVariable("tessedit_do_invert", "0"))
			if s.whitelist != "" {
				err = errors.Join(err, c.SetWhitelist(s.whitelist))
			}
			if err == nil {
				err = warmUp(c)
			}
			if err != nil {
				c.Close()
				r.Close()
				return nil, fmt.Errorf("ocr: configure %s client: %w", s.lang, err)
			}
			r.pools[e] <- c
		}
	}
	return r, nil
}

// warmUp initialises c's Tesseract API (loads its model) on a blank 8 × 8 image. Until the API
// is initialised, a page segmentation mode set on the client is lost (initialisation resets
// it), so without this the first read of every client ran in another mode than later ones,
// and reading the same image twice could give two answers.
func warmUp(c *gosseract.Client) error {
	blank := append([]byte("P5\n8 8\n255\n"), bytes.Repeat([]byte{255}, 64)...)
	if err := c.SetImageFromBytes(blank); err != nil {
		return err
	}
	_, err := c.Text()
	return err
}

// Close frees every client. Calls in progress must have returned.
func (r *Reader) Close() error {
	var errs []error
	for _, p := range r.pools {
		if p == nil {
			continue
		}
		for len(p) > 0 {
			errs = append(errs, (<-p).Close())
		}
	}
	return errors.Join(errs...)
}

// boxes runs engine e on the encoded image (PGM) with page segmentation mode psm and returns
// its words with their boxes and places in the layout.
func (r *Reader) boxes(e engine, img []byte, psm gosseract.PageSegMode) ([]gosseract.BoundingBox, error) {
	c := <-r.pools[e]
	defer func() { r.pools[e] <- c }()
	if err := c.SetPageSegMode(psm); err != nil {
		return nil, fmt.Errorf("ocr: page segmentation: %w", err)
	}
	if err := c.SetImageFromBytes(img); err != nil {
		return nil, fmt.Errorf("ocr: set image: %w", err)
	}
	boxes, err := c.GetBoundingBoxesVerbose()
	if err != nil {
		return nil, fmt.Errorf("ocr: recognise: %w", err)
	}
	return boxes, nil
}

// line is one line of recognised text with its mean word confidence.
type line struct {
	text string
	conf Confidence
	top  int // the highest word's top, in the image's pixels
	// left and right are the line's horizontal extent (its words' boxes), in the image's pixels.
	left, right int
}

// recognise runs engine e on the encoded image (PGM) with page segmentation mode psm and
// returns the text lines in reading order.
func (r *Reader) recognise(e engine, img []byte, psm gosseract.PageSegMode) ([]line, error) {
	boxes, err := r.boxes(e, img, psm)
	if err != nil {
		return nil, err
	}
	var out []line
	var sum float64
	var n int
	key := [3]int{-1, -1, -1}
	flush := func() {
		if n > 0 {
			out[len(out)-1].conf = Confidence(sum / float64(n) / 100)
		}
		sum, n = 0, 0
	}
	for _, b := range boxes {
		k := [3]int{b.BlockNum, b.ParNum, b.LineNum}
		if k != key {
			flush()
			out = append(out, line{top: b.Box.Min.Y, left: b.Box.Min.X, right: b.Box.Max.X})
			key = k
		}
		l := &out[len(out)-1]
		l.top = min(l.top, b.Box.Min.Y)
		l.left, l.right = min(l.left, b.Box.Min.X), max(l.right, b.Box.Max.X)
		if l.text != "" {
			l.text += " "
		}
		l.text += b.Word
		sum += b.Confidence
		n++
	}
	flush()
	return out, nil
}
