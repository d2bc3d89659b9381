package edge

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
)

// Bounds of the client signals a capture may carry.
const (
	maxClientSignals     = 32
	maxClientKeyLength   = 64
	maxClientValueLength = 512
)

var clientKeyPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Capture statuses an image step answers with.
const (
	CaptureStatusAccepted = "accepted"
	CaptureStatusRetake   = "retake"
	CaptureStatusPending  = "pending"
)

// CaptureResponse is the body of a step endpoint's answer.
type CaptureResponse struct {
	CaptureID string       `json:"capture_id"`
	Step      string       `json:"step"`
	Status    string       `json:"status"`
	Quality   *QualityView `json:"quality,omitempty"`
}

// QualityView is the quality gate's answer as shown to the caller.
type QualityView struct {
	Passed  bool     `json:"passed"`
	Blur    float64  `json:"blur"`
	Glare   float64  `json:"glare"`
	Framing string   `json:"framing"`
	Reasons []string `json:"reasons"`
}

// upload is one file of a capture before it is stored.
type upload struct {
	name      string
	data      []byte
	mediaType string
}

// imageCapture is a parsed document or selfie request.
type imageCapture struct {
	side   string
	image  []byte
	video  *upload
	client map[string]string
}

var documentSides = map[string]string{
	"front":    "document_front",
	"back":     "document_back",
	"passport": "passport",
}

func (s *Server) documentStep(c *fiber.Ctx) error { return s.imageStep(c, true) }
func (s *Server) selfieStep(c *fiber.Ctx) error   { return s.imageStep(c, false) }

// stepSession authenticates and loads the session a capture is for, refusing closed,
// expired or foreign sessions. allowHandoff also takes a hand-off token (the chip step),
// refused with 409 handoff_used once the session's chip step is accepted.
func (s *Server) stepSession(c *fiber.Ctx, allowHandoff bool) (principal, *schemas.SessionState, error) {
	p, err := s.authenticate(c, true)
	if ae, ok := err.(*apiError); ok && allowHandoff && ae.code == CodeUnauthorized && bearer(c) != "" {
		p, err = s.handoffPrincipal(bearer(c))
	}
	if err != nil {
		return p, nil, err
	}
	st, err := s.loadSession(c, p)
	if err != nil {
		return p, nil, err
	}
	if p.handoff && chipAccepted(st) {
		return p, nil, problem(fiber.StatusConflict, CodeHandoffUsed, "the chip step of this link is done")
	}
	switch {
	case st.Decision != nil || st.DecidedAt != nil ||
		st.Status == schemas.StatusVerified || st.Status == schemas.StatusRejected || st.Status == schemas.StatusCancelled:
		return p, nil, problem(fiber.StatusConflict, CodeSessionClosed, "the session is decided or cancelled")
	case readmodel.EffectiveStatus(st, s.now()) == schemas.StatusExpired:
		return p, nil, problem(fiber.StatusGone, CodeSessionExpired, "the session has expired")
	}
	return p, st, nil
}

// stepAllowed reports whether step is a required or optional step of the session's flow.
func (s *Server) stepAllowed(st *schemas.SessionState, step string) bool {
	if slices.Contains(st.Steps, step) {
		return true
	}
	fl, ok := s.cfg.Flows.Get(st.Flow)
	return ok && fl.Allows(step)
}

