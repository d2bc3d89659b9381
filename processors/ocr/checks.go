package ocr

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/schemas"
)

// check builds one of the group's checks about the capture of qa.
func (g *group) check(qa *schemas.QualityAssessed, name, status, reason, detail string) schemas.Check {
	c := schemas.Check{
		Name:         CheckName(name, qa.Step),
		Status:       status,
		ModelVersion: ptr(g.modelVersion),
		Source:       Producer,
		CaptureID:    ptr(qa.CaptureID),
	}
	if reason != "" {
		c.ReasonCode = ptr(reason)
	}
	if detail != "" {
		c.Detail = ptr(detail)
	}
	return c
}

// unreadableChecks are the checks of a side whose image could not be used.
func (g *group) unreadableChecks(qa *schemas.QualityAssessed, side string) []schemas.Check {
	const detail = "The image could not be read."
	mrzCheck := g.check(qa, CheckMRZ, schemas.CheckFail, ReasonUnreadable, detail)
	if side == SideFront {
		mrzCheck = g.check(qa, CheckMRZ, schemas.CheckSkipped, ReasonNoMRZ, "A document front has no machine readable zone.")
	}
	return []schemas.Check{
		mrzCheck,
		g.check(qa, CheckFields, schemas.CheckFail, ReasonUnreadable, detail),
		g.check(qa, CheckType, schemas.CheckFail, ReasonUnreadable, detail),
	}
}

// checks are the checks of a side read as r: document.mrz, document.fields, document.type.
func (g *group) checks(qa *schemas.QualityAssessed, side string, r *reading) []schemas.Check {
	var mrzCheck schemas.Check
	switch {
	case r.zone != nil && r.zone.Valid:
		mrzCheck = g.check(qa, CheckMRZ, schemas.CheckPass, "", fmt.Sprintf("%s zone, every check digit holds.", r.zone.Format))
	case r.zone != nil:
		var failed []string
		for name, ok := range r.zone.Checks {
			if !ok {
				failed = append(failed, name)
			}
		}
		slices.Sort(failed)
		mrzCheck = g.check(qa, CheckMRZ, schemas.CheckFail, ReasonMRZCheckDigit,
			fmt.Sprintf("%s zone, check digits failing: %s.", r.zone.Format, strings.Join(failed, ", ")))
	case side == SideFront:
		mrzCheck = g.check(qa, CheckMRZ, schemas.CheckSkipped, ReasonNoMRZ, "A document front has no machine readable zone.")
	case side == SidePassport:
		mrzCheck = g.check(qa, CheckMRZ, schemas.CheckFail, ReasonMRZNotFound, "No machine readable zone was read on the passport page.")
	default:
		mrzCheck = g.check(qa, CheckMRZ, schemas.CheckSkipped, ReasonMRZNotFound, "No machine readable zone was read on the back.")
	}
	if r.zone != nil {
		mrzCheck.Score = ptr(round(float64(r.zoneConf)))
	}

	fieldsCheck := g.fieldsCheck(qa, side, r)

	return []schemas.Check{mrzCheck, fieldsCheck, g.typeCheck(qa, side, r)}
}

// typeCheck reports the document type: pass when known and shown on the side the step
// expects; warn side_mismatch when the content shows another side (a back sent as the front);
// warn document_type_unknown when the type was not recognised.
func (g *group) typeCheck(qa *schemas.QualityAssessed, side string, r *reading) schemas.Check {
	switch {
	case r.det.Type == TypeUnknown:
		return g.check(qa, CheckType, schemas.CheckWarn, ReasonTypeUnknown, "The document type could not be recognised.")
	case r.det.Side != "" && r.det.Side != side:
		return g.check(qa, CheckType, schemas.CheckWarn, ReasonSideMismatch,
			fmt.Sprintf("document type: %s; the image shows the %s, not the %s.", r.det.Type, r.det.Side, side))
	}
	return g.check(qa, CheckType, schemas.CheckPass, "", "document type: "+r.det.Type)
}

