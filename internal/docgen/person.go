package docgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Sex values of Person.Sex, as the public contract writes them.
const (
	Male   = "M"
	Female = "F"
)

// Place is a Vietnamese administrative address: an optional street part (house number,
// lane, street, hamlet or residential group), a commune-level unit (xã / phường / thị trấn),
// a district-level unit (huyện / quận / thị xã / thành phố) and a province-level unit (tỉnh /
// thành phố trực thuộc trung ương). Every name is written with its diacritics; the Kind
// fields hold the unit's type word ("Phường", "Quận", "Tỉnh", ...).
type Place struct {
	Street       string
	CommuneKind  string
	Commune      string
	DistrictKind string
	District     string
	ProvinceKind string
	Province     string
	ProvinceCode string // three-digit code of the province (Circular 07/2016/TT-BCA)
}

// Place formatting styles used by the templates. The string a template prints is the one it
// records as truth, so the style only changes what the card shows.
const (
	placeFull  = iota // "Phường Ngô Thì Nhậm, Quận Hai Bà Trưng, Hà Nội"
	placeShort        // "Ngô Thì Nhậm, Hai Bà Trưng, Hà Nội"
	placeAbbr         // "P. Ngô Thì Nhậm, Q. Hai Bà Trưng, Hà Nội"
	placeKinds        // "Phường Ngô Thì Nhậm, Quận Hai Bà Trưng, Thành phố Hà Nội"
)

// format writes the place in one of the place* styles; withStreet adds the street part.
func (p Place) format(style int, withStreet bool) string {
	var parts []string
	if withStreet && p.Street != "" {
		parts = append(parts, p.Street)
	}
	unit := func(kind, name string) string {
		switch style {
		case placeShort:
			return name
		case placeAbbr:
			return abbrevKind(kind) + " " + name
		default:
			return kind + " " + name
		}
	}
	parts = append(parts, unit(p.CommuneKind, p.Commune), unit(p.DistrictKind, p.District))
	if style == placeKinds {
		parts = append(parts, p.ProvinceKind+" "+p.Province)
	} else {
		parts = append(parts, p.Province)
	}
	return strings.Join(parts, ", ")
}

func abbrevKind(kind string) string {
	switch kind {
	case "Phường":
		return "P."
	case "Quận":
		return "Q."
	case "Huyện":
		return "H."
	case "Xã":
		return "X."
	case "Thị trấn":
		return "TT."
	case "Thị xã":
		return "TX."
	case "Thành phố":
		return "TP."
	}
	return kind
}

// Vehicle is the data of a vehicle registration certificate (car or motorcycle).
type Vehicle struct {
	Car              bool   // a car ("30A-123.45" plates), else a motorcycle ("29-B1 123.45")
	Owner            string // the owner's full name as printed (capitals, diacritics)
	Address          Place
	Brand            string // HONDA, YAMAHA, ...
	Model            string // WAVE ALPHA, VISION, ...
	EngineNumber     string
	ChassisNumber    string
	Color            string // Vietnamese colour word as printed ("Đỏ - Đen")
	Capacity         int    // cm³
	RegistrationDate time.Time
	Plate            string // as printed
	Number           string // the certificate's own serial number
}

// Person is a fictional Vietnamese citizen. Every field is consistent with the others: the
// 12-digit ID number carries the province code of BirthPlace, the century/sex digit and the
// year of birth; the passport's personal number is the 12-digit ID.
type Person struct {
	FamilyName string // "NGUYỄN"
	MiddleName string // "VĂN" or "THỊ HỒNG" (may be empty)
	GivenName  string // "ANH"
	Sex        string // Male or Female
	BirthDate  time.Time
	BirthPlace Place  // where the birth was registered; its province starts IDNumber
	Origin     Place  // quê quán, the place of origin
	Residence  Place  // nơi thường trú, with a street part
	IDNumber   string // 12 digits
	LegacyID   string // 9 digits, the old CMND number
	Passport   string // one letter and 7 digits
	Ethnicity  string // "Kinh" mostly
	Religion   string // "Không" mostly
	Marks      string // identifying marks, "Sẹo chấm C 1cm dưới sau mép trái"
	Vehicle    Vehicle
	// Ref is the reference date the person was generated at: documents are issued on or
	// before it and the person is 18–80 years old on it.
	Ref time.Time
}

