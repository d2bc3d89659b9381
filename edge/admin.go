package edge

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Blocklist entry kinds.
const (
	BlocklistKindIDNumber = "id_number"
	BlocklistKindFace     = "face"
)

// BlocklistResponse is the 201 body of POST /v1/admin/blocklist.
type BlocklistResponse struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	CreatedAt string `json:"created_at"`
}

// ReplayResponse is the 202 body of POST /v1/admin/webhooks/replay.
type ReplayResponse struct {
	Replayed int `json:"replayed"`
}

// replayBatch bounds the records of one Produce call during a replay.
const replayBatch = 500

func (s *Server) addBlocklist(c *fiber.Ctx) error {
	t, err := s.authenticateAdmin(c)
	if err != nil {
		return err
	}
	var req struct {
		IDNumber  *string `json:"id_number"`
		SessionID *string `json:"session_id"`
		Reason    *string `json:"reason"`
	}
	if err := decodeJSONBody(c, DefaultMaxJSONBytes, &req); err != nil {
		return err
	}
	if (req.IDNumber == nil) == (req.SessionID == nil) {
		return invalidRequest("exactly one of id_number and session_id is required")
	}
	if err := checkText("reason", req.Reason, 512); err != nil {
		return err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	entry := schemas.BlocklistEntry{EntryID: randomID("blk_"), Reason: req.Reason, CreatedAt: now, Embedding: []float32{}}
	sessionID := ""
	if req.IDNumber != nil {
		norm := NormalizeIDNumber(*req.IDNumber)
		if norm == "" || len(norm) > 32 || !alnum(norm) {
			return invalidRequest("id_number must be 1 to 32 letters or digits")
		}
		h := BlocklistHash(s.cfg.TokenSecret, norm)
		entry.Kind, entry.ValueHash = BlocklistKindIDNumber, &h
	} else {
		st, found, err := s.cfg.Sessions.Get(c.UserContext(), *req.SessionID)
		if err != nil {
			s.log.Error("edge: session view", "request_id", requestID(c), "err", err)
			return errUnavailable()
		}
		if !validID(*req.SessionID, "ses_") || !found || st == nil || st.Envelope.TenantID != t.ID {
			return errSessionNotFound()
		}
		sessionID = st.Envelope.SessionID
		entry.Kind, entry.SourceSessionID = BlocklistKindFace, &sessionID
	}
	entry.Envelope = s.envelope(sessionID, t.ID)
	out, err := s.output(schemas.TopicBlocklist, entry.EntryID, entry)
	if err != nil {
		return err
	}
	if err := s.produce(c, out); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(BlocklistResponse{ID: entry.EntryID, Kind: entry.Kind, CreatedAt: readmodel.Timestamp(now)})
}

// deleteBlocklist produces the entry again with deleted=true. It answers 204 for any
// well-formed entry id (the edge keeps no view of the blocklist); the envelope's tenant_id
// lets consumers ignore a deletion by another tenant.
func (s *Server) deleteBlocklist(c *fiber.Ctx) error {
	t, err := s.authenticateAdmin(c)
	if err != nil {
		return err
	}
	id := c.Params("entry_id")
	if !validID(id, "blk_") {
		return problem(fiber.StatusNotFound, CodeNotFound, "no such blocklist entry")
	}
	entry := schemas.BlocklistEntry{
		Envelope: s.envelope("", t.ID), EntryID: id, CreatedAt: s.now().UTC().Truncate(time.Millisecond),
		Embedding: []float32{}, Deleted: true,
	}
	out, err := s.output(schemas.TopicBlocklist, id, entry)
	if err != nil {
		return err
	}
	if err := s.produce(c, out); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) replayWebhooks(c *fiber.Ctx) error {
	t, err := s.authenticateAdmin(c)
	if err != nil {
		return err
	}
	var req struct {
		SessionID *string `json:"session_id"`
		From      *string `json:"from"`
		To        *string `json:"to"`
	}
	if err := decodeJSONBody(c, DefaultMaxJSONBytes, &req); err != nil {
		return err
	}
	var sessions []*schemas.SessionState
	switch {
	case req.SessionID != nil && req.From == nil && req.To == nil:
		st, found, err := s.cfg.Sessions.Get(c.UserContext(), *req.SessionID)
		if err != nil {
			s.log.Error("edge: session view", "request_id", requestID(c), "err", err)
			return errUnavailable()
		}
		if !validID(*req.SessionID, "ses_") || !found || st == nil || st.Envelope.TenantID != t.ID {
			return errSessionNotFound()
		}
		if st.Decision != nil {
			sessions = append(sessions, st)
		}
	case req.SessionID == nil && req.From != nil && req.To != nil:
		from, err1 := time.Parse(time.RFC3339, *req.From)
		to, err2 := time.Parse(time.RFC3339, *req.To)
		if err1 != nil || err2 != nil || !from.Before(to) {
			return invalidRequest("from and to must be RFC 3339 timestamps with from before to")
		}
		s.cfg.Sessions.Range(func(st *schemas.SessionState) bool {
			if st != nil && st.Envelope.TenantID == t.ID && st.Decision != nil {
				at := decidedAt(st)
				if !at.Before(from) && at.Before(to) {
					sessions = append(sessions, st)
				}
			}
			return true
		})
	default:
		return invalidRequest("send either session_id, or from and to")
	}

	now := s.now().UTC().Truncate(time.Millisecond)
	var outs []stream.Output
	replayed := 0
	for _, st := range sessions {
		url := readmodel.WebhookTarget(st, t.WebhookURL)
		if url == "" {
			continue // nowhere to deliver
		}
		body, err := readmodel.WebhookBody(st, now)
		if err != nil {
			return err
		}
		sid := st.Envelope.SessionID
		d := schemas.WebhookDelivery{
			Envelope:        s.envelope(sid, t.ID),
			WebhookID:       readmodel.WebhookID(st.Decision.DecisionID),
			DecisionEventID: schemas.DecisionEventID(st.Decision.DecisionID),
			URL:             url,
			Attempt:         0,
			NotBefore:       now,
			Body:            body,
		}
		out, err := s.output(schemas.TopicWebhookRetry, sid, d)
		if err != nil {
			return err
		}
		outs = append(outs, out)
		replayed++
		if len(outs) == replayBatch {
			if err := s.produce(c, outs...); err != nil {
				return err
			}
			outs = outs[:0]
		}
	}
	if len(outs) > 0 {
		if err := s.produce(c, outs...); err != nil {
			return err
		}
	}
	return c.Status(fiber.StatusAccepted).JSON(ReplayResponse{Replayed: replayed})
}

func decidedAt(st *schemas.SessionState) time.Time {
	if st.DecidedAt != nil {
		return *st.DecidedAt
	}
	return st.Decision.DecidedAt
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}
