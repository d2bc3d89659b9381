// Package pages holds the pages the edge serves to people: the hosted capture page for the
// person being verified (and the phone page of its chip hand-off, and the page of a link
// that cannot be used), and the reviewers' back office; their HTML templates, the web SDK's
// files built from sdk/web (`make sdk` copies them into assets/, embedded here), the QR code
// of a hand-off link, and the security headers every page and asset is served with. It
// holds no state and is safe for concurrent use.
package pages

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"strings"

	qrcode "github.com/skip2/go-qrcode"
)

//go:embed assets templates
var files embed.FS

// ContentSecurityPolicy is the pages' CSP: scripts, styles and calls only to the edge's
// own origin; images also from data: (the QR code) and blob: (the photo's preview); the
// camera's stream as media; no frames, no forms, no base URL, no third-party request.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob:; media-src 'self' blob: mediastream:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// PageHeaders are the headers of every HTML page: the CSP, no caching (a page carries its
// session's token), no referrer (the address held it), no framing, no sniffing, and the
// camera allowed to this origin only.
func PageHeaders() map[string]string {
	return map[string]string{
		"Content-Security-Policy":      ContentSecurityPolicy,
		"Cache-Control":                "no-store",
		"Referrer-Policy":              "no-referrer",
		"X-Content-Type-Options":       "nosniff",
		"X-Frame-Options":              "DENY",
		"Permissions-Policy":           "camera=(self), microphone=(), geolocation=()",
		"Cross-Origin-Opener-Policy":   "same-origin",
		"Cross-Origin-Resource-Policy": "same-origin",
	}
}

// Asset is one file of the SDK served under /v1/capture/assets/.
type Asset struct {
	Body        []byte
	ContentType string
	ETag        string // a strong ETag: the SHA-256 of Body
}

// Assets holds the embedded SDK files by name.
type Assets struct {
	byName map[string]Asset
}

// LoadAssets reads the embedded SDK files. It fails only if the binary was built without
// them (run make sdk).
func LoadAssets() (*Assets, error) {
	a := &Assets{byName: map[string]Asset{}}
	err := fs.WalkDir(files, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		if strings.HasSuffix(p, ".js") {
			ct = "text/javascript; charset=utf-8"
		}
		sum := sha256.Sum256(body)
		a.byName[path.Base(p)] = Asset{Body: body, ContentType: ct, ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pages: embedded assets: %w", err)
	}
	for _, want := range []string{"capture.js", "idstream.css", "idstream.umd.js", "backoffice.js", "backoffice.css"} {
		if _, ok := a.byName[want]; !ok {
			return nil, fmt.Errorf("pages: asset %s missing from the build (run make sdk)", want)
		}
	}
	return a, nil
}

// Get returns the asset called name.
func (a *Assets) Get(name string) (Asset, bool) {
	as, ok := a.byName[name]
	return as, ok
}

var pages = template.Must(template.ParseFS(files, "templates/*.html"))

// Capture is what the capture page starts the SDK with. Token is the session's sdk_token:
// the page is served with no-store and no referrer, and its script removes the token from
// the address bar before it starts.
type Capture struct {
	Locale    string // "vi" or "en"
	SessionID string
	Token     string
	Nonce     string   // base64, as Session Init returns it
	Steps     []string // the flow's steps
}

// RenderCapture writes the capture page.
func RenderCapture(w io.Writer, c Capture) error {
	return pages.ExecuteTemplate(w, "capture.html", struct {
		Capture
		Text  map[string]string
		Steps string
	}{c, texts(c.Locale), strings.Join(c.Steps, " ")})
}

// Phone is the page a hand-off link opens on the person's phone: it explains the chip step
// and opens the integrator's app (AppURL, a deep link carrying the link's token) that reads
// the chip over NFC and posts it.
type Phone struct {
	Locale string
	AppURL string
}

// CheckAppURL parses the deep link of an app: an absolute URL of https or of the app's own
// scheme (html/template would blank the latter, so the phone page marks it safe after this
// check); javascript:, data:, vbscript:, blob: and file: are refused, and so is a fragment
// (the added parameters would end up in it).
func CheckAppURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") {
		return nil, fmt.Errorf("pages: app url %q is not an absolute URL", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "javascript", "data", "vbscript", "blob", "file", "http":
		return nil, fmt.Errorf("pages: app url scheme %s is not allowed (use https or the app's own scheme)", u.Scheme)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, fmt.Errorf("pages: app url %q has a fragment", raw)
	}
	return u, nil
}