func (s *Server) imageStep(c *fiber.Ctx, document bool) error {
	p, st, err := s.stepSession(c, false)
	if err != nil {
		return err
	}
	var in imageCapture
	switch mediaType(c) {
	case fiber.MIMEMultipartForm:
		in, err = s.parseMultipartCapture(c, !document)
	case fiber.MIMEApplicationJSON:
		in, err = s.parseJSONCapture(c)
	default:
		err = problem(fiber.StatusUnsupportedMediaType, CodeUnsupportedMedia, "the body must be multipart/form-data or application/json")
	}
	if err != nil {
		return err
	}
	step := "selfie"
	if document {
		var ok bool
		if step, ok = documentSides[in.side]; !ok {
			return invalidRequest("side must be front, back or passport")
		}
	}
	if !s.stepAllowed(st, step) {
		return problemf(fiber.StatusUnprocessableEntity, CodeStepNotInFlow, "step %s is not part of this session's flow", step)
	}
	if len(in.image) == 0 { // an image part or field that is there but empty
		return problem(fiber.StatusUnprocessableEntity, CodeInvalidImage, "the image is empty")
	}
	if len(in.image) > s.cfg.MaxImageBytes {
		return problemf(fiber.StatusRequestEntityTooLarge, CodePayloadTooLarge, "the image exceeds %d bytes", s.cfg.MaxImageBytes)
	}
	if err := s.shedCapture(); err != nil {
		return err
	}
	mt, err := s.cfg.Images.InspectImage(in.image)
	if err != nil {
		return problem(fiber.StatusUnprocessableEntity, CodeInvalidImage, "the image is not a decodable JPEG or PNG within the size limits")
	}
	files := []upload{{name: "image", data: in.image, mediaType: mt}}
	if in.video != nil {
		files = append(files, *in.video)
	}
	captureID, err := s.submitCapture(c, p, st, step, files, in.client)
	if err != nil {
		return err
	}
	return s.answerWithQuality(c, captureID, step)
}

// answerWithQuality waits for the quality gate within the budget: 200 with its verdict, or
// 202 pending when it has not answered.
func (s *Server) answerWithQuality(c *fiber.Ctx, captureID, step string) error {
	pending := CaptureResponse{CaptureID: captureID, Step: step, Status: CaptureStatusPending}
	if s.cfg.QualityReplies == nil {
		return c.Status(fiber.StatusAccepted).JSON(pending)
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.QualityBudget)
	defer cancel()
	start := s.now()
	q, err := s.cfg.QualityReplies.Wait(ctx, captureID)
	answer := CaptureStatusPending
	switch {
	case err == nil && q != nil && q.Passed:
		answer = CaptureStatusAccepted
	case err == nil && q != nil:
		answer = CaptureStatusRetake
	}
	s.metrics.gate.WithLabelValues(step, answer).Observe(s.now().Sub(start).Seconds())
	if err != nil || q == nil {
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			s.log.Warn("edge: quality reply", "request_id", requestID(c), "capture_id", captureID, "err", err)
		}
		return c.Status(fiber.StatusAccepted).JSON(pending)
	}
	reasons := q.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	resp := CaptureResponse{
		CaptureID: captureID, Step: step, Status: CaptureStatusAccepted,
		Quality: &QualityView{Passed: q.Passed, Blur: q.Blur, Glare: q.Glare, Framing: q.Framing, Reasons: reasons},
	}
	if !q.Passed {
		resp.Status = CaptureStatusRetake
	}
	return c.Status(fiber.StatusOK).JSON(resp)
}

func (s *Server) parseJSONCapture(c *fiber.Ctx) (imageCapture, error) {
	var body struct {
		Side   string         `json:"side"`
		Image  string         `json:"image"`
		Client map[string]any `json:"client"`
	}
	if err := decodeJSONBody(c, s.maxImageJSONBytes(), &body); err != nil {
		return imageCapture{}, err
	}
	if body.Image == "" {
		return imageCapture{}, invalidRequest("image is required")
	}
	img, err := decodeBase64(body.Image)
	if err != nil {
		return imageCapture{}, problem(fiber.StatusUnprocessableEntity, CodeInvalidImage, "image is not valid base64")
	}
	client, err := clientFromJSON(body.Client)
	if err != nil {
		return imageCapture{}, err
	}
	return imageCapture{side: body.Side, image: img, client: client}, nil
}