// FullName is the name as printed on Vietnamese documents: family, middle and given names in
// capitals with diacritics, separated by single spaces.
func (p Person) FullName() string {
	return strings.Join(strings.Fields(p.FamilyName+" "+p.MiddleName+" "+p.GivenName), " ")
}

var familyNames = []string{
	"NGUYỄN", "NGUYỄN", "NGUYỄN", "TRẦN", "TRẦN", "LÊ", "LÊ", "PHẠM", "HOÀNG", "HUỲNH", "PHAN",
	"VŨ", "VÕ", "ĐẶNG", "BÙI", "ĐỖ", "HỒ", "NGÔ", "DƯƠNG", "LÝ", "ĐINH", "ĐÀO", "TRỊNH",
	"MAI", "LƯƠNG", "TẠ", "CAO", "LƯU", "QUÁCH", "TÔ", "KIỀU", "LÃ", "ÂU",
}

var middleMale = []string{"VĂN", "HỮU", "ĐỨC", "MINH", "THANH", "QUỐC", "CÔNG", "XUÂN", "ĐÌNH", "TRỌNG", "QUANG", "VIỆT", "TIẾN", "NGỌC"}
var middleFemale = []string{"THỊ", "NGỌC", "THANH", "MINH", "THU", "HỒNG", "KIM", "BẢO", "PHƯƠNG", "MỸ", "THÙY", "DIỆU", "KHÁNH"}

var givenMale = []string{
	"ANH", "BÌNH", "CƯỜNG", "DŨNG", "ĐẠT", "GIANG", "HẢI", "HIẾU", "HOÀNG", "HÙNG", "HUY", "KHÁNH",
	"KHOA", "LÂM", "LONG", "MẠNH", "NAM", "NGHĨA", "PHÚC", "PHƯƠNG", "QUÂN", "QUANG", "SƠN",
	"TÀI", "THẮNG", "THÀNH", "TIẾN", "TOÀN", "TRUNG", "TÚ", "TUẤN", "VIỆT", "VINH", "VŨ",
}
var givenFemale = []string{
	"ANH", "CHÂU", "CHI", "DIỆP", "DUNG", "GIANG", "HÀ", "HẠNH", "HIỀN", "HOA", "HUYỀN", "HƯƠNG",
	"KHÁNH", "LAN", "LIÊN", "LINH", "LOAN", "LY", "MAI", "MY", "NGÂN", "NGA", "NHUNG", "OANH",
	"PHƯƠNG", "QUỲNH", "THẢO", "THỦY", "TRANG", "TRÂM", "UYÊN", "VÂN", "VY", "YẾN", "XUÂN",
}

// province is a province-level unit with some of its districts and communes.
type province struct {
	code, kind, name string
	districts        []district
}

type district struct {
	kind, name string
	communes   []commune
}

type commune struct{ kind, name string }

func ph(n string) commune { return commune{"Phường", n} }
func xa(n string) commune { return commune{"Xã", n} }
func tt(n string) commune { return commune{"Thị trấn", n} }

