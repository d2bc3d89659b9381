// Package claimcheck redeems the claim checks the edge puts on Kafka (a blob's URI and the
// SHA-256 of its bytes) for the groups that read the bytes: fetched from the blob store,
// checked against the digest and, for an image, decoded within limits (imagecheck), so that
// no bytes the edge did not vouch for reach OpenCV or Tesseract. The functions are safe for
// concurrent use when the store is.
package claimcheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"strings"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/imagecheck"
)

var (
	// ErrGone is returned when the blob no longer exists: the session was erased, or its
	// blobs expired. A group skips the capture; there is nothing to retry.
	ErrGone = errors.New("claimcheck: blob gone")
	// ErrUnusable is returned when the blob cannot be used: larger than the store allows,
	// a malformed URI, bytes that do not match the digest, or (Image) bytes that are no
	// image within the limits. A group reports the capture unreadable.
	ErrUnusable = errors.New("claimcheck: blob unusable")
)

// Bytes returns the bytes of the blob at uri, checked against sha256Hex (hex, either case;
// empty for no check). It returns ErrGone or ErrUnusable as documented on them; any other
// error is the store's failure, wrapped (transient: the caller retries).
func Bytes(ctx context.Context, store blob.Store, uri, sha256Hex string) ([]byte, error) {
	data, _, err := fetch(ctx, store, uri, sha256Hex)
	return data, err
}

// fetch is Bytes that also returns the bytes' SHA-256.
func fetch(ctx context.Context, store blob.Store, uri, sha256Hex string) ([]byte, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	data, err := store.Get(ctx, uri)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return nil, sum, ErrGone
	case errors.Is(err, blob.ErrTooLarge), errors.Is(err, blob.ErrInvalidKey):
		return nil, sum, fmt.Errorf("%w: %w", ErrUnusable, err)
	case err != nil:
		return nil, sum, fmt.Errorf("claimcheck: get %s: %w", uri, err)
	}
	sum = sha256.Sum256(data)
	if sha256Hex != "" && !strings.EqualFold(hex.EncodeToString(sum[:]), sha256Hex) {
		return nil, sum, fmt.Errorf("%w: SHA-256 does not match its reference", ErrUnusable)
	}
	return data, sum, nil
}

// Image returns the image in the blob at uri (see Bytes), decoded within limits, or taken
// from decoded when this process decoded the same bytes within the same limits lately (nil:
// decoded here). The blob is read and checked either way: an erased blob is ErrGone, whatever
// was decoded of it. Bytes that are no image within the limits are ErrUnusable. The image may
// be shared with other readers of the same blob: it must not be modified.
func Image(ctx context.Context, store blob.Store, uri, sha256Hex string, limits imagecheck.Limits, decoded *imagecheck.Decoded) (image.Image, error) {
	data, sum, err := fetch(ctx, store, uri, sha256Hex)
	if err != nil {
		return nil, err
	}
	img, _, err := decoded.Decode(sum, data, limits)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	return img, nil
}
