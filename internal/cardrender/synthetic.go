package cardrender

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/idstream/idstream/internal/mrz"
)

// Person holds the values printed on a chip ID card or a passport. Dates are calendar dates
// (their time of day is ignored); Sex is "M" or "F".
type Person struct {
	IDNumber         string // 12 digits
	FullName         string // upper case, Vietnamese diacritics, e.g. "NGUYỄN VĂN AN"
	DateOfBirth      time.Time
	Sex              string
	PlaceOfOrigin    string
	PlaceOfResidence string
	IssueDate        time.Time
	ExpiryDate       time.Time
	PassportNumber   string // passports only: a letter and 7 digits
	PlaceOfBirth     string // passports only
	Marks            string // back of the card: identifying marks
}

// Vehicle holds the values printed on a vehicle registration card.
type Vehicle struct {
	Owner            string
	Address          string
	Brand            string
	Model            string
	EngineNumber     string
	ChassisNumber    string
	Color            string
	Plate            string
	RegistrationDate time.Time
}

// Truth is the ground truth of a render: the values under the canonical field names the
// OCR reports (id_number, full_name, date_of_birth as YYYY-MM-DD, sex as M/F, nationality as
// VNM, place_of_origin, place_of_residence, issue_date, expiry_date; on the backs of the cards
// without chip also identifying_marks, and on the 9-digit card's ethnicity, religion and
// issuing_authority; vehicle cards: owner,
// address, brand, model, engine_number, chassis_number, color, plate, registration_date), and
// the MRZ lines when the render has a zone.
type Truth struct {
	Fields map[string]string
	MRZ    []string
}

// Sample values. Names and places are common Vietnamese words combined at random, so a
// generated person is not a real one.
var (
	surnames  = []string{"NGUYỄN", "TRẦN", "LÊ", "PHẠM", "HOÀNG", "HUỲNH", "PHAN", "VŨ", "VÕ", "ĐẶNG", "BÙI", "ĐỖ", "HỒ", "NGÔ", "DƯƠNG", "LÝ"}
	middles   = []string{"VĂN", "THỊ", "HỮU", "ĐỨC", "MINH", "NGỌC", "THANH", "QUỐC", "XUÂN", "THU", "GIA", "BẢO"}
	givens    = []string{"AN", "BÌNH", "CHÂU", "DŨNG", "GIANG", "HÀ", "HẢI", "HẠNH", "HIẾU", "HÙNG", "KHÁNH", "LAN", "LINH", "LONG", "MAI", "NAM", "NGA", "PHÚC", "QUÂN", "SƠN", "TÂM", "THẢO", "TRANG", "TUẤN", "VIỆT", "YẾN"}
	provinces = []province{{"001", "Hà Nội"}, {"079", "TP. Hồ Chí Minh"}, {"031", "Hải Phòng"}, {"048", "Đà Nẵng"}, {"092", "Cần Thơ"}, {"038", "Thanh Hóa"}, {"040", "Nghệ An"}, {"046", "Thừa Thiên Huế"}, {"036", "Nam Định"}, {"034", "Thái Bình"}, {"056", "Khánh Hòa"}, {"066", "Đắk Lắk"}}
	communes  = []string{"Xã Tân Lập", "Xã Hòa Bình", "Phường Bến Nghé", "Phường Đồng Xuân", "Xã Quảng Phú", "Thị trấn Phú Mỹ", "Xã Nghĩa Đô", "Phường Trần Phú", "Xã Yên Hòa", "Phường Tân Định"}
	districts = []string{"Huyện Gia Lâm", "Quận Ba Đình", "Huyện Đông Anh", "Quận Hải Châu", "Huyện Thủy Nguyên", "Quận Ninh Kiều", "Huyện Cần Giờ", "Thành phố Vinh"}
	streets   = []string{"Lê Lợi", "Trần Hưng Đạo", "Nguyễn Huệ", "Hai Bà Trưng", "Lý Thường Kiệt", "Điện Biên Phủ", "Phan Đình Phùng", "Hùng Vương"}
	marks     = []string{"Nốt ruồi cách 2cm trên đuôi mắt trái", "Sẹo chấm cách 1cm dưới cánh mũi phải", "Nốt ruồi cách 3cm dưới mép trái"}
	brands    = []string{"HONDA", "YAMAHA", "TOYOTA", "SUZUKI", "VINFAST", "KIA", "MAZDA", "HYUNDAI"}
	models    = []string{"VISION", "AIR BLADE", "WAVE ALPHA", "SIRIUS", "VIOS", "FADIL", "MORNING", "CX-5", "ACCENT", "EXCITER"}
	colors    = []string{"Đỏ", "Đen", "Trắng", "Xanh", "Bạc", "Vàng", "Xám"}
	// vinLetters are the letters a vehicle identification number may hold.
	vinLetters = "ABCDEFGHJKLMNPRSTUVWXYZ"
	// Plate series letters: Vietnamese plates do not use I, J, O, Q, R, W (look-alikes).
	plateSeries = "ABCDEFGHKLMNPSTUVXYZ"
	plateCodes  = []string{"29", "30", "51", "43", "15", "65", "36", "37"}
)

