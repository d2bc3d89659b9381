package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/encrypt"
)

// SchemeS3 is the URI scheme of objects kept by S3. Like "fs://", the URI names the key
// only, not the bucket or the prefix, so stored references stay valid when the objects move
// to another bucket.
const SchemeS3 = "s3://"

// S3Config is where an S3 store keeps its objects and how it reaches them.
type S3Config struct {
	Endpoint     string // host[:port] of the S3 API, e.g. "s3.eu-west-1.amazonaws.com" or "minio:9000"
	Bucket       string // must exist
	Prefix       string // put before every key, e.g. "idstream/" (optional)
	Region       string // optional
	AccessKey    string // credentials (AWS_ACCESS_KEY_ID); both empty: the AWS environment, then IAM roles
	SecretKey    string // AWS_SECRET_ACCESS_KEY
	SessionToken string // AWS_SESSION_TOKEN of temporary credentials (optional)
	Insecure     bool   // plain HTTP instead of HTTPS (a test server, a private network)
	TLS          *tls.Config
	// SSE asks the server to encrypt each object at rest: "" none, "s3" (SSE-S3, the
	// server's keys), or "kms:<key id>" (SSE-KMS).
	SSE string
	// MaxObjectSize is the largest object Put accepts and Get returns (0:
	// DefaultMaxObjectSize).
	MaxObjectSize int64
	// CreateBucket creates the bucket when it does not exist (else NewS3 fails).
	CreateBucket bool
}

// S3 is a Store on an S3-compatible object store. An object with key k lives at
// <Prefix>k in the bucket, so its keys stay "<tenant>/<session>/..." and a lifecycle rule can
// expire or transition a tenant's objects by prefix, or every object by age. Each Put sends
// the body's MD5 (the server refuses a body damaged on the way) and records the SHA-256 as
// object metadata; Get checks it, so an object damaged at rest reads as an error, not as
// other bytes. Objects are held whole in memory, as the Store contract has them: images of
// at most MaxObjectSize, which every reader decodes whole anyway. Safe for concurrent use.
type S3 struct {
	cl      *minio.Client
	bucket  string
	prefix  string
	sse     encrypt.ServerSide
	maxSize int64
}

var _ Store = (*S3)(nil)

// sha256Meta is the user metadata holding an object's SHA-256 (hex).
const sha256Meta = "Sha256"

// NewS3 returns an S3 store for cfg after checking that its bucket exists. It returns an
// error for a missing endpoint or bucket, a bad SSE setting, or a bucket that cannot be
// reached.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("blob: new s3 store: endpoint and bucket are required")
	}
	if cfg.Prefix != "" && !strings.HasSuffix(cfg.Prefix, "/") {
		cfg.Prefix += "/"
	}
	if cfg.Prefix != "" {
		if err := ValidateKey(strings.TrimSuffix(cfg.Prefix, "/")); err != nil {
			return nil, fmt.Errorf("blob: new s3 store: prefix: %w", err)
		}
	}
	var sse encrypt.ServerSide
	switch {
	case cfg.SSE == "":
	case cfg.SSE == "s3":
		sse = encrypt.NewSSE()
	case strings.HasPrefix(cfg.SSE, "kms:") && len(cfg.SSE) > len("kms:"):
		var err error
		if sse, err = encrypt.NewSSEKMS(strings.TrimPrefix(cfg.SSE, "kms:"), nil); err != nil {
			return nil, fmt.Errorf("blob: new s3 store: sse: %w", err)
		}
	default:
		return nil, fmt.Errorf("blob: new s3 store: sse %q: want \"\", \"s3\" or \"kms:<key id>\"", cfg.SSE)
	}
	opts := &minio.Options{Secure: !cfg.Insecure, Region: cfg.Region}
	if cfg.AccessKey != "" || cfg.SecretKey != "" {
		opts.Creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)
	} else {
		// No keys: the AWS environment variables, then IAM (a Kubernetes service account's
		// web identity, an ECS task role, an EC2 instance profile).
		opts.Creds = credentials.NewChainCredentials([]credentials.Provider{&credentials.EnvAWS{}, &credentials.IAM{}})
	}
	if cfg.TLS != nil {
		tr, err := minio.DefaultTransport(!cfg.Insecure)
		if err != nil {
			return nil, fmt.Errorf("blob: new s3 store: %w", err)
		}
		tr.TLSClientConfig = cfg.TLS.Clone()
		opts.Transport = tr
	}
	cl, err := minio.New(cfg.Endpoint, opts)
	if err != nil {
		return nil, fmt.Errorf("blob: new s3 store: %w", err)
	}
	ok, err := cl.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("blob: new s3 store: bucket %s: %w", cfg.Bucket, err)
	}
	if !ok && cfg.CreateBucket {
		err := cl.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region})
		if code := minio.ToErrorResponse(err).Code; err != nil && code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
			return nil, fmt.Errorf("blob: new s3 store: create bucket %s: %w", cfg.Bucket, err)
		}
		ok = true
	}
	if !ok {
		return nil, fmt.Errorf("blob: new s3 store: bucket %s does not exist", cfg.Bucket)
	}
	maxSize := cfg.MaxObjectSize
	if maxSize <= 0 {
		maxSize = DefaultMaxObjectSize
	}
	return &S3{cl: cl, bucket: cfg.Bucket, prefix: cfg.Prefix, sse: sse, maxSize: maxSize}, nil
}