func (s *Server) parseMultipartCapture(c *fiber.Ctx, allowVideo bool) (imageCapture, error) {
	form, err := c.MultipartForm()
	if err != nil {
		return imageCapture{}, problem(fiber.StatusBadRequest, CodeBadRequest, "malformed multipart body")
	}
	var in imageCapture
	if v := form.Value["side"]; len(v) > 0 {
		in.side = v[0]
	}
	imgs := form.File["image"]
	if len(imgs) != 1 {
		return imageCapture{}, invalidRequest("exactly one image part is required")
	}
	if in.image, err = readPart(imgs[0], s.cfg.MaxImageBytes, "image"); err != nil {
		return imageCapture{}, err
	}
	if vids := form.File["video"]; len(vids) > 0 {
		if !allowVideo || len(vids) > 1 {
			return imageCapture{}, invalidRequest("at most one video part, on the selfie step only")
		}
		data, err := readPart(vids[0], s.cfg.MaxVideoBytes, "video")
		if err != nil {
			return imageCapture{}, err
		}
		mt := strings.ToLower(vids[0].Header.Get(fiber.HeaderContentType))
		if !strings.HasPrefix(mt, "video/") || len(mt) > 64 {
			mt = http.DetectContentType(data)
			if !strings.HasPrefix(mt, "video/") {
				mt = "application/octet-stream"
			}
		}
		in.video = &upload{name: "video", data: data, mediaType: mt}
	}
	client := map[string]string{}
	for k, vs := range form.Value {
		name, ok := strings.CutPrefix(k, "client.")
		if !ok || len(vs) == 0 {
			continue
		}
		client[name] = vs[0]
	}
	if in.client, err = checkClient(client); err != nil {
		return imageCapture{}, err
	}
	return in, nil
}

// readPart reads one multipart file, refusing it above limit with 413.
func readPart(fh *multipart.FileHeader, limit int, name string) ([]byte, error) {
	if fh.Size > int64(limit) {
		return nil, problemf(fiber.StatusRequestEntityTooLarge, CodePayloadTooLarge, "the %s exceeds %d bytes", name, limit)
	}
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("open multipart %s: %w", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read multipart %s: %w", name, err)
	}
	if len(data) > limit {
		return nil, problemf(fiber.StatusRequestEntityTooLarge, CodePayloadTooLarge, "the %s exceeds %d bytes", name, limit)
	}
	return data, nil
}

// clientFromJSON converts the JSON client object (strings, numbers, booleans) to signals.
func clientFromJSON(in map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for k, v := range in {
		switch v := v.(type) {
		case string:
			out[k] = v
		case float64, bool:
			out[k] = fmt.Sprint(v)
		default:
			return nil, invalidRequest("client values must be strings, numbers or booleans")
		}
	}
	return checkClient(out)
}

// checkClient bounds the client signals in count, key shape and value length.
func checkClient(m map[string]string) (map[string]string, error) {
	if len(m) > maxClientSignals {
		return nil, invalidRequest("at most %d client signals", maxClientSignals)
	}
	for k, v := range m {
		if !clientKeyPattern.MatchString(k) {
			return nil, invalidRequest("client signal names must be 1 to %d characters of [A-Za-z0-9_.-]", maxClientKeyLength)
		}
		if len(v) > maxClientValueLength {
			return nil, invalidRequest("client signal values must be at most %d bytes", maxClientValueLength)
		}
	}
	return m, nil
}

// decodeBase64 accepts standard base64, padded or not (and base64url as SDKs send it).
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("invalid base64")
}

// chipRequest is the nfc step body.
type chipRequest struct {
	SOD         string `json:"sod"`
	DG1         string `json:"dg1"`
	DG2         string `json:"dg2"`
	DG13        string `json:"dg13"`
	DG14        string `json:"dg14"`
	DG15        string `json:"dg15"`
	AASignature string `json:"aa_signature"`
}

