package face

import (
	"fmt"
	"image"
	"math"
	"sort"

	"gocv.io/x/gocv"
)

// Detector and landmark model facts (see MODELS.md).
const (
	detW, detH = 320, 240
	detAnchors = 4420 // UltraFace priors at 320×240
	detTopK    = 750  // candidates kept before NMS
	lmSize     = 64
)

// Detect finds the faces in img, best score first, each with its 68 landmarks and 5 alignment
// points. An image with no face gives an empty slice and no error. Errors wrap ErrBadImage for
// images outside the configured limits.
//
// With a Found (WithFound), an image an Engine of the same configuration has looked at lately
// is answered from there.
func (e *Engine) Detect(img image.Image) ([]Face, error) {
	k, keep := e.foundKey(img)
	if keep {
		if faces, ok := e.found.faces(k); ok {
			return faces, nil
		}
	}
	r, err := toRaster(img, e.lim)
	if err != nil {
		return nil, fmt.Errorf("detect: %w", err)
	}
	faces, err := e.detect(r)
	if err == nil && keep {
		e.found.putFaces(k, faces)
	}
	return faces, err
}

// foundKey returns img's key in e's Found; keep is false when e has none or the image is
// of a kind it does not keep.
func (e *Engine) foundKey(img image.Image) (k foundKey, keep bool) {
	if e.found == nil {
		return foundKey{}, false
	}
	return e.found.key(e.identity, img)
}

func (e *Engine) detect(r *raster) ([]Face, error) {
	// The detector takes the whole image stretched to 320×240, RGB, (p-127)/128.
	in := r.resizeRect(0, 0, float64(r.w), float64(r.h), detW, detH)
	out, err := e.detector.forward(in.blobCHW(127, 1.0/128, false))
	if err != nil {
		return nil, fmt.Errorf("detect: %w", err)
	}
	scores, boxes := out[0], out[1]

	type cand struct {
		rect  image.Rectangle
		score float32
	}
	var cands []cand
	thr := float32(e.cfg.DetectThreshold)
	for i := 0; i < detAnchors; i++ {
		s := scores[i*2+1]
		if !(s >= thr) { // also drops NaN
			continue
		}
		x1, y1 := float64(boxes[i*4])*float64(r.w), float64(boxes[i*4+1])*float64(r.h)
		x2, y2 := float64(boxes[i*4+2])*float64(r.w), float64(boxes[i*4+3])*float64(r.h)
		if !(x2 > x1 && y2 > y1) || math.IsInf(x1+x2+y1+y2, 0) {
			continue
		}
		rect := image.Rect(int(math.Round(x1)), int(math.Round(y1)), int(math.Round(x2)), int(math.Round(y2)))
		if rect.Empty() {
			continue
		}
		cands = append(cands, cand{rect, s})
	}
	if len(cands) == 0 { // gocv.NMSBoxes indexes its first element: never call it empty
		return []Face{}, nil
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	if len(cands) > detTopK {
		cands = cands[:detTopK]
	}
	rects := make([]image.Rectangle, len(cands))
	scs := make([]float32, len(cands))
	for i, c := range cands {
		rects[i], scs[i] = c.rect, c.score
	}
	// gocv v0.31 NMSBoxes does not return a count: pre-fill with -1 and stop at the first -1.
	keep := make([]int, len(cands))
	for i := range keep {
		keep[i] = -1
	}
	gocv.NMSBoxes(rects, scs, thr, float32(e.cfg.NMSThreshold), keep)

	faces := []Face{}
	for _, k := range keep {
		if k < 0 || k >= len(cands) {
			break
		}
		box := squareBox(cands[k].rect, r.w, r.h)
		if box.Dx() < e.cfg.MinFaceSize || box.Dy() < e.cfg.MinFaceSize {
			continue
		}
		f := Face{Box: box, Detection: cands[k].rect.Intersect(image.Rect(0, 0, r.w, r.h)), Score: float64(cands[k].score)}
		if err := e.landmarks(r, &f); err != nil {
			return nil, err
		}
		faces = append(faces, f)
	}
	sort.SliceStable(faces, func(i, j int) bool { return faces[i].Score > faces[j].Score })
	return faces, nil
}

// squareBox returns the square of side rect's height centred on rect, clipped to w×h (the
// box the landmark and liveness models were used with).
func squareBox(rect image.Rectangle, w, h int) image.Rectangle {
	side := rect.Dy()
	cx, cy := (rect.Min.X+rect.Max.X)/2, (rect.Min.Y+rect.Max.Y)/2
	sq := image.Rect(cx-side/2, cy-side/2, cx-side/2+side, cy-side/2+side)
	return sq.Intersect(image.Rect(0, 0, w, h))
}

// landmarks runs the landmark model on f.Box: the box resized to 64×64 gray, p/256; the output
// is 68 (x, y) pairs relative to the box.
func (e *Engine) landmarks(r *raster, f *Face) error {
	b := f.Box
	crop := r.resizeRect(float64(b.Min.X), float64(b.Min.Y), float64(b.Max.X), float64(b.Max.Y), lmSize, lmSize)
	g := crop.gray()
	for i := range g {
		g[i] /= 256
	}
	out, err := e.landmark.forward(g)
	if err != nil {
		return fmt.Errorf("landmarks: %w", err)
	}
	v := out[0]
	f.Landmarks = make([]Point, 68)
	for i := range f.Landmarks {
		f.Landmarks[i] = Point{
			X: float64(b.Min.X) + float64(v[2*i])*float64(b.Dx()),
			Y: float64(b.Min.Y) + float64(v[2*i+1])*float64(b.Dy()),
		}
	}
	f.Points = fivePoints(f.Landmarks)
	return nil
}

// fivePoints derives the ArcFace alignment points from 68 landmarks: each eye centre is the
// mean of its four lid points (37, 38, 40, 41 and 43, 44, 46, 47), the nose tip is point 30,
// each mouth corner the mean of the outer and inner lip corner (48, 60 and 54, 64).
func fivePoints(l []Point) [5]Point {
	mean := func(idx ...int) Point {
		var p Point
		for _, i := range idx {
			p.X += l[i].X
			p.Y += l[i].Y
		}
		return Point{p.X / float64(len(idx)), p.Y / float64(len(idx))}
	}
	return [5]Point{
		mean(37, 38, 40, 41),
		mean(43, 44, 46, 47),
		l[30],
		mean(48, 60),
		mean(54, 64),
	}
}
