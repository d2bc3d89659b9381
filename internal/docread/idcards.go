package docread

import (
	"fmt"
	"image"
	"strings"

	"github.com/otiai10/gosseract/v2"
)

// Layouts of the identity cards without chip, as internal/cardrender draws them at
// 1200 × 756 (ID-1). Their field names are the canonical ones of the chip card where the
// meaning is the same (id_number, full_name, date_of_birth, place_of_origin,
// place_of_residence, issue_date, ...), so that the values reconcile across documents.

// IDCardFront is the front of the 12-digit citizen identity card without chip (CĂN CƯỚC
// CÔNG DÂN of 2016–2020: Vietnamese labels only, no English subtitle). Same fields as
// ChipIDFront.
func IDCardFront() Layout {
	return Layout{Name: "id_card_front", Width: 1200, Height: 756, Regions: []Region{
		{"id_number", KindIDNumber, image.Rect(405, 195, 900, 256)},
		{"full_name", KindUpperText, image.Rect(328, 300, 1175, 356)},
		{"date_of_birth", KindDate, image.Rect(625, 362, 950, 412)},
		{"sex", KindSex, image.Rect(455, 417, 600, 467)},
		{"nationality", KindNationality, image.Rect(755, 417, 1050, 467)},
		{"place_of_origin", KindText, image.Rect(328, 518, 1175, 568)},
		{"place_of_residence", KindText, image.Rect(328, 622, 1175, 672)},
		{"expiry_date", KindDate, image.Rect(38, 614, 320, 662)},
	}}
}

// IDCardBack is the back of the 12-digit card without chip: identifying_marks and
// issue_date. It has no machine readable zone.
func IDCardBack() Layout {
	return Layout{Name: "id_card_back", Width: 1200, Height: 756, Regions: []Region{
		{"identifying_marks", KindText, image.Rect(38, 79, 760, 126)},
		{"issue_date", KindDate, image.Rect(38, 198, 330, 248)},
	}}
}

// LegacyIDFront is the front of the 9-digit identity card (GIẤY CHỨNG MINH NHÂN DÂN):
// id_number (9 digits), full_name, date_of_birth (printed DD-MM-YYYY), place_of_origin
// ("Nguyên quán") and place_of_residence ("Nơi ĐKHK thường trú"). The card prints no sex,
// nationality or expiry date.
func LegacyIDFront() Layout {
	return Layout{Name: "legacy_id_front", Width: 1200, Height: 756, Regions: []Region{
		{"id_number", KindLegacyIDNumber, image.Rect(545, 172, 900, 228)},
		{"full_name", KindUpperText, image.Rect(440, 240, 1185, 296)},
		{"date_of_birth", KindDate, image.Rect(455, 312, 760, 362)},
		{"place_of_origin", KindText, image.Rect(318, 424, 1185, 474)},
		{"place_of_residence", KindText, image.Rect(318, 536, 1185, 586)},
	}}
}

// LegacyIDBack is the back of the 9-digit identity card: ethnicity, religion,
// identifying_marks, issue_date (written "Ngày DD tháng MM năm YYYY") and issuing_authority
// (upper case, e.g. "CÔNG AN TP. HÀ NỘI"). It has no machine readable zone.
func LegacyIDBack() Layout {
	return Layout{Name: "legacy_id_back", Width: 1200, Height: 756, Regions: []Region{
		{"ethnicity", KindText, image.Rect(598, 34, 810, 82)},
		{"religion", KindText, image.Rect(948, 34, 1190, 82)},
		{"identifying_marks", KindText, image.Rect(468, 150, 1190, 196)},
		{"issue_date", KindLongDate, image.Rect(470, 244, 1190, 292)},
		{"issuing_authority", KindUpperText, image.Rect(470, 332, 1190, 374)},
	}}
}

// TitleProbe is the band of an ID-1 card (at 1200 × 756) that type detection reads: the top
// 28 %, as two overlapping regions, the left 65 % ("labels") and the right 75 % ("title"),
// because Tesseract's block segmentation loses text lines beside the fingerprint boxes of a
// back when it is given the whole width. On a front they hold the national header and the
// document title (with the chip card's English subtitle, "Citizen Identity Card"); on a back,
// the first labels ("Đặc điểm nhận dạng", "DÂN TỘC", "TÔN GIÁO", the fingerprint captions).
func TitleProbe() Layout {
	return Layout{Name: "title_probe", Width: 1200, Height: 756, Regions: []Region{
		{"labels", KindText, image.Rect(10, 15, 780, 215)},
		{"title", KindText, image.Rect(300, 15, 1190, 215)},
	}}
}

// ReadText locates the document in img, rectifies it onto layout and reads each region as a
// single block of Vietnamese text (no whitelist, no validation). It
// returns the regions' texts in layout order, lines joined with "\n", and the mean word
// confidence over all of them (0 when nothing was read). It is meant for probes such as
// TitleProbe, whose text is searched for keywords rather than reported. The error is only for
// OCR engine failures.
func (r *Reader) ReadText(img image.Image, layout Layout) ([]string, Confidence, error) {
	if layout.Width <= 0 || layout.Height <= 0 {
		return nil, 0, fmt.Errorf("ocr: layout %q has no size", layout.Name)
	}
	g := toGray(img)
	doc := rectify(g, findDocument(img, g), layout.Width, layout.Height)
	texts := make([]string, 0, len(layout.Regions))
	var sum Confidence
	var n int
	for _, reg := range layout.Regions {
		lines, err := r.recognise(engineText, pgm(crop(doc, reg.Box)), gosseract.PSM_SINGLE_BLOCK)
		if err != nil {
			return nil, 0, fmt.Errorf("ocr: %s region %s: %w", layout.Name, reg.Field, err)
		}
		parts := make([]string, 0, len(lines))
		for _, l := range lines {
			if t := strings.TrimSpace(l.text); t != "" {
				parts = append(parts, t)
				sum += l.conf
				n++
			}
		}
		texts = append(texts, strings.Join(parts, "\n"))
	}
	if n == 0 {
		return texts, 0, nil
	}
	return texts, sum / Confidence(n), nil
}
