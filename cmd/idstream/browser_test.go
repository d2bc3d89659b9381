package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	xdraw "golang.org/x/image/draw"

	"github.com/idstream/idstream/edge"
	"github.com/idstream/idstream/internal/tenant"
)

// browser is a headless Chromium (Debian's) whose camera is a fake device fed from a Y4M
// file the test rewrites between steps: Chromium reads the file again each time a page
// opens the camera, so each step sees the picture the test put there.
type browser struct {
	ctx      context.Context
	camera   string // the Y4M file behind the fake camera
	shotsDir string // where screenshots go
	console  *consoleLog
}

// consoleLog keeps what the page logged at warning or error level (CSP violations among it)
// and its uncaught exceptions.
type consoleLog struct{ lines chan string }

// listen is the tab's event listener: it must return at once, so a full log drops lines.
func (l *consoleLog) listen(ev any) {
	var line string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeWarning {
			return
		}
		var parts []string
		for _, a := range ev.Args {
			parts = append(parts, string(a.Value)+a.Description)
		}
		line = string(ev.Type) + ": " + strings.Join(parts, " ")
	case *runtime.EventExceptionThrown:
		line = "exception: " + ev.ExceptionDetails.Text
		if e := ev.ExceptionDetails.Exception; e != nil {
			line += " " + e.Description
		}
	case *cdplog.EventEntryAdded: // CSP violations are reported here
		if ev.Entry.Level != cdplog.EntryLevelError && ev.Entry.Level != cdplog.EntryLevelWarning {
			return
		}
		line = string(ev.Entry.Level) + ": " + ev.Entry.Text
	default:
		return
	}
	select {
	case l.lines <- line:
	default:
	}
}

// chromiumPath returns Debian's Chromium, or skips the test where it cannot be installed
// (CI installs it with make deps, so there a missing browser fails instead).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed: make deps installs Debian's chromium for the browser tests")
	}
	t.Skip("skipping the browser test: Chromium is not installed (make deps installs Debian's chromium)")
	return ""
}

// artefactDir is where a test's screenshots are kept: $IDSTREAM_ARTEFACTS/<test>, or
// .artefacts/<test> at the repository's root.
func artefactDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("IDSTREAM_ARTEFACTS")
	if root == "" {
		root = filepath.Join("..", "..", ".artefacts")
	}
	dir := filepath.Join(root, t.Name())
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// newBrowser starts headless Chromium with a fake camera showing first (a JPEG).
func newBrowser(t *testing.T, first []byte) *browser {
	t.Helper()
	exe := chromiumPath(t)
	dir := t.TempDir()
	b := &browser{camera: filepath.Join(dir, "camera.y4m"), shotsDir: artefactDir(t), console: &consoleLog{lines: make(chan string, 256)}}
	b.show(t, first)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root in CI
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(480, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-video-capture", b.camera),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithListener(b.console.listen))
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b.ctx = ctx
	return b
}

// show puts a picture (JPEG) behind the fake camera, as one Y4M frame (4:2:0).
func (b *browser) show(t *testing.T, jpg []byte) {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(jpg))
	if err != nil {
		t.Fatalf("camera picture: %v", err)
	}
	r := img.Bounds()
	w, h := r.Dx()&^1, r.Dy()&^1
	ycc := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for y := range h {
		for x := range w {
			cr, cg, cb, _ := img.At(r.Min.X+x, r.Min.Y+y).RGBA()
			yy, u, v := color.RGBToYCbCr(uint8(cr>>8), uint8(cg>>8), uint8(cb>>8))
			ycc.Y[ycc.YOffset(x, y)] = yy
			if x%2 == 0 && y%2 == 0 {
				ycc.Cb[ycc.COffset(x, y)] = u
				ycc.Cr[ycc.COffset(x, y)] = v
			}
		}
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "YUV4MPEG2 W%d H%d F30:1 Ip A1:1 C420jpeg\nFRAME\n", w, h)
	out.Write(ycc.Y)
	out.Write(ycc.Cb)
	out.Write(ycc.Cr)
	tmp := b.camera + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, b.camera); err != nil { // the browser never reads half a file
		t.Fatal(err)
	}
}

