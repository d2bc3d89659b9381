package consent

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/internal/problem"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// configBody is GET /v1/config (API.md section 2).
type configBody struct {
	Version         string     `json:"version"`
	DefaultLanguage string     `json:"default_language"`
	Languages       []string   `json:"languages"`
	Controller      Controller `json:"controller"`
	Notice          Notice     `json:"notice"`
	Purposes        []Purpose  `json:"purposes"`
}

func configView(c *CMPConfig) configBody {
	n, _ := c.Notice(c.CurrentNotice)
	return configBody{
		Version: c.Version, DefaultLanguage: c.DefaultLanguage, Languages: c.Languages,
		Controller: c.Controller, Notice: n, Purposes: c.Purposes,
	}
}

func (s *Server) getConfig(c *fiber.Ctx) error {
	if _, err := s.authenticate(c); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(s.configJSON)
}

// recordView is a Record as JSON, with recorded_at in TimeFormat.
type recordView struct {
	Record
	RecordedAt string `json:"recorded_at"`
}

// purposeState is the current state of one purpose (its latest record).
type purposeState struct {
	Status        string `json:"status"`
	UpdatedAt     string `json:"updated_at"`
	NoticeVersion string `json:"notice_version"`
}

type consentsBody struct {
	TrackingID string                  `json:"tracking_id"`
	Purposes   map[string]purposeState `json:"purposes"`
	Records    []recordView            `json:"records"`
}

type writtenBody struct {
	TrackingID string       `json:"tracking_id"`
	Records    []recordView `json:"records"`
}

func views(recs []Record) []recordView {
	out := make([]recordView, len(recs))
	for i, r := range recs {
		out[i] = recordView{Record: r, RecordedAt: r.RecordedAt.UTC().Format(TimeFormat)}
	}
	return out
}

func (s *Server) getConsents(c *fiber.Ctx) error {
	t, err := s.authenticate(c)
	if err != nil {
		return err
	}
	trackingID := c.Query("tracking_id")
	if trackingID == "" {
		return problem.New(fiber.StatusBadRequest, CodeTrackingIDRequired, "the tracking_id query parameter is required")
	}
	if err := checkText("tracking_id", trackingID, MaxTrackingIDBytes); err != nil {
		return err
	}
	if !s.cfg.Index.Ready() {
		// Before the index has caught up, "no record" could be false.
		return errUnavailable()
	}
	recs := s.cfg.Index.Records(t.ID, trackingID)
	body := consentsBody{TrackingID: trackingID, Purposes: make(map[string]purposeState), Records: views(recs)}
	for _, r := range recs { // oldest first: the last one of a purpose wins
		body.Purposes[r.PurposeID] = purposeState{Status: r.Status, UpdatedAt: r.RecordedAt.UTC().Format(TimeFormat), NoticeVersion: r.NoticeVersion}
	}
	return c.JSON(body)
}

// consentRequest is POST /v1/consents.
type consentRequest struct {
	TrackingID    string     `json:"tracking_id"`
	Decisions     []decision `json:"decisions"`
	NoticeVersion string     `json:"notice_version"`
	Channel       string     `json:"channel"`
	IP            string     `json:"ip"`
	UserAgent     string     `json:"user_agent"`
}

type decision struct {
	PurposeID string `json:"purpose_id"`
	Status    string `json:"status"`
}

func (s *Server) postConsents(c *fiber.Ctx) error {
	t, err := s.authenticate(c)
	if err != nil {
		return err
	}
	var req consentRequest
	if err := s.decodeJSONBody(c, &req); err != nil {
		return err
	}
	if err := s.validate(&req); err != nil {
		return err
	}
	recs := s.newRecords(&req)
	outs := make([]stream.Output, 0, len(recs)+1)
	for _, r := range recs {
		ev := toEvent(t.ID, req.TrackingID, r)
		data, err := s.cfg.Encoder.Encode(schemas.TopicConsents, ev)
		if err != nil {
			return err // 500 internal, logged without the record
		}
		outs = append(outs, stream.Output{Topic: schemas.TopicConsents, Key: []byte(req.TrackingID), Value: data})
		if RequiresBiometricErasure(&ev) {
			// Beside the withdrawal, in the same acknowledged call: the erasure request.
			data, err := s.cfg.Encoder.Encode(schemas.TopicErasures, ErasureRequest(&ev))
			if err != nil {
				return err
			}
			outs = append(outs, stream.Output{Topic: schemas.TopicErasures, Key: []byte(req.TrackingID), Value: data})
		}
	}
	if err := s.cfg.Publisher.Produce(c.UserContext(), outs...); err != nil {
		s.log.Error("consent: produce failed", "request_id", problem.RequestID(c), "tenant_id", t.ID, "records", len(outs), "err", err)
		return errUnavailable()
	}
	// Acknowledged: visible at once on this replica; the Follower dedupes them by consent id
	// when they come back from the topic.
	for _, r := range recs {
		s.cfg.Index.Apply(t.ID, req.TrackingID, r)
	}
	return c.Status(fiber.StatusCreated).JSON(writtenBody{TrackingID: req.TrackingID, Records: views(recs)})
}

