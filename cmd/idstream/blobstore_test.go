package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/s3server"
)

// TestS3BlobStore runs a session with its uploads on a real S3-compatible server (every
// group reads them from there), then erases it: the session's objects leave the bucket.
func TestS3BlobStore(t *testing.T) {
	srv, err := s3server.Start(context.Background(), filepath.Join(t.TempDir(), "s3"), "uploads")
	if errors.Is(err, s3server.ErrBinaryNotFound) {
		t.Skip("versitygw is not installed (make deps builds it)")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	access, secret := srv.Credentials()
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	s := testService(t, allGroups, func(c *Config) {
		c.Blobs = BlobStore{URL: "s3://uploads/idstream", Endpoint: srv.Endpoint(), Insecure: true}
	})
	c := newClient(t, s)
	id := runFlow(t, s, c, "nfc_only", 9)
	c.waitStatus(id, "verified")

	st, _, _ := s.states.Get(context.Background(), id)
	objects := func() int {
		n := 0
		_ = filepath.WalkDir(filepath.Join(srv.Dir(), "uploads", "idstream", st.Envelope.TenantID, id), func(_ string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return nil
		})
		return n
	}
	if n := objects(); n < 2 {
		t.Fatalf("%d objects of the session in the bucket, want the chip's files and the selfie", n)
	}
	for _, cp := range st.Captures {
		for _, b := range cp.Blobs {
			if len(b.URI) < 5 || b.URI[:5] != "s3://" {
				t.Errorf("capture %s blob %s: URI %q, want s3://", cp.Step, b.Name, b.URI)
			}
		}
	}
	if r := c.do(http.MethodDelete, "/v1/ekyc/sessions/"+id, c.key, "", nil); r.status != http.StatusNoContent {
		t.Fatalf("erase: %d %s", r.status, r.body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for objects() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d objects of the erased session left in the bucket", objects())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