// run runs actions with a timeout, failing the test with the page's state and console.
func (b *browser) run(t *testing.T, what string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fail(t, what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.fail(t, expr, err)
	}
	return v
}

// fail ends the test with a screenshot, the SDK's markup and what the page logged.
func (b *browser) fail(t *testing.T, what string, err error) {
	t.Helper()
	b.screenshot(t, "failed")
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(".ids-root")||document.body).outerHTML.slice(0, 3000)`))
	t.Fatalf("%s: %v\npage: %s\nconsole: %s", what, err, page, b.consoleText())
}

func (b *browser) consoleText() string {
	var lines []string
	for {
		select {
		case l := <-b.console.lines:
			lines = append(lines, l)
		default:
			return strings.Join(lines, "\n")
		}
	}
}

// screenshot saves the page as <name>.png among the test's artefacts.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(b.shotsDir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// axeScript is axe-core (the accessibility engine, npm, MPL-2.0) from the web SDK's
// development packages, which make deps installs.
var axeScript = filepath.Join("..", "..", "sdk", "web", "node_modules", "axe-core", "axe.min.js")

// accessible runs axe-core's WCAG 2 A and AA rules on the page as it is and fails the test
// on every serious or critical violation.
func (b *browser) accessible(t *testing.T, screen string) {
	t.Helper()
	src, err := os.ReadFile(axeScript)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("axe-core: %v (make deps runs npm ci in sdk/web)", err)
		}
		t.Logf("skipping the accessibility check of %s: %v", screen, err)
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	// DevTools evaluation is not bound by the page's CSP, which forbids such scripts.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](string(src))); err != nil {
		b.fail(t, "load axe-core", err)
	}
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`axe.run(document, {runOnly: ["wcag2a", "wcag2aa"]}).then(r =>
		r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
			.map(v => v.id + ": " + v.help + " (" + v.nodes.map(n => n.target.join(" ")).join(", ") + ")"))`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.fail(t, "run axe-core", err)
	}
	for _, v := range found {
		t.Errorf("%s: accessibility: %s", screen, v)
	}
}

// state waits until the SDK's root shows state.
func state(s string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(`.ids-root[data-state="` + s + `"]`))
}

// blurred is pic made unreadable as an out-of-focus camera would: scaled down eightfold
// and back up.
func blurred(t *testing.T, pic []byte) []byte {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(pic))
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	small := image.NewRGBA(image.Rect(0, 0, r.Dx()/10, r.Dy()/10))
	xdraw.ApproxBiLinear.Scale(small, small.Bounds(), img, r, xdraw.Src, nil)
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	xdraw.BiLinear.Scale(out, out.Bounds(), small, small.Bounds(), xdraw.Src, nil)
	return encodeJPEG(t, out)
}

// TestCapturePageInBrowser: a person completes the id_card flow on the hosted capture page
// in headless Chromium, with the camera a fake device showing the project's rendered card
// and a real face photo: the front is first out of focus and the page asks for a retake in
// words, then every step is accepted and the page reaches "verified". Screenshots of each
// screen are kept under .artefacts/ (IDSTREAM_ARTEFACTS).
func TestCapturePageInBrowser(t *testing.T) {
	s := testService(t, allGroups)
	c := newClient(t, s)
	init := c.openSession("id_card")
	link := str(init["capture_url"])
	if !strings.HasPrefix(link, "http://"+s.edgeAddr+"/v1/capture/"+str(init["session_id"])+"?token=") {
		t.Fatalf("capture_url = %q", link)
	}
	b := newBrowser(t, blurred(t, s.front(t)))

	b.run(t, "open the page", 60*time.Second, chromedp.Navigate(link+"&locale=en"), state("intro:document_front"))
	if href := eval[string](t, b, "location.href"); strings.Contains(href, "token") {
		t.Errorf("the address bar still holds the token: %s", href)
	}
	b.screenshot(t, "01-front-intro")
	b.accessible(t, "front intro")

	b.run(t, "open the camera", 60*time.Second, chromedp.Click(chromedp.CSS(".ids-open-camera")),
		state("camera:document_front"), chromedp.WaitEnabled(chromedp.CSS(".ids-shutter")))
	b.run(t, "on-device hint", 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`.ids-hint[data-hint="blurry"]`)))
	b.screenshot(t, "02-front-camera-blurred")
	b.accessible(t, "front camera")
	b.run(t, "take the blurred front", 60*time.Second, chromedp.Click(chromedp.CSS(".ids-shutter")), state("retake:document_front"))
	reasons := eval[[]string](t, b, `Array.from(document.querySelectorAll(".ids-reasons li"), li => li.dataset.reason + ": " + li.textContent)`)
	if len(reasons) == 0 || !strings.HasPrefix(reasons[0], "blurry: ") || !strings.Contains(reasons[0], "hold the phone still") {
		t.Errorf("retake reasons = %q, want blurry with its instruction", reasons)
	}
	b.screenshot(t, "03-front-retake")
	b.accessible(t, "front retake")

	steps := []struct {
		name, open string
		picture    []byte
	}{
		{"document_front", ".ids-retake", s.front(t)},
		{"document_back", ".ids-open-camera", s.back(t)},
		{"selfie", ".ids-open-camera", s.selfie(t)},
	}
	for i, st := range steps {
		b.show(t, st.picture)
		if i > 0 {
			b.run(t, st.name+" intro", 60*time.Second, state("intro:"+st.name))
		}
		b.run(t, st.name+" camera", 60*time.Second, chromedp.Click(st.open),
			state("camera:"+st.name), chromedp.WaitEnabled(chromedp.CSS(".ids-shutter")),
			chromedp.WaitVisible(chromedp.CSS(`.ids-hint[data-hint="ok"]`))) // in focus: no blur hint
		b.screenshot(t, fmt.Sprintf("%02d-%s-camera", 4+i, st.name))
		b.run(t, st.name+" photo", 10*time.Second, chromedp.Click(chromedp.CSS(".ids-shutter")))
	}
	b.run(t, "the decision", 3*time.Minute, state("final:verified"))
	b.screenshot(t, "07-verified")
	b.accessible(t, "verified")

	got := c.waitStatus(str(init["session_id"]), "verified", "rejected")
	if got["status"] != "verified" {
		t.Fatalf("Data Get status %v: %v", got["status"], got)
	}
	if console := b.consoleText(); strings.Contains(console, "Content Security Policy") || strings.Contains(console, "exception") {
		t.Errorf("the page logged:\n%s", console)
	}
}

// TestCapturePageChipHandoff: the chip_id_card flow on the hosted page, in Vietnamese, with
// the card's sides uploaded as files (the fallback where no camera may be used) and the chip
// step handed to a phone: the page shows a QR code of a one-time link; the "phone" (this
// test, as the mobile SDK would) opens it, reads the chip and posts it with the link's
// token; the page moves on by itself, takes the selfie and reaches "verified". The used
// link is then refused.
func TestCapturePageChipHandoff(t *testing.T) {
	s := testService(t, allGroups)
	c := newClient(t, s)
	init := c.openSession("chip_id_card")
	id := str(init["session_id"])
	b := newBrowser(t, s.selfie(t))
	b.run(t, "open the page", 60*time.Second, chromedp.Navigate(str(init["capture_url"])), state("intro:document_front"))
	if lang := eval[string](t, b, "document.querySelector('.ids-root').lang"); lang != "vi" {
		t.Errorf("page language %q, want the session's vi", lang)
	}

	// Bad files get the API's clear errors on the page: a text file is refused before it is
	// sent; one named .jpg is sent and answered 422 invalid_image.
	dir := t.TempDir()
	for _, bad := range []string{"notes.txt", "notes.jpg"} {
		file := filepath.Join(dir, bad)
		if err := os.WriteFile(file, []byte("not a picture"), 0o600); err != nil {
			t.Fatal(err)
		}
		b.run(t, "upload "+bad, 30*time.Second, chromedp.SetUploadFiles(chromedp.CSS("#ids-file-document_front"), []string{file}),
			state("error:document_front"), chromedp.WaitVisible(chromedp.CSS(`.ids-error[data-code="invalid_image"]`)))
		b.run(t, "clear", 10*time.Second, chromedp.Evaluate[chromedp.Void](`document.querySelector(".ids-error").remove()`))
	}
	b.screenshot(t, "00-invalid-file")
	for i, side := range []struct {
		step string
		pic  []byte
	}{{"document_front", s.front(t)}, {"document_back", s.back(t)}} {
		file := filepath.Join(dir, side.step+".jpg")
		if err := os.WriteFile(file, side.pic, 0o600); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.run(t, side.step+" intro", 60*time.Second, state("intro:"+side.step))
		}
		b.run(t, side.step+" upload", 60*time.Second, chromedp.SetUploadFiles(chromedp.CSS("#ids-file-"+side.step), []string{file}))
	}

	b.run(t, "the hand-off", 60*time.Second, state("handoff:nfc"), chromedp.WaitVisible(chromedp.CSS(".ids-qr")))
	if w := eval[float64](t, b, "document.querySelector('.ids-qr').naturalWidth"); w == 0 {
		t.Error("the QR code image did not load")
	}
	b.screenshot(t, "01-chip-handoff")
	b.accessible(t, "chip hand-off")
	link := eval[string](t, b, "document.querySelector('.ids-handoff-link').href")
	u, err := url.Parse(link)
	if err != nil || u.Path != "/v1/capture/"+id+"/phone" {
		t.Fatalf("hand-off link %q", link)
	}
	token := u.Query().Get("token")
	if r := c.do(http.MethodGet, u.RequestURI(), "", "", nil, "Accept", "text/html"); r.status != http.StatusOK || !strings.Contains(string(r.body), "idstream://nfc?") {
		t.Fatalf("phone page: %d %s", r.status, r.body)
	}
	if r := c.do(http.MethodPost, "/v1/ekyc/sessions/"+id+"/nfc", token, "application/json", s.chipRead(t, str(init["nonce"]))); r.status != http.StatusAccepted {
		t.Fatalf("the phone's chip step: %d %s", r.status, r.body)
	}

	b.run(t, "selfie after the chip", 60*time.Second, state("intro:selfie"))
	b.run(t, "selfie camera", 60*time.Second, chromedp.Click(chromedp.CSS(".ids-open-camera")),
		state("camera:selfie"), chromedp.WaitEnabled(chromedp.CSS(".ids-shutter")))
	b.screenshot(t, "02-selfie-camera")
	b.run(t, "selfie photo", 10*time.Second, chromedp.Click(chromedp.CSS(".ids-shutter")))
	b.run(t, "the decision", 3*time.Minute, state("final:verified"))
	b.screenshot(t, "03-verified")

	if r := c.do(http.MethodPost, "/v1/ekyc/sessions/"+id+"/nfc", token, "application/json", s.chipRead(t, str(init["nonce"]))); r.status != http.StatusConflict || r.json(t)["code"] != "handoff_used" {
		t.Errorf("the used link's token again: %d %s, want 409 handoff_used", r.status, r.body)
	}
	if console := b.consoleText(); strings.Contains(console, "Content Security Policy") || strings.Contains(console, "exception") {
		t.Errorf("the page logged:\n%s", console)
	}
}

// TestBackOfficeInBrowser: a reviewer signs in to the back office with their key, sees the
// session the policy sent to review in the queue, opens it (its pictures, what each source
// read, every check), claims it with "c" and approves it with "a"; the session is then
// verified, decided by the reviewer. Each screen passes axe-core's WCAG 2 A/AA rules.
func TestBackOfficeInBrowser(t *testing.T) {
	s, c, reviewer := reviewService(t)
	id := runFlow(t, s, c, "id_card", 1)
	reviewer.awaitCase(t, id)
	b := newBrowser(t, s.selfie(t))
	view := func(v string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(chromedp.CSS(`#backoffice[data-view="` + v + `"]`))
	}
	b.run(t, "open the back office", 60*time.Second, chromedp.Navigate(c.base+"/v1/review/ui"), view("signin"))
	b.accessible(t, "sign in")
	b.run(t, "sign in", 30*time.Second, chromedp.SendKeys(chromedp.CSS("#bo-key"), reviewer.key), chromedp.Click(chromedp.CSS(".bo-signin button")),
		view("queue"), chromedp.WaitVisible(chromedp.CSS(`tr[data-session="`+id+`"]`)), chromedp.WaitVisible(chromedp.CSS(".bo-signout")))
	b.screenshot(t, "01-queue")
	b.accessible(t, "queue")

	b.run(t, "open the case", 30*time.Second, chromedp.Click(chromedp.CSS(`tr[data-session="`+id+`"] .bo-open`)), view("case"),
		chromedp.WaitVisible(chromedp.CSS(".bo-checks")), chromedp.WaitVisible(chromedp.CSS(".bo-sources")))
	// The three pictures (front, back, selfie) load through their signed URLs.
	b.run(t, "pictures", 20*time.Second, chromedp.Poll[chromedp.Void](`Array.from(document.querySelectorAll(".bo-img")).filter(i => i.complete && i.naturalWidth > 0).length >= 3`))
	// A name printed with diacritics and its zone's transliteration agree (NGUYỄN = NGUYEN).
	if flagged := eval[bool](t, b, `document.querySelector('tr[data-field="full_name"]').classList.contains("bo-differ")`); flagged {
		t.Error("the printed name and the zone's are marked as disagreeing")
	}
	b.screenshot(t, "02-case")
	b.accessible(t, "case")

	b.run(t, "claim with c", 30*time.Second, chromedp.KeyEvent("c"), chromedp.WaitVisible(chromedp.CSS(`#backoffice[data-claimed-by="sandbox-reviewer"]`)))
	// The selfie goes back to the person; the case waits for them, then returns to the queue.
	b.run(t, "ask for a retake", 30*time.Second, chromedp.SendKeys(chromedp.CSS("#bo-reason"), "face_covered"),
		chromedp.SetValue(chromedp.CSS("#bo-retake-step"), "selfie"), chromedp.Click(chromedp.CSS(".bo-retake")), chromedp.WaitVisible(chromedp.CSS(".bo-awaiting")))
	b.screenshot(t, "03-awaiting-retake")
	b.accessible(t, "awaiting retake")
	if got := c.do(http.MethodGet, "/v1/ekyc/sessions/"+id, c.key, "", nil).json(t); got["status"] != "capturing" {
		t.Fatalf("after the retake request the session is %v", got["status"])
	}
	fresh := c.do(http.MethodPost, "/v1/ekyc/sessions/"+id+"/sdk-token", c.key, "", nil).json(t)
	if r := c.upload(id, "selfie", "", s.selfie(t), str(fresh["sdk_token"])); r.status != http.StatusOK {
		t.Fatalf("the selfie again: %d %s", r.status, r.body)
	}
	reviewer.awaitCase(t, id)
	b.run(t, "the case is back", 30*time.Second, chromedp.KeyEvent(kb.Escape), view("queue"), chromedp.WaitVisible(chromedp.CSS(`tr[data-session="`+id+`"]`)),
		chromedp.Click(chromedp.CSS(`tr[data-session="`+id+`"] .bo-open`)), view("case"), chromedp.WaitVisible(chromedp.CSS(".bo-claim")),
		chromedp.KeyEvent("c"), chromedp.WaitVisible(chromedp.CSS(`#backoffice[data-claimed-by="sandbox-reviewer"]`)))
	if hist := eval[string](t, b, `document.querySelector(".bo-history").textContent`); !strings.Contains(hist, "retake_requested") || !strings.Contains(hist, "reopened") {
		t.Errorf("history %q does not show the retake", hist)
	}
	// Typing a reason with a's in it decides nothing; one press of a alone neither.
	b.run(t, "type the reason", 30*time.Second, chromedp.SendKeys(chromedp.CSS("#bo-reason"), "a_real_face"), chromedp.Focus(chromedp.CSS("h2")), chromedp.KeyEvent("a"))
	time.Sleep(time.Second)
	if decided := eval[bool](t, b, `document.querySelector(".bo-decided") !== null`); decided {
		t.Fatal("typing or a single a decided the case")
	}
	b.run(t, "approve with a a", 30*time.Second, chromedp.KeyEvent("a"), chromedp.WaitVisible(chromedp.CSS(`.bo-decided`)))
	if txt := eval[string](t, b, `document.querySelector(".bo-decided").textContent`); !strings.Contains(txt, "a_real_face") {
		t.Errorf("decision shown as %q, want the reason typed", txt)
	}
	b.screenshot(t, "04-decided")
	got := c.waitStatus(id, "verified", "rejected")
	if dec, _ := got["decision"].(map[string]any); got["status"] != "verified" || dec["decided_by"] != "reviewer" {
		t.Fatalf("after the back office: %v %v", got["status"], got["decision"])
	}
	if console := b.consoleText(); strings.Contains(console, "Content Security Policy") || strings.Contains(console, "exception") {
		t.Errorf("the page logged:\n%s", console)
	}
}

