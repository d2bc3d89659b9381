package fraud

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idstream/idstream/internal/imagemeta"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Client signal names (CaptureSubmitted.Client) the injection check reads besides the
// boolean signals of DefaultInjectionSignals.
const (
	// SignalNonce is the SDK's echo of the session nonce (base64, as Session Init returned it).
	SignalNonce = "nonce"
	// SignalTimestamp is the device's capture time (RFC 3339 or Unix milliseconds).
	SignalTimestamp = "timestamp"
	// SignalSource is where the SDK says the image came from; "camera" claims the camera.
	SignalSource = "source"
)

// Derived injection signals named in a check's detail.
const (
	signalNonceMismatch = "nonce_mismatch"
	signalNonceMissing  = "nonce_missing"
	signalTimestamp     = "timestamp_skew"
)

// DefaultInjectionSignals are the boolean client signals ("true", "1", "yes") that fail the
// injection check.
func DefaultInjectionSignals() []string {
	return []string{"virtual_camera", "emulator", "rooted", "jailbroken", "debugger", "hooking", "app_tampered"}
}

// handleCapture indexes the capture's blobs (SHA-256 sightings, and perceptual hashes of
// the near-duplicate steps), assesses its injection signals and, for a document step, the
// tamper signals of its image; each check in its own FraudAssessed.
func (g *group) handleCapture(ctx context.Context, rec *stream.Record, c *schemas.CaptureSubmitted) ([]stream.Output, error) {
	if c.Envelope.SessionID == "" || c.CaptureID == "" || c.Envelope.TenantID == "" {
		return nil, fmt.Errorf("capture at offset %d has no session, tenant or capture id", rec.Offset)
	}
	if c.Step == stepNFC {
		return nil, nil
	}
	if err := stream.Compute(ctx); err != nil { // a picture to check: the background's turn
		return nil, err
	}
	if err := g.sightings.WaitReady(ctx); err != nil {
		return nil, fmt.Errorf("capture index: %w", err)
	}
	outs, err := g.index(c)
	if err != nil {
		return nil, err
	}
	images, err := g.loadImages(ctx, c)
	if err != nil {
		return nil, err
	}
	near, err := g.perceptualEntries(c, images)
	if err != nil {
		return nil, err
	}
	outs = append(outs, near...)
	results := [][]string{{"injection"}}
	checks := []schemas.Check{g.injectionCheck(c, images)}
	if slices.Contains(TamperSteps(), c.Step) {
		results = append(results, []string{"tamper"})
		checks = append(checks, g.tamperCheck(c, images))
	}
	// One event per check: the injection check and the tamper check of a document step.
	for i, check := range checks {
		env := schemas.Envelope{
			EventID:    eventID(c.Envelope.SessionID, append([]string{c.CaptureID}, results[i]...)...),
			SessionID:  c.Envelope.SessionID,
			TenantID:   c.Envelope.TenantID,
			OccurredAt: c.Envelope.OccurredAt,
			Producer:   Producer,
		}
		out, err := g.assessed(env, []schemas.Check{check})
		if err != nil {
			return nil, err
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// index returns the capture-index entries of the capture's blobs not yet sighted.
func (g *group) index(c *schemas.CaptureSubmitted) ([]stream.Output, error) {
	var outs []stream.Output
	seen := map[string]bool{}
	for _, b := range c.Blobs {
		sum := strings.ToLower(b.SHA256)
		if sum == "" || seen[sum] {
			continue
		}
		seen[sum] = true
		if s, ok := g.sightings.First(c.Envelope.TenantID, sum); ok && s.SessionID != c.Envelope.SessionID {
			continue // first seen elsewhere: keep the first sighting
		}
		out, err := g.indexEntry(c, IndexKey(c.Envelope.TenantID, sum), nil)
		if err != nil {
			return nil, err
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// injectionCheck assesses one capture: a reported integrity signal, a wrong nonce echo or a
// skewed timestamp fails injection_suspected; otherwise image metadata that says the image
// did not come from a camera (an editor's EXIF Software tag, a PNG, a JPEG without camera
// make and model although the SDK says it came from the camera) warns not_from_camera.
func (g *group) injectionCheck(c *schemas.CaptureSubmitted, images []capturedImage) schemas.Check {
	client := map[string]string{}
	for k, v := range c.Client {
		client[strings.ToLower(k)] = strings.TrimSpace(v)
	}
	var suspected []string
	for _, s := range g.signals {
		if truthy(client[strings.ToLower(s)]) {
			suspected = append(suspected, s)
		}
	}
	if echo, ok := client[SignalNonce]; ok {
		if got, err := decodeBase64(echo); err != nil || len(c.Nonce) == 0 || string(got) != string(c.Nonce) {
			suspected = append(suspected, signalNonceMismatch)
		}
	} else if g.requireNonce {
		suspected = append(suspected, signalNonceMissing)
	}
	if ts, ok := client[SignalTimestamp]; ok {
		t, good := parseTimestamp(ts)
		if !good || absDuration(t.Sub(c.Envelope.OccurredAt)) > g.skew {
			suspected = append(suspected, signalTimestamp)
		}
	}
	check := newCheck(InjectionCheckName(c.Step), schemas.CheckPass, "", "")
	check.CaptureID = ptr(c.CaptureID)
	if len(suspected) > 0 {
		check.Status, check.ReasonCode = schemas.CheckFail, ptr(ReasonInjectionSuspected)
		check.Detail = ptr("client signals: " + strings.Join(suspected, ", "))
		return check
	}
	if origin := imageOrigin(images, client[SignalSource]); len(origin) > 0 {
		check.Status, check.ReasonCode = schemas.CheckWarn, ptr(ReasonNotFromCamera)
		check.Detail = ptr("image metadata: " + strings.Join(origin, ", "))
	}
	return check
}

// imageOrigin returns the metadata findings of the capture's images (none for an image
// whose bytes are unavailable: no blob store, or the blob is gone).
func imageOrigin(images []capturedImage, source string) []string {
	var found []string
	for _, im := range images {
		if im.data == nil {
			continue
		}
		m := imagemeta.Read(im.data)
		switch {
		case m.Format == imagemeta.FormatPNG:
			found = append(found, "png_image")
		case m.Format == imagemeta.FormatJPEG:
			if e := imagemeta.EditedBy(m, imagemeta.DefaultEditors()); e != "" {
				found = append(found, "edited_with_"+strings.ReplaceAll(e, " ", "_"))
			} else if strings.EqualFold(source, "camera") && m.Make == "" && m.Model == "" {
				found = append(found, "no_camera_exif")
			}
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "y", "on", "detected":
		return true
	}
	return false
}

func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("invalid base64")
}

func parseTimestamp(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), true
	}
	return time.Time{}, false
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
