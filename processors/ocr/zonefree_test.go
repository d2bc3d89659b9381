package ocr

import (
	"image"
	"image/color"
	"image/draw"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"

	"github.com/idstream/idstream/internal/cardrender"
)

// TestNoZoneOnADocumentWithoutOne: a 12-digit card's back, which prints no zone, with lines
// of fillers and letters near its bottom that the zone reader takes for a failing zone (as it
// did on a photographed back's print and texture), is read as that back with no zone: a
// failing zone there would reject an honest person for check digits and a name read from
// print.
func TestNoZoneOnADocumentWithoutOne(t *testing.T) {
	f := newFixture(t)
	back, _ := f.rend.IDCardBack(cardrender.SyntheticPerson(61))
	img := image.NewRGBA(back.Bounds())
	draw.Draw(img, img.Bounds(), back, back.Bounds().Min, draw.Src)
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	face := loadFace(t, cardrender.DefaultOCRBFont, float64(w)/26)
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.Gray{Y: 30}), Face: face}
	for i, l := range []string{"OB<<<<52<<<<<<<<<<<<188888888<", "C0C1R06M6C0CC4NHSATPANGKYJ1084", "QUANLYCUTRUVADJLIEUQUGCGIA<<<Y"} {
		d.Dot = fixed.P(w/25, h*80/100+i*h*6/100)
		d.DrawString(l)
	}
	g := &group{reader: sharedRead}
	r, err := g.readZoneSide(img, SideBack)
	if err != nil {
		t.Fatal(err)
	}
	if r.det.Type != TypeIDCard {
		t.Fatalf("type %q, want %s (the back's text)", r.det.Type, TypeIDCard)
	}
	if r.zone != nil {
		t.Fatalf("zone %q (valid %v) on a back that prints none", r.zone.Lines, r.zone.Valid)
	}
}
