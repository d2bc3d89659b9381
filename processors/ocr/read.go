package ocr

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/internal/mrz"
	"github.com/idstream/idstream/internal/ocr"
	"github.com/idstream/idstream/schemas"
)

// Check name prefixes; the step is appended ("document.mrz.document_back").
const (
	CheckMRZ    = "document.mrz"
	CheckFields = "document.fields"
	CheckType   = "document.type"
)

// CheckName returns the name of check (CheckMRZ, CheckFields, CheckType) for step.
func CheckName(check, step string) string { return check + "." + step }

// Reason codes of the group's checks.
const (
	ReasonMRZCheckDigit = "mrz_check_digit"
	ReasonMRZNotFound   = "mrz_not_found"
	ReasonNoMRZ         = "no_mrz"
	ReasonLowConfidence = "low_confidence"
	ReasonUnreadable    = "unreadable"
	ReasonNoLayout      = "no_layout"
	ReasonTypeUnknown   = "document_type_unknown"
	ReasonSideMismatch  = "side_mismatch"
)

// reading is what was read from one side, before it becomes a DocumentRead.
type reading struct {
	det      Detection   // document type, the side the content shows, evidence
	layout   string      // the printed layout read ("" when none)
	fields   []ocr.Field // every field of that layout, valid or not
	zone     *mrz.MRZ    // nil when no zone of the right shape was read
	zoneConf ocr.Confidence
	crop     *schemas.BlobRef
}

// side returns the side the content shows, else stepSide.
func (r *reading) side(stepSide string) string {
	if r.det.Side != "" {
		return r.det.Side
	}
	return stepSide
}

// read loads and reads the capture of qa; nil, nil when its image is gone.
func (g *group) read(ctx context.Context, qa *schemas.QualityAssessed, side string) (*schemas.DocumentRead, error) {
	occurred := qa.Envelope.OccurredAt
	if occurred.IsZero() {
		occurred = g.now().UTC().Truncate(time.Millisecond)
	}
	capturedAt := occurred
	if qa.CapturedAt != nil && !qa.CapturedAt.IsZero() {
		capturedAt = *qa.CapturedAt
	}
	doc := &schemas.DocumentRead{
		Envelope: schemas.Envelope{
			EventID:    EventIDPrefix + qa.CaptureID,
			SessionID:  qa.Envelope.SessionID,
			TenantID:   qa.Envelope.TenantID,
			OccurredAt: occurred,
			Producer:   Producer,
		},
		CaptureID:    qa.CaptureID,
		Step:         qa.Step,
		DocumentType: TypeUnknown,
		Side:         side,
		Fields:       []schemas.Field{},
		ModelVersion: g.modelVersion,
	}
	img, gone, err := g.load(ctx, qa)
	if err != nil || gone {
		return nil, err
	}
	if img == nil {
		if side == SidePassport {
			doc.DocumentType = TypePassport
		}
		doc.Checks = g.unreadableChecks(qa, side)
		g.log.InfoContext(ctx, "ocr: image unreadable", "capture_id", qa.CaptureID, "step", qa.Step)
		return doc, nil
	}
	var r *reading
	switch side {
	case SideFront:
		r, err = g.readFront(img)
	default:
		r, err = g.readZoneSide(img, side)
	}
	if err != nil {
		return nil, fmt.Errorf("ocr: read capture %s: %w", qa.CaptureID, err)
	}
	if side != SideBack && g.faces != nil {
		key := qa.Envelope.TenantID + "/" + qa.Envelope.SessionID + "/" + qa.CaptureID + "/" + FaceCropName
		r.crop, err = g.storeFace(ctx, img, key, qa.Image.URI)
		if errors.Is(err, errErased) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ocr: face crop of capture %s: %w", qa.CaptureID, err)
		}
	}
	doc.DocumentType = r.det.Type
	for _, f := range r.fields {
		if f.Valid {
			doc.Fields = append(doc.Fields, schemas.Field{Name: f.Name, Value: f.Value, Confidence: ptr(round(float64(f.Confidence)))})
		}
	}
	if r.zone != nil {
		doc.MRZ = &schemas.MRZ{Format: r.zone.Format, Lines: r.zone.Lines, Valid: r.zone.Valid, Fields: r.zone.FieldsAt(capturedAt)}
	}
	doc.FaceCrop = r.crop
	doc.Checks = g.checks(qa, side, r)
	g.log.InfoContext(ctx, "ocr: document read", "capture_id", qa.CaptureID, "step", qa.Step,
		"document_type", doc.DocumentType, "evidence", r.det.Evidence, "fields", len(doc.Fields), "mrz", doc.MRZ != nil, "face_crop", doc.FaceCrop != nil)
	return doc, nil
}

