package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/netip"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// mediaType returns the request's media type, lower case, without parameters.
func mediaType(c *fiber.Ctx) string {
	mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// decodeJSONBody checks the content type and size, and decodes the body into v:
// 415 when not application/json, 413 above limit, 400 invalid_json when malformed, 422
// invalid_request when a field has the wrong type.
func decodeJSONBody(c *fiber.Ctx, limit int, v any) error {
	if mediaType(c) != fiber.MIMEApplicationJSON {
		return problem(fiber.StatusUnsupportedMediaType, CodeUnsupportedMedia, "the body must be application/json")
	}
	body := c.Body()
	if len(body) > limit {
		return problemf(fiber.StatusRequestEntityTooLarge, CodePayloadTooLarge, "the JSON body exceeds %d bytes", limit)
	}
	return decodeJSON(body, v)
}

func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return problemf(fiber.StatusUnprocessableEntity, CodeInvalidRequest, "field %q has the wrong type", typeErr.Field)
		}
		return problem(fiber.StatusBadRequest, CodeInvalidJSON, "the body is not valid JSON")
	}
	if dec.More() {
		return problem(fiber.StatusBadRequest, CodeInvalidJSON, "the body holds more than one JSON value")
	}
	return nil
}

func invalidRequest(format string, args ...any) error {
	return problemf(fiber.StatusUnprocessableEntity, CodeInvalidRequest, format, args...)
}

// checkText validates an optional free-text field: at most max bytes of valid UTF-8 without
// control characters.
func checkText(name string, v *string, max int) error {
	if v == nil {
		return nil
	}
	if *v == "" || len(*v) > max {
		return invalidRequest("%s must hold 1 to %d bytes", name, max)
	}
	for _, r := range *v {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return invalidRequest("%s holds invalid characters", name)
		}
	}
	return nil
}

const maxURLLength = 2048

// checkWebhookURL requires an absolute http(s) URL; private or loopback literal hosts are
// refused unless allowPrivate.
func checkWebhookURL(raw string, allowPrivate bool) error {
	if len(raw) > maxURLLength {
		return invalidRequest("webhook_url is longer than %d bytes", maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return invalidRequest("webhook_url must be an absolute http or https URL")
	}
	if allowPrivate {
		return nil
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return invalidRequest("webhook_url must not point to a private address")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() {
			return invalidRequest("webhook_url must not point to a private address")
		}
	}
	return nil
}

// envelope returns a fresh envelope produced by the edge.
func (s *Server) envelope(sessionID, tenantID string) schemas.Envelope {
	return schemas.Envelope{
		EventID:    randomID("evt_"),
		SessionID:  sessionID,
		TenantID:   tenantID,
		OccurredAt: s.now().UTC().Truncate(1e6), // timestamp-millis
		Producer:   schemas.ProducerEdge,
	}
}

// output encodes v for topic, keyed by key.
func (s *Server) output(topic, key string, v any) (stream.Output, error) {
	data, err := s.cfg.Encoder.Encode(topic, v)
	if err != nil {
		return stream.Output{}, fmt.Errorf("encode for %s: %w", topic, err)
	}
	return stream.Output{Topic: topic, Key: []byte(key), Value: data}, nil
}

// produce publishes outs and maps a failure to 503 (logged without payloads).
func (s *Server) produce(c *fiber.Ctx, outs ...stream.Output) error {
	if err := s.cfg.Publisher.Produce(c.UserContext(), outs...); err != nil {
		s.log.Error("edge: produce failed", "request_id", requestID(c), "records", len(outs), "err", err)
		return errUnavailable()
	}
	return nil
}
