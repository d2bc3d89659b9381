package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/processors"
	"github.com/idstream/idstream/processors/chip/chiptest"
)

// testEnv is a running service, the test PKI whose CSCA it trusts, and real face photos.
type testEnv struct {
	*Service
	pki     *mrtdtest.PKI
	faces   *facetest.Env
	selfies atomic.Int64 // makes every selfie's bytes unique: the fraud group flags replays
}

// testService starts the real wiring (embedded broker unless KAFKA_BROKERS is set, the
// groups given, the edge, the consent API, the sandbox registry) in a temporary data dir,
// trusting a test CSCA generated for it, and stops it when the test ends.
func testService(t testing.TB, groups []string, mutate ...func(*Config)) *testEnv {
	t.Helper()
	pki, err := mrtdtest.NewPKI(mrtdtest.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	cscaDir := t.TempDir()
	pem := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pki.CSCA.Certificate.Raw})
	if err := os.WriteFile(filepath.Join(cscaDir, "csca.pem"), pem, 0o600); err != nil {
		t.Fatal(err)
	}
	faces := facetest.New(t)
	cfg := Config{
		ModelsDir:     faces.ModelsDir(),
		CSCADir:       cscaDir,
		DataDir:       t.TempDir(),
		EdgeAddr:      "127.0.0.1:0",
		ConsentAddr:   "127.0.0.1:0",
		RegistryAddr:  "127.0.0.1:0",
		KafkaAddr:     "127.0.0.1:0",
		Partitions:    3,
		QualityBudget: 3 * time.Second,
		Groups:        groups,
		Brokers:       processors.BrokersFromEnv(),
	}
	for _, m := range mutate {
		m(&cfg)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	s, err := Start(context.Background(), cfg, serviceOptions{withEdge: true, withConsent: true, withRegistry: true, kgoOpts: []kgo.Opt{kgo.FetchMaxWait(250 * time.Millisecond)}}, log)
	if err != nil {
		t.Fatalf("start service: %v", err)
	}
	t.Cleanup(s.Close)
	env := &testEnv{Service: s, pki: pki, faces: faces}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for !s.states.Ready() {
		select {
		case <-ctx.Done():
			t.Fatal("session-state view never became ready")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return env
}

// chipRead is the nfc step body of a real chip (signed by the env's test PKI, holding the
// sandbox registry's matching persona) answering the session's nonce (base64, as Session
// Init returns it).
func (e *testEnv) chipRead(t testing.TB, nonceB64 string) []byte {
	t.Helper()
	nonce, err := base64.StdEncoding.DecodeString(nonceB64)
	if err != nil {
		t.Fatalf("nonce: %v", err)
	}
	return chiptest.RequestJSON(chiptest.NewChip(t, e.pki, chiptest.Persona(t, "match"), nonce, chiptest.WithFace(e.chipFace(t))))
}

// chipFace is the chip's photo of the person of the selfie: PortraitA, as a JPEG.
func (e *testEnv) chipFace(t testing.TB) []byte {
	t.Helper()
	return facetest.JPEG(t, e.faces.PortraitA(t))
}

// client is a small HTTP client of the edge for tests.
type client struct {
	t    testing.TB
	base string
	key  string
	http *http.Client
}

// newClient is a client of s with the sandbox tenant's API key, or with key when given.
func newClient(t testing.TB, s *testEnv, key ...string) *client {
	c := &client{t: t, base: "http://" + s.edgeAddr, http: &http.Client{Timeout: 20 * time.Second}}
	if len(key) > 0 {
		c.key = key[0]
		return c
	}
	b, err := os.ReadFile(filepath.Join(s.cfg.DataDir, "sandbox-api-key"))
	if err != nil {
		t.Fatalf("sandbox key: %v", err)
	}
	c.key = strings.TrimSpace(string(b))
	return c
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
		t.Fatalf("response %d is not JSON: %v: %s", r.status, err, r.body)
	}
	return m
}

func (c *client) do(method, path, token, contentType string, body []byte, hdr ...string) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func (c *client) postJSON(path, token string, v any, hdr ...string) response {
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.do(http.MethodPost, path, token, "application/json", b, hdr...)
}

// openSession inits a session of flow and returns the 201 body.
func (c *client) openSession(flow string) map[string]any {
	c.t.Helper()
	r := c.postJSON("/v1/ekyc/sessions", c.key, map[string]any{"flow": flow})
	if r.status != http.StatusCreated {
		c.t.Fatalf("init %s: %d %s", flow, r.status, r.body)
	}
	return r.json(c.t)
}

// upload posts an image step as multipart and returns the response.
func (c *client) upload(sessionID, endpoint, side string, img []byte, token string) response {
	c.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if side != "" {
		_ = w.WriteField("side", side)
	}
	fw, _ := w.CreateFormFile("image", "capture.jpg")
	_, _ = fw.Write(img)
	_ = w.Close()
	return c.do(http.MethodPost, "/v1/ekyc/sessions/"+sessionID+"/"+endpoint, token, w.FormDataContentType(), buf.Bytes())
}

// waitStatus polls Data Get until the session reaches one of the statuses.
func (c *client) waitStatus(sessionID string, statuses ...string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last response
	for time.Now().Before(deadline) {
		last = c.do(http.MethodGet, "/v1/ekyc/sessions/"+sessionID, c.key, "", nil)
		if last.status == http.StatusOK {
			m := last.json(c.t)
			for _, s := range statuses {
				if m["status"] == s {
					return m
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("session %s never reached %v; last: %d %s", sessionID, statuses, last.status, last.body)
	return nil
}

// sharpImage is the sample document image: any sane blur/glare/exposure gate passes it.
func sharpImage(t testing.TB, seed uint64) []byte {
	t.Helper()
	b, err := sampleDocument(seed)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// blurryImage is a smooth gradient: no detail at all.
func blurryImage(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 1000, 630))
	for y := 0; y < 630; y++ {
		for x := 0; x < 1000; x++ {
			v := uint8(100 + x*60/1000)
			img.Set(x, y, color.RGBA{v, v, v, 255})
		}
	}
	return encodeJPEG(t, img)
}

func encodeJPEG(t testing.TB, img image.Image) []byte {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func str(v any) string { return fmt.Sprint(v) }

// selfie is a selfie of the person of PortraitA: the portrait centred on a larger frame
// whose top-left corner carries the call's number as black and white 16-pixel blocks, so
// that no two selfies are the same bytes (the fraud group flags replayed images).
func (e *testEnv) selfie(t testing.TB) []byte {
	t.Helper()
	p := e.faces.PortraitA(t)
	n := e.selfies.Add(1)
	out := image.NewRGBA(image.Rect(0, 0, 800, 900))
	draw.Draw(out, out.Bounds(), image.NewUniform(color.RGBA{140, 145, 150, 255}), image.Point{}, draw.Src)
	for bit := range 16 {
		c := color.RGBA{0, 0, 0, 255}
		if n&(1<<bit) != 0 {
			c = color.RGBA{255, 255, 255, 255}
		}
		draw.Draw(out, image.Rect(bit*16, 0, bit*16+16, 16), image.NewUniform(c), image.Point{}, draw.Src)
	}
	draw.Draw(out, p.Bounds().Add(image.Pt(100, 100)), p, image.Point{}, draw.Src)
	return facetest.JPEG(t, out)
}
