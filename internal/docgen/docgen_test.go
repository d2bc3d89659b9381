package docgen

import (
	"bytes"
	"go/parser"
	"go/token"
	"image"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/image/font/opentype"

	"github.com/idstream/idstream/internal/mrz"
)

// fastRenderer renders at a fixed small width so tests over many seeds stay fast.
func fastRenderer(t testing.TB) *Renderer {
	rd := newTestRenderer(t)
	rd.width = 420
	rd.plain = true
	return rd
}

func TestCheckDigitKnownValues(t *testing.T) {
	// ICAO 9303 Part 3 examples
	for s, want := range map[string]byte{"L898902C3": '6', "740812": '2', "120415": '9', "ZE184226B": '1', "<<<<<<": '0'} {
		if got := checkDigit(s); got != want {
			t.Errorf("checkDigit(%q) = %c, want %c", s, got, want)
		}
	}
}

func TestTransliterate(t *testing.T) {
	for in, want := range map[string]string{"NGUYỄN": "NGUYEN", "ĐẶNG THỊ": "DANG<THI", "HƯƠNG": "HUONG", "Đỗ": "DO"} {
		if got := transliterate(in); got != want {
			t.Errorf("transliterate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPersonConsistency(t *testing.T) {
	id := regexp.MustCompile(`^\d{12}$`)
	codes := map[string]bool{}
	for _, pr := range provinces {
		codes[pr.code] = true
	}
	for seed := uint64(0); seed < 2000; seed++ {
		p := NewPerson(rand.New(rand.NewPCG(seed, 1)), testRef)
		if !id.MatchString(p.IDNumber) {
			t.Fatalf("seed %d: id %q", seed, p.IDNumber)
		}
		if p.IDNumber[:3] != p.BirthPlace.ProvinceCode || !codes[p.IDNumber[:3]] {
			t.Fatalf("seed %d: id %s does not start with the birth province %s", seed, p.IDNumber, p.BirthPlace.ProvinceCode)
		}
		d := int(p.IDNumber[3] - '0')
		century := 1900 + d/2*100
		female := d%2 == 1
		if century != p.BirthDate.Year()/100*100 || female != (p.Sex == Female) {
			t.Fatalf("seed %d: id %s disagrees with birth %s sex %s", seed, p.IDNumber, p.BirthDate.Format(time.DateOnly), p.Sex)
		}
		if yy, _ := strconv.Atoi(p.IDNumber[4:6]); yy != p.BirthDate.Year()%100 {
			t.Fatalf("seed %d: id %s year digits vs %d", seed, p.IDNumber, p.BirthDate.Year())
		}
		age := testRef.Year() - p.BirthDate.Year()
		if p.BirthDate.AddDate(age, 0, 0).After(testRef) {
			age--
		}
		if age < 18 || age > 80 {
			t.Fatalf("seed %d: age %d", seed, age)
		}
		if !regexp.MustCompile(`^[A-Z]\d{7}$`).MatchString(p.Passport) || !regexp.MustCompile(`^\d{9}$`).MatchString(p.LegacyID) {
			t.Fatalf("seed %d: passport %q legacy %q", seed, p.Passport, p.LegacyID)
		}
		if p.FullName() != strings.ToUpper(p.FullName()) {
			t.Fatalf("seed %d: name %q not in capitals", seed, p.FullName())
		}
	}
}

func TestChipExpiryRule(t *testing.T) {
	b := day(2000, 5, 10)
	for _, c := range []struct {
		issue time.Time
		want  string
	}{
		{day(2021, 1, 1), "2025-05-10"}, // 20 → 25
		{day(2023, 6, 1), "2040-05-10"}, // 23, within two years of 25 → 40
		{day(2037, 1, 1), "2040-05-10"}, // 36 → 40
		{day(2038, 6, 1), "2060-05-10"}, // 38 → 60
		{day(2058, 6, 1), ""},           // 58 → no expiry
	} {
		got, ok := chipExpiry(b, c.issue)
		s := ""
		if ok {
			s = iso(got)
		}
		if s != c.want {
			t.Errorf("issued %s: expiry %q, want %q", iso(c.issue), s, c.want)
		}
	}
}

// TestRenderAllTemplates renders every template for many people and checks the labels:
// the MRZ parses with valid check digits and agrees with the fields, every field has a side
// the template has, dates are ISO, the 12-digit number agrees with birth and sex.
func TestRenderAllTemplates(t *testing.T) {
	rd := fastRenderer(t)
	iso := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	n := 20
	if testing.Short() {
		n = 3
	}
	for _, tp := range Templates() {
		for seed := 0; seed < n; seed++ {
			r := rand.New(rand.NewPCG(uint64(seed), 42))
			p := NewPerson(r, testRef)
			var face image.Image
			if seed%2 == 0 {
				face = testFace()
			}
			rd.plain = seed > 1 // the first two with the security print
			d, err := rd.RenderTemplate(p, tp.Name, r, face)
			if err != nil {
				t.Fatalf("%s seed %d: %v", tp.Name, seed, err)
			}
			if d.Type != tp.Type || d.Split != tp.Split || d.Template != tp.Name {
				t.Fatalf("%s: document says %s %v %s", tp.Name, d.Type, d.Split, d.Template)
			}
			for _, side := range tp.Sides {
				img := d.Sides[side]
				if img == nil {
					t.Fatalf("%s: no %s side", tp.Name, side)
				}
				b := img.Bounds()
				wmm, hmm := id1W, id1H
				if tp.Type == Passport {
					wmm, hmm = td3W, td3H
				}
				if a, want := float64(b.Dy())/float64(b.Dx()), hmm/wmm; a < want*0.98 || a > want*1.02 {
					t.Fatalf("%s: aspect %.3f, want %.3f", tp.Name, a, want)
				}
			}
			if len(d.Sides) != len(tp.Sides) {
				t.Fatalf("%s: sides %v", tp.Name, d.Sides)
			}
			for f, v := range d.Fields {
				if v == "" || v != strings.Join(strings.Fields(v), " ") {
					t.Fatalf("%s: field %s = %q (empty or unnormalised spaces)", tp.Name, f, v)
				}
				if !slices.Contains(tp.Sides, d.FieldSides[f]) {
					t.Fatalf("%s: field %s on side %q", tp.Name, f, d.FieldSides[f])
				}
				if strings.HasSuffix(f, "_date") || f == FieldDateOfBirth {
					if !iso.MatchString(v) {
						t.Fatalf("%s: %s = %q not ISO", tp.Name, f, v)
					}
				}
			}
			for _, f := range requiredFields(tp.Type, d.NoExpiry) {
				if d.Fields[f] == "" {
					t.Fatalf("%s seed %d: no %s (fields %v)", tp.Name, seed, f, d.Fields)
				}
			}
			if tp.Type == IDCard || tp.Type == ChipIDCard || tp.Type == Passport {
				id := d.Fields[FieldIDNumber]
				if id != p.IDNumber || d.Fields[FieldSex] != p.Sex {
					t.Fatalf("%s: id %s sex %s, person %s %s", tp.Name, id, d.Fields[FieldSex], p.IDNumber, p.Sex)
				}
			}
			n := 0
			for _, side := range tp.Sides {
				n += len(d.FieldsOn(side))
			}
			if n != len(d.Fields) {
				t.Fatalf("%s: %d fields, %d on the sides", tp.Name, len(d.Fields), n)
			}
			checkMRZ(t, tp, d)
		}
	}
}

func requiredFields(typ string, noExpiry bool) []string {
	var f []string
	switch typ {
	case LegacyIDCard:
		f = []string{FieldIDNumber, FieldFullName, FieldDateOfBirth, FieldPlaceOfOrigin, FieldPlaceOfResidence, FieldIssueDate, FieldEthnicity, FieldReligion, FieldIdentifyingMarks}
	case IDCard:
		f = []string{FieldIDNumber, FieldFullName, FieldDateOfBirth, FieldSex, FieldNationality, FieldPlaceOfOrigin, FieldPlaceOfResidence, FieldIssueDate, FieldIdentifyingMarks}
	case ChipIDCard:
		f = []string{FieldIDNumber, FieldFullName, FieldDateOfBirth, FieldSex, FieldNationality, FieldPlaceOfResidence, FieldIssueDate}
	case Passport:
		f = []string{FieldIDNumber, FieldFullName, FieldDateOfBirth, FieldSex, FieldNationality, FieldPlaceOfBirth, FieldIssueDate, FieldExpiryDate, FieldPassportNumber}
	case VehicleRegistration:
		f = []string{FieldOwner, FieldAddress, FieldBrand, FieldModel, FieldEngineNumber, FieldChassisNumber, FieldColor, FieldRegistrationDate, FieldPlate}
	}
	if !noExpiry && (typ == IDCard || typ == ChipIDCard) {
		f = append(f, FieldExpiryDate)
	}
	return f
}

func checkMRZ(t *testing.T, tp TemplateInfo, d Document) {
	t.Helper()
	want := tp.Type == ChipIDCard || tp.Type == Passport
	if (d.MRZ != nil) != want {
		t.Fatalf("%s: MRZ %v", tp.Name, d.MRZ)
	}
	if !want {
		return
	}
	m, err := mrz.Parse(d.MRZ)
	if err != nil {
		t.Fatalf("%s: MRZ %q: %v", tp.Name, d.MRZ, err)
	}
	if !m.Valid {
		t.Fatalf("%s: MRZ %q check digits %v", tp.Name, d.MRZ, m.Checks)
	}
	mf := m.FieldsAt(testRef)
	for _, f := range []string{FieldDateOfBirth, FieldSex, FieldNationality, FieldIDNumber, FieldExpiryDate} {
		if mf[f] != d.Fields[f] {
			t.Fatalf("%s: MRZ %s = %q, printed %q (%q)", tp.Name, f, mf[f], d.Fields[f], d.MRZ)
		}
	}
	if got := transliterate(d.Fields[FieldFullName]); strings.ReplaceAll(mf[mrz.FieldFullName], " ", "<") != got {
		t.Fatalf("%s: MRZ name %q vs printed %q", tp.Name, mf[mrz.FieldFullName], d.Fields[FieldFullName])
	}
	if tp.Type == Passport && m.DocumentNumber != d.Fields[FieldPassportNumber] {
		t.Fatalf("%s: MRZ number %q vs %q", tp.Name, m.DocumentNumber, d.Fields[FieldPassportNumber])
	}
	if tp.Type == ChipIDCard && m.DocumentNumber != d.Fields[FieldIDNumber][3:] {
		t.Fatalf("%s: MRZ document number %q vs id %q", tp.Name, m.DocumentNumber, d.Fields[FieldIDNumber])
	}
}

// testFace is a small synthetic portrait-shaped image.
func testFace() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 120, 160))
	for y := 0; y < 160; y++ {
		for x := 0; x < 120; x++ {
			v := uint8(100 + (x+y)%100)
			img.Pix[img.PixOffset(x, y)+0] = v
			img.Pix[img.PixOffset(x, y)+1] = v / 2
			img.Pix[img.PixOffset(x, y)+2] = 80
			img.Pix[img.PixOffset(x, y)+3] = 255
		}
	}
	return img
}

