package face

import (
	"fmt"
	"image"
	"math"
)

// EmbeddingSize is the length of the vectors Embed returns.
const EmbeddingSize = 512

const alignSize = 112

// arcFaceTemplate is the standard ArcFace 112×112 five-point template (eyes, nose tip, mouth
// corners), the positions the embedder was trained with.
var arcFaceTemplate = [5]Point{
	{38.2946, 51.6963},
	{73.5318, 51.5014},
	{56.0252, 71.7366},
	{41.5493, 92.3655},
	{70.7299, 92.2041},
}

// Embed returns the L2-normalised 512-d embedding of face f in img: the face is aligned by the
// least-squares similarity transform (rotation, uniform scale, translation) of f.Points onto
// the ArcFace template, cropped to 112×112, and fed to the embedder as RGB, (p-127)/128.
// Compare embeddings with Cosine. f must come from Detect on the same image.
//
// With a Found (WithFound), a face an Engine of the same configuration has embedded lately
// is answered from there.
func (e *Engine) Embed(img image.Image, f Face) ([]float32, error) {
	k, keep := e.foundKey(img)
	if keep {
		if vec, ok := e.found.embedding(k, f); ok {
			return vec, nil
		}
	}
	vec, err := e.embed(img, f)
	if err == nil && keep {
		e.found.putEmbedding(k, f, vec)
	}
	return vec, err
}

func (e *Engine) embed(img image.Image, f Face) ([]float32, error) {
	r, err := toRaster(img, e.lim)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if err := checkFace(r, f); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	aligned, err := align(r, f.Points)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	out, err := e.embedder.forward(aligned.blobCHW(127, 1.0/128, false))
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	v := out[0]
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	n = math.Sqrt(n)
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil, fmt.Errorf("embed: embedder returned a degenerate vector (norm %v)", n)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v, nil
}

// align warps the face onto the 112×112 ArcFace template.
func align(r *raster, pts [5]Point) (*raster, error) {
	m, err := similarity(pts[:], arcFaceTemplate[:])
	if err != nil {
		return nil, err
	}
	inv, err := invertAffine(m)
	if err != nil {
		return nil, err
	}
	return r.warp(inv, alignSize, alignSize), nil
}

// similarity returns the 2×3 matrix [a -b tx; b a ty] of the similarity transform that maps
// src onto dst with least squared error (Umeyama 1991, without reflection).
func similarity(src, dst []Point) ([6]float64, error) {
	n := float64(len(src))
	var msx, msy, mdx, mdy float64
	for i := range src {
		msx += src[i].X
		msy += src[i].Y
		mdx += dst[i].X
		mdy += dst[i].Y
	}
	msx, msy, mdx, mdy = msx/n, msy/n, mdx/n, mdy/n
	// For a similarity without reflection, the optimum is a = Σ(s·d)/Σ|s|², b = Σ(s×d)/Σ|s|²
	// over centred points.
	var ss, dot, cross float64
	for i := range src {
		sx, sy := src[i].X-msx, src[i].Y-msy
		dx, dy := dst[i].X-mdx, dst[i].Y-mdy
		ss += sx*sx + sy*sy
		dot += sx*dx + sy*dy
		cross += sx*dy - sy*dx
	}
	if ss < 1e-6 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return [6]float64{}, fmt.Errorf("%w: alignment points are degenerate", ErrBadFace)
	}
	a, b := dot/ss, cross/ss
	tx := mdx - (a*msx - b*msy)
	ty := mdy - (b*msx + a*msy)
	return [6]float64{a, -b, tx, b, a, ty}, nil
}

// invertAffine inverts a 2×3 affine matrix.
func invertAffine(m [6]float64) ([6]float64, error) {
	det := m[0]*m[4] - m[1]*m[3]
	if math.Abs(det) < 1e-12 || math.IsNaN(det) {
		return [6]float64{}, fmt.Errorf("%w: singular alignment transform", ErrBadFace)
	}
	a, b, c, d := m[4]/det, -m[1]/det, -m[3]/det, m[0]/det
	return [6]float64{a, b, -(a*m[2] + b*m[5]), c, d, -(c*m[2] + d*m[5])}, nil
}
