package ocr

import (
	"image"

	"github.com/idstream/idstream/internal/docread"
)

// PassportLayout is the data page of the Vietnamese passport as internal/cardrender draws
// it, at 1250 × 880: passport_number, full_name, nationality (VNM), sex, date_of_birth,
// place_of_birth, issue_date, expiry_date and id_number (the 12-digit citizen number). Each
// value box spans the value's line under its label.
func PassportLayout() docread.Layout {
	return docread.Layout{Name: "passport_data_page", Width: 1250, Height: 880, Regions: []docread.Region{
		{Field: "passport_number", Kind: docread.KindPassportNumber, Box: image.Rect(840, 184, 1240, 228)},
		{Field: "full_name", Kind: docread.KindUpperText, Box: image.Rect(390, 264, 1240, 308)},
		{Field: "nationality", Kind: docread.KindNationality, Box: image.Rect(390, 344, 840, 388)},
		{Field: "sex", Kind: docread.KindSex, Box: image.Rect(840, 344, 1100, 388)},
		{Field: "date_of_birth", Kind: docread.KindDate, Box: image.Rect(390, 424, 840, 468)},
		{Field: "place_of_birth", Kind: docread.KindProvince, Box: image.Rect(840, 424, 1240, 468)},
		{Field: "issue_date", Kind: docread.KindDate, Box: image.Rect(390, 504, 840, 548)},
		{Field: "expiry_date", Kind: docread.KindDate, Box: image.Rect(840, 504, 1240, 548)},
		{Field: "id_number", Kind: docread.KindIDNumber, Box: image.Rect(390, 584, 840, 628)},
	}}
}

// IdentityCard2024Front is the front of the identity card of 2024 (CĂN CƯỚC): id_number,
// full_name, date_of_birth, sex and nationality. Its places and expiry date are on the back.
// It has no fixed positions: its fields are found by their labels only.
func IdentityCard2024Front() docread.Layout {
	return docread.Layout{Name: "identity_card_2024_front", Width: 1200, Height: 756, Regions: []docread.Region{
		{Field: "id_number", Kind: docread.KindIDNumber},
		{Field: "full_name", Kind: docread.KindUpperText},
		{Field: "date_of_birth", Kind: docread.KindDate},
		{Field: "sex", Kind: docread.KindSex},
		{Field: "nationality", Kind: docread.KindNationality},
	}}
}

// VehicleRegistrationBack is the back of the vehicle registration card. Issues differ in
// what they print there (a motorbike's card the plate and the first registration date, a
// car's the first registration date and the engine and chassis numbers), so every vehicle
// field is looked for, by its label only: a field whose label is not printed comes back
// invalid and is not reported.
func VehicleRegistrationBack() docread.Layout {
	front := docread.VehicleRegistration()
	regions := make([]docread.Region, len(front.Regions))
	for i, r := range front.Regions {
		regions[i] = docread.Region{Field: r.Field, Kind: r.Kind}
	}
	return docread.Layout{Name: "vehicle_registration_back", Width: front.Width, Height: front.Height, Regions: regions}
}

// extraSpecs are fields a side may print beyond its layout's, read by their labels when
// present and reported only when valid: the back of the chip card of 2021 prints the
// identifying marks, the identity card of 2024's back the places and the expiry date.
var extraSpecs = map[string][]docread.FieldSpec{
	"chip_id_back": {
		{Name: "identifying_marks", Kind: docread.KindText, Multiline: true},
		{Name: "place_of_residence", Kind: docread.KindText, Multiline: true},
		{Name: "place_of_birth", Kind: docread.KindText, Multiline: true},
		{Name: "expiry_date", Kind: docread.KindDate},
	},
}

// layoutFor returns the printed layout of side of a document of docType; false when none is
// known (an unknown document, a vehicle registration's back). A passport is read with
// PassportLayout whatever the side.
func layoutFor(docType, side string) (docread.Layout, bool) {
	if docType == TypePassport {
		return PassportLayout(), true
	}
	front := side != SideBack
	switch docType {
	case TypeChipIDCard:
		if front {
			return docread.ChipIDFront(), true
		}
		return docread.ChipIDBack(), true
	case TypeIDCard:
		if front {
			return docread.IDCardFront(), true
		}
		return docread.IDCardBack(), true
	case TypeLegacyIDCard:
		if front {
			return docread.LegacyIDFront(), true
		}
		return docread.LegacyIDBack(), true
	case TypeVehicleRegistration:
		if front {
			return docread.VehicleRegistration(), true
		}
		return VehicleRegistrationBack(), true
	}
	return docread.Layout{}, false
}

// RequiredFields returns the fields document.fields requires of a side of docType read with
// the named layout, or nil when the side has no known printed layout (its check is then
// skipped):
//   - passport page (the passport step, or a passport on any side): passport_number,
//     full_name, sex, date_of_birth and expiry_date;
//   - vehicle_registration front: owner, brand and model, which every issue prints there (the
//     other vehicle fields are on the front or the back depending on the issue: the fields
//     check also requires every vehicle field whose label a side prints, see labelledFields);
//   - chip_id_card and id_card fronts (and an unknown front, read with the chip ID layout):
//     every field of their layout (ID number, name, date of birth, sex, nationality, places
//     of origin and residence, expiry date);
//   - legacy_id_card front: every field of docread.LegacyIDFront (ID number, name, date of
//     birth, places of origin and residence: the card prints no sex, nationality or expiry);
//   - the front of the identity card of 2024 (layout identity_card_2024_front): ID number,
//     name, date of birth, sex and nationality;
//   - chip_id_card, id_card and legacy_id_card backs: issue_date (identifying marks may be
//     blank on a real card; ethnicity, religion and the issuing authority are reported when
//     read but not required).
func RequiredFields(docType, side, layout string) []string {
	names := func(l docread.Layout) []string {
		out := make([]string, 0, len(l.Regions))
		for _, r := range l.Regions {
			out = append(out, r.Field)
		}
		return out
	}
	switch {
	case side == SidePassport || docType == TypePassport:
		return []string{"passport_number", "full_name", "sex", "date_of_birth", "expiry_date"}
	case side == SideFront && docType == TypeVehicleRegistration:
		return []string{"owner", "brand", "model"}
	case side == SideFront && docType == TypeLegacyIDCard:
		return names(docread.LegacyIDFront())
	case side == SideFront && docType == TypeIDCard:
		return names(docread.IDCardFront())
	case side == SideFront && layout == "identity_card_2024_front":
		return names(IdentityCard2024Front())
	case side == SideFront && (docType == TypeChipIDCard || docType == TypeUnknown):
		return names(docread.ChipIDFront())
	case side == SideBack && (docType == TypeChipIDCard || docType == TypeIDCard || docType == TypeLegacyIDCard):
		return []string{"issue_date"}
	}
	return nil
}
