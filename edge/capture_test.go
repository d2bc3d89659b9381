package edge

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

func TestDocumentStepMultipartAccepted(t *testing.T) {
	e := newEnv(t)
	e.quality.replies["document_front"] = &schemas.QualityAssessed{Passed: true, Blur: 212.5, Glare: 0.004, Framing: "ok"}
	s := e.openSession(keyAcme, "chip_id_card")
	ct, body := multipartBody(t, map[string]string{"side": "front", "client.sdk_version": "1.2.3"},
		part{"image", "f.png", "image/png", pngBytes(t)})
	r := e.do("POST", "/v1/ekyc/sessions/"+s.SessionID+"/document", s.SDKToken, ct, body)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	m := r.json(t)
	q, _ := m["quality"].(map[string]any)
	if m["status"] != "accepted" || m["step"] != "document_front" || q["passed"] != true || q["blur"] != 212.5 || q["framing"] != "ok" {
		t.Errorf("body %v", m)
	}
	if reasons, ok := q["reasons"].([]any); !ok || len(reasons) != 0 {
		t.Errorf("reasons must be an empty array, got %v", q["reasons"])
	}
	outs := e.pub.on(schemas.TopicCaptures)
	if len(outs) != 1 || string(outs[0].Key) != s.SessionID {
		t.Fatalf("captures produced: %d", len(outs))
	}
	ev := decodeProduced[schemas.CaptureSubmitted](t, outs[0])
	nonce, _ := base64.StdEncoding.DecodeString(s.Nonce)
	if ev.CaptureID != m["capture_id"] || ev.Step != "document_front" || !bytes.Equal(ev.Nonce, nonce) ||
		ev.Client["sdk_version"] != "1.2.3" || len(ev.Blobs) != 1 {
		t.Fatalf("event %+v", ev)
	}
	b := ev.Blobs[0]
	want := "acme/" + s.SessionID + "/" + ev.CaptureID + "/image"
	if b.Name != "image" || b.URI != "mem://"+want || b.MediaType != "image/png" || len(b.SHA256) != 64 {
		t.Errorf("blob ref %+v", b)
	}
	if _, ok := e.blobs.m[want]; !ok {
		t.Error("image not stored")
	}
}

