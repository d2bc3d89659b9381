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
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	xdraw "golang.org/x/image/draw"

	"github.com/idstream/idstream/internal/cardrender"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/internal/imagequality"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/processors/chip/chiptest"
	"github.com/idstream/idstream/stream"
)

// TestMain makes sure Tesseract (the ocr group) runs with OMP_THREAD_LIMIT=1: OpenMP reads
// it when the library loads, before any Go code runs, so the test binary re-executes itself
// with it, as the idstream binary does.
//
// Run as IDSTREAM_TEST_AS_BINARY=1, the test binary is the idstream binary: `idstream chaos`
// started from a test runs its processes from it.
func TestMain(m *testing.M) {
	if os.Getenv("IDSTREAM_TEST_AS_BINARY") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if os.Getenv("OMP_THREAD_LIMIT") != "1" {
		os.Setenv("OMP_THREAD_LIMIT", "1")
		exe, err := os.Executable()
		if err == nil {
			err = syscall.Exec(exe, os.Args, os.Environ())
		}
		fmt.Fprintln(os.Stderr, "cmd test: re-exec with OMP_THREAD_LIMIT=1 failed:", err)
	}
	os.Exit(m.Run())
}

// testEnv is a running service, the test PKI whose CSCA it trusts, and real face photos.
type testEnv struct {
	*Service
	pki     *mrtdtest.PKI
	faces   *facetest.Env
	selfies atomic.Int64 // makes every selfie's bytes unique: the fraud group flags replays
	docs    atomic.Int64 // the same for every document picture
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
		MetricsAddr:   "127.0.0.1:0",
		Partitions:    3,
		QualityBudget: 3 * time.Second,
		Groups:        groups,
		Brokers:       stream.BrokersFromEnv(),
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
	for !s.states.Ready() || (s.consents != nil && !s.consents.Ready()) {
		select {
		case <-ctx.Done():
			t.Fatal("session-state view or consent index never became ready")
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
	return c.waitView(sessionID, fmt.Sprint("status ", statuses), func(m map[string]any) bool {
		return slices.Contains(statuses, fmt.Sprint(m["status"]))
	})
}

// waitView polls Data Get until the session's body satisfies done (up to 60 s) and returns
// it; the test fails with what (the condition, for the message) when it never does.
func (c *client) waitView(sessionID, what string, done func(map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last response
	for time.Now().Before(deadline) {
		last = c.do(http.MethodGet, "/v1/ekyc/sessions/"+sessionID, c.key, "", nil)
		if last.status == http.StatusOK {
			if m := last.json(c.t); done(m) {
				return m
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("session %s never reached %s; last: %d %s", sessionID, what, last.status, last.body)
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

// selfie is a selfie of the person of PortraitA: the portrait on a larger frame whose
// top-left corner carries the call's number as black and white 16-pixel blocks, so that no
// two selfies are the same bytes (the fraud group flags replayed images). The portrait's
// place (a 3×3 grid of 100-pixel steps), its mirroring and the frame's shade change with the
// call too, so that selfies are not near-identical either (the fraud group also flags
// perceptual near-duplicates of a selfie): the first 16 calls are at least 16 of 64 pHash
// bits apart (the threshold is 10); later calls may repeat a look.
func (e *testEnv) selfie(t testing.TB) []byte {
	t.Helper()
	p := e.faces.PortraitA(t)
	n := e.selfies.Add(1)
	v := int(n-1) % 36
	out := image.NewRGBA(image.Rect(0, 0, 800, 900))
	shade := uint8(70 + 90*((v/18)%2))
	draw.Draw(out, out.Bounds(), image.NewUniform(color.RGBA{shade, shade + 5, shade + 10, 255}), image.Point{}, draw.Src)
	if (v/9)%2 == 1 {
		m := image.NewRGBA(p.Bounds())
		w := p.Bounds().Dx()
		for y := range p.Bounds().Dy() {
			for x := range w {
				m.SetRGBA(w-1-x, y, p.RGBAAt(x, y))
			}
		}
		p = m
	}
	draw.Draw(out, p.Bounds().Add(image.Pt(100*(v%3), 100*((v/3)%3))), p, image.Point{}, draw.Src)
	for bit := range 16 {
		c := color.RGBA{0, 0, 0, 255}
		if n&(1<<bit) != 0 {
			c = color.RGBA{255, 255, 255, 255}
		}
		draw.Draw(out, image.Rect(bit*16, 0, bit*16+16, 16), image.NewUniform(c), image.Point{}, draw.Src)
	}
	return facetest.JPEG(t, out)
}

// Photo boxes of the cardrender templates (where the ocr group finds the holder's face).
var (
	cardPhotoBox     = image.Rect(50, 230, 300, 560)
	passportPhotoBox = image.Rect(50, 160, 350, 560)
)

var (
	rendOnce sync.Once
	rend     *cardrender.Renderer
	rendErr  error
)

func renderer(t testing.TB) *cardrender.Renderer {
	t.Helper()
	rendOnce.Do(func() { rend, rendErr = cardrender.New() })
	if rendErr != nil {
		t.Fatalf("card renderer: %v", rendErr)
	}
	return rend
}

// person is the holder of the env's documents: the sandbox registry's matching persona, the
// person of the chip (chipRead), with the chip's issue and expiry dates (a year before and
// ten years after pki.Now, at day precision).
func (e *testEnv) person(t testing.TB) cardrender.Person {
	t.Helper()
	p := chiptest.Persona(t, "match")
	dob, err := time.Parse(time.DateOnly, p.DateOfBirth)
	if err != nil {
		t.Fatalf("persona date of birth: %v", err)
	}
	day := func(d time.Time) time.Time { return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC) }
	return cardrender.Person{
		IDNumber:         p.IDNumber,
		FullName:         p.FullName,
		DateOfBirth:      dob,
		Sex:              p.Sex,
		PlaceOfOrigin:    "Xã Tân Lập, Huyện Đông Anh, Hà Nội",
		PlaceOfResidence: "12 Lê Lợi, Quận Ba Đình, Hà Nội",
		IssueDate:        day(e.pki.Now.AddDate(-1, 0, 0)),
		ExpiryDate:       day(e.pki.Now.AddDate(10, 0, 0)),
		PassportNumber:   "C1234567",
		PlaceOfBirth:     "Hà Nội",
		Marks:            "Nốt ruồi cách 2cm trên đuôi mắt trái",
	}
}

// document finishes a render as an upload: the portrait scaled into photo (unless empty),
// and the call's number as 8-pixel blocks near the top-right corner, away from every OCR
// field box, so that no two captures are the same bytes. The blocks only shade the paper
// (a set bit is 24 levels darker): black marks there would move the document outline the
// OCR finds, and with it every field box.
func (e *testEnv) document(t testing.TB, img image.Image, photo image.Rectangle) []byte {
	t.Helper()
	out := image.NewRGBA(img.Bounds())
	draw.Draw(out, out.Bounds(), img, img.Bounds().Min, draw.Src)
	if !photo.Empty() {
		p := e.faces.PortraitA(t)
		xdraw.CatmullRom.Scale(out, photo, p, p.Bounds(), xdraw.Src, nil)
	}
	n := e.docs.Add(1)
	right, top := out.Bounds().Max.X-24, out.Bounds().Min.Y+12
	for bit := range 16 {
		if n&(1<<bit) == 0 {
			continue
		}
		for y := top; y < top+8; y++ {
			for x := right - (bit+1)*8; x < right-bit*8; x++ {
				c := out.RGBAAt(x, y)
				c.R, c.G, c.B = c.R-min(c.R, 24), c.G-min(c.G, 24), c.B-min(c.B, 24)
				out.SetRGBA(x, y, c)
			}
		}
	}
	return encodeJPEG(t, out)
}

// front is the front of the holder's chip ID card, with the portrait in its photo box.
func (e *testEnv) front(t testing.TB) []byte {
	t.Helper()
	img, _ := renderer(t).ChipIDFront(e.person(t))
	return e.document(t, img, cardPhotoBox)
}

// back is the back of the holder's chip ID card, with its TD1 zone.
func (e *testEnv) back(t testing.TB) []byte {
	t.Helper()
	img, _ := renderer(t).ChipIDBack(e.person(t))
	return e.document(t, img, image.Rectangle{})
}

// passportPage is the holder's passport data page (TD3 zone), with the portrait.
func (e *testEnv) passportPage(t testing.TB) []byte {
	t.Helper()
	img, _ := renderer(t).Passport(e.person(t))
	return e.document(t, img, passportPhotoBox)
}

// vehicleFront is the front of a synthetic vehicle registration card (seed 1: every
// required field reads with full confidence; seeds 7 and 10 read the model code weakly).
func (e *testEnv) vehicleFront(t testing.TB) []byte {
	t.Helper()
	img, _ := renderer(t).VehicleRegistration(cardrender.SyntheticVehicle(1))
	return e.document(t, img, image.Rectangle{})
}

// vehicleBack is the back of the synthetic vehicle registration card of vehicleFront.
func (e *testEnv) vehicleBack(t testing.TB) []byte {
	t.Helper()
	img, _ := renderer(t).VehicleRegistrationBack(cardrender.SyntheticVehicle(1))
	return e.document(t, img, image.Rectangle{})
}

// documentFor is the picture a session of flow uploads for a document side: the holder's
// card or passport page, or a vehicle registration.
func (e *testEnv) documentFor(t testing.TB, flow, side string) []byte {
	t.Helper()
	switch {
	case side == "passport":
		return e.passportPage(t)
	case flow == "vehicle_registration" && side == "front":
		return e.vehicleFront(t)
	case flow == "vehicle_registration":
		return e.vehicleBack(t)
	case side == "back":
		return e.back(t)
	}
	return e.front(t)
}

// TestTestDocumentsPassTheGate: every document picture the tests upload is a JPEG that the
// default quality gate passes, and no two calls give the same bytes (the fraud group flags
// replayed captures).
func TestTestDocumentsPassTheGate(t *testing.T) {
	pki, err := mrtdtest.NewPKI(mrtdtest.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{pki: pki, faces: facetest.New(t)}
	gate := imagequality.NewGate(imagequality.DefaultThresholds())
	seen := map[string]string{}
	for name, build := range map[string]func(testing.TB) []byte{
		"front": e.front, "back": e.back, "passport": e.passportPage,
		"vehicle front": e.vehicleFront, "vehicle back": e.vehicleBack,
	} {
		for range 2 {
			b := build(t)
			img, format, err := image.Decode(bytes.NewReader(b))
			if err != nil || format != "jpeg" {
				t.Fatalf("%s: %s, %v; want a JPEG", name, format, err)
			}
			if res := gate.Assess(img, imagequality.Document); !res.Passed {
				t.Errorf("%s: the gate answers %v (blur %.0f, glare %.3f, brightness %.0f)", name, res.Reasons, res.Blur, res.Glare, res.Brightness)
			}
			if other, dup := seen[string(b)]; dup {
				t.Errorf("%s: same bytes as %s", name, other)
			}
			seen[string(b)] = name
		}
	}
}