// URI returns the URI an object stored under key has (it does not check that it exists).
func (s *S3) URI(key string) string { return SchemeS3 + key }

// Put implements Store.
func (s *S3) Put(ctx context.Context, key string, data []byte, mediaType string) (Object, error) {
	if err := checkPut(ctx, key, len(data), s.maxSize); err != nil {
		return Object{}, err
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	contentType := mediaType
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	_, err := s.cl.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
		ContentType:          contentType,
		UserMetadata:         map[string]string{sha256Meta: digest},
		ServerSideEncryption: s.sse,
		SendContentMd5:       true,
		DisableMultipart:     true,
	})
	if err != nil {
		return Object{}, fmt.Errorf("blob: put %s: %w", key, err)
	}
	return Object{URI: s.URI(key), SHA256: digest, Size: int64(len(data)), MediaType: mediaType}, nil
}

// Get implements Store. It returns ErrCorrupt when the bytes do not match the SHA-256
// recorded at Put (objects put by other means carry none and are not checked here; the
// claim check compares every read with the digest in its event anyway).
func (s *S3) Get(ctx context.Context, uri string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("blob: get: %w", err)
	}
	key, err := s.keyOf(uri)
	if err != nil {
		return nil, fmt.Errorf("blob: get: %w", err)
	}
	obj, err := s.cl.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("blob: get %s: %w", uri, s3Error(err))
	}
	defer obj.Close()
	info, err := obj.Stat()
	if err != nil {
		return nil, fmt.Errorf("blob: get %s: %w", uri, s3Error(err))
	}
	data, err := readObject(obj, info.Size, s.maxSize, uri)
	if err != nil {
		return nil, err
	}
	if want := info.UserMetadata[sha256Meta]; want != "" {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			return nil, fmt.Errorf("blob: get %s: %w: SHA-256 %s, recorded %s", uri, ErrCorrupt, got, want)
		}
	}
	return data, nil
}

// ErrCorrupt is returned by S3.Get when an object's bytes do not match the SHA-256
// recorded when it was put.
var ErrCorrupt = errors.New("blob: object corrupt")

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, uri string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: delete: %w", err)
	}
	key, err := s.keyOf(uri)
	if err != nil {
		return fmt.Errorf("blob: delete: %w", err)
	}
	if err := s.cl.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{}); err != nil {
		if errors.Is(s3Error(err), ErrNotFound) {
			return nil
		}
		return fmt.Errorf("blob: delete %s: %w", uri, err)
	}
	return nil
}

// DeletePrefix implements Store. prefix is a key prefix ("t1/ses_1/"), optionally written
// as a URI ("s3://t1/ses_1/"); the trailing slash is optional. It lists the objects under
// the prefix (a session's handful), then deletes them in one batch. On a versioned bucket
// this, like Delete, leaves the bytes as noncurrent versions: keep versioning off, or expire
// noncurrent versions with a lifecycle rule.
func (s *S3) DeletePrefix(ctx context.Context, prefix string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: delete prefix: %w", err)
	}
	p := strings.TrimSuffix(strings.TrimPrefix(prefix, SchemeS3), "/")
	if err := ValidateKey(p); err != nil {
		return fmt.Errorf("blob: delete prefix: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx) // ends the lister if we stop reading it
	defer cancel()
	var objects []minio.ObjectInfo
	for o := range s.cl.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + p + "/", Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("blob: delete prefix %s: list: %w", p, o.Err)
		}
		objects = append(objects, o)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: delete prefix %s: %w", p, err)
	}
	if len(objects) == 0 {
		return nil
	}
	queue := make(chan minio.ObjectInfo, len(objects)) // filled and closed: no sender to leak
	for _, o := range objects {
		queue <- o
	}
	close(queue)
	var first error
	// Every result is read, so that minio-go's goroutines, which send them without looking
	// at ctx, all end.
	for r := range s.cl.RemoveObjects(ctx, s.bucket, queue, minio.RemoveObjectsOptions{}) {
		if r.Err != nil && !errors.Is(s3Error(r.Err), ErrNotFound) && first == nil {
			first = fmt.Errorf("blob: delete prefix %s: %s: %w", p, r.ObjectName, r.Err)
		}
	}
	if first != nil {
		return first
	}
	if err := ctx.Err(); err != nil { // a cancelled batch reports no error of its own
		return fmt.Errorf("blob: delete prefix %s: %w", p, err)
	}
	return nil
}

// keyOf returns the key of an "s3://" URI, or an error wrapping ErrInvalidKey.
func (s *S3) keyOf(uri string) (string, error) { return keyOfURI(uri, SchemeS3) }

// s3Error wraps a missing object's answer (NoSuchKey) as ErrNotFound and keeps the others:
// a missing bucket or a 404 from something else is an error, never an erased object.
func s3Error(err error) error {
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return err
}
