package ocr

import (
	"image"

	"github.com/idstream/idstream/internal/ocr"
)

// PassportLayout is the data page of the Vietnamese passport as internal/cardrender draws
// it, at 1250 × 880: passport_number, full_name, nationality (VNM), sex, date_of_birth,
// place_of_birth, issue_date, expiry_date and id_number (the 12-digit citizen number). Each
// value box spans the value's line under its label.
func PassportLayout() ocr.Layout {
	return ocr.Layout{Name: "passport_data_page", Width: 1250, Height: 880, Regions: []ocr.Region{
		{Field: "passport_number", Kind: ocr.KindCode, Box: image.Rect(840, 184, 1240, 228)},
		{Field: "full_name", Kind: ocr.KindUpperText, Box: image.Rect(390, 264, 1240, 308)},
		{Field: "nationality", Kind: ocr.KindNationality, Box: image.Rect(390, 344, 840, 388)},
		{Field: "sex", Kind: ocr.KindSex, Box: image.Rect(840, 344, 1100, 388)},
		{Field: "date_of_birth", Kind: ocr.KindDate, Box: image.Rect(390, 424, 840, 468)},
		{Field: "place_of_birth", Kind: ocr.KindText, Box: image.Rect(840, 424, 1240, 468)},
		{Field: "issue_date", Kind: ocr.KindDate, Box: image.Rect(390, 504, 840, 548)},
		{Field: "expiry_date", Kind: ocr.KindDate, Box: image.Rect(840, 504, 1240, 548)},
		{Field: "id_number", Kind: ocr.KindIDNumber, Box: image.Rect(390, 584, 840, 628)},
	}}
}

// RequiredFields returns the fields document.fields requires of a side of docType, or nil
// when the side has no known printed layout (its check is then skipped):
//   - chip_id_card front (and an unknown front, read with the chip ID layout): every field
//     of ocr.ChipIDFront; chip_id_card back: issue_date;
//   - vehicle_registration front: owner, brand, model, engine_number, chassis_number,
//     registration_date and plate;
//   - passport page: passport_number, full_name, sex, date_of_birth and expiry_date.
func RequiredFields(docType, side string) []string {
	switch {
	case side == SidePassport:
		return []string{"passport_number", "full_name", "sex", "date_of_birth", "expiry_date"}
	case side == SideFront && docType == TypeVehicleRegistration:
		return []string{"owner", "brand", "model", "engine_number", "chassis_number", "registration_date", "plate"}
	case side == SideFront:
		var names []string
		for _, r := range ocr.ChipIDFront().Regions {
			names = append(names, r.Field)
		}
		return names
	case side == SideBack && docType == TypeChipIDCard:
		return []string{"issue_date"}
	}
	return nil
}
