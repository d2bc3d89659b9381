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
	data, err := store.Get(ctx, uri)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return nil, ErrGone
	case errors.Is(err, blob.ErrTooLarge), errors.Is(err, blob.ErrInvalidKey):
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	case err != nil:
		return nil, fmt.Errorf("claimcheck: get %s: %w", uri, err)
	}
	if sha256Hex != "" {
		sum := sha256.Sum256(data)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), sha256Hex) {
			return nil, fmt.Errorf("%w: SHA-256 does not match its reference", ErrUnusable)
		}
	}
	return data, nil
}

// Image returns the image in the blob at uri (see Bytes), decoded within limits; bytes that
// are no image within them are ErrUnusable.
func Image(ctx context.Context, store blob.Store, uri, sha256Hex string, limits imagecheck.Limits) (image.Image, error) {
	data, err := Bytes(ctx, store, uri, sha256Hex)
	if err != nil {
		return nil, err
	}
	img, _, err := imagecheck.Decode(data, limits)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	return img, nil
}