func TestDocumentStepJSONRetakeAndPending(t *testing.T) {
	e := newEnv(t)
	e.quality.replies["document_back"] = &schemas.QualityAssessed{Passed: false, Blur: 12, Framing: "not_framed", Reasons: []string{"blurry"}}
	s := e.openSession(keyAcme, "id_card")
	img := base64.StdEncoding.EncodeToString(jpegBytes(t))
	r := e.doJSON("POST", "/v1/ekyc/sessions/"+s.SessionID+"/document", keyAcme,
		map[string]any{"side": "back", "image": img, "client": map[string]any{"rooted": false, "battery": 0.5}})
	m := r.json(t)
	if r.status != 200 || m["status"] != "retake" || m["quality"].(map[string]any)["passed"] != false {
		t.Fatalf("retake: %d %v", r.status, m)
	}
	ev := decodeProduced[schemas.CaptureSubmitted](t, e.pub.on(schemas.TopicCaptures)[0])
	if ev.Blobs[0].MediaType != "image/jpeg" || ev.Client["rooted"] != "false" {
		t.Errorf("event %+v", ev)
	}
	// No quality answer within the budget: 202 pending.
	r = e.doJSON("POST", "/v1/ekyc/sessions/"+s.SessionID+"/document", keyAcme, map[string]any{"side": "front", "image": img})
	if m := r.json(t); r.status != http.StatusAccepted || m["status"] != "pending" || m["step"] != "document_front" || m["quality"] != nil {
		t.Fatalf("pending: %d %v", r.status, m)
	}
	metrics := e.metrics()
	for _, want := range []string{
		`idstream_edge_gate_wait_seconds_count{answer="retake",step="document_back"} 1`,
		`idstream_edge_gate_wait_seconds_count{answer="pending",step="document_front"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestSelfieStepWithVideo(t *testing.T) {
	e := newEnv(t)
	e.quality.replies["selfie"] = &schemas.QualityAssessed{Passed: true, Framing: "ok"}
	s := e.openSession(keyAcme, "nfc_only")
	ct, body := multipartBody(t, nil,
		part{"image", "s.jpg", "image/jpeg", jpegBytes(t)},
		part{"video", "s.mp4", "video/mp4", []byte("\x00\x00\x00\x18ftypmp42 video bytes")})
	r := e.do("POST", "/v1/ekyc/sessions/"+s.SessionID+"/selfie", s.SDKToken, ct, body)
	if r.status != 200 || r.json(t)["step"] != "selfie" {
		t.Fatalf("selfie: %d %s", r.status, r.body)
	}
	ev := decodeProduced[schemas.CaptureSubmitted](t, e.pub.on(schemas.TopicCaptures)[0])
	if len(ev.Blobs) != 2 || ev.Blobs[1].Name != "video" || ev.Blobs[1].MediaType != "video/mp4" {
		t.Errorf("blobs %+v", ev.Blobs)
	}
}

func TestNFCStep(t *testing.T) {
	e := newEnv(t)
	s := e.openSession(keyAcme, "chip_id_card")
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	r := e.doJSON("POST", "/v1/ekyc/sessions/"+s.SessionID+"/nfc", s.SDKToken,
		map[string]any{"sod": b64("sod"), "dg1": b64("dg1"), "dg2": b64("dg2"), "dg13": b64("dg13"), "aa_signature": b64("sig")})
	m := r.json(t)
	if r.status != http.StatusAccepted || m["status"] != "accepted" || m["step"] != "nfc" || !validID(m["capture_id"].(string), "cap_") {
		t.Fatalf("nfc: %d %v", r.status, m)
	}
	ev := decodeProduced[schemas.CaptureSubmitted](t, e.pub.on(schemas.TopicCaptures)[0])
	var names []string
	for _, b := range ev.Blobs {
		names = append(names, b.Name)
		if got := string(e.blobs.m[strings.TrimPrefix(b.URI, "mem://")]); got != b.Name && !(b.Name == "aa_signature" && got == "sig") {
			t.Errorf("blob %s holds %q", b.Name, got)
		}
	}
	if strings.Join(names, ",") != "sod,dg1,dg2,dg13,aa_signature" || ev.Step != "nfc" {
		t.Errorf("blobs %v", names)
	}

	url := "/v1/ekyc/sessions/" + s.SessionID + "/nfc"
	expectProblem(t, e.doJSON("POST", url, keyAcme, map[string]any{"dg1": b64("x")}), 422, CodeInvalidChipData)
	expectProblem(t, e.doJSON("POST", url, keyAcme, map[string]any{"sod": "!!!", "dg1": b64("x")}), 422, CodeInvalidChipData)
	ct, body := multipartBody(t, map[string]string{"sod": "x"})
	expectProblem(t, e.do("POST", url, keyAcme, ct, body), 415, CodeUnsupportedMedia)
	idCard := e.openSession(keyAcme, "id_card")
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions/"+idCard.SessionID+"/nfc", keyAcme,
		map[string]any{"sod": b64("s"), "dg1": b64("d")}), 422, CodeStepNotInFlow)
	// nfc is optional in the passport flow.
	pass := e.openSession(keyAcme, "passport")
	if r := e.doJSON("POST", "/v1/ekyc/sessions/"+pass.SessionID+"/nfc", keyAcme, map[string]any{"sod": b64("s"), "dg1": b64("d")}); r.status != 202 {
		t.Errorf("optional nfc step refused: %d %s", r.status, r.body)
	}
}

func TestStepBadInput(t *testing.T) {
	e := newEnv(t)
	s := e.openSession(keyAcme, "id_card")
	other := e.openSession(keyAcme, "id_card")
	vehicle := e.openSession(keyAcme, "vehicle_registration")
	doc := "/v1/ekyc/sessions/" + s.SessionID + "/document"
	img := base64.StdEncoding.EncodeToString(pngBytes(t))

	expectProblem(t, e.doJSON("POST", doc, keyAcme, map[string]any{"side": "front", "image": "%%%not base64%%%"}), 422, CodeInvalidImage)
	expectProblem(t, e.doJSON("POST", doc, keyAcme, map[string]any{"side": "front", "image": base64.StdEncoding.EncodeToString([]byte("GIF89a not an image"))}), 422, CodeInvalidImage)
	truncated := pngBytes(t)
	expectProblem(t, e.doJSON("POST", doc, keyAcme, map[string]any{"side": "front", "image": base64.StdEncoding.EncodeToString(truncated[:len(truncated)/2])}), 422, CodeInvalidImage)
	expectProblem(t, e.doJSON("POST", doc, keyAcme, map[string]any{"side": "left", "image": img}), 422, CodeInvalidRequest)
	expectProblem(t, e.doJSON("POST", doc, keyAcme, map[string]any{"side": "passport", "image": img}), 422, CodeStepNotInFlow)
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions/"+vehicle.SessionID+"/selfie", keyAcme, map[string]any{"image": img}), 422, CodeStepNotInFlow)
	expectProblem(t, e.doJSON("POST", doc, keyAcme, map[string]any{"side": "front"}), 422, CodeInvalidRequest)
	expectProblem(t, e.do("POST", doc, keyAcme, "image/png", pngBytes(t)), 415, CodeUnsupportedMedia)
	expectProblem(t, e.do("POST", doc, keyAcme, "application/json", []byte(`{"side":`)), 400, CodeInvalidJSON)
	tooMany := map[string]any{}
	for i := 0; i < 40; i++ {
		tooMany[strings.Repeat("k", i+1)] = "v"
	}
	expectProblem(t, e.doJSON("POST", doc, keyAcme, map[string]any{"side": "front", "image": img, "client": tooMany}), 422, CodeInvalidRequest)

	// Sessions that cannot take captures.
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions/ses_aaaaaaaaaaaaaaaaaaaaaaaaaa/document", keyAcme, map[string]any{"side": "front", "image": img}), 404, CodeSessionNotFound)
	expectProblem(t, e.doJSON("POST", doc, keyLimited, map[string]any{"side": "front", "image": img}), 404, CodeSessionNotFound)
	expectProblem(t, e.doJSON("POST", doc, other.SDKToken, map[string]any{"side": "front", "image": img}), 404, CodeSessionNotFound)
	expectProblem(t, e.doJSON("POST", doc, "", map[string]any{"side": "front", "image": img}), 401, CodeUnauthorized)
	expectProblem(t, e.doJSON("POST", doc, "sk_nope", map[string]any{"side": "front", "image": img}), 401, CodeUnauthorized)

	decided := e.state(other.SessionID)
	decided.Status = schemas.StatusRejected
	decided.Decision = &schemas.DecisionResult{DecisionID: "dec_1", Outcome: "rejected"}
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions/"+other.SessionID+"/document", keyAcme, map[string]any{"side": "front", "image": img}), 409, CodeSessionClosed)

	e.clock.Advance(30 * time.Minute)
	expectProblem(t, e.doJSON("POST", doc, s.SDKToken, map[string]any{"side": "front", "image": img}), 410, CodeSessionExpired)
	if n := len(e.pub.on(schemas.TopicCaptures)); n != 0 {
		t.Errorf("%d captures produced from bad requests", n)
	}
	if len(e.blobs.m) != 0 {
		t.Errorf("blobs stored from bad requests: %d", len(e.blobs.m))
	}
}

func TestStepOversizedImages(t *testing.T) {
	e := newEnv(t)
	s := e.openSession(keyAcme, "id_card")
	doc := "/v1/ekyc/sessions/" + s.SessionID + "/document"
	big := make([]byte, DefaultMaxImageBytes+1)
	copy(big, pngBytes(t))
	ct, body := multipartBody(t, map[string]string{"side": "front"}, part{"image", "big.png", "image/png", big})
	expectProblem(t, e.do("POST", doc, keyAcme, ct, body), 413, CodePayloadTooLarge)
	expectProblem(t, e.doJSON("POST", doc, keyAcme, map[string]any{"side": "front", "image": base64.StdEncoding.EncodeToString(big)}), 413, CodePayloadTooLarge)
	// Beyond the server's body limit altogether, over a real listener: the declared length
	// alone is refused, before any body byte is sent.
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.listen(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		doc, keyAcme, e.srv.maxBodyBytes()+1)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rb, _ := io.ReadAll(res.Body)
	expectProblem(t, response{status: res.StatusCode, header: res.Header, body: rb}, 413, CodePayloadTooLarge)
}
