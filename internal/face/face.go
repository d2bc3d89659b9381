// Package face detects faces, computes face embeddings for matching, and assesses passive
// liveness on single decoded images, with ONNX models run by OpenCV's DNN module (gocv).
//
// The engine is configured by Models: four model files (detector, 68-point landmarks,
// embedder, liveness) and the thresholds that go with them, so an operator can swap models.
// Every model file is checked in Go (size, ONNX protobuf structure, input shape, output names
// and sizes) before OpenCV reads it, and every image is converted and resized in Go, so that
// bad files and odd images come back as errors: OpenCV errors abort the process from C++.
// Callers decode untrusted bytes with internal/imagecheck first and pass the image.Image.
//
// An Engine is safe for concurrent use; each network runs one call at a time (gocv Nets are
// not safe for concurrent use), so a processor that wants parallelism loads several Engines.
package face

import (
	"errors"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
)

// Models configures an Engine: the model files and the thresholds that belong to them.
// DefaultModels fills every field; a zero threshold or limit takes its default in Load.
type Models struct {
	DetectorPath string // UltraFace-like detector: input 1×3×240×320, outputs scores 4420×2 and boxes 4420×4
	LandmarkPath string // input 1×1×64×64 gray, output 136 values (68 points, relative to the crop)
	EmbedderPath string // input 1×3×112×112 aligned face, output 512-d embedding
	LivenessPath string // input 1×3×128×128 crop at LivenessCropScale× the face box, output 3 logits, class 0 = live

	// DetectThreshold is the minimum detector score of a face (0..1).
	DetectThreshold float64
	// NMSThreshold is the IoU above which overlapping detections are merged.
	NMSThreshold float64
	// MinFaceSize is the smallest face box side, in source pixels, that Detect reports.
	MinFaceSize int
	// MatchThreshold is the cosine similarity at or above which two embeddings are taken to
	// be the same person (DefaultMatchThreshold says where the default comes from).
	MatchThreshold float64
	// LivenessThreshold is the minimum Liveness.Score (P(live)) for Liveness.Live
	// (DefaultLivenessThreshold says where the default comes from).
	LivenessThreshold float64
	// LivenessCropScale is how many times the face box the liveness crop spans.
	LivenessCropScale float64

	// MinSide, MaxSide and MaxPixels bound the images every entry point accepts.
	MinSide, MaxSide, MaxPixels int
}

// Default thresholds and limits; MODELS.md explains how they were chosen.
const (
	DefaultDetectThreshold = 0.7
	DefaultNMSThreshold    = 0.4
	DefaultMinFaceSize     = 20
	// DefaultMatchThreshold was chosen on the calibration half of the face corpus
	// (internal/face/facecorpus; figures from `IDSTREAM_FACE_REPORT=calibration go test -run
	// TestReport -v ./internal/face/faceeval/`): 375 impostor pairs scored at most 0.355 and
	// the 2 genuine pairs 0.47 and 0.73; the threshold is the highest impostor score plus a
	// margin of 0.05 (375 pairs cannot resolve an FMR of 0.1 %: with none above 0.355 the
	// FMR there is below 1/375).
	DefaultMatchThreshold = 0.40
	// DefaultLivenessThreshold was chosen on the calibration half of the face corpus (28
	// bona fide photos, 28 renderings of each of print, screen, cut-out and mask; same
	// command as above): the threshold minimising BPCER + the largest APCER over the attack
	// kinds, on a 0.01 grid, is the plateau 0.75–0.86, whose middle is taken: there BPCER is
	// 28.6 % (8/28) and APCER print 3.6 %, screen 0 %, cut-out 10.7 %, mask 3.6 %. At 0.5
	// BPCER was 21.4 % with APCER cut-out 25 %.
	DefaultLivenessThreshold = 0.80
	DefaultLivenessCropScale = 2.7
	DefaultMinSide           = 32
	DefaultMaxSide           = 8000
	DefaultMaxPixels         = 40_000_000
)

// DefaultModels returns the configuration for the model files deploy/models.sh places in dir
// (fr_detect.onnx, fr_landmark.onnx, fr_feature.onnx, fr_liveness.onnx) with the default
// thresholds.
func DefaultModels(dir string) Models {
	return Models{
		DetectorPath:      filepath.Join(dir, "fr_detect.onnx"),
		LandmarkPath:      filepath.Join(dir, "fr_landmark.onnx"),
		EmbedderPath:      filepath.Join(dir, "fr_feature.onnx"),
		LivenessPath:      filepath.Join(dir, "fr_liveness.onnx"),
		DetectThreshold:   DefaultDetectThreshold,
		NMSThreshold:      DefaultNMSThreshold,
		MinFaceSize:       DefaultMinFaceSize,
		MatchThreshold:    DefaultMatchThreshold,
		LivenessThreshold: DefaultLivenessThreshold,
		LivenessCropScale: DefaultLivenessCropScale,
		MinSide:           DefaultMinSide,
		MaxSide:           DefaultMaxSide,
		MaxPixels:         DefaultMaxPixels,
	}
}

func (m Models) withDefaults() Models {
	def := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&m.DetectThreshold, DefaultDetectThreshold)
	def(&m.NMSThreshold, DefaultNMSThreshold)
	def(&m.MatchThreshold, DefaultMatchThreshold)
	def(&m.LivenessThreshold, DefaultLivenessThreshold)
	def(&m.LivenessCropScale, DefaultLivenessCropScale)
	defInt(&m.MinFaceSize, DefaultMinFaceSize)
	defInt(&m.MinSide, DefaultMinSide)
	defInt(&m.MaxSide, DefaultMaxSide)
	defInt(&m.MaxPixels, DefaultMaxPixels)
	return m
}

