package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idstream/idstream/internal/evaluation"
	"github.com/idstream/idstream/processors/decision"
	"github.com/idstream/idstream/processors/ocr"
	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
)

// evalClient drives sessions through the edge's REST API.
type evalClient struct {
	base   string
	http   *http.Client
	corpus *evaluation.Corpus
	states *readmodel.States // the pipeline's session snapshots, for what was read of an undecided session
	// uploads numbers the uploads of a load bench, each JPEG sent with its number in a comment
	// (uniqueJPEG) so that no two uploads are the same bytes, as no two people's are; nil: the
	// corpus's bytes as they are (the evaluation).
	uploads *atomic.Int64
}

// run sends one session and returns what it gave; failures are recorded in Outcome.Err.
func (cl *evalClient) run(ctx context.Context, s evaluation.Session, key string, timeout time.Duration) evaluation.Outcome {
	out := evaluation.Outcome{Session: s}
	if err := cl.send(ctx, s, key, timeout, &out); err != nil {
		out.Err = err.Error()
	}
	return out
}

func (cl *evalClient) send(ctx context.Context, s evaluation.Session, key string, timeout time.Duration, out *evaluation.Outcome) error {
	doc, ok := cl.corpus.Document(s.Document)
	if !ok {
		return fmt.Errorf("no document %q", s.Document)
	}
	var init struct {
		SessionID string   `json:"session_id"`
		Steps     []string `json:"steps"`
		SDKToken  string   `json:"sdk_token"`
	}
	if err := cl.json(ctx, http.MethodPost, "/v1/ekyc/sessions", key, map[string]string{"flow": flowFor(doc.Type), "reference_id": s.ID}, http.StatusCreated, &init); err != nil {
		return fmt.Errorf("session init: %w", err)
	}
	for _, step := range init.Steps {
		good, kind, err := cl.goodImage(doc, s, step)
		if err != nil {
			return err
		}
		if id := s.Retakes[step]; id != "" {
			bad, ok := cl.corpus.Capture(id)
			if !ok {
				return fmt.Errorf("no capture %q", id)
			}
			a, err := cl.upload(ctx, init.SessionID, init.SDKToken, step, bad.Image, bad.Kind)
			if err != nil {
				return err
			}
			a.Expect = bad.Expect
			out.Gate = append(out.Gate, a)
		}
		a, err := cl.upload(ctx, init.SessionID, init.SDKToken, step, good, kind)
		if err != nil {
			return err
		}
		a.Expect = evaluation.ExpectGood
		if step == "selfie" && s.Kind == evaluation.Attack {
			a.Expect = evaluation.ExpectAttack
		}
		out.Gate = append(out.Gate, a)
	}
	// A good capture sent back leaves its step open: the person would be asked to retake it
	// again and the session is never decided, so it is recorded as it stands.
	stuck := slices.ContainsFunc(out.Gate, func(a evaluation.GateAnswer) bool {
		return a.Expect == evaluation.ExpectGood && (a.Status == "retake" || a.Status == "error")
	})
	deadline := time.Now().Add(timeout)
	for {
		var view readmodel.SessionView
		if err := cl.json(ctx, http.MethodGet, "/v1/ekyc/sessions/"+init.SessionID, key, nil, http.StatusOK, &view); err != nil {
			return fmt.Errorf("data get: %w", err)
		}
		record(out, &view)
		for step, sv := range view.Steps {
			// A good capture the gate answered late, sent back; a step whose view still
			// shows the bad capture before it (the session group has not folded the good
			// one yet) is not.
			stuck = stuck || (sv.Status == "retake" && sv.CaptureID == goodCapture(out.Gate, step))
		}
		if out.Decided() || stuck || time.Now().After(deadline) {
			resolveLate(out, &view)
			var docSteps []string
			for step, sv := range view.Steps {
				if step != "selfie" && sv.Status == "accepted" {
					docSteps = append(docSteps, step)
				}
			}
			return cl.recordRead(ctx, init.SessionID, docSteps, deadline, out)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// resolveLate fills in the gate's answer to each good capture it answered after the step's
// budget (202 pending), from the session's step status and its quality check.
func resolveLate(out *evaluation.Outcome, v *readmodel.SessionView) {
	for i := range out.Gate {
		a := &out.Gate[i]
		if a.Status != "pending" || a.Expect == "" || a.Step == "" {
			continue
		}
		if last := lastUpload(out.Gate, a.Step); last != i {
			continue // a bad capture's late answer is lost under the good one that replaced it
		}
		if v.Steps[a.Step].CaptureID != a.CaptureID {
			continue // the session does not show this capture yet
		}
		switch v.Steps[a.Step].Status {
		case "accepted":
			a.Status, a.Late = "accepted", true
		case "retake":
			a.Status, a.Late = "retake", true
			for _, c := range v.Checks {
				if c.Name == "quality."+a.Step && c.ReasonCode != nil {
					a.Reasons = []string{*c.ReasonCode}
				}
			}
		}
	}
}

// goodCapture is the capture id of the last upload of step ("" when none).
func goodCapture(gate []evaluation.GateAnswer, step string) string {
	if i := lastUpload(gate, step); i >= 0 {
		return gate[i].CaptureID
	}
	return ""
}

// lastUpload is the index of the last gate answer of step.
func lastUpload(gate []evaluation.GateAnswer, step string) int {
	last := -1
	for i, a := range gate {
		if a.Step == step {
			last = i
		}
	}
	return last
}

// recordRead fills in, for a session the gate left undecided, what the pipeline read,
// reconciled as the decision reconciles it (decision.Reconcile over the session's snapshot)
// with the first document type the reads recognised, so that its reads are scored too. A
// decided session keeps what Data Get reported.
func (cl *evalClient) recordRead(ctx context.Context, sessionID string, steps []string, deadline time.Time, out *evaluation.Outcome) error {
	if out.Decided() {
		return nil
	}
	// The reads of the accepted document steps may still be on their way: wait for them
	// until the session's deadline, then take the snapshot as it stands.
	allRead := func(st *schemas.SessionState) bool {
		return st != nil && !slices.ContainsFunc(steps, func(step string) bool {
			return !slices.ContainsFunc(st.Documents, func(d schemas.DocumentRead) bool { return d.Step == step })
		})
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	st, err := cl.states.Wait(wctx, sessionID, allRead)
	cancel()
	if err := ctx.Err(); err != nil {
		return err
	}
	if st == nil {
		var ok bool
		if st, ok, err = cl.states.Get(ctx, sessionID); err != nil || !ok {
			return err
		}
	}
	ex, _ := decision.Reconcile(st)
	out.ExtractedType = ""
	for _, d := range st.Documents {
		if d.DocumentType != "" && d.DocumentType != ocr.TypeUnknown {
			out.ExtractedType = d.DocumentType
			break
		}
	}
	out.MRZ = ex.MRZ
	out.Fields = extractedFields(ex)
	return nil
}

// goodImage is the corpus image a step takes: the document's side, or the session's selfie.
func (cl *evalClient) goodImage(doc evaluation.Document, s evaluation.Session, step string) (path, kind string, err error) {
	if step == "selfie" {
		f, ok := cl.corpus.Face(s.Selfie)
		if !ok {
			return "", "", fmt.Errorf("session %s: step selfie has no face", s.ID)
		}
		return f.Image, "selfie", nil
	}
	p, ok := doc.Images[step]
	if !ok {
		return "", "", fmt.Errorf("document %s has no image for step %s", doc.ID, step)
	}
	return p, "document", nil
}

// upload sends one image to its step with the session's sdk token and returns the gate's
// answer.
func (cl *evalClient) upload(ctx context.Context, sessionID, token, step, path, kind string) (evaluation.GateAnswer, error) {
	res, err := cl.postImage(ctx, sessionID, token, step, path)
	if err != nil {
		return evaluation.GateAnswer{}, err
	}
	var answer struct {
		CaptureID string `json:"capture_id"`
		Status    string `json:"status"`
		Quality   struct {
			Reasons []string `json:"reasons"`
		} `json:"quality"`
	}
	a := evaluation.GateAnswer{Step: step, Kind: kind, Status: "error", Millis: float64(res.elapsed.Microseconds()) / 1000}
	var problem struct {
		Code string `json:"code"`
	}
	switch {
	case res.status != http.StatusOK && res.status != http.StatusAccepted:
		_ = json.Unmarshal(res.body, &problem)
		a.Detail = fmt.Sprintf("HTTP %d %s", res.status, problem.Code)
	case json.Unmarshal(res.body, &answer) != nil:
		a.Detail = fmt.Sprintf("HTTP %d: not JSON", res.status)
	default:
		a.Status, a.Reasons, a.CaptureID = answer.Status, answer.Quality.Reasons, answer.CaptureID
	}
	return a, nil
}

// edgeAnswer is an answer of the edge: its status, headers, body (at most 1 MiB) and how long
// it took.
type edgeAnswer struct {
	status  int
	header  http.Header
	body    []byte
	elapsed time.Duration
}

// postImage sends the corpus image at path to step (multipart, as the SDK does) with the
// session's sdk token.
func (cl *evalClient) postImage(ctx context.Context, sessionID, token, step, path string) (edgeAnswer, error) {
	img, err := cl.corpus.Read(path)
	if err != nil {
		return edgeAnswer{}, err
	}
	if cl.uploads != nil {
		img = uniqueJPEG(img, cl.uploads.Add(1))
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	endpoint := "/selfie"
	if step != "selfie" {
		endpoint = "/document"
		side := strings.TrimPrefix(step, "document_")
		if err := w.WriteField("side", side); err != nil {
			return edgeAnswer{}, err
		}
	}
	part, err := w.CreateFormFile("image", filepath.Base(path))
	if err != nil {
		return edgeAnswer{}, err
	}
	part.Write(img)
	w.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.base+"/v1/ekyc/sessions/"+sessionID+endpoint, &body)
	if err != nil {
		return edgeAnswer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", w.FormDataContentType())
	start := time.Now()
	res, err := cl.http.Do(req)
	if err != nil {
		return edgeAnswer{}, fmt.Errorf("upload %s: %w", step, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return edgeAnswer{status: res.StatusCode, header: res.Header, body: b, elapsed: time.Since(start)}, nil
}

// json sends a JSON request (body nil: none) with key and decodes a response of status want
// into v.
func (cl *evalClient) json(ctx context.Context, method, path, key string, body any, want int, v any) error {
	res, err := cl.do(ctx, method, path, key, body)
	if err != nil {
		return err
	}
	if res.status != want {
		return fmt.Errorf("%s %s: status %d: %.200s", method, path, res.status, res.body)
	}
	return json.Unmarshal(res.body, v)
}

// do sends a JSON request (body nil: none) with key and returns the answer, its body read
// up to 4 MiB.
func (cl *evalClient) do(ctx context.Context, method, path, key string, body any) (edgeAnswer, error) {
	return sendJSON(ctx, cl.http, method, cl.base+path, "Authorization", "Bearer "+key, body, 4<<20)
}

// sendJSON sends a JSON request (body nil: none) to url with the credential header name:
// value, and returns the answer with its body read up to limit bytes.
func sendJSON(ctx context.Context, hc *http.Client, method, url, name, value string, body any, limit int64) (edgeAnswer, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return edgeAnswer{}, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return edgeAnswer{}, err
	}
	req.Header.Set(name, value)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := hc.Do(req)
	if err != nil {
		return edgeAnswer{}, err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, limit))
	return edgeAnswer{status: res.StatusCode, header: res.Header, body: b, elapsed: time.Since(start)}, nil
}

// record copies what Data Get says into out: status, checks, decision reasons and the
// extracted data (canonical fields and the others under one map, the MRZ fields apart).
func record(out *evaluation.Outcome, v *readmodel.SessionView) {
	out.Status = v.Status
	out.Checks = out.Checks[:0]
	for _, c := range v.Checks {
		ec := evaluation.Check{Name: c.Name, Status: c.Status, Score: c.Score, Threshold: c.Threshold}
		if c.ReasonCode != nil {
			ec.ReasonCode = *c.ReasonCode
		}
		out.Checks = append(out.Checks, ec)
	}
	out.Reasons = out.Reasons[:0]
	if v.Decision != nil {
		for _, r := range v.Decision.Reasons {
			out.Reasons = append(out.Reasons, r.Code)
		}
	}
	if v.Extracted == nil {
		return
	}
	out.ExtractedType = v.Extracted.DocumentType
	out.MRZ = v.Extracted.MRZ
	out.Fields = extractedFields(v.Extracted)
}

// extractedFields returns the canonical fields and the others of ex under one map.
func extractedFields(ex *schemas.Extracted) map[string]string {
	out := map[string]string{}
	b, err := json.Marshal(ex)
	if err != nil {
		return out
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return out
	}
	for k, val := range m {
		if s, ok := val.(string); ok && k != "document_type" {
			out[k] = s
		}
	}
	for k, val := range ex.Other {
		out[k] = val
	}
	return out
}

// uniqueJPEG returns data, a JPEG, with a comment segment holding n right after its start
// of image marker: the same picture in other bytes (a decoder skips comments). Anything but a
// JPEG is returned as it is.
func uniqueJPEG(data []byte, n int64) []byte {
	if len(data) < 2 || data[0] != 0xFF || data[1] != 0xD8 {
		return data
	}
	text := fmt.Sprintf("idstream bench upload %d", n)
	seg := []byte{0xFF, 0xFE, byte((len(text) + 2) >> 8), byte(len(text) + 2)}
	out := make([]byte, 0, len(data)+len(seg)+len(text))
	out = append(out, data[:2]...)
	out = append(out, seg...)
	out = append(out, text...)
	return append(out, data[2:]...)
}