// decodeJSONBody checks the content type (415) and size (413) and decodes the body: 400
// invalid_json when malformed, 400 invalid_request when a field has the wrong type.
func (s *Server) decodeJSONBody(c *fiber.Ctx, v any) error {
	mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || !strings.EqualFold(mt, fiber.MIMEApplicationJSON) {
		return problem.New(fiber.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia, "the body must be application/json")
	}
	body := c.Body()
	if len(body) > s.cfg.MaxBodyBytes {
		return problem.Newf(fiber.StatusRequestEntityTooLarge, problem.CodePayloadTooLarge, "the JSON body exceeds %d bytes", s.cfg.MaxBodyBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return invalidRequest("field %q has the wrong type", typeErr.Field)
		}
		return problem.New(fiber.StatusBadRequest, problem.CodeInvalidJSON, "the body is not valid JSON")
	}
	if dec.More() {
		return problem.New(fiber.StatusBadRequest, problem.CodeInvalidJSON, "the body holds more than one JSON value")
	}
	return nil
}

func invalidRequest(format string, args ...any) *problem.Error {
	return problem.Newf(fiber.StatusBadRequest, problem.CodeInvalidRequest, format, args...)
}

// checkText requires 1 to max bytes of valid UTF-8 without control characters.
func checkText(name, v string, max int) error {
	if v == "" || len(v) > max {
		return invalidRequest("%s must hold 1 to %d bytes", name, max)
	}
	if !utf8.ValidString(v) {
		return invalidRequest("%s holds invalid characters", name)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
			return invalidRequest("%s holds invalid characters", name)
		}
	}
	return nil
}

// validate checks a request against API.md and the configuration: 400 invalid_request for
// a missing or malformed field, 422 invalid_notice_version / invalid_purpose for values the
// configuration does not know. Nothing is recorded when it fails.
func (s *Server) validate(req *consentRequest) error {
	if req.TrackingID == "" {
		return invalidRequest("tracking_id is required")
	}
	if err := checkText("tracking_id", req.TrackingID, MaxTrackingIDBytes); err != nil {
		return err
	}
	if len(req.Decisions) == 0 || len(req.Decisions) > MaxDecisions {
		return invalidRequest("decisions must hold 1 to %d decisions", MaxDecisions)
	}
	if req.NoticeVersion == "" {
		return invalidRequest("notice_version is required")
	}
	if _, ok := s.cfg.CMP.Notice(req.NoticeVersion); !ok {
		return problem.Newf(fiber.StatusUnprocessableEntity, CodeInvalidNoticeVersion, "notice version %q is not configured", clip(req.NoticeVersion))
	}
	seen := make(map[string]bool, len(req.Decisions))
	for i, d := range req.Decisions {
		if d.PurposeID == "" {
			return invalidRequest("decisions[%d].purpose_id is required", i)
		}
		if _, ok := s.cfg.CMP.Purpose(d.PurposeID); !ok {
			return problem.Newf(fiber.StatusUnprocessableEntity, CodeInvalidPurpose, "purpose %q is not configured", clip(d.PurposeID))
		}
		if seen[d.PurposeID] {
			return invalidRequest("decisions[%d]: purpose %s appears twice", i, d.PurposeID)
		}
		seen[d.PurposeID] = true
		switch d.Status {
		case StatusGranted, StatusDenied, StatusWithdrawn:
		default:
			return invalidRequest("decisions[%d].status must be granted, denied or withdrawn", i)
		}
	}
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{{"channel", req.Channel, MaxChannelBytes}, {"user_agent", req.UserAgent, MaxUserAgentBytes}} {
		if f.v == "" {
			continue
		}
		if err := checkText(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	if req.IP != "" {
		ip, err := netip.ParseAddr(req.IP)
		if err != nil || len(req.IP) > MaxIPBytes {
			return invalidRequest("ip must be an IPv4 or IPv6 address")
		}
		req.IP = ip.String() // canonical form, as recorded and hashed
	}
	return nil
}

// clip bounds a client value echoed in a problem detail (printable ASCII, 64 bytes).
func clip(v string) string {
	var b strings.Builder
	for _, r := range v {
		if b.Len() >= 64 {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// newRecords returns one record per decision, in request order, all with the same
// recorded_at: the Server's clock at millisecond precision, made strictly later than the
// previous request's so that on one replica a later POST always sorts after an earlier one.
func (s *Server) newRecords(req *consentRequest) []Record {
	s.mu.Lock()
	at := s.cfg.Clock().UTC().Truncate(time.Millisecond)
	if !at.After(s.last) {
		at = s.last.Add(time.Millisecond)
	}
	s.last = at
	s.mu.Unlock()
	recs := make([]Record, len(req.Decisions))
	for i, d := range req.Decisions {
		purpose, _ := s.cfg.CMP.Purpose(d.PurposeID)
		notice, _ := s.cfg.CMP.Notice(req.NoticeVersion)
		r := Record{
			ConsentID: newConsentID(), PurposeID: purpose.ID, Status: d.Status,
			NoticeVersion: notice.Version, RecordedAt: at, Channel: req.Channel, IP: req.IP,
			UserAgent: req.UserAgent,
		}
		r.ProofSHA256 = Proof(req.TrackingID, r)
		recs[i] = r
	}
	return recs
}
