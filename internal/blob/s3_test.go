package blob

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idstream/idstream/internal/s3server"
)

// startS3 starts a real S3-compatible server (versitygw) with a bucket "blobs" for the test.
func startS3(t *testing.T) *s3server.Server {
	t.Helper()
	srv, err := s3server.Start(context.Background(), filepath.Join(t.TempDir(), "s3"), "blobs")
	if errors.Is(err, s3server.ErrBinaryNotFound) {
		t.Skip("versitygw is not installed (make deps builds it)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func s3Config(srv *s3server.Server, prefix string) S3Config {
	access, secret := srv.Credentials()
	return S3Config{Endpoint: srv.Endpoint(), Bucket: "blobs", Prefix: prefix, AccessKey: access, SecretKey: secret, Insecure: true}
}

// TestS3Contract runs the Store contract against S3 on a real S3-compatible server, each
// test under a prefix of its own.
func TestS3Contract(t *testing.T) {
	srv := startS3(t)
	var n atomic.Int64
	storeContract(t, SchemeS3, func(t *testing.T, maxSize int64) Store {
		cfg := s3Config(srv, "run"+strconv.FormatInt(n.Add(1), 10)+"/")
		cfg.MaxObjectSize = maxSize
		s, err := NewS3(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestS3Store: objects live under the prefix in the bucket; an object damaged at rest reads
// as ErrCorrupt; a missing bucket, wrong credentials and a bad SSE setting are refused.
func TestS3Store(t *testing.T) {
	srv := startS3(t)
	ctx := context.Background()
	s, err := NewS3(ctx, s3Config(srv, "idstream"))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Put(ctx, "t1/ses_1/cap_1/image", []byte("original bytes"), "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	// versitygw's posix backend keeps an object as a file of the bucket's directory.
	file := filepath.Join(srv.Dir(), "blobs", "idstream", "t1", "ses_1", "cap_1", "image")
	if b, err := os.ReadFile(file); err != nil || string(b) != "original bytes" {
		t.Fatalf("object file %s: %q, %v", file, b, err)
	}
	if err := os.WriteFile(file, []byte("damaged bytes!"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, obj.URI); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get of a damaged object: %v, want ErrCorrupt", err)
	}

	bad := s3Config(srv, "")
	bad.Bucket = "nope"
	if _, err := NewS3(ctx, bad); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing bucket: %v", err)
	}
	created := s3Config(srv, "")
	created.Bucket, created.CreateBucket = "made-by-idstream", true
	if s, err := NewS3(ctx, created); err != nil {
		t.Errorf("CreateBucket: %v", err)
	} else if _, err := s.Put(ctx, "t/s/c/x", []byte("x"), ""); err != nil {
		t.Errorf("Put into the created bucket: %v", err)
	}
	bad = s3Config(srv, "")
	bad.SecretKey = "wrong"
	if _, err := NewS3(ctx, bad); err == nil {
		t.Error("wrong credentials accepted")
	}
	bad = s3Config(srv, "")
	bad.SSE = "rot13"
	if _, err := NewS3(ctx, bad); err == nil {
		t.Error("unknown SSE accepted")
	}
}