type province struct{ code, name string }

// SyntheticPerson returns a random, internally consistent person for seed: the ID number's
// province, century/sex digit and birth year agree with the place of origin, sex and date of
// birth; the card expires at age 25, 40 or 60 as the card rules say (or 2060 past that).
func SyntheticPerson(seed uint64) Person {
	rng := rand.New(rand.NewPCG(seed, 0x1d57ea3))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	sex := "M"
	middle := pick(middles)
	if rng.IntN(2) == 1 {
		sex = "F"
		middle = []string{"THỊ", "NGỌC", "THU", "MINH", "BẢO"}[rng.IntN(5)]
	} else if middle == "THỊ" || middle == "THU" {
		middle = "VĂN"
	}
	name := pick(surnames) + " " + middle + " " + pick(givens)
	if rng.IntN(3) == 0 {
		name += " " + pick(givens)
	}
	birth := time.Date(1955+rng.IntN(50), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
	origin := provinces[rng.IntN(len(provinces))]
	residence := provinces[rng.IntN(len(provinces))]
	century := 0
	if birth.Year() >= 2000 {
		century = 2
	}
	if sex == "F" {
		century++
	}
	id := fmt.Sprintf("%s%d%02d%06d", origin.code, century, birth.Year()%100, rng.IntN(1_000_000))
	issue := time.Date(2021+rng.IntN(4), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
	expiry := expiryFor(birth, issue)
	return Person{
		IDNumber:         id,
		FullName:         name,
		DateOfBirth:      birth,
		Sex:              sex,
		PlaceOfOrigin:    pick(communes) + ", " + pick(districts) + ", " + origin.name,
		PlaceOfResidence: fmt.Sprintf("%d %s, %s, %s", 1+rng.IntN(300), pick(streets), pick(districts), residence.name),
		IssueDate:        issue,
		ExpiryDate:       expiry,
		PassportNumber:   fmt.Sprintf("%c%07d", 'A'+rune(rng.IntN(26)), rng.IntN(10_000_000)),
		PlaceOfBirth:     origin.name,
		Marks:            pick(marks),
	}
}

// SyntheticVehicle returns a random vehicle registration for seed, owned by a synthetic person.
func SyntheticVehicle(seed uint64) Vehicle {
	rng := rand.New(rand.NewPCG(seed, 0x7e41c1e))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	p := SyntheticPerson(seed)
	return Vehicle{
		Owner:        p.FullName,
		Address:      p.PlaceOfResidence,
		Brand:        pick(brands),
		Model:        pick(models),
		EngineNumber: fmt.Sprintf("%c%c%d%c-%07d", 'A'+rune(rng.IntN(26)), 'A'+rune(rng.IntN(26)), rng.IntN(10), 'A'+rune(rng.IntN(26)), rng.IntN(10_000_000)),
		// A VIN (ISO 3779): no I, O or Q.
		ChassisNumber:    fmt.Sprintf("RL%c%c%c%012d", vinLetters[rng.IntN(len(vinLetters))], vinLetters[rng.IntN(len(vinLetters))], vinLetters[rng.IntN(len(vinLetters))], rng.Int64N(1_000_000_000_000)),
		Color:            pick(colors),
		Plate:            fmt.Sprintf("%s%c-%03d.%02d", pick(plateCodes), plateSeries[rng.IntN(len(plateSeries))], rng.IntN(1000), rng.IntN(100)),
		RegistrationDate: time.Date(2015+rng.IntN(10), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC),
	}
}

// vnDate formats a date as printed on Vietnamese documents.
func vnDate(t time.Time) string { return t.Format("02/01/2006") }

// isoDate formats a date as the OCR reports it.
func isoDate(t time.Time) string { return t.Format(time.DateOnly) }

// mrzName transliterates a Vietnamese name to the MRZ alphabet: diacritics dropped, Đ as D.
func mrzName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == ' ':
			b.WriteByte('<')
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		default:
			if base, ok := vietBase[r]; ok {
				b.WriteRune(base)
			}
		}
	}
	return b.String()
}