// load returns the decoded image of qa: gone when the blob no longer exists, a nil image
// when it cannot be used.
func (g *group) load(ctx context.Context, qa *schemas.QualityAssessed) (img image.Image, gone bool, err error) {
	ref := qa.Image
	if ref.URI == "" {
		return nil, false, nil
	}
	data, err := g.blobs.Get(ctx, ref.URI)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return nil, true, nil
	case errors.Is(err, blob.ErrTooLarge), errors.Is(err, blob.ErrInvalidKey):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("ocr: load image of capture %s: %w", qa.CaptureID, err)
	}
	if ref.SHA256 != "" {
		sum := sha256.Sum256(data)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), ref.SHA256) {
			return nil, false, nil
		}
	}
	img, _, err = imagecheck.Decode(data, g.limits)
	if err != nil {
		return nil, false, nil
	}
	return img, false, nil
}

// readFront reads a front: the title band decides the type (DetectType), and the layout of
// the side the content shows is read. When the title says nothing, the ID number's length
// decides (readFrontByNumber).
func (g *group) readFront(img image.Image) (*reading, error) {
	det, err := g.detectByTitle(img, nil)
	if err != nil {
		return nil, err
	}
	if det.Type == TypeUnknown {
		return g.readFrontByNumber(img)
	}
	return g.readLayout(img, det, SideFront)
}

// readFrontByNumber reads a front whose title was not recognised: the chip ID layout, taken
// (chip_id_card) when its ID number is 12 digits; else the vehicle registration layout, taken
// when it looks like one (looksLikeVehicle); else the 9-digit card's layout, taken
// (legacy_id_card) when its number is 9 digits; else the chip ID read with type unknown.
func (g *group) readFrontByNumber(img image.Image) (*reading, error) {
	byNumber := func(t string) Detection { return Detection{Type: t, Side: SideFront, Evidence: EvidenceNumber} }
	id, err := g.reader.ReadCard(img, ocr.ChipIDFront())
	if err != nil {
		return nil, err
	}
	if f, ok := field(id, "id_number"); ok && f.Valid {
		return &reading{det: byNumber(TypeChipIDCard), layout: ocr.ChipIDFront().Name, fields: id}, nil
	}
	vehicle, err := g.reader.ReadCard(img, ocr.VehicleRegistration())
	if err != nil {
		return nil, err
	}
	if looksLikeVehicle(vehicle) {
		return &reading{det: byNumber(TypeVehicleRegistration), layout: ocr.VehicleRegistration().Name, fields: vehicle}, nil
	}
	legacy, err := g.reader.ReadCard(img, ocr.LegacyIDFront())
	if err != nil {
		return nil, err
	}
	if f, ok := field(legacy, "id_number"); ok && f.Valid {
		return &reading{det: byNumber(TypeLegacyIDCard), layout: ocr.LegacyIDFront().Name, fields: legacy}, nil
	}
	return &reading{det: Detection{Type: TypeUnknown}, layout: ocr.ChipIDFront().Name, fields: id}, nil
}

// readZoneSide reads a back or a passport page: the MRZ first. A passport page is read with
// PassportLayout whatever its zone says (type passport). A back whose zone is the chip
// card's is read with its layout; otherwise the title band decides (DetectType), and a
// back with a zone of another ID card but no recognised title has no printed layout.
func (g *group) readZoneSide(img image.Image, side string) (*reading, error) {
	zone, conf, err := g.reader.ReadMRZ(img)
	switch {
	case err == nil, errors.Is(err, ocr.ErrMRZCheckDigits):
	case errors.Is(err, ocr.ErrNoMRZ):
		zone, conf = nil, 0
	default:
		return nil, err
	}
	var r *reading
	det := DetectType(zone, "")
	switch {
	case side == SidePassport:
		r, err = g.readLayout(img, Detection{Type: TypePassport, Side: SidePassport, Evidence: det.Evidence}, side)
	case det.Type == TypeChipIDCard || det.Type == TypePassport:
		r, err = g.readLayout(img, det, side)
	default:
		var byTitle Detection
		if byTitle, err = g.detectByTitle(img, nil); err != nil {
			return nil, err
		}
		switch {
		case byTitle.Type != TypeUnknown:
			r, err = g.readLayout(img, byTitle, side)
		default:
			r = &reading{det: det} // an ID card by its zone, or unknown: no printed layout
		}
	}
	if err != nil {
		return nil, err
	}
	r.zone, r.zoneConf = zone, conf
	return r, nil
}