type limits struct{ minSide, maxSide, maxPixels int }

// Engine runs the four face models. It is safe for concurrent use (see the package comment).
type Engine struct {
	cfg      Models
	lim      limits
	found    *Found // what the engines sharing it found lately (WithFound); nil: nothing kept
	identity string // the configuration, as Found tells engines apart
	detector *dnn
	landmark *dnn
	embedder *dnn
	liveness *dnn
}

// LoadOption adjusts an Engine that Load makes.
type LoadOption func(*Engine)

// WithFound makes the Engine share f (see Found): it answers Detect and Embed from f when an
// Engine of the same configuration has already answered them for the same image, and files
// its own answers there.
func WithFound(f *Found) LoadOption { return func(e *Engine) { e.found = f } }

// Load checks and loads the four models of cfg. A missing, truncated, non-ONNX or wrongly
// shaped file is an error wrapping ErrBadModel, returned before OpenCV parses the file.
func Load(cfg Models, opts ...LoadOption) (*Engine, error) {
	cfg = cfg.withDefaults()
	e := &Engine{cfg: cfg, lim: limits{cfg.MinSide, cfg.MaxSide, cfg.MaxPixels}, identity: identityOf(cfg)}
	for _, o := range opts {
		o(e)
	}
	var err error
	if e.detector, err = loadDNN("detector", cfg.DetectorPath, []int{1, 3, detH, detW},
		[]string{"scores", "boxes"}, []int{detAnchors * 2, detAnchors * 4}); err != nil {
		return nil, err
	}
	if e.landmark, err = loadDNN("landmark", cfg.LandmarkPath, []int{1, 1, lmSize, lmSize},
		[]string{"output"}, []int{68 * 2}); err != nil {
		e.Close()
		return nil, err
	}
	if e.embedder, err = loadDNN("embedder", cfg.EmbedderPath, []int{1, 3, alignSize, alignSize},
		[]string{"output"}, []int{EmbeddingSize}); err != nil {
		e.Close()
		return nil, err
	}
	if e.liveness, err = loadDNN("liveness", cfg.LivenessPath, []int{1, 3, liveSize, liveSize},
		[]string{"output"}, []int{3}); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// identityOf names an Engine's configuration for Found: its thresholds and limits, and each
// model file by path, size and modification time (a file replaced between two Loads is
// another model).
func identityOf(cfg Models) string {
	id := fmt.Sprintf("%+v", cfg)
	for _, p := range []string{cfg.DetectorPath, cfg.LandmarkPath, cfg.EmbedderPath, cfg.LivenessPath} {
		if fi, err := os.Stat(p); err == nil {
			id += fmt.Sprintf(" %d@%d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return id
}

// Config returns the configuration the engine runs with, defaults applied.
func (e *Engine) Config() Models { return e.cfg }

// Close releases the networks. The Engine must not be used afterwards.
func (e *Engine) Close() error {
	var errs []error
	for _, d := range []*dnn{e.detector, e.landmark, e.embedder, e.liveness} {
		if d != nil {
			errs = append(errs, d.close())
		}
	}
	return errors.Join(errs...)
}

// Point is a position in image pixel coordinates.
type Point struct{ X, Y float64 }

// Face is one detected face, in the coordinates of the image it was found in.
type Face struct {
	// Box is the detection: a square of side the detector box's height, centred on the
	// detector box and clipped to the image.
	Box image.Rectangle
	// Detection is the detector's own box (not squared), clipped to the image: the box the
	// liveness model's crop is taken about. Empty (a Face built by hand): Box is used.
	Detection image.Rectangle
	// Score is the detector's confidence, 0..1.
	Score float64
	// Landmarks are the 68 iBUG-300W points (jaw 0–16, brows 17–26, nose 27–35, eyes 36–47,
	// mouth 48–67).
	Landmarks []Point
	// Points are the 5 alignment points derived from Landmarks, in ArcFace order: eye on the
	// image's left, eye on the image's right, nose tip, mouth corner left, mouth corner right.
	Points [5]Point
}

// Largest returns the face of faces whose Box has the largest area, the first of equals; the
// zero Face when faces is empty. It is the face the groups match and assess when a picture
// holds several.
func Largest(faces []Face) Face {
	var best Face
	for i, f := range faces {
		if i == 0 || f.Box.Dx()*f.Box.Dy() > best.Box.Dx()*best.Box.Dy() {
			best = f
		}
	}
	return best
}

// Cosine returns the cosine similarity of a and b in [-1, 1]; 0 when the lengths differ or
// either vector is zero.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// checkFace refuses a Face that cannot come from img: a box outside it, or missing points.
func checkFace(r *raster, f Face) error {
	b := f.Box
	if b.Empty() || b.Min.X < 0 || b.Min.Y < 0 || b.Max.X > r.w || b.Max.Y > r.h {
		return fmt.Errorf("%w: face box %v outside the %dx%d image", ErrBadFace, b, r.w, r.h)
	}
	for _, p := range f.Points {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return fmt.Errorf("%w: alignment point %v is not finite", ErrBadFace, p)
		}
	}
	return nil
}

// ErrBadFace reports a Face argument that does not fit the image it is used with.
var ErrBadFace = errors.New("face: face does not fit the image")
