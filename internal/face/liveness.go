package face

import (
	"fmt"
	"image"
	"math"
	"sort"
)

const liveSize = 128

// Attack types reported in Liveness.AttackType.
const (
	AttackNone   = ""       // live
	AttackPrint  = "print"  // a printed photo held to the camera
	AttackReplay = "replay" // a photo or video shown on a screen
	AttackMask   = "mask"   // the model says spoof and neither 2-D signal explains it: a mask or another presentation
)

// SignalLimit is the value of Liveness.Replay or Liveness.Print at and above which a face is
// not live whatever the model's score.
const SignalLimit = 0.5

// Liveness is the passive liveness assessment of one face.
type Liveness struct {
	// Score is the liveness model's P(live): softmax over its 3 classes, class 0 = live.
	Score float64
	// Threshold is the configured minimum Score for a live face.
	Threshold float64
	// Live is Score ≥ Threshold and neither Replay nor Print reaches 0.5.
	Live bool
	// Replay in [0, 1] measures screen-replay evidence in the face region: isolated peaks in
	// the Fourier magnitude spectrum (pixel grid, moiré). 0 = spectrum as smooth as a camera
	// photo of a real face (no peak above 12.6× its ring's median); 1 = a peak 40× its ring's
	// median or more (a screen's grid).
	Replay float64
	// Print in [0, 1] measures printed-photo evidence: the mean of three sub-scores, each 0 for
	// a typical camera capture and 1 for a typical print: low colour saturation of the face,
	// little high-frequency energy (paper and print blur), and a flat luminance range with no
	// specular highlight.
	Print float64
	// AttackType is AttackNone when Live, else the most likely attack: AttackReplay or
	// AttackPrint when that signal is the larger and reaches 0.5, AttackMask otherwise.
	AttackType string
}

// Liveness assesses face f of img (f from Detect on the same image). The model sees, as in
// the reference pipeline (the model package's alignLivenessImage, Silent-Face-Anti-Spoofing's
// CropImage), a crop of LivenessCropScale× the detector's own box f.Detection in each
// direction (not the squared Box: the crop is as wide as 2.7× the detection's width and as
// tall as 2.7× its height, then stretched to 128×128), the scale reduced so the crop fits and
// the crop shifted inside the image; BGR (the model was trained on OpenCV's BGR order), raw
// 0..255. A Face without Detection (built by hand) uses Box. The signals look at the face box
// itself at native resolution. MODELS.md gives the figures behind each choice.
func (e *Engine) Liveness(img image.Image, f Face) (Liveness, error) {
	r, err := toRaster(img, e.lim)
	if err != nil {
		return Liveness{}, fmt.Errorf("liveness: %w", err)
	}
	if err := checkFace(r, f); err != nil {
		return Liveness{}, fmt.Errorf("liveness: %w", err)
	}
	box := f.Detection
	if box.Empty() {
		box = f.Box
	} else if !box.In(image.Rect(0, 0, r.w, r.h)) {
		return Liveness{}, fmt.Errorf("liveness: %w: detection %v outside the %dx%d image", ErrBadFace, box, r.w, r.h)
	}
	x0, y0, x1, y1 := livenessCrop(box, r.w, r.h, e.cfg.LivenessCropScale)
	crop := r.resizeRect(x0, y0, x1, y1, liveSize, liveSize)
	out, err := e.liveness.forward(crop.blobCHW(0, 1, true))
	if err != nil {
		return Liveness{}, fmt.Errorf("liveness: %w", err)
	}
	p := softmax(out[0])
	l := Liveness{Score: p[0], Threshold: e.cfg.LivenessThreshold}
	l.Replay, l.Print = signals(r, f.Box)
	l.Live = l.Score >= l.Threshold && l.Replay < SignalLimit && l.Print < SignalLimit
	if !l.Live {
		switch {
		case l.Replay >= SignalLimit && l.Replay >= l.Print:
			l.AttackType = AttackReplay
		case l.Print >= SignalLimit:
			l.AttackType = AttackPrint
		default:
			l.AttackType = AttackMask
		}
	}
	return l, nil
}