// provinces is a sample of real administrative units (before the 2025 mergers, as printed
// on the cards in circulation). Codes follow Circular 07/2016/TT-BCA.
var provinces = []province{
	{"001", "Thành phố", "Hà Nội", []district{
		{"Quận", "Hai Bà Trưng", []commune{ph("Ngô Thì Nhậm"), ph("Bạch Đằng"), ph("Phố Huế"), ph("Lê Đại Hành")}},
		{"Quận", "Đống Đa", []commune{ph("Văn Miếu"), ph("Kim Liên"), ph("Láng Thượng"), ph("Ô Chợ Dừa")}},
		{"Quận", "Cầu Giấy", []commune{ph("Dịch Vọng"), ph("Nghĩa Đô"), ph("Yên Hòa")}},
		{"Huyện", "Thanh Trì", []commune{xa("Tam Hiệp"), xa("Tả Thanh Oai"), tt("Văn Điển")}},
		{"Huyện", "Đông Anh", []commune{xa("Uy Nỗ"), xa("Cổ Loa"), tt("Đông Anh")}},
	}},
	{"079", "Thành phố", "Hồ Chí Minh", []district{
		{"Quận", "1", []commune{ph("Bến Nghé"), ph("Đa Kao"), ph("Cầu Ông Lãnh")}},
		{"Quận", "Bình Thạnh", []commune{ph("25"), ph("Bình Hòa"), ph("17")}},
		{"Quận", "Gò Vấp", []commune{ph("5"), ph("10"), ph("17")}},
		{"Huyện", "Củ Chi", []commune{xa("Tân Thông Hội"), xa("Phước Vĩnh An"), tt("Củ Chi")}},
	}},
	{"031", "Thành phố", "Hải Phòng", []district{
		{"Quận", "Lê Chân", []commune{ph("Dư Hàng"), ph("Trại Cau"), ph("An Biên")}},
		{"Huyện", "Thủy Nguyên", []commune{xa("Lập Lễ"), xa("Phục Lễ"), tt("Núi Đèo")}},
	}},
	{"048", "Thành phố", "Đà Nẵng", []district{
		{"Quận", "Hải Châu", []commune{ph("Thạch Thang"), ph("Hòa Cường Bắc"), ph("Phước Ninh")}},
		{"Quận", "Sơn Trà", []commune{ph("An Hải Bắc"), ph("Mân Thái"), ph("Thọ Quang")}},
	}},
	{"092", "Thành phố", "Cần Thơ", []district{
		{"Quận", "Ninh Kiều", []commune{ph("Tân An"), ph("Xuân Khánh"), ph("An Hòa")}},
		{"Huyện", "Phong Điền", []commune{xa("Nhơn Ái"), xa("Giai Xuân"), tt("Phong Điền")}},
	}},
	{"036", "Tỉnh", "Nam Định", []district{
		{"Huyện", "Hải Hậu", []commune{xa("Hải Đường"), xa("Hải Minh"), tt("Yên Định")}},
		{"Huyện", "Giao Thủy", []commune{xa("Giao Tiến"), xa("Hồng Thuận"), tt("Ngô Đồng")}},
		{"Thành phố", "Nam Định", []commune{ph("Trần Hưng Đạo"), ph("Vị Xuyên")}},
	}},
	{"034", "Tỉnh", "Thái Bình", []district{
		{"Huyện", "Kiến Xương", []commune{xa("Vũ Quý"), xa("Bình Nguyên"), tt("Thanh Nê")}},
		{"Huyện", "Quỳnh Phụ", []commune{xa("Quỳnh Hội"), xa("An Ấp")}},
	}},
	{"038", "Tỉnh", "Thanh Hóa", []district{
		{"Huyện", "Hoằng Hóa", []commune{xa("Hoằng Đức"), xa("Hoằng Phượng"), tt("Bút Sơn")}},
		{"Huyện", "Nông Cống", []commune{xa("Tế Lợi"), xa("Trung Chính")}},
		{"Thành phố", "Thanh Hóa", []commune{ph("Điện Biên"), ph("Ba Đình")}},
	}},
	{"040", "Tỉnh", "Nghệ An", []district{
		{"Huyện", "Nam Đàn", []commune{xa("Kim Liên"), xa("Nam Trung"), tt("Nam Đàn")}},
		{"Huyện", "Diễn Châu", []commune{xa("Diễn Kỷ"), xa("Diễn Thành")}},
		{"Thành phố", "Vinh", []commune{ph("Hưng Dũng"), ph("Quang Trung")}},
	}},
	{"042", "Tỉnh", "Hà Tĩnh", []district{
		{"Huyện", "Đức Thọ", []commune{xa("Tùng Ảnh"), xa("Đức Đồng")}},
		{"Huyện", "Can Lộc", []commune{xa("Thường Nga"), tt("Nghèn")}},
	}},
	{"046", "Tỉnh", "Thừa Thiên Huế", []district{
		{"Thành phố", "Huế", []commune{ph("Phú Hội"), ph("Vĩnh Ninh"), ph("Thuận Thành")}},
		{"Thị xã", "Hương Thủy", []commune{ph("Phú Bài"), xa("Thủy Phù")}},
	}},
	{"049", "Tỉnh", "Quảng Nam", []district{
		{"Thành phố", "Hội An", []commune{ph("Minh An"), ph("Cẩm Phô"), xa("Cẩm Thanh")}},
		{"Huyện", "Điện Bàn", []commune{xa("Điện Phước"), xa("Điện Hồng")}},
	}},
	{"051", "Tỉnh", "Quảng Ngãi", []district{
		{"Huyện", "Sơn Tịnh", []commune{xa("Tịnh Hà"), xa("Tịnh Bắc")}},
		{"Huyện", "Mộ Đức", []commune{xa("Đức Phổ"), tt("Mộ Đức")}},
	}},
	{"052", "Tỉnh", "Bình Định", []district{
		{"Thành phố", "Quy Nhơn", []commune{ph("Lê Lợi"), ph("Ghềnh Ráng")}},
		{"Huyện", "Tây Sơn", []commune{xa("Bình Thành"), tt("Phú Phong")}},
	}},
	{"056", "Tỉnh", "Khánh Hòa", []district{
		{"Thành phố", "Nha Trang", []commune{ph("Lộc Thọ"), ph("Vĩnh Hải"), ph("Phước Tiến")}},
		{"Huyện", "Diên Khánh", []commune{xa("Diên An"), tt("Diên Khánh")}},
	}},
	{"060", "Tỉnh", "Bình Thuận", []district{
		{"Huyện", "Hàm Tân", []commune{xa("Tân Thắng"), xa("Sơn Mỹ")}},
		{"Thành phố", "Phan Thiết", []commune{ph("Phú Thủy"), ph("Mũi Né")}},
	}},
	{"066", "Tỉnh", "Đắk Lắk", []district{
		{"Thành phố", "Buôn Ma Thuột", []commune{ph("Tân Lợi"), ph("Thắng Lợi"), xa("Ea Tu")}},
		{"Huyện", "Krông Pắc", []commune{xa("Ea Kly"), tt("Phước An")}},
	}},
	{"068", "Tỉnh", "Lâm Đồng", []district{
		{"Thành phố", "Đà Lạt", []commune{ph("1"), ph("Xuân Hương"), xa("Tà Nung")}},
		{"Huyện", "Đức Trọng", []commune{xa("Hiệp Thạnh"), tt("Liên Nghĩa")}},
	}},
	{"075", "Tỉnh", "Đồng Nai", []district{
		{"Thành phố", "Biên Hòa", []commune{ph("Tân Phong"), ph("Long Bình"), ph("Hố Nai")}},
		{"Huyện", "Long Thành", []commune{xa("An Phước"), tt("Long Thành")}},
	}},
	{"074", "Tỉnh", "Bình Dương", []district{
		{"Thành phố", "Thủ Dầu Một", []commune{ph("Phú Cường"), ph("Hiệp Thành")}},
		{"Thành phố", "Dĩ An", []commune{ph("Đông Hòa"), ph("Tân Bình")}},
	}},
	{"077", "Tỉnh", "Bà Rịa - Vũng Tàu", []district{
		{"Thành phố", "Vũng Tàu", []commune{ph("Thắng Tam"), ph("Rạch Dừa")}},
		{"Huyện", "Đất Đỏ", []commune{xa("Phước Hội"), tt("Đất Đỏ")}},
	}},
	{"083", "Tỉnh", "Bến Tre", []district{
		{"Huyện", "Mỏ Cày Nam", []commune{xa("Định Thủy"), tt("Mỏ Cày")}},
		{"Huyện", "Châu Thành", []commune{xa("Tân Thạch"), xa("Quới Sơn")}},
	}},
	{"089", "Tỉnh", "An Giang", []district{
		{"Thành phố", "Long Xuyên", []commune{ph("Mỹ Bình"), ph("Mỹ Long")}},
		{"Huyện", "Chợ Mới", []commune{xa("Kiến An"), tt("Mỹ Luông")}},
	}},
	{"096", "Tỉnh", "Cà Mau", []district{
		{"Huyện", "Năm Căn", []commune{xa("Hàm Rồng"), tt("Năm Căn")}},
		{"Huyện", "Đầm Dơi", []commune{xa("Tạ An Khương"), tt("Đầm Dơi")}},
	}},
	{"022", "Tỉnh", "Quảng Ninh", []district{
		{"Thành phố", "Hạ Long", []commune{ph("Hồng Gai"), ph("Bãi Cháy"), ph("Hà Tu")}},
		{"Thành phố", "Uông Bí", []commune{ph("Quang Trung"), ph("Vàng Danh")}},
	}},
	{"027", "Tỉnh", "Bắc Ninh", []district{
		{"Thành phố", "Bắc Ninh", []commune{ph("Suối Hoa"), ph("Kinh Bắc")}},
		{"Huyện", "Tiên Du", []commune{xa("Phật Tích"), tt("Lim")}},
	}},
	{"019", "Tỉnh", "Thái Nguyên", []district{
		{"Thành phố", "Thái Nguyên", []commune{ph("Hoàng Văn Thụ"), ph("Tân Thịnh")}},
		{"Huyện", "Đại Từ", []commune{xa("La Bằng"), tt("Hùng Sơn")}},
	}},
	{"010", "Tỉnh", "Lào Cai", []district{
		{"Thị xã", "Sa Pa", []commune{ph("Sa Pa"), xa("Tả Van")}},
		{"Huyện", "Bảo Thắng", []commune{xa("Xuân Quang"), tt("Phố Lu")}},
	}},
	{"025", "Tỉnh", "Phú Thọ", []district{
		{"Thành phố", "Việt Trì", []commune{ph("Gia Cẩm"), ph("Tiên Cát")}},
		{"Huyện", "Lâm Thao", []commune{xa("Cao Xá"), tt("Hùng Sơn")}},
	}},
	{"037", "Tỉnh", "Ninh Bình", []district{
		{"Huyện", "Hoa Lư", []commune{xa("Trường Yên"), xa("Ninh Hải")}},
		{"Huyện", "Kim Sơn", []commune{xa("Kim Chính"), tt("Phát Diệm")}},
	}},
}

