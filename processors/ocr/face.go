package ocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/schemas"
)

// faceCropQuality is the JPEG quality of stored face crops.
const faceCropQuality = 90

// storeFace finds the largest face of img, crops it with the group's margin and stores it
// as JPEG under key. It returns nil when img has no face. When the capture's image (at
// imageURI) is gone once the crop is stored, the session was erased meanwhile: the crop is
// removed and errErased returned.
func (g *group) storeFace(ctx context.Context, img image.Image, key, imageURI string) (*schemas.BlobRef, error) {
	faces, err := g.faces.Detect(img)
	if errors.Is(err, face.ErrBadImage) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("detect faces: %w", err)
	}
	if len(faces) == 0 {
		return nil, nil
	}
	best := faces[0].Box
	for _, f := range faces[1:] {
		if area(f.Box) > area(best) {
			best = f.Box
		}
	}
	crop := cropFace(img, best, g.faceMargin)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, crop, &jpeg.Options{Quality: faceCropQuality}); err != nil {
		return nil, fmt.Errorf("encode face crop: %w", err)
	}
	obj, err := g.blobs.Put(ctx, key, buf.Bytes(), "image/jpeg")
	if err != nil {
		return nil, fmt.Errorf("store face crop: %w", err)
	}
	if _, err := g.blobs.Get(ctx, imageURI); errors.Is(err, blob.ErrNotFound) {
		if err := g.blobs.Delete(ctx, obj.URI); err != nil {
			return nil, fmt.Errorf("remove face crop of erased capture: %w", err)
		}
		return nil, errErased
	}
	return &schemas.BlobRef{Name: FaceCropRefName, URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}, nil
}

func area(r image.Rectangle) int { return r.Dx() * r.Dy() }

// cropFace returns box grown by margin × its side on each side, clipped to img, as a new
// RGBA image with origin (0, 0).
func cropFace(img image.Image, box image.Rectangle, margin float64) *image.RGBA {
	dx, dy := int(margin*float64(box.Dx())), int(margin*float64(box.Dy()))
	r := image.Rect(box.Min.X-dx, box.Min.Y-dy, box.Max.X+dx, box.Max.Y+dy).Intersect(img.Bounds())
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Bounds(), img, r.Min, draw.Src)
	return out
}
