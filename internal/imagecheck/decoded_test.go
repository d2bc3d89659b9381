package imagecheck

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/png"
	"testing"
	"time"
)

// TestDecodedKeepsTheLast: the same bytes within the same limits are decoded once while
// among the last decoded within the budget; other limits are another entry (they may refuse
// what these took); an image pushed out is decoded again; an image over the budget and bytes
// that do not decode are not kept.
func TestDecodedKeepsTheLast(t *testing.T) {
	pngOf := func(w int) ([]byte, [32]byte) {
		var buf bytes.Buffer
		if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, 20))); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes(), sha256.Sum256(buf.Bytes())
	}
	d := NewDecoded(2 * (32*20 + entryOverhead)) // two of these grey pictures
	a, sa := pngOf(30)
	b, sb := pngOf(31)
	c, sc := pngOf(32)
	imgA, _, err := d.Decode(sa, a, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if again, _, _ := d.Decode(sa, a, Limits{}); again != imgA {
		t.Fatal("the same bytes decoded again")
	}
	if sum, ok := d.Sum(imgA); !ok || sum != sa {
		t.Fatal("the image kept is not known by its bytes' digest")
	}
	if _, ok := d.Sum(image.NewGray(imgA.Bounds())); ok {
		t.Fatal("an image equal to one kept, but not it, is known by its digest")
	}
	if hits, misses := d.Stats(); hits != 1 || misses != 1 {
		t.Fatalf("stats %d hits, %d misses; want 1 and 1", hits, misses)
	}
	small := Limits{MaxWidth: 20}
	if _, _, err := d.Decode(sa, a, small); err == nil {
		t.Fatal("limits that refuse the image took it from the entry of other limits")
	}
	d.Decode(sb, b, Limits{})
	d.Decode(sc, c, Limits{}) // pushes a out
	if _, ok := d.Sum(imgA); ok {
		t.Fatal("an image pushed out is still known by its digest")
	}
	if again, _, _ := d.Decode(sa, a, Limits{}); again == imgA {
		t.Fatal("an image pushed out came back from the cache")
	}
	bad := []byte("\x89PNG\r\n\x1a\nnot really")
	sbad := sha256.Sum256(bad)
	for range 2 {
		if _, _, err := d.Decode(sbad, bad, Limits{}); err == nil {
			t.Fatal("bytes that do not decode decoded")
		}
	}
	if _, ok := d.byKey[decodedKey{sbad, Limits{}.withDefaults()}]; ok {
		t.Fatal("bytes that do not decode were kept")
	}
	big, sbig := pngOf(200) // 200×20 pixels: over the budget
	d.Decode(sbig, big, Limits{})
	if _, ok := d.byKey[decodedKey{sbig, Limits{}.withDefaults()}]; ok {
		t.Fatal("an image over the budget was kept")
	}
	if len(d.byKey) > 2 || d.used > d.budget {
		t.Fatalf("%d images kept in %d bytes, want at most 2 in %d", len(d.byKey), d.used, d.budget)
	}
	var none *Decoded
	if img, _, err := none.Decode(sa, a, Limits{}); err != nil || img.Bounds().Dx() != 30 {
		t.Fatalf("a nil Decoded: %v, %v", img, err)
	}
}

// TestDecodedForgetsTheOld: an image kept longer than its maximum age is decoded again.
func TestDecodedForgetsTheOld(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 10, 10))); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	now := time.Unix(1000, 0)
	d := NewDecoded(1 << 20)
	d.now = func() time.Time { return now }
	first, _, _ := d.Decode(sum, buf.Bytes(), Limits{})
	now = now.Add(decodedMaxAge - time.Second)
	if again, _, _ := d.Decode(sum, buf.Bytes(), Limits{}); again != first {
		t.Fatal("an image within its age decoded again")
	}
	now = now.Add(2 * time.Second)
	if again, _, _ := d.Decode(sum, buf.Bytes(), Limits{}); again == first {
		t.Fatal("an image past its age came from the cache")
	}
	if d.used != 10*10+entryOverhead || len(d.order) != 1 {
		t.Fatalf("%d bytes in %d entries after the old one expired, want one", d.used, len(d.order))
	}
}
