package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/tlsfiles"
)

// BlobStore is where the uploads and chip files live: a directory (one host, or a shared
// filesystem) or an S3-compatible bucket (any number of hosts).
type BlobStore struct {
	URL      string         // --blob-store: "" (the data dir's blobs/), or s3://bucket[/prefix]
	Endpoint string         // --s3-endpoint: host[:port] of the S3 API
	Region   string         // --s3-region
	Insecure bool           // --s3-insecure: plain HTTP
	SSE      string         // --s3-sse: "", "s3" or "kms:<key id>"
	TLSFiles tlsfiles.Files // --s3-tls-ca (and a client certificate)
	Create   bool           // --s3-create-bucket: create the bucket when missing
}

// blobStoreFlags adds the flags of b to fs, with defaults from the environment.
func blobStoreFlags(fs *flag.FlagSet, b *BlobStore) {
	str := func(p *string, name, def, help string) { stringFlag(fs, p, name, def, help) }
	str(&b.URL, "blob-store", "", "where uploads live: empty for --data-dir/blobs (one host or a shared filesystem), or s3://bucket[/prefix] (credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, else an IAM role)")
	str(&b.Endpoint, "s3-endpoint", "s3.amazonaws.com", "host[:port] of the S3 API")
	str(&b.Region, "s3-region", "", "S3 region")
	str(&b.SSE, "s3-sse", "", `server-side encryption of each object: "s3" (the server's keys), "kms:<key id>", or empty`)
	boolFlag(fs, &b.Insecure, "s3-insecure", "plain HTTP to the S3 API, for a private network")
	boolFlag(fs, &b.Create, "s3-create-bucket", "create the bucket when it does not exist")
	str(&b.TLSFiles.CA, "s3-tls-ca", "", "PEM file of the CA certificates that sign the S3 API's certificate (default: the system's roots)")
}

// open returns the store b names; dataDir holds the filesystem store's directory.
func (b BlobStore) open(ctx context.Context, dataDir string) (blob.Store, error) {
	if b.URL == "" {
		return blob.NewFS(filepath.Join(dataDir, "blobs"))
	}
	u, err := url.Parse(b.URL)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("--blob-store %q: want s3://bucket[/prefix]", b.URL)
	}
	cfg := blob.S3Config{
		Endpoint: b.Endpoint, Bucket: u.Host, Prefix: strings.Trim(u.Path, "/"), Region: b.Region,
		AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"), SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
		Insecure:     b.Insecure, SSE: b.SSE, CreateBucket: b.Create,
	}
	if b.TLSFiles != (tlsfiles.Files{}) {
		if cfg.TLS, err = b.TLSFiles.Config(); err != nil {
			return nil, fmt.Errorf("s3: %w", err)
		}
	}
	// A store started beside the process (compose) may not answer yet: wait for it as for
	// the brokers. Anything but a connection failure (a refused login, a missing bucket)
	// fails at once.
	var s *blob.S3
	permanent := func(err error) bool {
		var netErr net.Error
		return !errors.As(err, &netErr)
	}
	err = awaitServer(ctx, s3Wait, nil, "S3", permanent, func() (err error) {
		s, err = blob.NewS3(ctx, cfg)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// s3Wait is how long a process waits at start for an S3 endpoint that does not answer.
const s3Wait = 2 * time.Minute
