package face

import (
	"crypto/sha256"
	"image"
	"sync"
	"time"
)

// Found remembers what the Engines sharing it (WithFound) found in the captures they looked
// at lately: the faces Detect found and the embeddings Embed made. In one process a capture
// is looked at by several groups (a selfie by the quality gate's framing, liveness, face match
// and fraud's duplicate check), each with an Engine of its own loaded from the same models:
// the first to look runs the models, the others take its answer, which is the one they would
// have computed. An image with more than foundMostFaces faces is not kept (each face is 1 KB
// of landmarks; a selfie or a document has one or two), so an entry is a few KB.
//
// An image is known by the digest of the bytes it was decoded from, which the process's
// decoded images tell (know: imagecheck.Decoded.Sum, which knows the very images it handed
// out), and by its Engine's configuration: Engines loaded with other models or thresholds
// never share an answer, and an image the process did not decode from a capture (a crop, a
// test's) is not remembered. Two uploads of the same picture are two captures, each looked
// at afresh. An entry is kept maxAge at most, and no more than maxEntries are kept (the
// oldest go first).
//
// Safe for concurrent use.
type Found struct {
	know       func(image.Image) ([sha256.Size]byte, bool)
	maxEntries int
	maxAge     time.Duration

	mu      sync.Mutex
	entries map[foundKey]*foundEntry
	order   []foundKey // oldest first
	hits    int
	misses  int
}

// foundKey names a capture as an Engine sees it.
type foundKey struct {
	engine string            // the Engine's configuration
	sum    [sha256.Size]byte // the capture's digest
}

// foundMostFaces is the most faces an image kept may have.
const foundMostFaces = 8

// foundEntry is what was found in one image.
type foundEntry struct {
	at       time.Time
	detected bool                  // whether faces holds what Detect found
	faces    []Face                // what Detect found
	embeds   map[faceKey][]float32 // by the face embedded
}

// faceKey names a face of an image: what Embed reads of it.
type faceKey struct {
	box, detection image.Rectangle
	points         [5]Point
}

func keyOf(fc Face) faceKey { return faceKey{fc.Box, fc.Detection, fc.Points} }

// NewFound makes a Found of the images know knows by their bytes' digest, keeping at most
// maxEntries (at least one), each for maxAge at most.
func NewFound(know func(image.Image) ([sha256.Size]byte, bool), maxEntries int, maxAge time.Duration) *Found {
	return &Found{know: know, maxEntries: max(maxEntries, 1), maxAge: maxAge, entries: make(map[foundKey]*foundEntry)}
}

// FoundStats counts the lookups of a Found: answers taken from it and answers computed.
type FoundStats struct{ Hits, Misses int }

// Stats returns the lookups made so far.
func (f *Found) Stats() FoundStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return FoundStats{Hits: f.hits, Misses: f.misses}
}

// key returns img's key for an Engine of configuration engine; ok is false for an image
// f does not know.
func (f *Found) key(engine string, img image.Image) (k foundKey, ok bool) {
	sum, ok := f.know(img)
	return foundKey{engine: engine, sum: sum}, ok
}

// entry returns k's live entry, or nil.
func (f *Found) entry(k foundKey) *foundEntry {
	e := f.entries[k]
	if e != nil && time.Since(e.at) > f.maxAge {
		return nil
	}
	return e
}

// faces returns a copy of the faces found in k's image, and whether Detect had run on it.
func (f *Found) faces(k foundKey) ([]Face, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.entry(k)
	if e == nil || !e.detected {
		f.misses++
		return nil, false
	}
	f.hits++
	return copyFaces(e.faces), true
}

// embedding returns a copy of the embedding of face fc of k's image, if one was made.
func (f *Found) embedding(k foundKey, fc Face) ([]float32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.entry(k)
	if e == nil || e.embeds[keyOf(fc)] == nil {
		f.misses++
		return nil, false
	}
	f.hits++
	return append([]float32(nil), e.embeds[keyOf(fc)]...), true
}

// putFaces files the faces Detect found in k's image.
func (f *Found) putFaces(k foundKey, faces []Face) {
	if len(faces) > foundMostFaces {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.live(k)
	e.detected, e.faces = true, copyFaces(faces)
}

// putEmbedding files the embedding of face fc of k's image.
func (f *Found) putEmbedding(k foundKey, fc Face, vec []float32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.live(k)
	if e.embeds == nil {
		e.embeds = make(map[faceKey][]float32)
	}
	e.embeds[keyOf(fc)] = append([]float32(nil), vec...)
}

// live returns k's live entry, made (and the oldest dropped to make room) if there is none;
// f.mu is held.
func (f *Found) live(k foundKey) *foundEntry {
	if e := f.entry(k); e != nil {
		return e
	}
	if _, stale := f.entries[k]; stale {
		f.drop(k)
	}
	for len(f.order) >= f.maxEntries {
		f.drop(f.order[0])
	}
	e := &foundEntry{at: time.Now()}
	f.entries[k] = e
	f.order = append(f.order, k)
	return e
}

// drop forgets k's entry; f.mu is held.
func (f *Found) drop(k foundKey) {
	delete(f.entries, k)
	for i, o := range f.order {
		if o == k {
			f.order = append(f.order[:i], f.order[i+1:]...)
			return
		}
	}
}

// copyFaces copies faces deeply enough that no caller shares a slice with another.
func copyFaces(faces []Face) []Face {
	out := make([]Face, len(faces))
	for i, fc := range faces {
		out[i] = fc
		out[i].Landmarks = append([]Point(nil), fc.Landmarks...)
	}
	return out
}
