package ocr

import (
	"image"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/cardrender"
)

// TestNameIsNotALabel: "NGUYỄN VĂN AN" — the most common Vietnamese family and middle names
// — is two edits from the label "Nguyên quán" (place of origin). A chip ID card front of
// such a holder must read the name as full_name and the place of origin as itself.
func TestNameIsNotALabel(t *testing.T) {
	f := newFixture(t)
	p := cardrender.Person{IDNumber: "001090012345", FullName: "NGUYỄN VĂN AN", DateOfBirth: time.Date(1990, 3, 15, 0, 0, 0, 0, time.UTC), Sex: "M",
		PlaceOfOrigin: "Xã Tân Lập, Huyện Đông Anh, Hà Nội", PlaceOfResidence: "12 Lê Lợi, Quận Ba Đình, Hà Nội",
		IssueDate: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC), ExpiryDate: time.Date(2036, 11, 1, 0, 0, 0, 0, time.UTC)}
	img, _ := f.rend.ChipIDFront(p)
	img = f.withPortrait(t, img, image.Rect(50, 230, 300, 560))
	doc, _ := f.run(t, f.assessment(t, "cap_name", "document_front", encodeJPEG(t, img)))
	got := fieldsRead(doc)
	if got["full_name"] != p.FullName || got["place_of_origin"] != p.PlaceOfOrigin {
		t.Fatalf("full_name %q, place_of_origin %q", got["full_name"], got["place_of_origin"])
	}
	expectCheck(t, doc, CheckFields, "pass", "")
}
