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
// read, with a warn that says so (their print was not compared with the zone); with a zone
// failing its check digits they do not, and the page is unreadable.
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
	if c.Status != schemas.CheckWarn || c.ReasonCode == nil || *c.ReasonCode != ReasonFieldsFromZone ||
		c.Detail == nil || !strings.Contains(*c.Detail, "from the zone only: sex, date_of_birth, expiry_date") {
		t.Errorf("valid zone: %s %v %v, want warn fields_from_zone naming the fields read from the zone", c.Status, c.ReasonCode, c.Detail)
	}
	if c.Score == nil || *c.Score != 0.4 {
		t.Errorf("score %v, want 0.4 (2 of 5 read in print)", c.Score)
	}
	broken := *zone
	broken.Valid = false
	if c := g.fieldsCheck(qa, SidePassport, page(&broken)); c.Status != schemas.CheckFail || c.ReasonCode == nil || *c.ReasonCode != ReasonUnreadable {
		t.Errorf("zone failing its check digits: %s %v, want fail unreadable", c.Status, c.ReasonCode)
	}
}

// TestUncrossDates: a passport page's issue and expiry read crossed are swapped when the
// valid zone shows which is the expiry; dates in order, a misread that the zone does not
// explain, or an invalid zone leave them as read.
func TestUncrossDates(t *testing.T) {
	zone, err := mrz.Parse([]string{"P<VNMLUONG<<THU<HA<<<<<<<<<<<<<<<<<<<<<<<<<<", "N2782688<2VNM6601029F3211016037166777428<<66"})
	if err != nil || !zone.Valid {
		t.Fatalf("zone: %v", err)
	}
	dates := func(issue, expiry string) []docread.Field {
		return []docread.Field{{Name: "issue_date", Value: issue, Valid: true}, {Name: "expiry_date", Value: expiry, Valid: true}}
	}
	broken := *zone
	broken.Valid = false
	for _, c := range []struct {
		name                  string
		zone                  *mrz.MRZ
		issue, expiry         string
		wantIssue, wantExpiry string
	}{
		{"crossed", zone, "2032-11-01", "2022-11-01", "2022-11-01", "2032-11-01"},
		{"in order", zone, "2022-11-01", "2032-11-01", "2022-11-01", "2032-11-01"},
		{"a misread the zone does not explain", zone, "2026-11-01", "2021-11-01", "2026-11-01", "2021-11-01"},
		{"invalid zone", &broken, "2032-11-01", "2022-11-01", "2032-11-01", "2022-11-01"},
	} {
		f := dates(c.issue, c.expiry)
		uncrossDates(c.zone, f)
		if f[0].Value != c.wantIssue || f[1].Value != c.wantExpiry {
			t.Errorf("%s: issue %s expiry %s, want %s and %s", c.name, f[0].Value, f[1].Value, c.wantIssue, c.wantExpiry)
		}
	}
}
