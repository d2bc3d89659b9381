// Package imagequality is the real-time capture quality gate in pure Go: it measures sharpness
// (variance of the Laplacian), glare (specular highlights: a saturated core that hides the
// print, with a halo that falls off smoothly; see glare.go), brightness (mean luma),
// minimum size and, for documents, framing: a card- or passport-page-shaped quadrilateral
// wholly inside the frame at a usable size (straight image edges of luma, then of chroma,
// found with a Hough transform, see locateDocument). It says whether an image is good enough to go on to OCR
// and face work. Face checks (no_face, multiple_faces, face_too_small) need the face
// detector and are made by the quality processor group.
//
// Every measure is taken on the luma plane (the document search also on the chroma planes)
// of a copy area-averaged down to WorkingWidth pixels wide (images narrower than that are measured as they are), so scores do not depend
// on the capture resolution and a 1920×1080 frame is assessed in a few milliseconds.
package imagequality

import (
	"image"
	"slices"
)

// Version identifies the gate's algorithm and default thresholds; it is reported with every
// assessment (QualityAssessed.gate_version) and changes whenever scores would change.
const Version = "quality-go-5"

// WorkingWidth is the width, in pixels, of the copy every measure is taken on.
const WorkingWidth = 640

// Reasons, from the public contract's list (API.md, document step).
const (
	ReasonBlurry     = "blurry"
	ReasonGlare      = "glare"
	ReasonTooDark    = "too_dark"
	ReasonNotFramed  = "not_framed"
	ReasonNoDocument = "no_document"
)

// Framing values.
const (
	FramingOK        = "ok"
	FramingNotFramed = "not_framed"
)

// Kind says what a capture is meant to show.
type Kind int

// Kinds of capture.
const (
	Document Kind = iota // a side of an ID document or passport page
	Selfie               // the user's face
)

// String returns "document" or "selfie".
func (k Kind) String() string {
	switch k {
	case Document:
		return "document"
	case Selfie:
		return "selfie"
	default:
		return "unknown"
	}
}