// vietBase maps upper-case Vietnamese letters to their unaccented base letter.
var vietBase = func() map[rune]rune {
	m := map[rune]rune{'Đ': 'D'}
	for base, forms := range map[rune]string{
		'A': "ÀÁẢÃẠĂẰẮẲẴẶÂẦẤẨẪẬ", 'E': "ÈÉẺẼẸÊỀẾỂỄỆ", 'I': "ÌÍỈĨỊ", 'O': "ÒÓỎÕỌÔỒỐỔỖỘƠỜỚỞỠỢ",
		'U': "ÙÚỦŨỤƯỪỨỬỮỰ", 'Y': "ỲÝỶỸỴ",
	} {
		for _, r := range forms {
			m[r] = base
		}
	}
	return m
}()

// pad fills s with '<' up to n characters (and cuts it at n).
func pad(s string, n int) string {
	if len(s) >= n {
		return s[:n]
	}
	return s + strings.Repeat("<", n-len(s))
}

func cd(s string) string {
	d, err := mrz.CheckDigit(s)
	if err != nil {
		panic(fmt.Sprintf("cardrender: check digit of %q: %v", s, err)) // our own MRZ text
	}
	return string(d)
}

// mrzNames splits a full name into the MRZ name field: the first word is the primary
// identifier, the rest the secondary ones.
func mrzNames(full string, n int) string {
	sur, given, _ := strings.Cut(full, " ")
	return pad(mrzName(sur)+"<<"+mrzName(given), n)
}

// TD1 returns the chip ID card's machine readable zone: document code ID, issuing state VNM,
// document number the last nine digits of the ID number, optional data the 12-digit ID.
func (p Person) TD1() []string {
	doc := p.IDNumber[3:]
	l1 := "IDVNM" + doc + cd(doc) + pad(p.IDNumber, 15)
	dob, exp := p.DateOfBirth.Format("060102"), p.ExpiryDate.Format("060102")
	l2 := dob + cd(dob) + p.Sex + exp + cd(exp) + "VNM" + pad("", 11)
	l2 += cd(l1[5:30] + l2[0:7] + l2[8:15] + l2[18:29])
	return []string{l1, l2, mrzNames(p.FullName, 30)}
}

// TD3 returns the passport's machine readable zone, with the 12-digit ID as personal number.
func (p Person) TD3() []string {
	l1 := "P<VNM" + mrzNames(p.FullName, 39)
	num := pad(p.PassportNumber, 9)
	dob, exp := p.DateOfBirth.Format("060102"), p.ExpiryDate.Format("060102")
	personal := pad(p.IDNumber, 14)
	l2 := num + cd(num) + "VNM" + dob + cd(dob) + p.Sex + exp + cd(exp) + personal + cd(personal)
	l2 += cd(l2[0:10] + l2[13:20] + l2[21:43])
	return []string{l1, l2}
}