var streets = []string{
	"Phố Huế", "Lê Lợi", "Trần Hưng Đạo", "Nguyễn Trãi", "Hai Bà Trưng", "Lý Thường Kiệt",
	"Phan Chu Trinh", "Quang Trung", "Hùng Vương", "Nguyễn Văn Cừ", "Điện Biên Phủ",
	"Lạc Long Quân", "Nguyễn Thị Minh Khai", "Cách Mạng Tháng Tám", "Võ Thị Sáu", "Bạch Đằng",
}

var hamlets = []string{"Đông", "Tây", "Trung", "Hạ", "Thượng", "Nam", "Bắc", "Phú Lộc", "An Lạc", "Tân Hưng"}

var marks = []string{
	"Sẹo chấm C %dcm dưới sau mép trái",
	"Sẹo chấm C %dcm trên trước cánh mũi phải",
	"Nốt ruồi C %dcm dưới sau đuôi mắt trái",
	"Nốt ruồi C %dcm trên đầu lông mày phải",
	"Sẹo chấm C %dcm trên trước đầu mày trái",
	"Nốt ruồi C %dcm dưới trước cánh mũi trái",
	"Sẹo C %dcm dưới sau dái tai phải",
}

var ethnicities = []string{"Tày", "Thái", "Mường", "Khơ Me", "Hoa", "Nùng", "H'Mông", "Dao", "Ê Đê"}

