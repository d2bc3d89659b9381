package cardrender

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/idstream/idstream/internal/mrz"
)

func newRenderer(t testing.TB) *Renderer {
	t.Helper()
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dump writes img to $CARDRENDER_DUMP/name.png when that variable is set, for looking at.
func dump(t testing.TB, name string, img image.Image) {
	dir := os.Getenv("CARDRENDER_DUMP")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

func TestRendersEveryDocumentWithValidMRZ(t *testing.T) {
	r := newRenderer(t)
	p := SyntheticPerson(7)
	front, ft := r.ChipIDFront(p)
	back, bt := r.ChipIDBack(p)
	pass, pt := r.Passport(p)
	veh, vt := r.VehicleRegistration(SyntheticVehicle(7))
	for name, img := range map[string]image.Image{"front": front, "back": back, "passport": pass, "vehicle": veh} {
		dump(t, name, img)
		deg, err := Degrade(img, MildDegradation(3), 3)
		if err != nil {
			t.Fatal(err)
		}
		dump(t, name+"-degraded", deg)
	}
	if front.Bounds().Dx() != CardWidth || pass.Bounds().Dy() != PassportHeight {
		t.Fatalf("unexpected sizes %v %v", front.Bounds(), pass.Bounds())
	}
	if ft.Fields["id_number"] != p.IDNumber || vt.Fields["plate"] == "" || bt.Fields["issue_date"] == "" {
		t.Fatalf("truth incomplete: %v %v %v", ft, bt, vt)
	}
	for _, lines := range [][]string{bt.MRZ, pt.MRZ} {
		m, err := mrz.Parse(lines)
		if err != nil || !m.Valid {
			t.Fatalf("MRZ %q: %v %+v", lines, err, m)
		}
	}
	m, _ := mrz.Parse(bt.MRZ)
	f := m.Fields()
	if f["id_number"] != p.IDNumber || f["date_of_birth"] != ft.Fields["date_of_birth"] || f["sex"] != p.Sex {
		t.Fatalf("TD1 fields %v disagree with the card %v", f, ft.Fields)
	}
	if !strings.HasPrefix(bt.MRZ[2], mrzName(strings.Fields(p.FullName)[0])+"<<") {
		t.Fatalf("TD1 name line %q", bt.MRZ[2])
	}
}

func TestSyntheticPersonIsConsistentAndDeterministic(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		p := SyntheticPerson(seed)
		if !reflect.DeepEqual(p, SyntheticPerson(seed)) {
			t.Fatal("not deterministic")
		}
		if len(p.IDNumber) != 12 || p.IDNumber[4:6] != p.DateOfBirth.Format("06") {
			t.Fatalf("seed %d: id %s vs birth %s", seed, p.IDNumber, p.DateOfBirth)
		}
		female := (p.IDNumber[3]-'0')%2 == 1
		if female != (p.Sex == "F") || !p.ExpiryDate.After(p.IssueDate) {
			t.Fatalf("seed %d: inconsistent %+v", seed, p)
		}
	}
}

func TestDegradeIsDeterministic(t *testing.T) {
	r := newRenderer(t)
	img, _ := r.ChipIDFront(SyntheticPerson(1))
	d := MildDegradation(5)
	a, err := Degrade(img, d, 9)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Degrade(img, d, 9)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different pictures")
	}
	c, _ := Degrade(img, d, 10)
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, same picture")
	}
}

func TestRendersCardsWithoutChip(t *testing.T) {
	r := newRenderer(t)
	for seed := uint64(0); seed < 3; seed++ {
		p := SyntheticIDCardPerson(seed)
		lp := SyntheticLegacyPerson(seed)
		renders := map[string]func() (image.Image, Truth){
			"id12-front":   func() (image.Image, Truth) { return r.IDCardFront(p) },
			"id12-back":    func() (image.Image, Truth) { return r.IDCardBack(p) },
			"legacy-front": func() (image.Image, Truth) { return r.LegacyIDFront(lp) },
			"legacy-back":  func() (image.Image, Truth) { return r.LegacyIDBack(lp) },
		}
		for name, render := range renders {
			img, truth := render()
			if img.Bounds().Dx() != CardWidth || img.Bounds().Dy() != CardHeight {
				t.Fatalf("%s: size %v", name, img.Bounds())
			}
			if truth.MRZ != nil || len(truth.Fields) == 0 {
				t.Fatalf("%s: truth %+v", name, truth)
			}
			for k, v := range truth.Fields {
				if v == "" {
					t.Fatalf("%s: empty truth field %s", name, k)
				}
			}
			if seed == 0 {
				dump(t, name, img)
				deg, err := Degrade(img, MildDegradation(3), 3)
				if err != nil {
					t.Fatal(err)
				}
				dump(t, name+"-degraded", deg)
			}
		}
	}
}

func TestSyntheticCardsWithoutChipAreConsistent(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		lp := SyntheticLegacyPerson(seed)
		if len(lp.IDNumber) != 9 || strings.Trim(lp.IDNumber, "0123456789") != "" {
			t.Fatalf("seed %d: 9-digit number %q", seed, lp.IDNumber)
		}
		if lp.IssueDate.Before(lp.DateOfBirth.AddDate(14, 0, 0)) || !strings.HasPrefix(lp.IssuingAuthority, "CÔNG AN ") {
			t.Fatalf("seed %d: issue %v for birth %v, authority %q", seed, lp.IssueDate, lp.DateOfBirth, lp.IssuingAuthority)
		}
		p := SyntheticIDCardPerson(seed)
		if y := p.IssueDate.Year(); y < 2016 || y > 2020 || !p.ExpiryDate.After(p.IssueDate) {
			t.Fatalf("seed %d: issued %v expires %v", seed, p.IssueDate, p.ExpiryDate)
		}
		if !reflect.DeepEqual(lp, SyntheticLegacyPerson(seed)) || !reflect.DeepEqual(p, SyntheticIDCardPerson(seed)) {
			t.Fatal("not deterministic")
		}
	}
}
