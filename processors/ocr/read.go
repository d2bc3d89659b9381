package ocr

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/idstream/idstream/internal/claimcheck"
	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/mrz"
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
	// ReasonFieldsFromZone: a passport page's required fields its valid zone carries were
	// illegible in print and taken from the zone (zoneCarried).
	ReasonFieldsFromZone = "fields_from_zone"
	ReasonUnreadable     = "unreadable"
	ReasonNoLayout       = "no_layout"
	ReasonTypeUnknown    = "document_type_unknown"
	ReasonSideMismatch   = "side_mismatch"
)

// reading is what was read from one side, before it becomes a DocumentRead.
type reading struct {
	det      Detection       // document type, the side the content shows, evidence
	layout   string          // the printed layout read ("" when none)
	fields   []docread.Field // every field of that layout, valid or not
	zone     *mrz.MRZ        // nil when no zone of the right shape was read
	zoneConf docread.Confidence
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
	// The document is located once for every read of the picture (its page, its zone, its
	// number); the face is looked for in the picture as decoded.
	var r *reading
	switch loc := docread.Locate(img); side {
	case SideFront:
		r, err = g.readFront(loc)
	default:
		r, err = g.readZoneSide(loc, side)
	}
	if err != nil {
		return nil, fmt.Errorf("read capture %s: %w", qa.CaptureID, err)
	}
	if side != SideBack && g.faces != nil {
		key := qa.Envelope.TenantID + "/" + qa.Envelope.SessionID + "/" + qa.CaptureID + "/" + FaceCropName
		r.crop, err = g.storeFace(ctx, img, key, qa.Image.URI)
		if errors.Is(err, errErased) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("face crop of capture %s: %w", qa.CaptureID, err)
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
// when it cannot be used (claimcheck).
func (g *group) load(ctx context.Context, qa *schemas.QualityAssessed) (img image.Image, gone bool, err error) {
	if qa.Image.URI == "" {
		return nil, false, nil
	}
	img, err = claimcheck.Image(ctx, g.blobs, qa.Image.URI, qa.Image.SHA256, g.limits, g.decoded)
	switch {
	case errors.Is(err, claimcheck.ErrGone):
		return nil, true, nil
	case errors.Is(err, claimcheck.ErrUnusable):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("load image of capture %s: %w", qa.CaptureID, err)
	}
	return img, false, nil
}

// readFront reads a front: one Tesseract pass over the whole card (docread.ReadPage) gives the
// text DetectType decides the type from and the words the fields are found in by their
// labels. When the text says nothing, the ID number's length decides (readFrontByNumber).
func (g *group) readFront(img image.Image) (*reading, error) {
	page, err := g.reader.ReadPage(img, cardWidth, cardHeight)
	if err != nil {
		return nil, err
	}
	rs := newReadings(g.reader, page)
	told, det, err := detectOnReadings(rs)
	if err != nil {
		return nil, err
	}
	if det.Type == TypeUnknown {
		return g.readFrontByNumber(img)
	}
	return g.readPage(rs, told, det, SideFront)
}

// detectOnReadings returns the page's type by its text (detectOnPage), and the reading it
// was told on: the page as read, else read as one block, else thresholded locally (both
// other readings drop whole rows of some cards, the title's among them), else from the
// picture with the outline grown (a light card's back printed all over with fine wavy lines
// read as no words at all until a margin of the table beside it moved Tesseract's threshold),
// else with mid-grey patterns painted out (a card's back crossed all over by fine grey lines:
// tried second when the page as read has almost no words, barelyRead); unknown, with the
// page as read, when none tells it.
func detectOnReadings(rs *readings) (int, Detection, error) {
	order := []int{readingAsRead, readingBlock, readingBinarised, readingGrown, readingFlattened}
	first, err := rs.at(readingAsRead)
	if err != nil {
		return 0, Detection{}, err
	}
	if barelyRead(first) {
		order = []int{readingAsRead, readingFlattened, readingBlock, readingBinarised, readingGrown}
	}
	for _, k := range order {
		page, err := rs.at(k)
		if err != nil {
			return 0, Detection{}, err
		}
		if d := detectOnPage(nil, page); d.Type != TypeUnknown {
			return k, d, nil
		}
	}
	return readingAsRead, Detection{Type: TypeUnknown}, nil
}

// barelyRead reports whether a page was read as fewer than five words of two letters or more:
// Tesseract read the card as a picture, not as print.
func barelyRead(p *docread.Page) bool {
	n := 0
	for _, w := range p.Words {
		letters := 0
		for _, r := range w.Text {
			if unicode.IsLetter(r) {
				letters++
			}
		}
		if letters >= 2 {
			n++
		}
	}
	return n < 5
}

// isIdentityCard2024 reports whether a chip card's front text shows the identity card of 2024
// ("CĂN CƯỚC" without "CÔNG DÂN"), whose front prints no places and no expiry date.
func isIdentityCard2024(text string) bool {
	t := foldTitle(text)
	return containsApprox(t, "CANCUOC", 1) && !containsApprox(t, "CANCUOCCONGDAN", 2)
}

// ID-1 cards are rectified to cardWidth × cardHeight (the layouts' size) before they are read.
const (
	cardWidth  = 1200
	cardHeight = 756
)

// detectOnPage returns DetectType's conclusion from zone and the page's text.
func detectOnPage(zone *mrz.MRZ, page *docread.Page) Detection {
	return DetectType(zone, page.Text())
}

// readFrontByNumber reads a front whose title was not recognised: the chip ID layout, taken
// (chip_id_card) when its ID number is 12 digits; else the vehicle registration layout, taken
// when it looks like one (looksLikeVehicle); else the 9-digit card's layout, taken
// (legacy_id_card) when its number is 9 digits; else the chip ID read with type unknown.
func (g *group) readFrontByNumber(img image.Image) (*reading, error) {
	byNumber := func(t string) Detection { return Detection{Type: t, Side: SideFront, Evidence: EvidenceNumber} }
	id, err := g.reader.ReadCard(img, docread.ChipIDFront())
	if err != nil {
		return nil, err
	}
	if f, ok := field(id, "id_number"); ok && f.Valid {
		return &reading{det: byNumber(TypeChipIDCard), layout: docread.ChipIDFront().Name, fields: id}, nil
	}
	vehicle, err := g.reader.ReadCard(img, docread.VehicleRegistration())
	if err != nil {
		return nil, err
	}
	if looksLikeVehicle(vehicle) {
		return &reading{det: byNumber(TypeVehicleRegistration), layout: docread.VehicleRegistration().Name, fields: vehicle}, nil
	}
	legacy, err := g.reader.ReadCard(img, docread.LegacyIDFront())
	if err != nil {
		return nil, err
	}
	if f, ok := field(legacy, "id_number"); ok && f.Valid {
		return &reading{det: byNumber(TypeLegacyIDCard), layout: docread.LegacyIDFront().Name, fields: legacy}, nil
	}
	return &reading{det: Detection{Type: TypeUnknown}, layout: docread.ChipIDFront().Name, fields: id}, nil
}

// readZoneSide reads a back or a passport page: the MRZ first (a passport page's also below
// the page found, docread.Reader.ReadPageMRZAt). A passport page is read as a passport whatever
// its zone says. A back whose zone is the chip card's is read as one;
// otherwise the page's text decides (DetectType), and a back with a zone of another ID card
// but no recognised text has no printed layout. A zone that fails its check digits on a
// document whose text shows a type without one is dropped.
func (g *group) readZoneSide(img image.Image, side string) (*reading, error) {
	readZone := g.reader.ReadMRZAt
	if side == SidePassport {
		readZone = g.reader.ReadPageMRZAt
	}
	zone, conf, zoneTop, err := readZone(img)
	switch {
	case err == nil, errors.Is(err, docread.ErrMRZCheckDigits):
	case errors.Is(err, docread.ErrNoMRZ):
		zone, conf, zoneTop = nil, 0, 1
	default:
		return nil, err
	}
	var r *reading
	det := DetectType(zone, "")
	w, h := cardWidth, cardHeight
	if side == SidePassport || det.Type == TypePassport {
		l := PassportLayout()
		w, h = l.Width, l.Height
	}
	page, err := g.reader.ReadPageAbove(img, w, h, zoneTop)
	if err != nil {
		return nil, err
	}
	rs, told := newReadings(g.reader, page), readingAsRead
	switch {
	case side == SidePassport:
		r, err = g.readPage(rs, told, Detection{Type: TypePassport, Side: SidePassport, Evidence: det.Evidence}, side)
	case det.Type == TypeChipIDCard || det.Type == TypePassport:
		r, err = g.readPage(rs, told, det, side)
	default:
		var byText Detection
		if told, byText, err = detectOnReadings(rs); err != nil {
			return nil, err
		}
		switch {
		case byText.Type != TypeUnknown:
			r, err = g.readPage(rs, told, byText, side)
		default:
			r = &reading{det: det} // an ID card by its zone, or unknown: no printed layout
		}
	}
	if err != nil {
		return nil, err
	}
	if zone != nil && !zone.Valid && r.det.Type != TypeChipIDCard && r.det.Type != TypePassport && r.det.Type != TypeUnknown {
		// The text shows a document that prints no zone (a 12-digit or 9-digit card's
		// back, a vehicle registration's): a zone failing its check digits there is print or
		// texture read as one, not a tampered zone.
		zone, conf = nil, 0
	}
	if r.det.Type == TypePassport {
		zone = mendZone(zone, r.fields)
		uncrossDates(zone, r.fields)
		if zone != nil && zone.Valid {
			if err := nameFromZone(r, rs, told, zone); err != nil {
				return nil, err
			}
		}
	}
	r.zone, r.zoneConf = zone, conf
	return r, nil
}

// nameFromZone takes a passport's full name from the page by the zone's reading of it when
// the page's reading by label does not have the zone's letters (its label not read, or a
// label's or a neighbour's words read into it): the phrase that has them is the name as
// printed, with its diacritics (docread.PrintedName), looked for on the reading the fields were
// read from (told), then on the others, in turn. The error is only for OCR engine failures.
func nameFromZone(r *reading, rs *readings, told int, zone *mrz.MRZ) error {
	name := strings.TrimSpace(zone.Surname + " " + zone.GivenNames)
	i := slices.IndexFunc(r.fields, func(f docread.Field) bool { return f.Name == "full_name" })
	if i < 0 || (r.fields[i].Valid && docread.Letters(r.fields[i].Value) == docread.Letters(name)) {
		return nil
	}
	for _, k := range from(told) {
		page, err := rs.at(k)
		if err != nil {
			return err
		}
		if printed, ok := docread.PrintedName(page, name); ok {
			printed.Labelled = r.fields[i].Labelled
			r.fields[i] = printed
			return nil
		}
	}
	return nil
}

// readPage reads the fields of det's type on the side the content shows (det.Side, else
// stepSide) from reading told of rs, by their printed labels, with the type's fixed layout as
// the fallback for labels not found, then fills required fields left unread from the other
// readings (see below); a side without a known layout is not read. A passport number is fixed
// to its form (passportNumber).
func (g *group) readPage(rs *readings, told int, det Detection, stepSide string) (*reading, error) {
	r := &reading{det: det}
	page, err := rs.at(told)
	if err != nil {
		return nil, err
	}
	layout, ok := layoutFor(det.Type, r.side(stepSide))
	if !ok {
		return r, nil
	}
	specs := docread.Specs(layout)
	if det.Type == TypeChipIDCard && r.side(stepSide) == SideFront && isIdentityCard2024(page.Text()) {
		layout = IdentityCard2024Front()
		specs = docread.Specs(layout)
	}
	specs = append(specs, extraSpecs[layout.Name]...)
	fields, err := g.reader.Fields(page, specs, &layout)
	if err != nil {
		return nil, err
	}
	// Tesseract's automatic layout now and then drops whole rows of a card (a block of
	// serif print beside the fingerprint boxes): read as one block, then thresholded
	// locally (small print on a guilloche), then from the picture with the document's
	// outline grown (an outline found on the card's own print cuts rows off: also when
	// the first reading shows a row cut, docread.Page.CutOff), then with mid-grey patterns
	// painted out (fine grey lines crossing a whole card), the page fills what the readings
	// before it left unread, by labels only (the fixed layout was the first reading's last
	// resort), and a place or marks cut short at its line's end (docread.CutShort) by the same
	// read whole. A card's back read without the label of its identifying marks lost the
	// rows at its top too: every back prints that label, though the marks may be blank, but
	// for the identity card of 2024's, which prints its places there instead (lostTop).
	required := RequiredFields(det.Type, r.side(stepSide), layout.Name)
	if noExpiry(page.Text()) {
		required = slices.DeleteFunc(slices.Clone(required), func(name string) bool { return name == fieldExpiry })
	}
	marksLabel := r.side(stepSide) == SideBack && slices.ContainsFunc(specs, func(s docread.FieldSpec) bool { return s.Name == fieldMarks })
	for _, k := range from(told)[1:] {
		// The grown reading also when all required fields were read but a row is cut.
		cut := k == readingGrown && page.CutOff()
		lost := marksLabel && lostTop(fields)
		if !missing(fields, required) && !slices.ContainsFunc(fields, docread.CutShort) && !cut && !lost {
			continue
		}
		other, err := rs.at(k)
		if err != nil {
			return nil, err
		}
		more, err := g.reader.Fields(other, specs, nil)
		if err != nil {
			return nil, err
		}
		for i := range fields {
			if i < len(more) && more[i].Name == fieldMarks && more[i].Labelled {
				fields[i].Labelled = true // the label is on the card, its marks perhaps blank
			}
			if i >= len(more) || more[i].Name != fields[i].Name || !more[i].Valid {
				continue
			}
			if !fields[i].Valid || (docread.CutShort(fields[i]) && !docread.CutShort(more[i]) && docread.Continues(more[i].Value, fields[i].Value)) {
				fields[i] = more[i]
			}
		}
	}
	for i := range fields {
		if fields[i].Name == "passport_number" {
			fields[i].Value, fields[i].Valid = passportNumber(fields[i].Value)
		}
	}
	r.layout, r.fields = layout.Name, fields
	return r, nil
}

// Fields readPage treats apart: a person's identifying marks, on the back of an ID card; the
// expiry date, which a card of a person aged 60 or over does not have (noExpiry).
const (
	fieldMarks  = "identifying_marks"
	fieldExpiry = "expiry_date"
)

// noExpiry reports whether a card's text says that it does not expire ("Không thời hạn",
// printed where the expiry date goes): its expiry date is no field to look for in the other
// readings, each a Tesseract pass over the card (the four of them took 1.4 of the 1.7 CPU-s
// of such a front in `make bench-e2e`).
func noExpiry(text string) bool { return containsApprox(foldTitle(text), "KHONGTHOIHAN", 1) }

// lostTop reports whether a card's back was read without the rows at its top: neither the
// label of its identifying marks nor those of the places the identity card of 2024 prints
// there instead.
func lostTop(fields []docread.Field) bool {
	return !labelled(fields, fieldMarks) && !labelled(fields, "place_of_residence") && !labelled(fields, "place_of_birth")
}

// labelled reports whether the label of the field named name was found on the page.
func labelled(fields []docread.Field, name string) bool {
	f, ok := field(fields, name)
	return ok && f.Labelled
}

// missing reports whether a field named in required is not among fields' valid ones.
func missing(fields []docread.Field, required []string) bool {
	for _, name := range required {
		if f, ok := field(fields, name); !ok || !f.Valid {
			return true
		}
	}
	return false
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
	case m.Format == mrz.FormatTD1 && m.IssuingState == "VNM":
		// Only the chip cards (2021, and the 2024 identity card) among the Vietnamese ID
		// cards carry a zone, whatever printers put after the 12-digit number.
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
func looksLikeVehicle(fields []docread.Field) bool {
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
func field(fields []docread.Field, name string) (docread.Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return docread.Field{}, false
}

func ptr[T any](v T) *T { return &v }

// round keeps three decimals, so confidences compare and print stably.
func round(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
