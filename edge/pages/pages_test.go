package pages

import (
	"bytes"
	"strings"
	"testing"
)

func TestPhonePageRefusesScriptURLs(t *testing.T) {
	for _, bad := range []string{"javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "nfc", "", "http://app.example/nfc", "myapp://nfc#x"} {
		if err := RenderPhone(&bytes.Buffer{}, Phone{AppURL: bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var b bytes.Buffer
	if err := RenderPhone(&b, Phone{Locale: "en", AppURL: "myapp://nfc?token=a&b=<c>"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `href="myapp://nfc?token=a&amp;b=%3cc%3e"`) || !strings.Contains(b.String(), "Open the app") {
		t.Errorf("phone page: %s", b.String())
	}
}

func TestNoticeSaysWhatToDo(t *testing.T) {
	var b bytes.Buffer
	if err := RenderNotice(&b, Notice{Locale: "en", Code: "session_expired", RequestID: "req_1"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "This link has expired") || !strings.Contains(b.String(), "req_1") {
		t.Errorf("notice: %s", b.String())
	}
	b.Reset()
	if err := RenderNotice(&b, Notice{Locale: "vi", Code: "<script>"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>") || !strings.Contains(b.String(), "Hiện không thể dùng liên kết này") {
		t.Errorf("unknown code: %s", b.String())
	}
}

func TestAssetsAreEmbedded(t *testing.T) {
	a, err := LoadAssets()
	if err != nil {
		t.Fatal(err)
	}
	js, ok := a.Get("capture.js")
	if !ok || js.ContentType != "text/javascript; charset=utf-8" || !strings.Contains(string(js.Body), "history.replaceState") {
		t.Errorf("capture.js: %v %q", ok, js.ContentType)
	}
	if _, ok := a.Get("../pages.go"); ok {
		t.Error("a path outside assets is served")
	}
}

func TestQRSVG(t *testing.T) {
	svg, err := QRSVG("https://verify.example.com/v1/capture/ses_x/phone?token=abc")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 `) || strings.Count(svg, "h1v1h-1z") < 200 {
		t.Errorf("svg: %.200s", svg)
	}
	if _, err := QRSVG(strings.Repeat("x", 5000)); err == nil {
		t.Error("a text too long for a QR code was encoded")
	}
}
