package blob

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// SchemeFS is the URI scheme of objects kept by FS.
const SchemeFS = "fs://"

// DefaultMaxObjectSize is the size limit of an FS without WithMaxObjectSize: 32 MiB.
const DefaultMaxObjectSize int64 = 32 << 20

// FS is a Store on a local directory. An object with key k lives in the file <root>/k and
// has the URI "fs://k", which does not depend on where root is, so stored references stay
// valid when the directory moves. Files are written atomically (temporary file, fsync,
// rename, fsync of the directory) with mode 0600 in directories of mode 0700. All access
// goes through an os.Root, so even a symbolic link planted under root cannot lead outside
// it. FS is safe for concurrent use; concurrent Puts to one key leave one of the writes.
type FS struct {
	root    *os.Root
	maxSize int64
}

var _ Store = (*FS)(nil)

// FSOption configures an FS.
type FSOption func(*FS)

// WithMaxObjectSize sets the largest object Put accepts and Get returns (default
// DefaultMaxObjectSize). Values below 1 leave the default.
func WithMaxObjectSize(n int64) FSOption {
	return func(s *FS) {
		if n > 0 {
			s.maxSize = n
		}
	}
}

// NewFS opens (creating it with mode 0700 if needed) the directory root as a store.
// Call Close when done.
func NewFS(root string, opts ...FSOption) (*FS, error) {
	if root == "" {
		return nil, errors.New("blob: new fs store: empty root directory")
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("blob: new fs store: %w", err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("blob: new fs store: %w", err)
	}
	s := &FS{root: r, maxSize: DefaultMaxObjectSize}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Close releases the store's directory handle. The store must not be used afterwards.
func (s *FS) Close() error {
	if err := s.root.Close(); err != nil {
		return fmt.Errorf("blob: close fs store: %w", err)
	}
	return nil
}

// URI returns the URI an object stored under key has (it does not check that it exists).
func (s *FS) URI(key string) string { return SchemeFS + key }

// Put implements Store.
func (s *FS) Put(ctx context.Context, key string, data []byte, mediaType string) (Object, error) {
	if err := checkPut(ctx, key, len(data), s.maxSize); err != nil {
		return Object{}, err
	}
	dir := path.Dir(key)
	if dir != "." {
		if err := s.root.MkdirAll(dir, 0o700); err != nil {
			return Object{}, fmt.Errorf("blob: put: create directory: %w", err)
		}
	}
	tmp := path.Join(dir, ".tmp-"+rand.Text())
	if err := s.writeFile(tmp, data); err != nil {
		_ = s.root.Remove(tmp)
		return Object{}, fmt.Errorf("blob: put: %w", err)
	}
	if err := s.root.Rename(tmp, key); err != nil {
		_ = s.root.Remove(tmp)
		return Object{}, fmt.Errorf("blob: put: rename into place: %w", err)
	}
	if err := s.syncDir(dir); err != nil {
		return Object{}, fmt.Errorf("blob: put: %w", err)
	}
	sum := sha256.Sum256(data)
	return Object{
		URI:       s.URI(key),
		SHA256:    hex.EncodeToString(sum[:]),
		Size:      int64(len(data)),
		MediaType: mediaType,
	}, nil
}

func (s *FS) writeFile(name string, data []byte) error {
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write temporary file: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync temporary file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close temporary file: %w", err)
	}
	return nil
}

func (s *FS) syncDir(dir string) error {
	d, err := s.root.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory for sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}

// Get implements Store.
func (s *FS) Get(ctx context.Context, uri string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("blob: get: %w", err)
	}
	key, err := s.keyOf(uri)
	if err != nil {
		return nil, fmt.Errorf("blob: get: %w", err)
	}
	f, err := s.root.Open(key)
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("blob: get %s: %w", uri, ErrNotFound)
		}
		return nil, fmt.Errorf("blob: get: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("blob: get: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("blob: get %s: %w", uri, ErrNotFound)
	}
	return readObject(f, fi.Size(), s.maxSize, uri)
}

// Delete implements Store.
func (s *FS) Delete(ctx context.Context, uri string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: delete: %w", err)
	}
	key, err := s.keyOf(uri)
	if err != nil {
		return fmt.Errorf("blob: delete: %w", err)
	}
	fi, err := s.root.Lstat(key)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return fmt.Errorf("blob: delete: %w", err)
	}
	if fi.IsDir() {
		return nil // a directory is not an object
	}
	if err := s.root.Remove(key); err != nil && !isNotExist(err) {
		return fmt.Errorf("blob: delete: %w", err)
	}
	return nil
}

// DeletePrefix implements Store. prefix is a key prefix ("t1/ses_1/"), optionally written
// as a URI ("fs://t1/ses_1/"); the trailing slash is optional.
func (s *FS) DeletePrefix(ctx context.Context, prefix string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: delete prefix: %w", err)
	}
	p := strings.TrimPrefix(prefix, SchemeFS)
	p = strings.TrimSuffix(p, "/")
	if err := ValidateKey(p); err != nil {
		return fmt.Errorf("blob: delete prefix: %w", err)
	}
	if err := s.root.RemoveAll(p); err != nil {
		return fmt.Errorf("blob: delete prefix: %w", err)
	}
	return nil
}

// keyOf returns the key of an "fs://" URI, or an error wrapping ErrInvalidKey.
func (s *FS) keyOf(uri string) (string, error) { return keyOfURI(uri, SchemeFS) }

// isNotExist also treats "a path component is a file" as absence.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
