package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

func TestPutOverwrites(t *testing.T) {
	s, _ := newTestFS(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, "t/s/c/image", []byte("old"), "image/png"); err != nil {
		t.Fatal(err)
	}
	obj, err := s.Put(ctx, "t/s/c/image", []byte("new"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, obj.URI); err != nil || string(got) != "new" {
		t.Fatalf("Get = %q, %v; want new", got, err)
	}
}

func TestGetMissing(t *testing.T) {
	s, _ := newTestFS(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, "t/s/c/image", []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{
		"fs://t/s/c/other",
		"fs://t/s/c/image/below-a-file",
		"fs://t/s/c", // a directory is not an object
		"fs://nobody/none",
	} {
		if _, err := s.Get(ctx, uri); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) error = %v, want ErrNotFound", uri, err)
		}
	}
}

func TestTraversalRejected(t *testing.T) {
	s, dir := newTestFS(t)
	ctx := context.Background()
	// A file next to the store that traversal would reach.
	secret := filepath.Join(filepath.Dir(dir), "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := []string{
		"",
		"../secret",
		"t/../../secret",
		"t/s/../../../secret",
		"/etc/passwd",
		"t//s",
		"t/s/",
		"/",
		".",
		"t/./s",
		"t\\..\\secret",
		"t/s\x00/x",
		"t/s/.tmp-abc",
		"t/\ns",
	}
	for _, key := range bad {
		if _, err := s.Put(ctx, key, []byte("x"), ""); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Put(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if _, err := s.Get(ctx, "fs://"+key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Get(fs://%q) error = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(ctx, "fs://"+key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Delete(fs://%q) error = %v, want ErrInvalidKey", key, err)
		}
	}
	for _, prefix := range []string{"", "/", "../", "t/../..", "fs://", "fs://../x", "/tmp/"} {
		if err := s.DeletePrefix(ctx, prefix); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("DeletePrefix(%q) error = %v, want ErrInvalidKey", prefix, err)
		}
	}
	for _, uri := range []string{"t/s/c/image", "s3://t/s/c/image", "file:///etc/passwd", "fs:///etc/passwd"} {
		if _, err := s.Get(ctx, uri); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Get(%q) error = %v, want ErrInvalidKey", uri, err)
		}
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

func TestDelete(t *testing.T) {
	s, _ := newTestFS(t)
	ctx := context.Background()
	obj, err := s.Put(ctx, "t/s/c/image", []byte("x"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, obj.URI); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(ctx, obj.URI); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: error = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, obj.URI); err != nil {
		t.Fatalf("second Delete: %v, want nil", err)
	}
}

func TestDeletePrefixRemovesOneSession(t *testing.T) {
	s, dir := newTestFS(t)
	ctx := context.Background()
	keys := []string{"t1/ses_1/cap_1/image", "t1/ses_1/cap_2/image", "t1/ses_10/cap_1/image", "t2/ses_1/cap_1/image"}
	uris := map[string]string{}
	for _, k := range keys {
		obj, err := s.Put(ctx, k, []byte(k), "")
		if err != nil {
			t.Fatal(err)
		}
		uris[k] = obj.URI
	}
	if err := s.DeletePrefix(ctx, "t1/ses_1/"); err != nil {
		t.Fatalf("DeletePrefix: %v", err)
	}
	for _, k := range keys {
		_, err := s.Get(ctx, uris[k])
		gone := strings.HasPrefix(k, "t1/ses_1/")
		switch {
		case gone && !errors.Is(err, ErrNotFound):
			t.Errorf("%s: error = %v, want ErrNotFound", k, err)
		case !gone && err != nil:
			t.Errorf("%s: error = %v, want kept", k, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "t1", "ses_1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("session directory still exists: %v", err)
	}
	if err := s.DeletePrefix(ctx, "fs://t1/ses_1/"); err != nil {
		t.Errorf("DeletePrefix of an absent prefix: %v, want nil", err)
	}
}

func TestCancelledContext(t *testing.T) {
	s, _ := newTestFS(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Put(ctx, "t/s/c/image", []byte("x"), ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Put: %v, want context.Canceled", err)
	}
	if _, err := s.Get(ctx, "fs://t/s/c/image"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get: %v, want context.Canceled", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	s, _ := newTestFS(t)
	ctx := context.Background()
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n*2)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Everyone writes the same key (last wins, never a torn file) and one key of its own.
			payload := bytes.Repeat([]byte{byte('a' + i)}, 4096)
			if _, err := s.Put(ctx, "t/s/c/shared", payload, ""); err != nil {
				errs <- err
				return
			}
			key := fmt.Sprintf("t/s/c%d/image", i)
			obj, err := s.Put(ctx, key, payload, "")
			if err != nil {
				errs <- err
				return
			}
			got, err := s.Get(ctx, obj.URI)
			if err != nil || !bytes.Equal(got, payload) {
				errs <- fmt.Errorf("%s: got %d bytes, %v", key, len(got), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.Get(ctx, "fs://t/s/c/shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4096 || !bytes.Equal(got, bytes.Repeat(got[:1], 4096)) {
		t.Fatalf("shared object is torn or short: %d bytes", len(got))
	}
}
