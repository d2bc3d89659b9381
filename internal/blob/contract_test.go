package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// storeContract runs the Store contract against the stores newStore makes (each test gets
// a fresh, empty one with the size limit given; 0: the default), whose URIs have scheme.
func storeContract(t *testing.T, scheme string, newStore func(t *testing.T, maxSize int64) Store) {
	ctx := context.Background()
	t.Run("round trip", func(t *testing.T) {
		s := newStore(t, 0)
		data := []byte("\xff\xd8\xffnot really a jpeg")
		obj, err := s.Put(ctx, "t1/ses_1/cap_1/image", data, "image/jpeg")
		if err != nil {
			t.Fatalf("Put: %v", err)
		}
		sum := sha256.Sum256(data)
		want := Object{URI: scheme + "t1/ses_1/cap_1/image", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data)), MediaType: "image/jpeg"}
		if obj != want {
			t.Fatalf("Put = %+v, want %+v", obj, want)
		}
		if got, err := s.Get(ctx, obj.URI); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get = %q, %v; want %q", got, err, data)
		}
	})
	t.Run("overwrite", func(t *testing.T) {
		s := newStore(t, 0)
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
	})
	t.Run("missing", func(t *testing.T) {
		s := newStore(t, 0)
		if _, err := s.Put(ctx, "t/s/c/image", []byte("x"), ""); err != nil {
			t.Fatal(err)
		}
		for _, uri := range []string{scheme + "t/s/c/other", scheme + "t/s/c/image/below-an-object", scheme + "t/s/c", scheme + "nobody/none"} {
			if _, err := s.Get(ctx, uri); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get(%q) error = %v, want ErrNotFound", uri, err)
			}
		}
	})
	t.Run("invalid keys", func(t *testing.T) {
		s := newStore(t, 0)
		for _, key := range []string{"", "../secret", "t/../../secret", "/etc/passwd", "t//s", "t/s/", "/", ".", "t/./s",
			"t\\..\\secret", "t/s\x00/x", "t/s/.tmp-abc", "t/\ns"} {
			if _, err := s.Put(ctx, key, []byte("x"), ""); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Put(%q) error = %v, want ErrInvalidKey", key, err)
			}
			if _, err := s.Get(ctx, scheme+key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Get(%q) error = %v, want ErrInvalidKey", scheme+key, err)
			}
			if err := s.Delete(ctx, scheme+key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Delete(%q) error = %v, want ErrInvalidKey", scheme+key, err)
			}
		}
		for _, prefix := range []string{"", "/", "../", "t/../..", scheme, scheme + "../x", "/tmp/"} {
			if err := s.DeletePrefix(ctx, prefix); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("DeletePrefix(%q) error = %v, want ErrInvalidKey", prefix, err)
			}
		}
		foreign := "s3://t/s/c/image"
		if scheme == SchemeS3 {
			foreign = "fs://t/s/c/image"
		}
		for _, uri := range []string{"t/s/c/image", foreign, "file:///etc/passwd", scheme + "/etc/passwd"} {
			if _, err := s.Get(ctx, uri); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Get(%q) error = %v, want ErrInvalidKey", uri, err)
			}
		}
	})
	t.Run("size limit", func(t *testing.T) {
		s := newStore(t, 8)
		if _, err := s.Put(ctx, "t/s/c/ok", []byte("12345678"), ""); err != nil {
			t.Fatalf("Put at the limit: %v", err)
		}
		if _, err := s.Put(ctx, "t/s/c/big", []byte("123456789"), ""); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Put above the limit: error = %v, want ErrTooLarge", err)
		}
	})
	t.Run("delete", func(t *testing.T) {
		s := newStore(t, 0)
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
	})
	t.Run("delete prefix removes one session", func(t *testing.T) {
		s := newStore(t, 0)
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
		if err := s.DeletePrefix(ctx, scheme+"t1/ses_1/"); err != nil {
			t.Errorf("DeletePrefix of an absent prefix: %v, want nil", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		s := newStore(t, 0)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.Put(ctx, "t/s/c/image", []byte("x"), ""); !errors.Is(err, context.Canceled) {
			t.Errorf("Put: %v, want context.Canceled", err)
		}
		if _, err := s.Get(ctx, scheme+"t/s/c/image"); !errors.Is(err, context.Canceled) {
			t.Errorf("Get: %v, want context.Canceled", err)
		}
	})
	t.Run("concurrent use", func(t *testing.T) {
		s := newStore(t, 0)
		const n = 16
		var wg sync.WaitGroup
		errs := make(chan error, n*2)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Everyone writes the same key (last wins, never a torn object) and one of its own.
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
				if got, err := s.Get(ctx, obj.URI); err != nil || !bytes.Equal(got, payload) {
					errs <- fmt.Errorf("%s: got %d bytes, %v", key, len(got), err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		got, err := s.Get(ctx, scheme+"t/s/c/shared")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4096 || !bytes.Equal(got, bytes.Repeat(got[:1], 4096)) {
			t.Fatalf("shared object is torn or short: %d bytes", len(got))
		}
	})
}

// TestFSContract runs the Store contract against FS.
func TestFSContract(t *testing.T) {
	storeContract(t, SchemeFS, func(t *testing.T, maxSize int64) Store {
		s, _ := newTestFS(t, WithMaxObjectSize(maxSize))
		return s
	})
}
