package ocr

import (
	"testing"

	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/mrz"
)

// TestZoneMendedFromThePage: a passport zone failing its check digits (an expiry digit read
// wrong; a glyph read into the personal number, a filler lost) is mended with the page's
// values when the zone's own check digits then hold; a page value the check digits refuse
// mends nothing.
func TestZoneMendedFromThePage(t *testing.T) {
	line1 := "P<VNMHO<<NGOC<TOAN<<<<<<<<<<<<<<<<<<<<<<<<<<"
	good := "P9996200<4VNM8711050M3312050096087409736<<52"
	if m, err := mrz.Parse([]string{line1, good}); err != nil || !m.Valid {
		t.Fatalf("the test's zone is not valid: %v %+v", err, m)
	}
	page := []docread.Field{
		{Name: "passport_number", Value: "P9996200", Valid: true},
		{Name: "date_of_birth", Value: "1987-11-05", Valid: true},
		{Name: "expiry_date", Value: "2033-12-05", Valid: true},
		{Name: "id_number", Value: "096087409736", Valid: true},
	}
	for name, read := range map[string]string{
		"expiry digit":        good[:21] + "2" + good[22:],
		"glyph in the number": good[:28] + "096O087409736<" + good[42:],
	} {
		zone, err := mrz.Parse([]string{line1, read})
		if err != nil || zone.Valid {
			t.Fatalf("%s: the read zone should parse and fail its checks: %v", name, err)
		}
		got := mendZone(zone, page)
		if !got.Valid || got.Lines[1] != good {
			t.Errorf("%s: mended %q (valid %v), want %q", name, got.Lines[1], got.Valid, good)
		}
		wrong := append([]docread.Field(nil), page...)
		wrong[2].Value, wrong[3].Value = "2033-12-06", "096087409737"
		if got := mendZone(zone, wrong); got.Valid || got.Lines[1] != read {
			t.Errorf("%s: mended with values its check digits refuse: %q", name, got.Lines[1])
		}
	}
}
