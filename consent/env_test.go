package consent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

const (
	keyAcme = "ck_acme_cmp_key"
	keyBeta = "ck_beta_cmp_key"
	// keyAcmeAPI is acme's API key: valid on the edge, not on the consent API.
	keyAcmeAPI = "sk_acme_api_key"
)

// cluster is an embedded broker with cmp.consents.v1 created, shared by the replicas of
// one test.
type cluster struct {
	brokers []string
	codec   *schemas.Codec
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	b, err := stream.StartEmbedded(stream.WithDataDir(t.TempDir()), stream.WithPartitionsDefault(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := stream.EnsureTopics(ctx, b.Addrs(), []stream.TopicSpec{{Name: schemas.TopicConsents, Partitions: 3}, {Name: schemas.TopicErasures, Partitions: 3}}); err != nil {
		t.Fatal(err)
	}
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{brokers: b.Addrs(), codec: codec}
}

func (cl *cluster) producer(t testing.TB) *stream.Producer {
	t.Helper()
	p, err := stream.NewProducer(stream.WithBrokers(cl.brokers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// follow starts a Follower filling a new Index and waits until it is ready.
func (cl *cluster) follow(t testing.TB) *Index {
	t.Helper()
	ix := NewIndex()
	h, err := stream.NewHistory(schemas.TopicConsents, stream.WithBrokers(cl.brokers), stream.WithKgoOpts(kgo.FetchMaxWait(250*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFollower(h, ix, cl.codec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("follower: %v", err)
		}
	})
	wctx, wcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer wcancel()
	if err := ix.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	return ix
}

func testTenants() *tenant.Registry {
	return tenant.NewRegistry(
		&tenant.Tenant{ID: "acme", APIKeyHashes: []string{tenant.HashKey(keyAcmeAPI)}, CMPAPIKeyHashes: []string{tenant.HashKey(keyAcme)}},
		&tenant.Tenant{ID: "beta", CMPAPIKeyHashes: []string{tenant.HashKey(keyBeta)}},
	)
}

// replica is one consent process: a Follower-filled index and a Server on 127.0.0.1.
type replica struct {
	t     testing.TB
	cl    *cluster
	index *Index
	srv   *Server
	base  string
	http  *http.Client
}

func (cl *cluster) replica(t testing.TB, mutate ...func(*Config)) *replica {
	t.Helper()
	ix := cl.follow(t)
	cfg := Config{Tenants: testTenants(), Publisher: cl.producer(t), Encoder: cl.codec, Index: ix}
	for _, m := range mutate {
		m(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Listener(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return &replica{t: t, cl: cl, index: ix, srv: srv, base: "http://" + ln.Addr().String(),
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON (%d): %q", r.status, r.body)
	}
	return m
}

// do sends a request; key "" sends no x-cmp-api-key.
func (rp *replica) do(method, path, key, contentType string, body []byte) response {
	rp.t.Helper()
	req, err := http.NewRequest(method, rp.base+path, bytes.NewReader(body))
	if err != nil {
		rp.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(HeaderCMPKey, key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := rp.http.Do(req)
	if err != nil {
		rp.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		rp.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

func (rp *replica) post(key string, body any) response {
	rp.t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		rp.t.Fatal(err)
	}
	return rp.do("POST", "/v1/consents", key, "application/json", data)
}

func (rp *replica) get(key, trackingID string) response {
	rp.t.Helper()
	return rp.do("GET", "/v1/consents?tracking_id="+trackingID, key, "", nil)
}

// consents decodes a GET /v1/consents or POST answer.
type consentsAnswer struct {
	TrackingID string `json:"tracking_id"`
	Purposes   map[string]struct {
		Status        string `json:"status"`
		UpdatedAt     string `json:"updated_at"`
		NoticeVersion string `json:"notice_version"`
	} `json:"purposes"`
	Records []struct {
		ConsentID     string `json:"consent_id"`
		PurposeID     string `json:"purpose_id"`
		Status        string `json:"status"`
		NoticeVersion string `json:"notice_version"`
		RecordedAt    string `json:"recorded_at"`
		Channel       string `json:"channel"`
		IP            string `json:"ip"`
		UserAgent     string `json:"user_agent"`
		ProofSHA256   string `json:"proof_sha256"`
	} `json:"records"`
}

func decodeConsents(t testing.TB, r response, status int) consentsAnswer {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	var a consentsAnswer
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return a
}

// expectProblem asserts a problem+json answer with status and code, a request id matching
// the X-Request-Id header, a title and a detail.
func expectProblem(t testing.TB, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d (body %s)", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("content type %q, want application/problem+json", ct)
	}
	m := r.json(t)
	if m["code"] != code || m["type"] != "https://idstream.dev/problems/"+code || m["status"] != float64(status) {
		t.Errorf("problem %v, want code %s status %d", m, code, status)
	}
	if id := r.header.Get("X-Request-Id"); id == "" || m["request_id"] != id {
		t.Errorf("problem request_id %v does not match header %q", m["request_id"], id)
	}
	if m["title"] == "" || m["detail"] == "" {
		t.Errorf("problem lacks title or detail: %v", m)
	}
}

func grant(trackingID string, purposes ...string) map[string]any {
	return decide(trackingID, StatusGranted, purposes...)
}

func decide(trackingID, status string, purposes ...string) map[string]any {
	var ds []map[string]any
	for _, p := range purposes {
		ds = append(ds, map[string]any{"purpose_id": p, "status": status})
	}
	return map[string]any{
		"tracking_id": trackingID, "decisions": ds, "notice_version": "1",
		"channel": "sdk_android", "ip": "203.0.113.24", "user_agent": "ExampleBank/5.2 (Android 15)",
	}
}

// replicaOf starts another replica on the same cluster as rp, after rp's writes.
func (rp *replica) replicaOf(t testing.TB) *replica {
	t.Helper()
	return rp.cl.replica(t)
}
