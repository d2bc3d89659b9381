package docread

import (
	"fmt"
	"image"
)

// FieldKind says how a field is read and normalised.
type FieldKind int

// Field kinds.
const (
	KindText           FieldKind = iota // Vietnamese text: NFC, single spaces
	KindUpperText                       // Vietnamese text in capitals (names)
	KindIDNumber                        // 12-digit citizen identity number
	KindDate                            // printed DD/MM/YYYY, reported YYYY-MM-DD
	KindSex                             // Nam / Nữ, reported M / F
	KindNationality                     // "Việt Nam" reported VNM, anything else as read
	KindCode                            // upper-case letters, digits, '-' and '.' (plates, engine numbers)
	KindLegacyIDNumber                  // 9-digit identity number of the legacy card (CMND)
	KindLongDate                        // written "Ngày DD tháng MM năm YYYY", reported YYYY-MM-DD
	KindPassportNumber                  // one letter and seven digits (look-alikes fixed)
	KindProvince                        // a province's name on one line (a passport's place of birth)
	KindModel                           // a vehicle's model: a code spaced as printed ("AIR BLADE", "CX-5")
)

// Region is where a field's value sits on a layout, in the layout's pixel coordinates.
type Region struct {
	Field string
	Kind  FieldKind
	Box   image.Rectangle
}

// Layout is a document template: its size in pixels and the value boxes of its fields. A
// picture is rectified onto Width × Height before the boxes are read.
type Layout struct {
	Name          string
	Width, Height int
	Regions       []Region
}

// Field is one value read from a document. Value is normalised as its kind says; Raw is what
// Tesseract returned. Valid is false when the value fails its kind's validation (an ID that
// is not 12 digits, or 9 for the legacy card, an impossible date, an unknown sex): such a
// value should not be trusted whatever its Confidence. Labelled is set by Reader.Fields when
// the field's printed label was found on the page, whether or not a value was read beside it.
type Field struct {
	Name       string
	Value      string
	Raw        string
	Confidence Confidence
	Valid      bool
	Labelled   bool
}

// ChipIDFront is the front of the 12-digit chip citizen identity card (CĂN CƯỚC CÔNG DÂN)
// as the cardrender package draws it, at 1200 × 756.
func ChipIDFront() Layout {
	return Layout{Name: "chip_id_front", Width: 1200, Height: 756, Regions: []Region{
		{"id_number", KindIDNumber, image.Rect(455, 205, 1000, 266)},
		{"full_name", KindUpperText, image.Rect(328, 310, 1175, 366)},
		{"date_of_birth", KindDate, image.Rect(705, 372, 1000, 422)},
		{"sex", KindSex, image.Rect(545, 427, 690, 477)},
		{"nationality", KindNationality, image.Rect(945, 427, 1195, 477)},
		{"place_of_origin", KindText, image.Rect(328, 530, 1175, 580)},
		{"place_of_residence", KindText, image.Rect(328, 633, 1175, 683)},
		{"expiry_date", KindDate, image.Rect(38, 642, 320, 692)},
	}}
}

// ChipIDBack is the back of the chip ID card (the MRZ is read by ReadMRZ).
func ChipIDBack() Layout {
	return Layout{Name: "chip_id_back", Width: 1200, Height: 756, Regions: []Region{
		{"issue_date", KindDate, image.Rect(38, 167, 330, 217)},
	}}
}

// VehicleRegistration is the vehicle registration card as cardrender draws it, 1200 × 756.
// Its fields are not identity fields: owner, address, brand, model, engine_number,
// chassis_number, color, registration_date (YYYY-MM-DD) and plate.
func VehicleRegistration() Layout {
	return Layout{Name: "vehicle_registration", Width: 1200, Height: 756, Regions: []Region{
		{"owner", KindUpperText, image.Rect(38, 214, 1175, 262)},
		{"address", KindText, image.Rect(38, 306, 1175, 352)},
		{"brand", KindCode, image.Rect(288, 366, 610, 410)},
		{"model", KindModel, image.Rect(848, 366, 1190, 410)},
		{"engine_number", KindCode, image.Rect(288, 426, 610, 470)},
		{"color", KindText, image.Rect(848, 426, 1190, 470)},
		{"chassis_number", KindCode, image.Rect(288, 486, 1000, 530)},
		{"registration_date", KindDate, image.Rect(448, 546, 800, 590)},
		{"plate", KindCode, image.Rect(450, 620, 752, 683)},
	}}
}

// ReadCard locates the document in img, rectifies it onto layout and reads every region:
// Vietnamese text with the text model, numbers, dates and codes with the code model and a
// whitelist, each as a single line. Fields come back in the layout's order, every one present
// (an unreadable one empty, Valid false). The error is only for OCR engine failures.
func (r *Reader) ReadCard(img image.Image, layout Layout) ([]Field, error) {
	if layout.Width <= 0 || layout.Height <= 0 {
		return nil, fmt.Errorf("ocr: layout %q has no size", layout.Name)
	}
	g := toGray(img)
	doc := rectify(g, findDocument(img, g), layout.Width, layout.Height)
	fields := make([]Field, 0, len(layout.Regions))
	for _, reg := range layout.Regions {
		f, err := r.readRegion(doc, reg)
		if err != nil {
			return nil, fmt.Errorf("ocr: %s: %w", layout.Name, err)
		}
		fields = append(fields, f)
	}
	return fields, nil
}