// livenessCrop follows the reference pipeline: a box scale× the face box about its centre,
// the scale reduced so the box fits in the image, then shifted inside the image.
func livenessCrop(b image.Rectangle, w, h int, scale float64) (x0, y0, x1, y1 float64) {
	bw, bh := float64(b.Dx()), float64(b.Dy())
	s := math.Min(scale, math.Min(float64(h-1)/bh, float64(w-1)/bw))
	nw, nh := bw*s, bh*s
	cx, cy := float64(b.Min.X)+bw/2, float64(b.Min.Y)+bh/2
	x0, y0, x1, y1 = cx-nw/2, cy-nh/2, cx+nw/2, cy+nh/2
	if x0 < 0 {
		x1 -= x0
		x0 = 0
	}
	if y0 < 0 {
		y1 -= y0
		y0 = 0
	}
	if x1 > float64(w-1) {
		x0 -= x1 - float64(w-1)
		x1 = float64(w - 1)
	}
	if y1 > float64(h-1) {
		y0 -= y1 - float64(h-1)
		y1 = float64(h - 1)
	}
	return math.Max(x0, 0), math.Max(y0, 0), x1, y1
}

func softmax(v []float32) []float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, float64(x))
	}
	out := make([]float64, len(v))
	var s float64
	for i, x := range v {
		out[i] = math.Exp(float64(x) - m)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

// Calibration of the signals (MODELS.md gives the measured values behind them).
const (
	replayPeakLow  = 1.1 // log10 peak/ring-median: camera photos of faces measured 0.63–1.02
	replayPeakHigh = 1.6 // a screen's grid or moiré: 40× its ring median or more

	printSatLow, printSatHigh   = 0.04, 0.12 // mean HSV saturation of the face: camera photos 0.12–0.75
	printHighLow, printHighHigh = -4.0, -3.2 // log10 energy fraction above 0.25 cycles/pixel: photos −3.3…−2.2
	printRangeLow, printRangeHi = 0.20, 0.40 // (p99 − p1) / 255 of the face's luma: photos 0.40–0.93
)

// signals computes the replay and print signals on the face box at native resolution (the
// central square of the box, at most 256 pixels, a power of two).
func signals(r *raster, box image.Rectangle) (replay, print float64) {
	side := min(box.Dx(), box.Dy(), 256)
	n := 1
	for n*2 <= side {
		n *= 2
	}
	if n < 16 {
		return 0, 0
	}
	cx, cy := (box.Min.X+box.Max.X)/2, (box.Min.Y+box.Max.Y)/2
	x0, y0 := cx-n/2, cy-n/2
	plane := make([]float32, n*n)
	var sat float64
	lum := make([]float64, 0, n*n)
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			i := ((y0+y)*r.w + (x0 + x)) * 3
			R, G, B := float64(r.pix[i]), float64(r.pix[i+1]), float64(r.pix[i+2])
			l := 0.299*R + 0.587*G + 0.114*B
			plane[y*n+x] = float32(l)
			lum = append(lum, l)
			mx, mn := math.Max(R, math.Max(G, B)), math.Min(R, math.Min(G, B))
			if mx > 0 {
				sat += (mx - mn) / mx
			}
		}
	}
	sat /= float64(n * n)
	st := analyseSpectrum(fft2(plane, n), n)
	replay = ramp(st.peak, replayPeakLow, replayPeakHigh)

	sort.Float64s(lum)
	rng := (lum[len(lum)*99/100] - lum[len(lum)/100]) / 255
	print = (1 - ramp(sat, printSatLow, printSatHigh) +
		1 - ramp(math.Log10(st.high+1e-9), printHighLow, printHighHigh) +
		1 - ramp(rng, printRangeLow, printRangeHi)) / 3
	return replay, print
}

// ramp maps v linearly from [lo, hi] onto [0, 1], clamped.
func ramp(v, lo, hi float64) float64 {
	switch {
	case v <= lo:
		return 0
	case v >= hi:
		return 1
	}
	return (v - lo) / (hi - lo)
}
