package ocr

import (
	"fmt"
	"image"
	"slices"
	"sort"
	"testing"

	"github.com/idstream/idstream/internal/cardrender"
	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/mrz"
)

func TestDetectTypeFromEvidence(t *testing.T) {
	p := cardrender.SyntheticPerson(3)
	td1, err := mrz.Parse(p.TD1())
	if err != nil {
		t.Fatal(err)
	}
	td3, err := mrz.Parse(p.TD3())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		zone  *mrz.MRZ
		title string
		want  Detection
	}{
		{"chip back by zone", td1, "", Detection{TypeChipIDCard, SideBack, EvidenceMRZ}},
		{"zone beats title", td1, "GIẤY CHỨNG MINH NHÂN DÂN", Detection{TypeChipIDCard, SideBack, EvidenceMRZ}},
		{"passport by zone", td3, "", Detection{TypePassport, SidePassport, EvidenceMRZ}},
		{"9-digit front", nil, "CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM\nGIẤY CHỨNG MINH NHÂN DÂN\nSỐ 026765270", Detection{TypeLegacyIDCard, SideFront, EvidenceTitle}},
		{"9-digit front misread", nil, "GIAY CHUNG MlNH NHAN DAN", Detection{TypeLegacyIDCard, SideFront, EvidenceTitle}},
		{"chip front", nil, "CĂN CƯỚC CÔNG DÂN\nCitizen Identity Card", Detection{TypeChipIDCard, SideFront, EvidenceTitle}},
		{"12-digit front", nil, "Độc lập - Tự do - Hạnh phúc\nCĂN CƯỚC CÔNG DÂN\nSố: 040092870344", Detection{TypeIDCard, SideFront, EvidenceTitle}},
		{"12-digit front, one letter lost", nil, "CĂN CƯỚ CÔNG DÂN", Detection{TypeIDCard, SideFront, EvidenceTitle}},
		{"vehicle", nil, "GIẤY CHỨNG NHẬN ĐĂNG KÝ XE\nVEHICLE REGISTRATION CERTIFICATE", Detection{TypeVehicleRegistration, SideFront, EvidenceTitle}},
		{"passport page", nil, "HỘ CHIẾU / PASSPORT", Detection{TypePassport, SidePassport, EvidenceTitle}},
		{"chip back without zone", nil, "Đặc điểm nhận dạng / Personal identification:", Detection{TypeChipIDCard, SideBack, EvidenceTitle}},
		{"12-digit back", nil, "Đặc điểm nhận dạng:\nNốt ruồi cách 2cm", Detection{TypeIDCard, SideBack, EvidenceTitle}},
		{"9-digit back", nil, "NGÓN TRỎ TRÁI NGÓN TRỎ PHẢI DÂN TỘC: Kinh TÔN GIÁO: Không", Detection{TypeLegacyIDCard, SideBack, EvidenceTitle}},
		{"vehicle back", nil, "CHỨNG NHẬN ĐĂNG KÝ / REGISTRATION\nBiển số đăng ký / Number plate: 29A-123.45", Detection{TypeVehicleRegistration, SideBack, EvidenceTitle}},
		{"car registration back", nil, "Đăng ký lần đầu ngày: 14/03/2019\nSố máy: G4FA7152396\nSố khung: RLHJF63S1Y962948\nTRƯỞNG PHÒNG", Detection{TypeVehicleRegistration, SideBack, EvidenceTitle}},
		{"nothing", nil, "", Detection{Type: TypeUnknown}},
		{"unrelated text", nil, "Lorem ipsum dolor sit amet, CÔNG TY TNHH", Detection{Type: TypeUnknown}},
	}
	for _, c := range cases {
		if got := DetectType(c.zone, c.title); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestContainsApprox(t *testing.T) {
	for _, c := range []struct {
		text, pattern string
		k             int
		want          bool
	}{
		{"XXCANCUOCCONGDANYY", "CANCUOCCONGDAN", 0, true},
		{"CANCUOCCNGDAN", "CANCUOCCONGDAN", 1, true},
		{"CANCUOCCNGDAN", "CANCUOCCONGDAN", 0, false},
		{"CAMCUOCCNGDAN", "CANCUOCCONGDAN", 1, false},
		{"CAMCUOCCNGDAN", "CANCUOCCONGDAN", 2, true},
		{"", "DANTOC", 0, false},
		{"DANTOC", "", 0, true},
	} {
		if got := containsApprox(c.text, c.pattern, c.k); got != c.want {
			t.Errorf("containsApprox(%q, %q, %d) = %v", c.text, c.pattern, c.k, got)
		}
	}
}

// detectCardsPerSide is the number of cards rendered per side and variant for the
// type-detection accuracy.
const detectCardsPerSide = 4

// typeDetectionFloor is the floor of the type-detection accuracy (type and shown side both
// right) over every side and variant. Measured: see the log line "type detection".
const typeDetectionFloor = 0.98

// TestTypeDetectionAccuracy renders every side of the five document types (chip ID, 12-digit
// ID without chip, 9-digit ID, passport page, vehicle registration front), clean and
// degraded, reads each as its step would (a passport page also as a front, where only its
// title tells it apart; the vehicle registration's back too), and asserts the share read as
// the right type and side.
func TestTypeDetectionAccuracy(t *testing.T) {
	newFixture(t) // loads the shared reader and renderer
	g := &group{reader: sharedRead}
	rend := sharedRend
	type side struct {
		name, step, docType, shows string
		render                     func(seed uint64) (image.Image, cardrender.Truth)
	}
	sides := []side{
		{"chip front", StepFront, TypeChipIDCard, SideFront, func(s uint64) (image.Image, cardrender.Truth) { return rend.ChipIDFront(cardrender.SyntheticPerson(s)) }},
		{"chip back", StepBack, TypeChipIDCard, SideBack, func(s uint64) (image.Image, cardrender.Truth) { return rend.ChipIDBack(cardrender.SyntheticPerson(s)) }},
		{"12-digit front", StepFront, TypeIDCard, SideFront, func(s uint64) (image.Image, cardrender.Truth) {
			return rend.IDCardFront(cardrender.SyntheticIDCardPerson(s))
		}},
		{"12-digit back", StepBack, TypeIDCard, SideBack, func(s uint64) (image.Image, cardrender.Truth) {
			return rend.IDCardBack(cardrender.SyntheticIDCardPerson(s))
		}},
		{"9-digit front", StepFront, TypeLegacyIDCard, SideFront, func(s uint64) (image.Image, cardrender.Truth) {
			return rend.LegacyIDFront(cardrender.SyntheticLegacyPerson(s))
		}},
		{"9-digit back", StepBack, TypeLegacyIDCard, SideBack, func(s uint64) (image.Image, cardrender.Truth) {
			return rend.LegacyIDBack(cardrender.SyntheticLegacyPerson(s))
		}},
		{"passport page", StepPassport, TypePassport, SidePassport, func(s uint64) (image.Image, cardrender.Truth) { return rend.Passport(cardrender.SyntheticPerson(s)) }},
		{"passport page as front", StepFront, TypePassport, SidePassport, func(s uint64) (image.Image, cardrender.Truth) { return rend.Passport(cardrender.SyntheticPerson(s)) }},
		{"vehicle front", StepFront, TypeVehicleRegistration, SideFront, func(s uint64) (image.Image, cardrender.Truth) {
			return rend.VehicleRegistration(cardrender.SyntheticVehicle(s))
		}},
		{"vehicle back", StepBack, TypeVehicleRegistration, SideBack, func(s uint64) (image.Image, cardrender.Truth) {
			return rend.VehicleRegistrationBack(cardrender.SyntheticVehicle(s))
		}},
	}
	right, total := 0, 0
	confusion := map[string]int{}
	for _, variant := range []string{"clean", "degraded"} {
		for _, s := range sides {
			for i := uint64(0); i < detectCardsPerSide; i++ {
				seed := 700 + i
				img, _ := s.render(seed)
				if variant == "degraded" {
					var err error
					if img, err = cardrender.Degrade(img, cardrender.MildDegradation(seed), seed); err != nil {
						t.Fatal(err)
					}
				}
				stepSide, _ := sideOf(s.step)
				var r *reading
				var err error
				if stepSide == SideFront {
					r, err = g.readFront(img)
				} else {
					r, err = g.readZoneSide(img, stepSide)
				}
				if err != nil {
					t.Fatal(err)
				}
				total++
				if r.det.Type == s.docType && r.side(stepSide) == s.shows {
					right++
					continue
				}
				confusion[fmt.Sprintf("%s (%s) → %s/%s by %q", s.name, variant, r.det.Type, r.side(stepSide), r.det.Evidence)]++
			}
		}
	}
	var misses []string
	for k, n := range confusion {
		misses = append(misses, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(misses)
	rate := float64(right) / float64(total)
	t.Logf("type detection over %d sides × 2 variants × %d cards: %d/%d right (%.1f %%); misses %v", len(sides), detectCardsPerSide, right, total, 100*rate, misses)
	if rate < typeDetectionFloor {
		t.Errorf("type detection accuracy %.3f below the floor %.2f", rate, typeDetectionFloor)
	}
}

// TestTypeToldOnTheGrownReading: a page that reads as no words as rectified, as one block and
// thresholded locally (a light back printed all over with fine wavy lines) has its type told
// on the reading with the outline grown, and that reading is the one its fields are read on.
func TestTypeToldOnTheGrownReading(t *testing.T) {
	empty := &docread.Page{Width: cardWidth, Height: cardHeight}
	var words []docread.Word
	for i, s := range []string{"Đặc", "điểm", "nhân", "dạng:"} {
		words = append(words, docread.Word{Text: s, Box: image.Rect(60+70*i, 100, 120+70*i, 124), Conf: 0.9})
	}
	rs := &readings{}
	rs.pages = [numReadings]*docread.Page{empty, empty, empty, {Width: cardWidth, Height: cardHeight, Words: words}, empty}
	k, det, err := detectOnReadings(rs)
	if err != nil {
		t.Fatal(err)
	}
	if k != readingGrown || det.Type != TypeIDCard || det.Side != SideBack {
		t.Errorf("told on reading %d as %+v, want reading %d (grown) as an ID card's back", k, det, readingGrown)
	}
}

// TestTypeToldOnTheFlattenedReadingFirst: a page read as almost no words (a card's back
// crossed all over by fine grey lines, which Tesseract reads as a picture) has its type told
// on the reading with the grey lines painted out before the others, which read it as junk
// with a label or two in it; a page read as words tries that reading last.
func TestTypeToldOnTheFlattenedReadingFirst(t *testing.T) {
	row := func(y int, texts ...string) []docread.Word {
		var ws []docread.Word
		for i, s := range texts {
			ws = append(ws, docread.Word{Text: s, Box: image.Rect(60+90*i, y, 140+90*i, y+24), Conf: 0.9})
		}
		return ws
	}
	page := func(ws ...[]docread.Word) *docread.Page {
		return &docread.Page{Width: cardWidth, Height: cardHeight, Words: slices.Concat(ws...)}
	}
	junk := page(row(100, "Tôngiáo:", "Khô", "HỀ", "XS,"), row(200, "=.c", "=2", "xi", "AC"))
	flattened := page(row(100, "Dân", "tộc:", "Kinh", "Tôn", "giáo:", "Không"), row(150, "DẤU", "VẾT", "RIÊNG", "VÀ", "DỊ", "HÌNH"))
	for _, c := range []struct {
		name  string
		first *docread.Page
		want  int
	}{
		{"barely read", page(row(300, "se"), row(400, "<<")), readingFlattened},
		{"read as words", page(row(300, "Ngày", "30", "tháng", "05", "năm", "2019"), row(340, "GIÁM", "ĐỐC", "TP.", "ĐÀ", "NẴNG")), readingBlock},
	} {
		rs := &readings{}
		rs.pages = [numReadings]*docread.Page{c.first, junk, junk, junk, flattened}
		k, det, err := detectOnReadings(rs)
		if err != nil {
			t.Fatal(err)
		}
		if k != c.want || det.Type != TypeLegacyIDCard {
			t.Errorf("%s: told on reading %d as %+v, want reading %d as a 9-digit card", c.name, k, det, c.want)
		}
	}
}

// TestNoExpiry: the text of a card that does not expire says so, also as OCR misreads it;
// a card with an expiry date, or text without the phrase, does not.
func TestNoExpiry(t *testing.T) {
	for text, want := range map[string]bool{
		"€6 giá trị đến:\nKhông thời hạn\nCỘNG HÒA XÃ HỘI": true,
		"Có giá trị đến: KHÔNG THỜI HẠN":                   true,
		"Co gia tri den: Khong thoi han":                   true,
		"Có giá trị đến: Không thòi hạm":                   true, // one letter misread
		"Có giá trị đến: 26/01/2039":                       false,
		"Thời hạn: 2039":                                   false,
	} {
		if got := noExpiry(text); got != want {
			t.Errorf("noExpiry(%q) = %v, want %v", text, got, want)
		}
	}
}
