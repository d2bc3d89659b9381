package imagequality

import (
	"image"
)

// FaceWorkingWidth is the width, in pixels, of the copy of a face box the face's sharpness
// and exposure are measured on (faces narrower than that are measured as they are): the
// embedding model sees the face at 112 px, so the measure sees what the models see, and a
// face's sharpness does not depend on how close the camera was.
const FaceWorkingWidth = 128

// FaceExposure is the exposure of the face of a selfie.
type FaceExposure struct {
	Brightness float64  // mean luma 0..255 of the skin area
	Blur       float64  // variance of the Laplacian over the skin area, at FaceWorkingWidth; higher is sharper
	Glare      float64  // share 0..1 of the skin area under the saturated cores of specular highlights
	Saturated  float64  // share 0..1 of the skin area clipped white (luma ≥ 250)
	Reasons    []string // "glare" and/or "too_dark"; empty (not nil) when the face is well exposed
}

// AssessFace judges the exposure of a selfie's face: box is the detector's face box and skin
// the part of it that is the face itself (eyes, nose, mouth, cheeks: the processor derives it
// from the landmarks), both in img's coordinates; skin is clipped to box. The face fails
// with "blurry" when the skin area's Laplacian variance is below MinFaceBlur, with "glare" when specular highlights cover more than MaxFaceGlare of the skin or more than
// MaxFaceSaturated of it is clipped white, and with "too_dark" when its mean luma is below
// MinFaceBrightness. Nothing outside the face is judged: a bright background is no reason
// to retake. An empty box or skin gives a zero FaceExposure with no reasons.
func (g *Gate) AssessFace(img image.Image, box, skin image.Rectangle) FaceExposure {
	res := FaceExposure{Reasons: []string{}}
	if img == nil {
		return res
	}
	box = box.Intersect(img.Bounds())
	skin = skin.Intersect(box)
	if box.Dx() < 8 || box.Dy() < 8 || skin.Empty() {
		return res
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return res
	}
	p := downscaleLuma(sub.SubImage(box), FaceWorkingWidth)
	sx, sy := float64(p.w)/float64(box.Dx()), float64(p.h)/float64(box.Dy())
	in := image.Rect(int(float64(skin.Min.X-box.Min.X)*sx), int(float64(skin.Min.Y-box.Min.Y)*sy),
		int(float64(skin.Max.X-box.Min.X)*sx+0.999), int(float64(skin.Max.Y-box.Min.Y)*sy+0.999)).
		Intersect(image.Rect(0, 0, p.w, p.h))
	if in.Empty() {
		return res
	}
	var sum float64
	sat := 0
	for y := in.Min.Y; y < in.Max.Y; y++ {
		for _, v := range p.pix[y*p.w+in.Min.X : y*p.w+in.Max.X] {
			sum += float64(v)
			if v >= satLevel {
				sat++
			}
		}
	}
	n := float64(in.Dx() * in.Dy())
	res.Brightness = sum / n
	res.Saturated = float64(sat) / n
	res.Blur = p.sub(in).laplacianVariance()
	_, spots := p.specularGlare(g.t.Specular)
	covered := 0
	for _, s := range spots {
		if s.specular && image.Pt(s.cx, s.cy).In(in) {
			covered += s.core
		}
	}
	res.Glare = min(1, float64(covered)/n)
	if res.Blur < g.t.MinFaceBlur {
		res.Reasons = append(res.Reasons, ReasonBlurry)
	}
	if res.Glare > g.t.MaxFaceGlare || res.Saturated > g.t.MaxFaceSaturated {
		res.Reasons = append(res.Reasons, ReasonGlare)
	}
	if res.Brightness < g.t.MinFaceBrightness {
		res.Reasons = append(res.Reasons, ReasonTooDark)
	}
	return res
}

// sub returns a copy of the part r of the plane.
func (p plane) sub(r image.Rectangle) plane {
	r = r.Intersect(image.Rect(0, 0, p.w, p.h))
	out := plane{w: r.Dx(), h: r.Dy(), pix: make([]float32, 0, r.Dx()*r.Dy())}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		out.pix = append(out.pix, p.pix[y*p.w+r.Min.X:y*p.w+r.Max.X]...)
	}
	return out
}