// Thresholds are the gate's pass limits, each with the figure it was chosen from (measured
// by the package's tests on cardrender renders, variants of them and the real face photos of
// internal/face/facetest; none on a held-out set). A capture fails when any limit is crossed.
type Thresholds struct {
	// MinBlur is the minimum Laplacian variance (sharpness) of a document; lower → "blurry".
	// 100: a sharp generated card with 24 px text scores 6000–7300 at any capture width from
	// 960 to 2560 px; blurred to a Gaussian σ of about 0.7 working-width pixels it scores
	// about 700 (still legible), at σ 1.1–1.2 px 70–115 (strokes merge), at σ 1.7 px and
	// beyond under 20. 100 sits at that edge, which is also the figure long used with
	// OpenCV's variance-of-Laplacian focus measure.
	MinBlur float64
	// MinBlurSelfie is the same for a selfie, whose skin and background hold less detail
	// than print. 25: a sharp portrait photo (the face test photos of models/MODELS.md)
	// scores 60 alone and 88 on a plain frame; the same frame through a 3×3 box blur scores
	// 9.5, and 4 or less beyond.
	MinBlurSelfie float64
	// Specular defines what the glare measure counts as a specular highlight (glare.go); the
	// zero value means DefaultSpecular().
	Specular Specular
	// MaxGlare is the largest share of a document capture that specular highlights may
	// cover (their saturated cores; see glare.go for what is a highlight and what is only a
	// white area); more → "glare". 0.001 (a saturated core of about 10 px radius at
	// 640×480, the height of a field's text line on a card filling three quarters of the
	// frame): on TestGlareSet every good capture (white and tinted MRZ zones, white cards,
	// cards on white paper, over-exposed but legible, stroke-sized glints) scores 0, since
	// no white area passes the halo test, and the specular highlights that are found score
	// 0.0029 and more. The old measure (any large region of luma ≥ 250, limit 0.02) sent
	// back every card with a white MRZ zone.
	MaxGlare float64
	// MinBrightness is the minimum mean luma 0..255 of the frame, or of the document when
	// one is found whole; lower → "too_dark". 40: below it, text and facial detail sink
	// into sensor noise.
	MinBrightness float64
	// MaxBrightness and MinWashedOutInk together say a document capture is washed out
	// (→ "glare"): its mean luma above MaxBrightness and its darkest 1 % (the print's ink)
	// no darker than MinWashedOutInk. 230 and 128: above a mean of 230 most of the frame is
	// near white; a card over-exposed 20 % on a light table (mean 231–235, TestGlareSet)
	// keeps its ink at 30–60 and stays legible, so it passes, while a washed-out capture
	// whose ink has been lifted above 128 (TestOverexposedImageIsGlare: 207) fails. The
	// darkest 0.2 % is taken so that a card with little print still shows its ink.
	MaxBrightness   float64
	MinWashedOutInk float64
	// MinWidth×MinHeight is the minimum size of a document capture in pixels, in either
	// orientation; smaller → "not_framed". 640×480: below VGA the text of a card filling the
	// frame is under ~8 px high. A selfie has no frame size limit: its face must be large
	// enough for the face models (the quality group's SelfieFraming.MinFacePixels), and an
	// ordinary portrait cropped to 600 px was sent back as not_framed.
	MinWidth  int
	MinHeight int
	// MinDocumentArea is the smallest share of the frame a document's quadrilateral must
	// cover; smaller (too far) → "not_framed". 0 turns the document framing check off.
	// 0.09, from the text height OCR needs: a card's smallest print (its field labels) is
	// about 1.6 % of the card's width (13 px on an 800 px card). At 0.09 an ID-1 card spans
	// 33 % of a 4:3 frame's width (0.33² / 1.586 / 0.75 ≈ 0.092): about 530 px on a
	// 1600×1200 capture, labels about 8.5 px high, the least OCR reads (MinWidth's 8 px).
	// A passport page of the same width covers more. docgen's good captures put the card at
	// 35–80 % of the width (area 0.10 and up), and the old 0.2 (half the width) sent 35–48 %
	// captures back; the framing set's too-far captures (18–25 % of the width, area ≤ 0.05)
	// stay caught (TestDocumentFramingAccuracy).
	MinDocumentArea float64
	// MaxFaceGlare is the largest share of a selfie's face box that specular highlights may
	// cover; more → "glare". The background of a selfie is never judged for glare: a white
	// wall or a bright window behind a person hides nothing the service needs. 0.05: the 22
	// faces of the real group photos (models/testimages) measure 0 (no specular highlight
	// found on any); a synthetic forehead highlight (peak +420 levels, σ 22 px on a 280 px
	// face) covers 0.24 of the skin area (TestSelfieFaces).
	MaxFaceGlare float64
	// MaxFaceSaturated is the largest share of the face box that may be clipped white (a
	// face washed out by a flash or the sun); more → "glare". 0.25: the same 22 faces measure
	// 0–0.11 (the highest a face in full sun, TestRealFaces); the test portrait lit 1.9× is
	// sent back (TestSelfieFaces).
	MaxFaceSaturated float64
	// MinFaceBlur is the minimum Laplacian variance of a selfie's face (its skin area, at
	// FaceWorkingWidth); lower → "blurry". It replaces MinBlurSelfie once the face is found:
	// a sharp face before a soft background (an ordinary portrait) is sharp, where the whole
	// frame's figure sent a third of the real portraits back. 50: the 22 faces of the real
	// group photos, as photographed and scaled to 0.4, measure 70–1130; blurred by a
	// Gaussian of σ 1.3 % of the face's width (a 3-pass box blur of radius 1 at a 110 px
	// face) 10–44, and of σ 0.9 % (radius 2 at 250 px) 15–97 (TestRealFaces logs them).
	MinFaceBlur float64
	// MinFaceBrightness is the minimum mean luma of the face's skin area; lower → "too_dark".
	// 50: the 22 real faces measure 68–174 (the darkest a face in shade, TestRealFaces); the
	// test portrait at a quarter of its light measures about 35. Once the face is found it
	// replaces the frame's MinBrightness: a lit face in a dark room is fine.
	MinFaceBrightness float64
}

// DefaultThresholds returns the thresholds documented on Thresholds' fields.
func DefaultThresholds() Thresholds {
	return Thresholds{
		Specular:          DefaultSpecular(),
		MinBlur:           100,
		MinBlurSelfie:     25,
		MaxGlare:          0.001,
		MinBrightness:     40,
		MaxBrightness:     230,
		MinWashedOutInk:   128,
		MinWidth:          640,
		MinHeight:         480,
		MinDocumentArea:   0.09,
		MaxFaceGlare:      0.05,
		MaxFaceSaturated:  0.25,
		MinFaceBrightness: 50,
		MinFaceBlur:       50,
	}
}

// Result is one assessment.
type Result struct {
	Passed     bool
	Blur       float64  // variance of the 3×3 Laplacian of luma at the working width; higher is sharper
	Glare      float64  // fraction 0..1 of the image in the saturated cores of specular highlights
	Brightness float64  // mean luma 0..255
	Framing    string   // FramingOK | FramingNotFramed
	Reasons    []string // empty (not nil) when Passed; in the order blurry, glare, too_dark, then not_framed or no_document
	Width      int      // of the assessed image
	Height     int
	// Document is the document's outline found in a document capture, in image pixels (the
	// whole frame when the picture is cropped to the document); zero when none was found or
	// the framing check did not run. DocumentArea is its share of the frame, 0..1.
	Document     Quad
	DocumentArea float64
}