func (s *Server) nfcStep(c *fiber.Ctx) error {
	p, st, err := s.stepSession(c, true)
	if err != nil {
		return err
	}
	if mediaType(c) != fiber.MIMEApplicationJSON {
		return problem(fiber.StatusUnsupportedMediaType, CodeUnsupportedMedia, "the body must be application/json")
	}
	if !s.stepAllowed(st, "nfc") {
		return problem(fiber.StatusUnprocessableEntity, CodeStepNotInFlow, "step nfc is not part of this session's flow")
	}
	var req chipRequest
	if err := decodeJSONBody(c, s.maxChipJSONBytes(), &req); err != nil {
		return err
	}
	if req.SOD == "" || req.DG1 == "" {
		return problem(fiber.StatusUnprocessableEntity, CodeInvalidChipData, "sod and dg1 are required")
	}
	var files []upload
	for _, f := range []struct{ name, value string }{
		{"sod", req.SOD}, {"dg1", req.DG1}, {"dg2", req.DG2}, {"dg13", req.DG13},
		{"dg14", req.DG14}, {"dg15", req.DG15}, {"aa_signature", req.AASignature},
	} {
		if f.value == "" {
			continue
		}
		data, err := decodeBase64(f.value)
		if err != nil || len(data) == 0 {
			return problemf(fiber.StatusUnprocessableEntity, CodeInvalidChipData, "%s is not valid base64", f.name)
		}
		if len(data) > DefaultMaxChipBytes {
			return problemf(fiber.StatusRequestEntityTooLarge, CodePayloadTooLarge, "%s exceeds %d bytes", f.name, DefaultMaxChipBytes)
		}
		files = append(files, upload{name: f.name, data: data, mediaType: "application/octet-stream"})
	}
	captureID, err := s.submitCapture(c, p, st, "nfc", files, map[string]string{})
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(CaptureResponse{CaptureID: captureID, Step: "nfc", Status: CaptureStatusAccepted})
}

// submitCapture stores the files under "<tenant>/<session>/<capture>/<name>" and produces
// CaptureSubmitted. If the produce fails the stored files are deleted.
func (s *Server) submitCapture(c *fiber.Ctx, p principal, st *schemas.SessionState, step string, files []upload, client map[string]string) (string, error) {
	ctx := c.UserContext()
	sessionID := st.Envelope.SessionID
	captureID := randomID("cap_")
	prefix := p.tenant.ID + "/" + sessionID + "/" + captureID + "/"
	refs := make([]schemas.BlobRef, 0, len(files))
	for _, f := range files {
		obj, err := s.cfg.Blobs.Put(ctx, prefix+f.name, f.data, f.mediaType)
		if err != nil {
			s.cleanupCapture(c, prefix)
			if errors.Is(err, blob.ErrTooLarge) {
				return "", problem(fiber.StatusRequestEntityTooLarge, CodePayloadTooLarge, "an uploaded file is too large")
			}
			s.log.Error("edge: store blob", "request_id", requestID(c), "capture_id", captureID, "err", err)
			return "", errUnavailable()
		}
		refs = append(refs, schemas.BlobRef{Name: f.name, URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType})
	}
	if client == nil {
		client = map[string]string{}
	}
	nonce := st.Nonce
	if len(nonce) == 0 {
		nonce = s.sessionNonce(sessionID)
	}
	ev := schemas.CaptureSubmitted{
		Envelope: s.envelope(sessionID, p.tenant.ID), CaptureID: captureID, Step: step,
		Blobs: refs, Nonce: nonce, Client: client,
	}
	out, err := s.output(schemas.TopicCaptures, sessionID, ev)
	if err != nil {
		s.cleanupCapture(c, prefix)
		return "", err
	}
	if err := s.produce(c, out); err != nil {
		s.cleanupCapture(c, prefix)
		return "", err
	}
	return captureID, nil
}

func (s *Server) cleanupCapture(c *fiber.Ctx, prefix string) {
	if err := s.cfg.Blobs.DeletePrefix(context.WithoutCancel(c.UserContext()), prefix); err != nil {
		s.log.Warn("edge: clean up capture blobs", "request_id", requestID(c), "err", err)
	}
}
