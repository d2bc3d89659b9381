// Package blob is the claim-check store for image and chip bytes: the edge puts an upload
// here and produces only its reference (URI, SHA-256, size, media type) to Kafka; processors
// get the bytes back by URI. Store is the contract; FS implements it on a local directory,
// and an S3-compatible implementation satisfies the same interface (URI scheme "s3://").
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Errors returned by stores. They are wrapped with context; test with errors.Is.
var (
	// ErrNotFound is returned by Get when no object exists at the URI (for instance after
	// the session was erased).
	ErrNotFound = errors.New("blob: not found")
	// ErrInvalidKey is returned when a key, URI or prefix is malformed or could escape the
	// store (path traversal).
	ErrInvalidKey = errors.New("blob: invalid key")
	// ErrTooLarge is returned when an object exceeds the store's maximum object size.
	ErrTooLarge = errors.New("blob: object too large")
)

// Object describes one stored object. It maps one-to-one onto schemas.BlobRef (plus a name).
type Object struct {
	URI       string // scheme-qualified and independent of where the store lives, e.g. "fs://t1/ses_1/cap_1/image"
	SHA256    string // lowercase hex digest of the bytes
	Size      int64  // bytes
	MediaType string // e.g. "image/jpeg"
}

// Store keeps opaque objects under slash-separated keys such as
// "<tenant>/<session>/<capture>/<name>". Implementations are safe for concurrent use.
type Store interface {
	// Put stores data under key, replacing any object already there, atomically: a
	// concurrent Get sees the old bytes or the new ones, never a mix. It returns
	// ErrInvalidKey for a malformed key and ErrTooLarge above the store's size limit.
	Put(ctx context.Context, key string, data []byte, mediaType string) (Object, error)
	// Get returns the bytes at uri: ErrNotFound when absent, ErrInvalidKey for a malformed
	// or foreign URI, ErrTooLarge when the object exceeds the store's size limit.
	Get(ctx context.Context, uri string) ([]byte, error)
	// Delete removes the object at uri. Deleting an absent object is not an error.
	Delete(ctx context.Context, uri string) error
	// DeletePrefix removes every object whose key lies under prefix, taken as whole path
	// segments ("t1/ses_1/" removes "t1/ses_1/..." but not "t1/ses_10/..."). An empty
	// prefix is refused with ErrInvalidKey; an absent prefix is not an error.
	DeletePrefix(ctx context.Context, prefix string) error
}

// ValidateKey reports whether key is a safe relative object key: non-empty slash-separated
// segments, none of them "." or "..", none starting with "." (reserved for temporary files),
// no leading slash, no backslash, no NUL or other control characters. It returns an error
// wrapping ErrInvalidKey otherwise.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if len(key) > 1024 {
		return fmt.Errorf("%w: key longer than 1024 bytes", ErrInvalidKey)
	}
	if strings.HasPrefix(key, "/") {
		return fmt.Errorf("%w: absolute key", ErrInvalidKey)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == 0:
			return fmt.Errorf("%w: NUL byte in key", ErrInvalidKey)
		case c == '\\':
			return fmt.Errorf("%w: backslash in key", ErrInvalidKey)
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("%w: control character in key", ErrInvalidKey)
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("%w: empty path segment", ErrInvalidKey)
		case seg == "." || seg == "..":
			return fmt.Errorf("%w: relative path segment %q", ErrInvalidKey, seg)
		case strings.HasPrefix(seg, "."):
			return fmt.Errorf("%w: path segment starts with a dot", ErrInvalidKey)
		}
	}
	return nil
}

// keyOfURI returns the key of a URI of scheme, or an error wrapping ErrInvalidKey.
func keyOfURI(uri, scheme string) (string, error) {
	key, ok := strings.CutPrefix(uri, scheme)
	if !ok {
		return "", fmt.Errorf("%w: URI is not of scheme %q", ErrInvalidKey, scheme)
	}
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// checkPut is what every Put checks first: ctx alive, key valid, size within maxSize.
func checkPut(ctx context.Context, key string, size int, maxSize int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: put: %w", err)
	}
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("blob: put: %w", err)
	}
	if int64(size) > maxSize {
		return fmt.Errorf("blob: put: %w: %d bytes, limit %d", ErrTooLarge, size, maxSize)
	}
	return nil
}

// readObject reads the object at uri from r, whose size the store reported: ErrTooLarge
// when that size, or what r holds, exceeds maxSize.
func readObject(r io.Reader, size, maxSize int64, uri string) ([]byte, error) {
	if size > maxSize {
		return nil, fmt.Errorf("blob: get %s: %w: %d bytes, limit %d", uri, ErrTooLarge, size, maxSize)
	}
	data, err := io.ReadAll(io.LimitReader(r, maxSize+1))
	if err != nil {
		return nil, fmt.Errorf("blob: get %s: read: %w", uri, err)
	}
	if int64(len(data)) > maxSize {
		return nil, fmt.Errorf("blob: get %s: %w: limit %d", uri, ErrTooLarge, maxSize)
	}
	return data, nil
}