// vinLetters are the letters a vehicle identification number may hold (ISO 3779: not I, O
// or Q).
const vinLetters = "ABCDEFGHJKLMNPRSTUVWXYZ"

var religions = []string{"Phật giáo", "Công giáo", "Cao Đài", "Hòa Hảo", "Tin Lành"}

var vehicleModels = []struct {
	brand, model string
	cc           int
}{
	{"HONDA", "WAVE ALPHA", 110}, {"HONDA", "VISION", 110}, {"HONDA", "AIR BLADE", 125},
	{"HONDA", "LEAD", 125}, {"HONDA", "SH MODE", 125}, {"HONDA", "FUTURE", 125},
	{"YAMAHA", "SIRIUS", 110}, {"YAMAHA", "EXCITER", 150}, {"YAMAHA", "JANUS", 125},
	{"YAMAHA", "GRANDE", 125}, {"SUZUKI", "RAIDER", 150}, {"PIAGGIO", "LIBERTY", 125},
	{"SYM", "ATTILA", 125}, {"VINFAST", "FELIZ", 0},
}

var carModels = []struct {
	brand, model string
	cc           int
}{
	{"TOYOTA", "VIOS", 1496}, {"HYUNDAI", "ACCENT", 1368}, {"KIA", "MORNING", 1248},
	{"MAZDA", "CX-5", 1998}, {"VINFAST", "FADIL", 1399}, {"HONDA", "CITY", 1498},
	{"FORD", "RANGER", 1996}, {"MITSUBISHI", "XPANDER", 1499}, {"TOYOTA", "INNOVA", 1998},
}

