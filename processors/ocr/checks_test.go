package ocr

import (
	"strings"
	"testing"

	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/mrz"
	"github.com/idstream/idstream/schemas"
)

// TestPassportFieldsTheZoneVouchesFor: on a passport page whose print was read only in part
// (small print far from the camera), the required fields its valid zone carries count as
// read; with a zone failing its check digits they do not, and the page is unreadable.
func TestPassportFieldsTheZoneVouchesFor(t *testing.T) {
	lines := []string{"P<VNMDO<<TIEN<THANG<<<<<<<<<<<<<<<<<<<<<<<<<", "N7368156<5VNM6104184M2811017001061169149<<26"}
	zone, err := mrz.Parse(lines)
	if err != nil || !zone.Valid {
		t.Fatalf("zone: %v, valid %v", err, zone != nil && zone.Valid)
	}
	g := &group{minConfidence: 0.5}
	qa := &schemas.QualityAssessed{}
	page := func(z *mrz.MRZ) *reading {
		return &reading{
			det: Detection{Type: TypePassport, Side: SidePassport}, layout: PassportLayout().Name, zone: z,
			fields: []docread.Field{
				{Name: "passport_number", Value: "N7368156", Valid: true, Confidence: 0.8},
				{Name: "full_name", Value: "ĐỖ TIẾN THẮNG", Valid: true, Confidence: 0.8},
				{Name: "sex", Value: "Bị: ae", Confidence: 0.3},
				{Name: "date_of_birth", Value: "30", Confidence: 0.1},
			},
		}
	}
	c := g.fieldsCheck(qa, SidePassport, page(zone))
	if c.Status != schemas.CheckPass || c.Detail == nil || !strings.Contains(*c.Detail, "from the zone only: sex, date_of_birth, expiry_date") {
		t.Errorf("valid zone: %s %v, want pass naming the fields read from the zone", c.Status, c.Detail)
	}
	broken := *zone
	broken.Valid = false
	if c := g.fieldsCheck(qa, SidePassport, page(&broken)); c.Status != schemas.CheckFail || c.ReasonCode == nil || *c.ReasonCode != ReasonUnreadable {
		t.Errorf("zone failing its check digits: %s %v, want fail unreadable", c.Status, c.ReasonCode)
	}
}
