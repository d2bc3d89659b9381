package ocr

import (
	"errors"
	"image"
	"image/color"
	"image/draw"
	"io/fs"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"

	"github.com/idstream/idstream/internal/cardrender"
	"github.com/idstream/idstream/schemas"
)

// TestVehicleBackPrintingTheNumbers: a car's registration prints the first registration date
// and the engine and chassis numbers on its back (a motorbike's on the front, as cardrender
// draws it). The back is recognised by those labels and the three are read there and
// required: before, such a back was of unknown type and none of the three was ever read. The
// plate, printed large without a label, is read by its form.
func TestVehicleBackPrintingTheNumbers(t *testing.T) {
	f := newFixture(t)
	regular, bold := loadFace(t, cardrender.DefaultSansFont, 30), loadFace(t, cardrender.DefaultSansBoldFont, 34)
	img := image.NewRGBA(image.Rect(0, 0, 1400, 960))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.Gray{Y: 70}), image.Point{}, draw.Src)
	card := image.Rect(100, 100, 1300, 856)
	draw.Draw(img, card, image.NewUniform(color.RGBA{R: 236, G: 232, B: 220, A: 255}), image.Point{}, draw.Src)
	ink := image.NewUniform(color.Gray{Y: 25})
	write := func(face font.Face, x, y int, s string) {
		d := font.Drawer{Dst: img, Src: ink, Face: face, Dot: fixed.P(card.Min.X+x, card.Min.Y+y)}
		d.DrawString(s)
	}
	write(loadFace(t, cardrender.DefaultSansBoldFont, 64), 380, 120, "30A-518.27")
	write(regular, 90, 250, "Đăng ký lần đầu ngày:")
	write(bold, 450, 250, "14/03/2019")
	write(regular, 90, 380, "Số máy:")
	write(bold, 240, 380, "G4FA7152396")
	write(regular, 90, 440, "Số khung:")
	write(bold, 270, 440, "RLHJF63S1Y962948")
	write(regular, 640, 560, "Hải Phòng, ngày 14 tháng 3 năm 2019")
	write(bold, 760, 610, "TRƯỞNG PHÒNG")

	doc, _ := f.run(t, f.assessment(t, "cap_car_back", StepBack, encodeJPEG(t, img)))
	if doc == nil || doc.DocumentType != TypeVehicleRegistration {
		t.Fatalf("read %+v, want a vehicle registration", doc)
	}
	read := fieldsRead(doc)
	for name, want := range map[string]string{"registration_date": "2019-03-14", "engine_number": "G4FA7152396", "chassis_number": "RLHJF63S1Y962948", "plate": "30A-518.27"} {
		if read[name] != want {
			t.Errorf("%s %q, want %q", name, read[name], want)
		}
	}
	if c := checkOf(t, doc, CheckFields); c.Status != schemas.CheckPass || c.Score == nil || *c.Score != 1 {
		t.Errorf("fields check %s score %v (%s), want pass over the three fields printed", c.Status, c.Score, deref(c.Detail))
	}
}

// loadFace opens the font file at path at size pixels; the test is skipped where the font is
// not installed.
func loadFace(t *testing.T, path string, size float64) font.Face {
	t.Helper()
	face, err := cardrender.LoadFace(path, size)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("font: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return face
}
