package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newTestFS(t *testing.T, opts ...FSOption) (*FS, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "blobs")
	s, err := NewFS(dir, opts...)
	if err != nil {
		t.Fatalf("NewFS: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

func TestPutGetRoundTrip(t *testing.T) {
	s, dir := newTestFS(t)
	ctx := context.Background()
	data := []byte("\xff\xd8\xffnot really a jpeg")
	obj, err := s.Put(ctx, "t1/ses_1/cap_1/image", data, "image/jpeg")
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	sum := sha256.Sum256(data)
	want := Object{URI: "fs://t1/ses_1/cap_1/image", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data)), MediaType: "image/jpeg"}
	if obj != want {
		t.Fatalf("Put = %+v, want %+v", obj, want)
	}
	got, err := s.Get(ctx, obj.URI)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("Get = %q, want %q", got, data)
	}

	fi, err := os.Stat(filepath.Join(dir, "t1", "ses_1", "cap_1", "image"))
	if err != nil {
		t.Fatalf("stat object file: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("file mode = %o, want 600", perm)
	}
	di, err := os.Stat(filepath.Join(dir, "t1", "ses_1"))
	if err != nil {
		t.Fatalf("stat session dir: %v", err)
	}
	if perm := di.Mode().Perm(); perm != 0o700 {
		t.Errorf("dir mode = %o, want 700", perm)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "t1", "ses_1", "cap_1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("capture dir holds %d entries, want 1 (no temporary files left)", len(entries))
	}
}

func TestURIIsIndependentOfRoot(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	first := filepath.Join(base, "a")
	s1, err := NewFS(first)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s1.Put(ctx, "t1/ses_1/cap_1/image", []byte("x"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(base, "b")
	if err := os.Rename(first, moved); err != nil {
		t.Fatal(err)
	}
	s2, err := NewFS(moved)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if strings.Contains(obj.URI, base) {
		t.Fatalf("URI %q contains the root directory", obj.URI)
	}
	if got, err := s2.Get(ctx, obj.URI); err != nil || string(got) != "x" {
		t.Fatalf("Get after move = %q, %v", got, err)
	}
}

// TestTraversalRejected: keys that would climb out of the root (the contract refuses them
// with ErrInvalidKey) leave a file beside the store untouched.
func TestTraversalRejected(t *testing.T) {
	s, dir := newTestFS(t)
	ctx := context.Background()
	secret := filepath.Join(filepath.Dir(dir), "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"../secret", "t/../../secret", "t\\..\\secret"} {
		if _, err := s.Put(ctx, key, []byte("x"), ""); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Put(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(ctx, "fs://"+key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Delete(fs://%q) error = %v, want ErrInvalidKey", key, err)
		}
	}
	if err := s.DeletePrefix(ctx, "../"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("DeletePrefix(../) error = %v, want ErrInvalidKey", err)
	}
	if got, err := os.ReadFile(secret); err != nil || string(got) != "secret" {
		t.Fatalf("file outside the store changed: %q, %v", got, err)
	}
}

func TestSymlinkEscapeRefused(t *testing.T) {
	s, dir := newTestFS(t)
	ctx := context.Background()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "image"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "evil")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "fs://evil/image"); err == nil {
		t.Fatal("Get through a symlink leading outside the root succeeded")
	}
	if _, err := s.Put(ctx, "evil/image2", []byte("x"), ""); err == nil {
		t.Fatal("Put through a symlink leading outside the root succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "image2")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file was written outside the root: %v", err)
	}
}

func TestMaxObjectSize(t *testing.T) {
	s, dir := newTestFS(t, WithMaxObjectSize(8))
	ctx := context.Background()
	if _, err := s.Put(ctx, "t/s/c/ok", []byte("12345678"), ""); err != nil {
		t.Fatalf("Put at the limit: %v", err)
	}
	if _, err := s.Put(ctx, "t/s/c/big", []byte("123456789"), ""); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Put above the limit: error = %v, want ErrTooLarge", err)
	}
	// A file that grew past the limit behind the store's back is refused by Get.
	if err := os.WriteFile(filepath.Join(dir, "t", "s", "c", "grown"), []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "fs://t/s/c/grown"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Get above the limit: error = %v, want ErrTooLarge", err)
	}
}