// TestAnalyticsInBrowser: with the ClickHouse sink on, the back office's analytics show a
// reviewer's tenant its sessions, rejection reasons, time per step, the reviewer's
// decisions and views of personal data, read by the edge from ClickHouse.
func TestAnalyticsInBrowser(t *testing.T) {
	s, c, reviewer := reviewService(t, func(c *Config) {
		c.Sinks, c.StartClickHouse, c.ClickHouseAddr, c.EdgeAnalytics = []string{"clickhouse"}, true, "127.0.0.1:0", true
	})
	reviewed := runFlow(t, s, c, "id_card", 1)
	byPolicy := runFlow(t, s, c, "vehicle_registration", 2)
	reviewer.awaitCase(t, reviewed)
	if r := reviewer.do(http.MethodGet, "/v1/review/cases/"+reviewed, reviewer.key, "", nil); r.status != http.StatusOK {
		t.Fatalf("case: %d", r.status)
	}
	if r := reviewer.do(http.MethodPost, "/v1/review/cases/"+reviewed+"/claim", reviewer.key, "", nil); r.status != http.StatusOK {
		t.Fatalf("claim: %d %s", r.status, r.body)
	}
	if r := reviewer.postJSON("/v1/review/cases/"+reviewed+"/decision", reviewer.key, map[string]any{"outcome": "rejected", "reason_code": "mask_seen"}); r.status != http.StatusOK && r.status != http.StatusAccepted {
		t.Fatalf("decision: %d %s", r.status, r.body)
	}
	c.waitStatus(reviewed, "rejected")
	c.waitStatus(byPolicy, "verified", "rejected")
	// The sink writes ClickHouse a moment after the decisions.
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := reviewer.do(http.MethodGet, "/v1/review/analytics", reviewer.key, "", nil)
		var v edge.AnalyticsView
		if r.status == http.StatusOK && json.Unmarshal(r.body, &v) == nil && len(v.Report.Reviewers) == 1 && len(v.Report.Views) == 1 && len(v.Report.Days) == 2 {
			if v.Report.RejectReasons[0].Code != "mask_seen" || v.Report.Reviewers[0].Rejected != 1 {
				t.Fatalf("analytics %s", r.body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("analytics never showed both sessions: %d %s", r.status, r.body)
		}
		time.Sleep(300 * time.Millisecond)
	}

	b := newBrowser(t, s.selfie(t))
	b.run(t, "sign in", 60*time.Second, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(c.base+"/v1/review/ui"), chromedp.WaitVisible(chromedp.CSS("#bo-key")),
		chromedp.SendKeys(chromedp.CSS("#bo-key"), reviewer.key), chromedp.Click(chromedp.CSS(".bo-signin button")),
		chromedp.WaitVisible(chromedp.CSS(`#backoffice[data-view="queue"]`)))
	b.run(t, "open the analytics", 30*time.Second, chromedp.Click(chromedp.CSS(".bo-nav-analytics")),
		chromedp.WaitVisible(chromedp.CSS(`#backoffice[data-view="analytics"]`)), chromedp.WaitVisible(chromedp.CSS(".bo-days")), chromedp.WaitVisible(chromedp.CSS(".bo-chart")))
	if rows := eval[int](t, b, `document.querySelectorAll(".bo-days tbody tr").length`); rows != 2 {
		t.Errorf("%d rows of days and flows, want 2 (id_card, vehicle_registration)", rows)
	}
	if txt := eval[string](t, b, `document.querySelector(".bo-reviewers").textContent + document.querySelector(".bo-reasons").textContent`); !strings.Contains(txt, tenant.SandboxReviewerID) || !strings.Contains(txt, "mask_seen") {
		t.Errorf("reviewers and reasons: %q", txt)
	}
	b.screenshot(t, "01-analytics")
	b.accessible(t, "analytics")
	if console := b.consoleText(); strings.Contains(console, "Content Security Policy") || strings.Contains(console, "exception") {
		t.Errorf("the page logged:\n%s", console)
	}
}