func TestSplitsAreDisjoint(t *testing.T) {
	disjoint := func(what string, a, b []string, except ...string) {
		for _, x := range a {
			if slices.Contains(b, x) && !slices.Contains(except, x) {
				t.Errorf("%s %q is in both splits", what, x)
			}
		}
	}
	disjoint("font", FontsOf(Calibration), FontsOf(HeldOut), SharedMRZFont)
	disjoint("tint", TintsOf(Calibration), TintsOf(HeldOut))
	disjoint("scene", ScenesOf(Calibration), ScenesOf(HeldOut))
	// font files too (a family name could hide a shared file)
	files := map[Split][]string{}
	for _, s := range []Split{Calibration, HeldOut} {
		for _, f := range append(slices.Clone(textFamilies[s]), mrzFamilies[s]...) {
			if f.Name != SharedMRZFont {
				files[s] = append(files[s], f.Regular, f.Bold)
			}
		}
	}
	disjoint("font file", files[Calibration], slices.DeleteFunc(files[HeldOut], func(s string) bool { return s == "" }))
	// every type has templates in both splits, and a template belongs to one
	for _, typ := range DocumentTypes() {
		for _, s := range []Split{Calibration, HeldOut} {
			n := 0
			for _, tp := range Templates() {
				if tp.Type == typ && tp.Split == s {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s has no %v template", typ, s)
			}
		}
	}
	// rendered documents use only their split's fonts, tint and template
	rd := fastRenderer(t)
	for seed := uint64(0); seed < 30; seed++ {
		for _, s := range []Split{Calibration, HeldOut} {
			r := rand.New(rand.NewPCG(seed, 3))
			d, err := rd.Render(NewPerson(r, testRef), DocumentTypes()[seed%5], s, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range d.Fonts {
				if !slices.Contains(FontsOf(s), f) {
					t.Fatalf("%v document uses font %q", s, f)
				}
			}
			if !slices.Contains(TintsOf(s), d.Background) || d.Split != s {
				t.Fatalf("%v document: tint %q split %v", s, d.Background, d.Split)
			}
			if (s == Calibration) != strings.HasSuffix(d.Template, "-a") {
				t.Fatalf("%v document with template %s", s, d.Template)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	rd := fastRenderer(t)
	run := func() (Document, Capture) {
		r := rand.New(rand.NewPCG(77, 5))
		p := NewPerson(r, testRef)
		d, err := rd.Render(p, ChipIDCard, HeldOut, r, testFace())
		if err != nil {
			t.Fatal(err)
		}
		return d, Photograph(d.Sides[StepFront], HeldOut, r)
	}
	d1, c1 := run()
	d2, c2 := run()
	for side := range d1.Sides {
		if !bytes.Equal(d1.Sides[side].(*image.RGBA).Pix, d2.Sides[side].(*image.RGBA).Pix) {
			t.Fatalf("side %s differs between runs", side)
		}
	}
	if !slices.Equal(d1.MRZ, d2.MRZ) || d1.Template != d2.Template || !bytes.Equal(c1.JPEG, c2.JPEG) {
		t.Fatal("documents or captures differ between runs with the same seed")
	}
}

func TestMissingFontNamesPackage(t *testing.T) {
	_, err := NewRenderer(t.TempDir())
	if err == nil {
		t.Fatal("no error for an empty font directory")
	}
	for _, pkg := range FontPackages() {
		if !strings.Contains(err.Error(), pkg) {
			t.Errorf("error does not name package %s: %v", pkg, err)
		}
	}
}

func TestUnknownTypeAndReason(t *testing.T) {
	rd := fastRenderer(t)
	r := rand.New(rand.NewPCG(1, 1))
	if _, err := rd.Render(NewPerson(r, testRef), "driving_licence", Calibration, r, nil); err == nil {
		t.Error("unknown type accepted")
	}
	if _, err := BadCapture(image.NewRGBA(image.Rect(0, 0, 10, 10)), "smudged", Calibration, r); err == nil {
		t.Error("unknown reason accepted")
	}
}

func TestVietnameseCoverage(t *testing.T) {
	rd := newTestRenderer(t)
	alphabet := "ÀÁÂÃÈÉÊÌÍÒÓÔÕÙÚÝĂĐĨŨƠƯẠẢẤẦẨẪẬẮẰẲẴẶẸẺẼẾỀỂỄỆỈỊỌỎỐỒỔỖỘỚỜỞỠỢỤỦỨỪỬỮỰỲỴỶỸàáâãèéêìíòóôõùúýăđĩũơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ"
	for _, s := range []Split{Calibration, HeldOut} {
		for _, f := range rd.text[s] {
			for _, ft := range []*opentype.Font{f.regular, f.bold} {
				for _, c := range alphabet {
					if i, err := ft.GlyphIndex(nil, c); err != nil || i == 0 {
						t.Errorf("%s lacks %q", f.Name, c)
						break
					}
				}
			}
		}
	}
}

// TestLayoutFits renders every template for people with the longest names and addresses
// and checks that every text lies on its side and no two texts overlap.
func TestLayoutFits(t *testing.T) {
	rd := fastRenderer(t)
	long := func(seed uint64) Person {
		r := rand.New(rand.NewPCG(seed, 8))
		p := NewPerson(r, testRef)
		p.FamilyName, p.MiddleName, p.GivenName = "NGUYỄN", "THỊ PHƯƠNG", "QUỲNH"
		if seed%2 == 1 {
			p.FamilyName, p.MiddleName, p.GivenName, p.Sex = "HOÀNG", "TRỌNG", "NGHĨA", Male
		}
		p.Residence.Street = "Số 118 ngõ 192 Nguyễn Thị Minh Khai"
		p.Residence.Commune, p.Residence.District = "Hòa Cường Bắc", "Thủ Dầu Một"
		p.Origin.Commune, p.Origin.District, p.Origin.Province = "Tạ An Khương", "Buôn Ma Thuột", "Bà Rịa - Vũng Tàu"
		p.Marks = "Nốt ruồi C 2cm dưới trước cánh mũi trái và sẹo chấm C 1cm trên đầu lông mày phải"
		p.Vehicle.Address = p.Residence
		p.Vehicle.Owner = p.FullName()
		return p
	}
	for _, tp := range Templates() {
		for seed := uint64(0); seed < 6; seed++ {
			r := rand.New(rand.NewPCG(seed, 9))
			d, err := rd.RenderTemplate(long(seed), tp.Name, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			for side, boxes := range d.layout {
				b := d.Sides[side].Bounds()
				s := float64(b.Dx()) / map[bool]float64{true: td3W, false: id1W}[tp.Type == Passport]
				w, h := float64(b.Dx())/s, float64(b.Dy())/s
				for i, a := range boxes {
					if a.x0 < 0.5 || a.x1 > w-0.5 || a.y0 < 0.3 || a.y1 > h-0.1 {
						t.Errorf("%s %s seed %d: %q at (%.1f,%.1f)-(%.1f,%.1f) leaves the %.1f×%.1f side", tp.Name, side, seed, a.s, a.x0, a.y0, a.x1, a.y1, w, h)
					}
					for _, c := range boxes[i+1:] {
						if min(a.x1, c.x1)-max(a.x0, c.x0) > 0.2 && min(a.y1, c.y1)-max(a.y0, c.y0) > 0.2 {
							t.Errorf("%s %s seed %d: %q overlaps %q", tp.Name, side, seed, a.s, c.s)
						}
					}
				}
			}
		}
	}
}

func TestSplitText(t *testing.T) {
	for _, s := range []Split{Calibration, HeldOut} {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Split
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Fatalf("%v → %s → %v, %v", s, b, back, err)
		}
	}
	if _, err := ParseSplit("test"); err == nil {
		t.Fatal("ParseSplit accepted an unknown split")
	}
}

// TestConcurrentRenders renders from one Renderer on several goroutines and expects what a
// sequential rendering gives.
func TestConcurrentRenders(t *testing.T) {
	rd := fastRenderer(t)
	render := func(seed uint64) []byte {
		r := rand.New(rand.NewPCG(seed, 6))
		d, err := rd.Render(NewPerson(r, testRef), DocumentTypes()[seed%5], Split(seed%2), r, nil)
		if err != nil {
			t.Error(err)
			return nil
		}
		var b []byte
		for _, side := range []string{StepFront, StepBack, StepPassport} {
			if img, ok := d.Sides[side].(*image.RGBA); ok {
				b = append(b, img.Pix...)
			}
		}
		return b
	}
	want := make([][]byte, 6)
	for i := range want {
		want[i] = render(uint64(i))
	}
	got := make([][]byte, len(want))
	done := make(chan int)
	for i := range want {
		go func() { got[i] = render(uint64(i)); done <- i }()
	}
	for range want {
		<-done
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("seed %d: concurrent rendering differs", i)
		}
	}
}

// TestIndependentOfTheProjectsRenderer keeps the package independent of what it evaluates:
// no import of the project's renderer, OCR or processors, and internal/mrz only in tests.
func TestIndependentOfTheProjectsRenderer(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			switch {
			case strings.Contains(path, "/internal/cardrender"), strings.Contains(path, "/internal/docread"),
				strings.Contains(path, "idstream/processors"):
				t.Errorf("%s imports %s", name, path)
			case strings.HasSuffix(path, "/internal/mrz") && !strings.HasSuffix(name, "_test.go"):
				t.Errorf("%s imports %s outside tests", name, path)
			case strings.HasPrefix(path, "github.com/idstream/") && !strings.HasSuffix(path, "/internal/mrz"):
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