var colours = []string{"Đỏ", "Đen", "Trắng", "Xanh", "Bạc", "Vàng", "Nâu", "Xám", "Đỏ - Đen", "Trắng - Xanh", "Đen - Xám"}

// plateSeries maps province codes to a motorcycle plate prefix (two-digit locality code).
var plateCodes = map[string][]string{
	"001": {"29", "30", "33", "40"}, "079": {"59", "50", "51"}, "031": {"15", "16"}, "048": {"43"},
	"092": {"65"}, "036": {"18"}, "034": {"17"}, "038": {"36"}, "040": {"37"}, "042": {"38"},
	"046": {"75"}, "049": {"92"}, "051": {"76"}, "052": {"77"}, "056": {"79"}, "060": {"86"},
	"066": {"47"}, "068": {"49"}, "075": {"60"}, "074": {"61"}, "077": {"72"}, "083": {"71"},
	"089": {"67"}, "096": {"69"}, "022": {"14"}, "027": {"99"}, "019": {"20"}, "010": {"24"},
	"025": {"19"}, "037": {"35"},
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// randPlace draws a place; with a street part when street is true.
func randPlace(r *rand.Rand, pr province, street bool) Place {
	d := pick(r, pr.districts)
	c := pick(r, d.communes)
	p := Place{
		CommuneKind: c.kind, Commune: c.name, DistrictKind: d.kind, District: d.name,
		ProvinceKind: pr.kind, Province: pr.name, ProvinceCode: pr.code,
	}
	if street {
		switch r.IntN(5) {
		case 0:
			p.Street = fmt.Sprintf("Số %d ngõ %d %s", 1+r.IntN(120), 1+r.IntN(200), pick(r, streets))
		case 1:
			p.Street = fmt.Sprintf("%d/%d %s", 1+r.IntN(400), 1+r.IntN(40), pick(r, streets))
		case 2:
			p.Street = fmt.Sprintf("Thôn %s", pick(r, hamlets))
		case 3:
			p.Street = fmt.Sprintf("Tổ %d", 1+r.IntN(30))
		default:
			p.Street = fmt.Sprintf("Số %d %s", 1+r.IntN(300), pick(r, streets))
		}
	}
	return p
}

// NewPerson draws a fictional person from r. ref is the reference date ("today" of the
// corpus): the person is 18 to 80 years old on it and every document is issued on or before
// it. Issue dates follow each card's years of issue (9-digit card until mid-2021, 12-digit
// card 2016–2021, chip card from 2021, identity card from July 2024), so a reference date
// after July 2024 gives realistic documents of every type; before it, a card issued after
// the reference date is issued on the reference date instead. The same r state gives the
// same person.
func NewPerson(r *rand.Rand, ref time.Time) Person {
	ref = time.Date(ref.Year(), ref.Month(), ref.Day(), 0, 0, 0, 0, time.UTC)
	var p Person
	p.Ref = ref
	if r.IntN(2) == 0 {
		p.Sex = Male
	} else {
		p.Sex = Female
	}
	p.FamilyName = pick(r, familyNames)
	if p.Sex == Male {
		p.MiddleName = pick(r, middleMale)
		p.GivenName = pick(r, givenMale)
	} else {
		p.MiddleName = pick(r, middleFemale)
		if r.IntN(4) == 0 {
			p.MiddleName = "THỊ " + pick(r, middleFemale[1:])
		}
		p.GivenName = pick(r, givenFemale)
	}
	// Ages: weighted towards working age, but the whole 18–80 range occurs.
	age := 18 + r.IntN(45)
	if r.IntN(4) == 0 {
		age = 18 + r.IntN(63)
	}
	p.BirthDate = ref.AddDate(-age-1, 0, 1+r.IntN(364))
	if p.BirthDate.AddDate(18, 0, 0).After(ref) {
		p.BirthDate = ref.AddDate(-18, 0, -1-r.IntN(200))
	}
	home := pick(r, provinces)
	p.BirthPlace = randPlace(r, home, false)
	if r.IntN(3) == 0 {
		p.Origin = randPlace(r, pick(r, provinces), false)
	} else {
		p.Origin = randPlace(r, home, false)
	}
	live := home
	if r.IntN(3) == 0 {
		live = pick(r, provinces[:5])
	}
	p.Residence = randPlace(r, live, true)
	p.IDNumber = idNumber(r, home.code, p.Sex, p.BirthDate.Year())
	p.LegacyID = fmt.Sprintf("%d%08d", 1+r.IntN(3), r.IntN(100000000))
	p.Passport = fmt.Sprintf("%c%07d", pick(r, []rune("CCCCBNP")), r.IntN(10000000))
	p.Ethnicity, p.Religion = "Kinh", "Không"
	if r.IntN(8) == 0 {
		p.Ethnicity = pick(r, ethnicities)
	}
	if r.IntN(5) == 0 {
		p.Religion = pick(r, religions)
	}
	p.Marks = fmt.Sprintf(pick(r, marks), 1+r.IntN(3))
	p.Vehicle = newVehicle(r, p, live)
	return p
}

// idNumber builds the 12-digit personal identification number: province code, century/sex
// digit (0/1 for men/women born 1900–1999, 2/3 for 2000–2099), two digits of the birth year,
// six random digits.
func idNumber(r *rand.Rand, provinceCode, sex string, year int) string {
	d := (year/100 - 19) * 2
	if sex == Female {
		d++
	}
	return fmt.Sprintf("%s%d%02d%06d", provinceCode, d, year%100, r.IntN(1000000))
}

func newVehicle(r *rand.Rand, p Person, live province) Vehicle {
	car := r.IntN(2) == 0
	m := pick(r, vehicleModels)
	if car {
		m = pick(r, carModels)
	}
	v := Vehicle{Car: car, Owner: p.FullName(), Address: p.Residence, Brand: m.brand, Model: m.model, Capacity: m.cc, Color: pick(r, colours)}
	prefix := []string{"JA39E", "JF63E", "E3X8E", "G3D4E", "1DY1", "JK12E"}[r.IntN(6)]
	v.EngineNumber = fmt.Sprintf("%s%07d", prefix, r.IntN(10000000))
	// A chassis number is a VIN (ISO 3779): no I, O or Q.
	v.ChassisNumber = fmt.Sprintf("RL%s%c%dY%06d", pick(r, []string{"HJA39", "HJF63", "CHG11", "UE012"}), vinLetters[r.IntN(len(vinLetters))], r.IntN(10), r.IntN(1000000))
	codes := plateCodes[live.code]
	if len(codes) == 0 {
		codes = []string{"29"}
	}
	if car {
		v.Plate = fmt.Sprintf("%s%c-%03d.%02d", pick(r, codes), pick(r, []rune("AAABCDEFGHK")), r.IntN(1000), r.IntN(100))
	} else {
		series := string(rune('A'+r.IntN(8))) + fmt.Sprint(1+r.IntN(9))
		v.Plate = fmt.Sprintf("%s-%s %03d.%02d", pick(r, codes), series, r.IntN(1000), r.IntN(100))
	}
	earliest := p.BirthDate.AddDate(18, 0, 0)
	if y := p.Ref.AddDate(-15, 0, 0); earliest.Before(y) {
		earliest = y
	}
	v.RegistrationDate = randDate(r, earliest, p.Ref)
	v.Number = fmt.Sprintf("%06d", r.IntN(1000000))
	return v
}

// randDate returns a day in [from, to] (from if to is before it).
func randDate(r *rand.Rand, from, to time.Time) time.Time {
	days := int(to.Sub(from).Hours() / 24)
	if days <= 0 {
		return from
	}
	return from.AddDate(0, 0, r.IntN(days+1))
}

// chipExpiry returns the expiry of a 12-digit citizen identity card (2016, 2021 chip and 2024
// cards) issued on issue: the card must be renewed at 25, 40 and 60; a card issued within two
// years before one of these birthdays is valid to the next one; a card issued from 58 on has no
// expiry (ok false, printed "Không thời hạn").
func chipExpiry(birth, issue time.Time) (time.Time, bool) {
	for _, age := range []int{25, 40, 60} {
		b := birth.AddDate(age, 0, 0)
		if issue.Before(b.AddDate(-2, 0, 0)) {
			return b, true
		}
	}
	return time.Time{}, false
}
