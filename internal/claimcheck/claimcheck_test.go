package claimcheck

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/imagecheck"
)

// TestRedeem: a blob is redeemed for its bytes or its image when it is there, matches its
// digest and (for an image) decodes within limits; a missing blob is ErrGone; a digest that
// does not match, a foreign URI (a blob over the store's limit goes the same way, as the
// store says ErrTooLarge) and bytes that are no image or one over the limits are
// ErrUnusable.
func TestRedeem(t *testing.T) {
	ctx := context.Background()
	store, err := blob.NewFS(filepath.Join(t.TempDir(), "blobs"), blob.WithMaxObjectSize(1<<16))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	var buf bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 64, 48))
	img.SetGray(3, 4, color.Gray{200})
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	pic, err := store.Put(ctx, "t1/ses_1/cap_1/image", buf.Bytes(), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	text, err := store.Put(ctx, "t1/ses_1/cap_2/image", []byte("not an image"), "image/png")
	if err != nil {
		t.Fatal(err)
	}

	got, err := Image(ctx, store, pic.URI, strings.ToUpper(pic.SHA256), imagecheck.Limits{}, nil)
	if err != nil || got.Bounds().Dx() != 64 {
		t.Fatalf("Image = %v, %v; want the 64 px wide picture", got, err)
	}
	if data, err := Bytes(ctx, store, pic.URI, ""); err != nil || !bytes.Equal(data, buf.Bytes()) {
		t.Fatalf("Bytes without a digest = %d bytes, %v", len(data), err)
	}
	if _, err := Image(ctx, store, store.URI("t1/ses_1/cap_9/image"), "", imagecheck.Limits{}, nil); !errors.Is(err, ErrGone) {
		t.Errorf("missing blob: %v, want ErrGone", err)
	}
	for name, c := range map[string]struct {
		uri, sha string
		limits   imagecheck.Limits
	}{
		"digest of other bytes": {pic.URI, text.SHA256, imagecheck.Limits{}},
		"foreign URI":           {"s3://elsewhere/x", "", imagecheck.Limits{}},
		"no image":              {text.URI, text.SHA256, imagecheck.Limits{}},
		"over the limits":       {pic.URI, pic.SHA256, imagecheck.Limits{MaxWidth: 32}},
	} {
		if _, err := Image(ctx, store, c.uri, c.sha, c.limits, nil); !errors.Is(err, ErrUnusable) {
			t.Errorf("%s: %v, want ErrUnusable", name, err)
		}
	}
}

// TestImageDecodedOnce: with a Decoded, a blob read twice is decoded once (the same image
// comes back), yet still read and checked each time: once erased it is ErrGone, and bytes
// that do not match their reference are ErrUnusable, whatever was decoded before.
func TestImageDecodedOnce(t *testing.T) {
	ctx := context.Background()
	store, err := blob.NewFS(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 40, 30))); err != nil {
		t.Fatal(err)
	}
	pic, err := store.Put(ctx, "t1/ses_1/cap_1/image", buf.Bytes(), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	decoded := imagecheck.NewDecoded(1 << 20)
	first, err := Image(ctx, store, pic.URI, pic.SHA256, imagecheck.Limits{}, decoded)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Image(ctx, store, pic.URI, pic.SHA256, imagecheck.Limits{}, decoded)
	if err != nil || again != first {
		t.Fatalf("read again: %v (the same image: %v)", err, again == first)
	}
	if _, err := Image(ctx, store, pic.URI, strings.Repeat("0", 64), imagecheck.Limits{}, decoded); !errors.Is(err, ErrUnusable) {
		t.Fatalf("a reference the bytes do not match: %v, want ErrUnusable", err)
	}
	if err := store.Delete(ctx, pic.URI); err != nil {
		t.Fatal(err)
	}
	if _, err := Image(ctx, store, pic.URI, pic.SHA256, imagecheck.Limits{}, decoded); !errors.Is(err, ErrGone) {
		t.Fatalf("an erased blob decoded before: %v, want ErrGone", err)
	}
}
