package imagecheck

import (
	"crypto/sha256"
	"image"
	"sync"
	"time"
)

// Decoded keeps the images most recently decoded, by the SHA-256 of their bytes and the
// limits they were checked against, so that the parts of one process that read the same
// capture (the edge that validates it, then the quality gate, OCR, liveness, face match and
// fraud) decode it once. The same bytes always decode to the same image, so a hit is what a
// decode would give; only images that decoded are kept: the last ones within a budget of
// memory (first in, first out), for a few minutes at most (an image older than maxAge is
// dropped at the next decode; an idle process keeps its last images until then). The images
// are shared: callers must not modify them. A nil *Decoded decodes every time. Safe for
// concurrent use.
type Decoded struct {
	mu     sync.Mutex
	budget int // bytes kept at most (pixels and entryOverhead per image)
	maxAge time.Duration
	now    func() time.Time
	used   int
	order  []decodedKey // oldest first
	byKey  map[decodedKey]decodedImage
	sums   map[image.Image][sha256.Size]byte // the images kept, by identity: their bytes' SHA-256
	hits   int64                             // decodes answered from the images kept
	misses int64                             // decodes made
}

type decodedKey struct {
	sum [sha256.Size]byte
	lim Limits
}

type decodedImage struct {
	img  image.Image
	info Info
	size int // bytes charged to the budget
	at   time.Time
}

// entryOverhead is what an image kept costs beyond its pixels (its entry, key, header): a
// budget of tiny images is a bounded number of them.
const entryOverhead = 1 << 10

// decodedMaxAge is how long an image is kept at most: the groups of a process read a capture
// within seconds of the edge, or minutes under a backlog.
const decodedMaxAge = 3 * time.Minute

// NewDecoded keeps the last images decoded whose pixels take budget bytes at most (a 2 MP
// JPEG photo decoded takes 3 MB), for three minutes at most; an image larger than the budget
// is not kept, nor any with a budget < 1.
func NewDecoded(budget int) *Decoded {
	return &Decoded{budget: budget, maxAge: decodedMaxAge, now: time.Now, byKey: make(map[decodedKey]decodedImage),
		sums: make(map[image.Image][sha256.Size]byte)}
}

// Sum returns the SHA-256 of the bytes img was decoded from, when img is an image d keeps
// (the very one Decode returned, not an equal one): what the process's parts that read the
// same capture know it by (face.Found). ok is false for any other image, or a nil d.
func (d *Decoded) Sum(img image.Image) (sum [sha256.Size]byte, ok bool) {
	if d == nil || !byIdentity(img) {
		return sum, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	sum, ok = d.sums[img]
	return sum, ok
}

// byIdentity reports whether img's dynamic type is one of the pointers Decode returns, so
// that comparing it (as a map key) compares identities and cannot panic.
func byIdentity(img image.Image) bool {
	switch img.(type) {
	case *image.YCbCr, *image.Gray, *image.RGBA, *image.NRGBA, *image.CMYK, *image.Gray16, *image.RGBA64, *image.NRGBA64, *image.Paletted:
		return true
	}
	return false
}

// Stats returns how many decodes were answered from the images kept (hits) and how many were
// made (misses), since d was made.
func (d *Decoded) Stats() (hits, misses int64) {
	if d == nil {
		return 0, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hits, d.misses
}

// pixelBytes is the memory img's pixels take.
func pixelBytes(img image.Image) int {
	switch m := img.(type) {
	case *image.YCbCr:
		return len(m.Y) + len(m.Cb) + len(m.Cr)
	case *image.Gray:
		return len(m.Pix)
	case *image.RGBA:
		return len(m.Pix)
	case *image.NRGBA:
		return len(m.Pix)
	}
	b := img.Bounds()
	return b.Dx() * b.Dy() * 8
}

// Decode is the package's Decode of data, whose SHA-256 is sum (the caller checked it, or
// computed it): from the images kept when data was decoded within lim before.
func (d *Decoded) Decode(sum [sha256.Size]byte, data []byte, lim Limits) (image.Image, Info, error) {
	if d == nil || d.budget < 1 {
		return Decode(data, lim)
	}
	k := decodedKey{sum, lim.withDefaults()} // a zero field means its default: the same limits
	d.mu.Lock()
	d.expire()
	e, ok := d.byKey[k]
	if ok {
		d.hits++
	} else {
		d.misses++
	}
	d.mu.Unlock()
	if ok {
		return e.img, e.info, nil
	}
	img, info, err := Decode(data, lim)
	if err != nil {
		return nil, Info{}, err
	}
	size := pixelBytes(img) + entryOverhead
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.byKey[k]; !ok && size <= d.budget {
		for d.used+size > d.budget {
			d.dropOldest()
		}
		d.byKey[k] = decodedImage{img, info, size, d.now()}
		d.order = append(d.order, k)
		d.used += size
		if byIdentity(img) {
			d.sums[img] = sum
		}
	}
	return img, info, nil
}

// expire drops the images older than maxAge (under mu).
func (d *Decoded) expire() {
	cutoff := d.now().Add(-d.maxAge)
	for len(d.order) > 0 && d.byKey[d.order[0]].at.Before(cutoff) {
		d.dropOldest()
	}
}

// dropOldest drops the image kept longest (under mu; one is kept).
func (d *Decoded) dropOldest() {
	e := d.byKey[d.order[0]]
	d.used -= e.size
	if byIdentity(e.img) {
		delete(d.sums, e.img)
	}
	delete(d.byKey, d.order[0])
	d.order = d.order[1:]
}