// detectByTitle reads the title band of img (ocr.TitleProbe) and returns DetectType's
// conclusion from it and zone.
func (g *group) detectByTitle(img image.Image, zone *mrz.MRZ) (Detection, error) {
	texts, _, err := g.reader.ReadText(img, ocr.TitleProbe())
	if err != nil {
		return Detection{}, err
	}
	return DetectType(zone, strings.Join(texts, " ")), nil
}

// readLayout reads img with the printed layout of det's type on the side the content shows
// (det.Side, else stepSide); a side without a known layout (a vehicle registration's back)
// is not read. A passport number is fixed to its form (passportNumber).
func (g *group) readLayout(img image.Image, det Detection, stepSide string) (*reading, error) {
	r := &reading{det: det}
	layout, ok := layoutFor(det.Type, r.side(stepSide))
	if !ok {
		return r, nil
	}
	fields, err := g.reader.ReadCard(img, layout)
	if err != nil {
		return nil, err
	}
	for i := range fields {
		if fields[i].Name == "passport_number" {
			fields[i].Value, fields[i].Valid = passportNumber(fields[i].Value)
		}
	}
	r.layout, r.fields = layout.Name, fields
	return r, nil
}

// Look-alikes OCR confuses in codes, towards a digit and towards a letter.
var (
	lookAlikeDigit  = map[byte]byte{'O': '0', 'Q': '0', 'D': '0', 'I': '1', 'L': '1', 'B': '8', 'S': '5', 'Z': '2', 'G': '6'}
	lookAlikeLetter = map[byte]byte{'0': 'O', '1': 'I', '8': 'B', '5': 'S', '2': 'Z', '6': 'G'}
)

// passportNumber fixes a Vietnamese passport number read as a code to its form, one letter
// and seven digits, through the look-alike confusions; valid only when it then has that form.
func passportNumber(s string) (string, bool) {
	if len(s) != 8 {
		return s, false
	}
	b := []byte(s)
	if l, ok := lookAlikeLetter[b[0]]; ok {
		b[0] = l
	}
	for i := 1; i < len(b); i++ {
		if d, ok := lookAlikeDigit[b[i]]; ok {
			b[i] = d
		}
	}
	out := string(b)
	return out, isUpper(b[0]) && isDigits(out[1:], 7)
}

// typeOfZone returns the document type an MRZ shows.
func typeOfZone(m *mrz.MRZ) string {
	switch {
	case m.Format == mrz.FormatTD3 && strings.HasPrefix(m.DocumentCode, "P"):
		return TypePassport
	case m.Format == mrz.FormatTD1 && m.IssuingState == "VNM" && isDigits(m.OptionalData1, 12):
		return TypeChipIDCard
	case m.Format == mrz.FormatTD1, m.Format == mrz.FormatTD2:
		return TypeIDCard
	}
	return TypeUnknown
}

// looksLikeVehicle reports whether a vehicle registration read is one: a plate of the
// Vietnamese form (two digits, a series of one letter and an optional letter or digit, a
// dash, three digits, an optional dot and two digits), or a chassis number of 10 to 17 letters
// and digits together with a valid registration date.
func looksLikeVehicle(fields []ocr.Field) bool {
	if f, ok := field(fields, "plate"); ok && isPlate(f.Value) {
		return true
	}
	ch, ok1 := field(fields, "chassis_number")
	rd, ok2 := field(fields, "registration_date")
	return ok1 && ok2 && rd.Valid && len(ch.Value) >= 10 && len(ch.Value) <= 17 && isAlnum(ch.Value)
}

// isPlate matches NN L[L|N]-NNN[.]NN.
func isPlate(s string) bool {
	series, rest, ok := strings.Cut(s, "-")
	if !ok || len(series) < 3 || len(series) > 4 || !isDigits(series[:2], 2) || !isUpper(series[2]) {
		return false
	}
	if len(series) == 4 && !isUpper(series[3]) && !isDigits(series[3:], 1) {
		return false
	}
	rest = strings.Replace(rest, ".", "", 1)
	return isDigits(rest, 5) || isDigits(rest, 4)
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isUpper(s[i]) && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

// isDigits reports whether s is exactly n ASCII digits.
func isDigits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// field returns the field named name.
func field(fields []ocr.Field, name string) (ocr.Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return ocr.Field{}, false
}

func ptr[T any](v T) *T { return &v }

// round keeps three decimals, so confidences compare and print stably.
func round(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