// labelledFields returns the fields not in required whose printed label was found: a
// vehicle registration side that prints a field's label must have its value read.
func labelledFields(fields []docread.Field, required []string) []string {
	var out []string
	for _, f := range fields {
		if f.Labelled && !slices.Contains(required, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

// zoneCarried lists the required fields of a passport page its zone carries, when every
// check digit of the zone holds: its number, sex, date of birth and expiry. A field the
// page's print does not give legibly (small print photographed from afar) is then read all
// the same, from the side the check digits vouch for; the decision reconciles the two where
// both are read.
func zoneCarried(r *reading) map[string]bool {
	z := r.zone
	if r.det.Type != TypePassport || z == nil || !z.Valid {
		return nil
	}
	return map[string]bool{"date_of_birth": z.DateOfBirth != "", "expiry_date": z.ExpiryDate != "",
		"passport_number": z.DocumentNumber != "", "sex": z.Sex == "M" || z.Sex == "F"}
}

// fieldsCheck judges the required fields of the side (see RequiredFields), and on a vehicle
// registration also those whose label the side prints (labelledFields).
func (g *group) fieldsCheck(qa *schemas.QualityAssessed, side string, r *reading) schemas.Check {
	required := RequiredFields(r.det.Type, r.side(side), r.layout)
	if r.det.Type == TypeVehicleRegistration {
		required = append(required, labelledFields(r.fields, required)...)
	}
	if r.layout == "" || len(required) == 0 {
		return g.check(qa, CheckFields, schemas.CheckSkipped, ReasonNoLayout, "No printed layout is known for this side.")
	}
	var valid, printed int // read valid from either source; of them, in print
	var missing, weak, zoned []string
	carried := zoneCarried(r)
	for _, name := range required {
		f, ok := field(r.fields, name)
		switch {
		case (!ok || !f.Valid || float64(f.Confidence) < g.minConfidence) && carried[name]:
			valid++
			zoned = append(zoned, name)
		case !ok || !f.Valid:
			missing = append(missing, name)
		case float64(f.Confidence) < g.minConfidence:
			valid++
			printed++
			weak = append(weak, name)
		default:
			valid++
			printed++
		}
	}
	var c schemas.Check
	switch {
	case len(missing) == 0 && len(weak) == 0 && len(zoned) == 0:
		c = g.check(qa, CheckFields, schemas.CheckPass, "", fmt.Sprintf("%d of %d required fields read.", valid, len(required)))
	case len(missing) == 0 && len(weak) == 0:
		// Read all the same, from the side the check digits vouch for; but the print of those
		// fields could not be compared with the zone, so an analyst is told (a warn does not
		// reject under the default policy).
		c = g.check(qa, CheckFields, schemas.CheckWarn, ReasonFieldsFromZone,
			fmt.Sprintf("%d of %d required fields read in print; from the zone only: %s.", printed, len(required), strings.Join(zoned, ", ")))
	case 2*valid >= len(required):
		detail := fmt.Sprintf("%d of %d required fields read valid", valid, len(required))
		if len(missing) > 0 {
			detail += "; not read: " + strings.Join(missing, ", ")
		}
		if len(weak) > 0 {
			detail += "; low confidence: " + strings.Join(weak, ", ")
		}
		if len(zoned) > 0 {
			detail += "; from the zone only: " + strings.Join(zoned, ", ")
		}
		c = g.check(qa, CheckFields, schemas.CheckWarn, ReasonLowConfidence, detail+".")
	default:
		c = g.check(qa, CheckFields, schemas.CheckFail, ReasonUnreadable,
			fmt.Sprintf("%d of %d required fields read valid; not read: %s.", valid, len(required), strings.Join(missing, ", ")))
	}
	c.Score = ptr(round(float64(printed) / float64(len(required))))
	c.Threshold = ptr(g.minConfidence)
	return c
}