// Gate assesses images against fixed thresholds. It holds no mutable state and is safe for
// concurrent use.
type Gate struct {
	t Thresholds
}

// NewGate returns a gate using t (a zero t.Specular takes DefaultSpecular()).
func NewGate(t Thresholds) *Gate {
	if t.Specular == (Specular{}) {
		t.Specular = DefaultSpecular()
	}
	return &Gate{t: t}
}

// Thresholds returns the gate's thresholds.
func (g *Gate) Thresholds() Thresholds { return g.t }

// Assess measures img and judges it against the gate's thresholds: a selfie's sharpness
// against MinBlurSelfie, a document's against MinBlur. A document fails with "glare" when
// specular highlights cover more than MaxGlare of it or it is washed out; a selfie is never
// judged for glare on the whole frame (its face's exposure is judged by AssessFace, once the
// face is found). Brightness (too_dark) and size limits are shared, a document found whole
// judged by its own brightness instead of the frame's (a lit card on a dark table). A
// document capture large enough to judge (and MinDocumentArea > 0) is also searched for the
// document (locateDocument): none found → "no_document"; cut off by the frame's edge or
// smaller than MinDocumentArea → "not_framed"; found whole, or the picture cropped to a
// document's shape → framing ok. Face framing is judged by the quality group with the face
// detector. A nil or empty image fails with "not_framed". Assess never panics on a valid
// image.Image.
func (g *Gate) Assess(img image.Image, kind Kind) Result {
	res := Result{Framing: FramingOK, Reasons: []string{}}
	if img == nil || img.Bounds().Empty() {
		res.Framing = FramingNotFramed
		res.Reasons = append(res.Reasons, ReasonNotFramed)
		return res
	}
	b := img.Bounds()
	res.Width, res.Height = b.Dx(), b.Dy()

	p := downscaleLuma(img, WorkingWidth)
	res.Brightness = p.mean()
	res.Blur = p.laplacianVariance()
	res.Glare, _ = p.specularGlare(g.t.Specular)

	minBlur := g.t.MinBlur
	if kind == Selfie {
		minBlur = g.t.MinBlurSelfie
	}
	if res.Blur < minBlur {
		res.Reasons = append(res.Reasons, ReasonBlurry)
	}
	if kind == Document && (res.Glare > g.t.MaxGlare || g.washedOut(p, res.Brightness)) {
		res.Reasons = append(res.Reasons, ReasonGlare)
	}
	if res.Brightness < g.t.MinBrightness {
		res.Reasons = append(res.Reasons, ReasonTooDark)
	}
	tooDark := len(res.Reasons)
	switch {
	case kind == Document && !g.bigEnough(res.Width, res.Height):
		res.Framing = FramingNotFramed
		res.Reasons = append(res.Reasons, ReasonNotFramed)
	case kind == Document && g.t.MinDocumentArea > 0:
		d := locateDocument(p, img, res.Width, res.Height, g.t.MinDocumentArea)
		res.Document, res.DocumentArea = d.quad, d.area
		switch d.verdict {
		case docNone:
			res.Framing = FramingNotFramed
			res.Reasons = append(res.Reasons, ReasonNoDocument)
		case docCutOff, docTooFar:
			res.Framing = FramingNotFramed
			res.Reasons = append(res.Reasons, ReasonNotFramed)
		default:
			// A lit card on a dark table is fine: once the document is found whole, its own
			// brightness replaces the frame's, as a selfie's face's does.
			if res.Brightness < g.t.MinBrightness && p.meanInside(d.quad, float64(p.w)/float64(res.Width)) >= g.t.MinBrightness {
				res.Reasons = slices.Delete(res.Reasons, tooDark-1, tooDark)
			}
		}
	}
	res.Passed = len(res.Reasons) == 0
	return res
}

// washedOut says a document capture is over-exposed to the point its print is gone: bright
// on average and with no dark ink left.
func (g *Gate) washedOut(p plane, mean float64) bool {
	return g.t.MaxBrightness > 0 && mean > g.t.MaxBrightness && p.darkest(0.002) >= g.t.MinWashedOutInk
}

// bigEnough accepts the image in either orientation.
func (g *Gate) bigEnough(w, h int) bool {
	return (w >= g.t.MinWidth && h >= g.t.MinHeight) || (w >= g.t.MinHeight && h >= g.t.MinWidth)
}