// RenderBackOffice writes the reviewers' back office: a shell its script fills from the
// review API with the reviewer's key.
func RenderBackOffice(w io.Writer) error {
	return pages.ExecuteTemplate(w, "backoffice.html", nil)
}

// RenderPhone writes the phone page of a hand-off link (AppURL as CheckAppURL accepts it).
func RenderPhone(w io.Writer, p Phone) error {
	u, err := CheckAppURL(p.AppURL)
	if err != nil {
		return err
	}
	return pages.ExecuteTemplate(w, "phone.html", struct {
		Phone
		Text map[string]string
		App  template.URL
	}{p, texts(p.Locale), template.URL(u.String())}) //nolint:gosec // scheme checked above
}

// Notice is the page of a link that cannot be used: Code is the problem code the API would
// answer (session_expired, unauthorized, ...), RequestID the request's id.
type Notice struct {
	Locale    string
	Code      string
	RequestID string
}

// RenderNotice writes the page of a link that cannot be used.
func RenderNotice(w io.Writer, n Notice) error {
	t := texts(n.Locale)
	msg, ok := t["notice."+n.Code]
	if !ok {
		msg = t["notice.other"]
	}
	return pages.ExecuteTemplate(w, "notice.html", struct {
		Notice
		Text    map[string]string
		Message string
	}{n, t, msg})
}

// QRSVG renders text as a QR code (error correction M, with its quiet zone) in SVG, one
// path of unit squares that scales without blurring.
func QRSVG(text string) (string, error) {
	q, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return "", fmt.Errorf("pages: qr code: %w", err)
	}
	bits := q.Bitmap()
	n := len(bits)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges"><rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n, n, n)
	for y, row := range bits {
		for x, on := range row {
			if on {
				fmt.Fprintf(&b, "M%d %dh1v1h-1z", x, y)
			}
		}
	}
	b.WriteString(`"/></svg>`)
	return b.String(), nil
}

// Locale returns "en" for an English locale tag, else "vi" (the default of a Vietnamese
// service), as Session Init's locale does.
func Locale(tag string) string {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(tag)), "en") {
		return "en"
	}
	return "vi"
}

func texts(locale string) map[string]string {
	if Locale(locale) == "en" {
		return textsEN
	}
	return textsVI
}

var textsEN = map[string]string{
	"lang":                     "en",
	"title":                    "Verify your identity",
	"noscript":                 "This page needs JavaScript to use your camera.",
	"phone.title":              "Read your card's chip",
	"phone.text":               "Your ID card has a chip. Open the app to read it over NFC: hold the card against the back of your phone when the app asks. Then go back to the page you came from.",
	"phone.open":               "Open the app",
	"phone.help":               "If nothing happens, install the app of the service that sent you here, then scan the code again.",
	"notice.title":             "This link cannot be used",
	"notice.session_expired":   "This link has expired. Ask the service that sent you here for a new one.",
	"notice.unauthorized":      "This link is not valid. Ask the service that sent you here for a new one.",
	"notice.session_not_found": "This link is not valid. Ask the service that sent you here for a new one.",
	"notice.handoff_used":      "The chip has already been read with this link. Go back to the page you came from.",
	"notice.other":             "This link cannot be used now. Please try again later.",
	"notice.reference":         "Reference",
}

var textsVI = map[string]string{
	"lang":                     "vi",
	"title":                    "Xác minh danh tính",
	"noscript":                 "Trang này cần JavaScript để dùng camera.",
	"phone.title":              "Đọc chip trên thẻ",
	"phone.text":               "Thẻ căn cước của bạn có gắn chip. Mở ứng dụng để đọc chip qua NFC: áp thẻ vào mặt sau điện thoại khi ứng dụng yêu cầu. Sau đó quay lại trang trước.",
	"phone.open":               "Mở ứng dụng",
	"phone.help":               "Nếu không có gì xảy ra, hãy cài ứng dụng của dịch vụ đã gửi bạn đến đây rồi quét lại mã.",
	"notice.title":             "Không thể dùng liên kết này",
	"notice.session_expired":   "Liên kết đã hết hạn. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
	"notice.unauthorized":      "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
	"notice.session_not_found": "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
	"notice.handoff_used":      "Chip đã được đọc bằng liên kết này. Hãy quay lại trang trước.",
	"notice.other":             "Hiện không thể dùng liên kết này. Vui lòng thử lại sau.",
	"notice.reference":         "Mã tham chiếu",
}
