package edge

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/edge/pages"
	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
)

// The reviewers' back office: its page (GET /v1/review/ui) and the pictures of a case behind
// short-lived signed URLs (GET /v1/review/images/{token}), which the page's <img> elements
// load without a credential of their own.

// ReviewImage is one captured picture of a case, behind a short-lived signed URL.
type ReviewImage struct {
	// Kind is what the picture is: PictureCapture (what the person took), PictureDocumentFace
	// (the face the document reader cut from it) or PictureChipPortrait (the chip's DG2).
	Kind      string `json:"kind"`
	Step      string `json:"step"`
	CaptureID string `json:"capture_id"`
	Name      string `json:"name"`
	MediaType string `json:"media_type"`
	URL       string `json:"url"`
	ExpiresAt string `json:"expires_at"`
}

// Kinds of ReviewImage.
const (
	PictureCapture      = "capture"
	PictureDocumentFace = "document_face"
	PictureChipPortrait = "chip_portrait"
)

// ReviewImageTTL is how long a case's image URLs are valid.
const ReviewImageTTL = 5 * time.Minute

// tokenImage is the kind of a signed image URL's token: session, tenant, capture, blob name,
// reviewer, expiry.
const tokenImage = "image"

// caseImages are the case's pictures with signed URLs valid for ReviewImageTTL and for this
// reviewer only: each step's latest capture, the face the document reader cut from a
// document and the chip's portrait (DG2, as a JPEG). An erased session
// has none (its captures are gone from the state).
func (s *Server) caseImages(st *schemas.SessionState, r reviewer) []ReviewImage {
	exp := s.now().Add(ReviewImageTTL).Truncate(time.Second)
	out := []ReviewImage{}
	for _, b := range casePictures(st) {
		tok := s.signToken(tokenImage, st.Envelope.SessionID, r.tenant.ID, b.captureID, b.ref.Name, r.id, strconv.FormatInt(exp.Unix(), 10))
		out = append(out, ReviewImage{
			Kind: b.kind, Step: b.step, CaptureID: b.captureID, Name: b.ref.Name, MediaType: b.ref.MediaType,
			// A path, not an address: the back office loads it from its own origin, whatever
			// host the reviewer reached the edge by.
			URL: "/v1/review/images/" + tok, ExpiresAt: readmodel.Timestamp(exp),
		})
	}
	return out
}

// casePicture is one picture of a case: the step and capture it came of, and its blob.
type casePicture struct {
	kind, step, captureID string
	ref                   schemas.BlobRef
}

// casePictures lists the session's pictures (image blobs only): the captures' images, the
// documents' face crops and the chip's portrait, in that order.
func casePictures(st *schemas.SessionState) []casePicture {
	var out []casePicture
	add := func(kind, step, captureID string, ref *schemas.BlobRef) {
		if ref != nil && ref.URI != "" && strings.HasPrefix(ref.MediaType, "image/") {
			out = append(out, casePicture{kind: kind, step: step, captureID: captureID, ref: *ref})
		}
	}
	for _, cp := range st.Captures {
		for i := range cp.Blobs {
			add(PictureCapture, cp.Step, cp.CaptureID, &cp.Blobs[i])
		}
	}
	for _, d := range st.Documents {
		add(PictureDocumentFace, d.Step, d.CaptureID, d.FaceCrop)
	}
	if ch := st.Chip; ch != nil {
		add(PictureChipPortrait, flow.StepNFC, ch.CaptureID, ch.FaceImage)
	}
	return out
}

// caseImage serves one picture of a case by its signed URL (no other credential: an <img>
// sends none). The URL expires; a session erased, or no longer holding that capture, is 404.
// Every view is recorded on the review topic with the reviewer's id (recordView).
func (s *Server) caseImage(c *fiber.Ctx) error {
	f, ok := s.openToken(tokenImage, c.Params("token"), 6)
	if !ok {
		return errUnauthorized()
	}
	exp, ok := unixField(f[5])
	if !ok || !s.now().Before(exp) {
		return problem(fiber.StatusGone, CodeLinkExpired, "the image link has expired: open the case again")
	}
	sessionID, tenantID, captureID, name, reviewerID := f[0], f[1], f[2], f[3], f[4]
	t, ok := s.cfg.Tenants.Get(tenantID)
	if !ok || !slices.ContainsFunc(t.Reviewers, func(r tenant.Reviewer) bool { return r.ID == reviewerID }) {
		return errUnauthorized() // the tenant or the reviewer is gone
	}
	if err := s.rateLimit(t); err != nil {
		return err
	}
	st, found, err := s.cfg.Sessions.Get(c.UserContext(), sessionID)
	if err != nil {
		return errUnavailable()
	}
	if !found || st == nil || st.Envelope.TenantID != tenantID {
		return problem(fiber.StatusNotFound, CodeNotFound, "no such image")
	}
	pics := casePictures(st)
	i := slices.IndexFunc(pics, func(p casePicture) bool { return p.captureID == captureID && p.ref.Name == name })
	if i < 0 {
		return problem(fiber.StatusNotFound, CodeNotFound, "no such image")
	}
	ref, step, kind := &pics[i].ref, pics[i].step, pics[i].kind
	data, err := s.cfg.Blobs.Get(c.UserContext(), ref.URI)
	if errors.Is(err, blob.ErrNotFound) {
		return problem(fiber.StatusNotFound, CodeNotFound, "no such image")
	}
	if err != nil {
		s.log.Error("edge: read a case image", "request_id", requestID(c), "err", err)
		return errUnavailable()
	}
	if err := s.recordView(c, sessionID, tenantID, reviewerID, viewSubject(kind, step)); err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	c.Set("Cross-Origin-Resource-Policy", "same-origin")
	c.Set(fiber.HeaderContentType, ref.MediaType)
	return c.Send(data)
}

// viewSubject is what a picture's view record says was seen: image:<step> for a capture,
// document_face:<step> or chip_portrait:nfc.
func viewSubject(kind, step string) string {
	if kind == PictureCapture {
		return "image:" + step
	}
	return kind + ":" + step
}

// backOffice serves the reviewers' back office (its data comes from the review API, with
// the reviewer's key the page asks for).
func (s *Server) backOffice(c *fiber.Ctx) error {
	setPageHeaders(c)
	var b bytes.Buffer
	if err := pages.RenderBackOffice(&b); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(b.Bytes())
}
