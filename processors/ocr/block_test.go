package ocr

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/docgen"
)

// TestRowsLostToPageLayoutReadAsOneBlock: Tesseract's automatic page layout drops whole
// rows of some cards (the 9-digit card's date of birth on docgen's calibration rendering 4);
// a required field it leaves unread is looked for again in the card read as one block.
func TestRowsLostToPageLayoutReadAsOneBlock(t *testing.T) {
	newFixture(t)
	rd, err := docgen.NewRenderer(docgen.DefaultFontDir)
	if err != nil {
		t.Fatal(err)
	}
	g := &group{reader: sharedRead}
	ref := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, i := range []int{4} {
		r := rand.New(rand.NewPCG(uint64(1000+i), uint64(docgen.Calibration)*7+11))
		doc, err := rd.Render(docgen.NewPerson(r, ref), docgen.LegacyIDCard, docgen.Calibration, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := g.readFront(doc.Sides[docgen.StepFront])
		if err != nil {
			t.Fatal(err)
		}
		if f, _ := field(got.fields, "date_of_birth"); f.Value != doc.Fields[docgen.FieldDateOfBirth] {
			t.Errorf("rendering %d: date of birth %q, want %q", i, f.Value, doc.Fields[docgen.FieldDateOfBirth])
		}
	}
}
