// Package idnumber reads the structure of the Vietnamese 12-digit personal identification
// number (số định danh cá nhân, printed on the chip citizen identity card) and computes the
// keyed hash under which id numbers are kept at rest (blocklist, ClickHouse).
//
// A 12-digit number is PPP C YY NNNNNN: PPP the code of the province or city where the birth
// was registered (one of the 63 codes of Circular 07/2016/TT-BCA, 001–096 with gaps), C the
// century and sex digit (0/1 a man/woman born 1900–1999, 2/3 born 2000–2099, 4/5 2100–2199,
// 6/7 2200–2299, 8/9 2300–2399), YY the last two digits of the birth year and NNNNNN a
// random sequence. Numbers issued before the 2025 merger of provinces keep their codes, and
// so does this list.
//
// Nothing here logs or returns an id number in an error.
package idnumber

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Length is the number of digits of a personal identification number.
const Length = 12

// Sex values of Info.Sex and of the sex given to Consistent.
const (
	SexMale   = "M"
	SexFemale = "F"
)

// ErrInvalid is wrapped by every error of Parse. The message names what is wrong (length,
// province code, century digit), never the number.
var ErrInvalid = errors.New("invalid id number")

// Info is what the structure of a 12-digit id number says about its holder.
type Info struct {
	ProvinceCode string // "001"
	Province     string // "Hà Nội"
	Century      int    // first year of the birth century: 1900, 2000, ...
	Sex          string // SexMale or SexFemale
	BirthYear    int    // Century + the two birth-year digits
}

// Mismatch names a part of an id number's structure that disagrees with the holder's data.
type Mismatch string

// Mismatches reported by Consistent.
const (
	MismatchCentury   Mismatch = "century"    // the century digit's century is not the birth century
	MismatchBirthYear Mismatch = "birth_year" // the two birth-year digits differ
	MismatchSex       Mismatch = "sex"        // the century digit's sex differs
)

// Normalize returns id upper-cased without white space, dashes and dots: the form every id
// number is compared and hashed in.
func Normalize(id string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(strings.TrimSpace(id)) {
		switch r {
		case ' ', '\t', '-', '.':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Hash is the keyed hash id numbers are kept under: lowercase hex of
// HMAC-SHA256(key, Normalize(id)). It accepts any id (9-digit, passport numbers) and never
// fails; the same key must be used by every writer and reader.
func Hash(key []byte, id string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(Normalize(id)))
	return hex.EncodeToString(m.Sum(nil))
}

// Parse reads the structure of a 12-digit id number (normalised first). It returns an error
// wrapping ErrInvalid when the number is not 12 digits or its province code is not assigned.
// Every century digit 0–9 is valid.
func Parse(id string) (Info, error) {
	n := Normalize(id)
	if len(n) != Length {
		return Info{}, fmt.Errorf("%w: not %d digits", ErrInvalid, Length)
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return Info{}, fmt.Errorf("%w: not %d digits", ErrInvalid, Length)
		}
	}
	name, ok := provinces[n[:3]]
	if !ok {
		return Info{}, fmt.Errorf("%w: unassigned province code", ErrInvalid)
	}
	c := int(n[3] - '0')
	info := Info{ProvinceCode: n[:3], Province: name, Century: 1900 + 100*(c/2), Sex: SexMale}
	if c%2 == 1 {
		info.Sex = SexFemale
	}
	info.BirthYear = info.Century + int(n[4]-'0')*10 + int(n[5]-'0')
	return info, nil
}

// Consistent compares info with a date of birth and a sex (SexMale, SexFemale; anything else,
// such as "" or "X", is not compared) and returns the mismatches, in the order century,
// birth_year, sex; nil when they agree. A zero dob is not compared.
func Consistent(info Info, dob time.Time, sex string) []Mismatch {
	var out []Mismatch
	if !dob.IsZero() {
		y := dob.Year()
		if y-y%100 != info.Century {
			out = append(out, MismatchCentury)
		}
		if y%100 != info.BirthYear%100 {
			out = append(out, MismatchBirthYear)
		}
	}
	if (sex == SexMale || sex == SexFemale) && sex != info.Sex {
		out = append(out, MismatchSex)
	}
	return out
}

// ProvinceName returns the name of an assigned 3-digit province code.
func ProvinceName(code string) (string, bool) {
	name, ok := provinces[code]
	return name, ok
}

// ProvinceCodes returns the 63 assigned codes in increasing order.
func ProvinceCodes() []string {
	out := make([]string, 0, len(provinces))
	for i := 1; i <= 99; i++ {
		code := fmt.Sprintf("%03d", i)
		if _, ok := provinces[code]; ok {
			out = append(out, code)
		}
	}
	return out
}

// provinces maps the codes of Circular 07/2016/TT-BCA (annex, kept by Circular 59/2021) to
// the 63 provinces and centrally governed cities. It is read-only.
var provinces = map[string]string{
	"001": "Hà Nội", "002": "Hà Giang", "004": "Cao Bằng", "006": "Bắc Kạn", "008": "Tuyên Quang",
	"010": "Lào Cai", "011": "Điện Biên", "012": "Lai Châu", "014": "Sơn La", "015": "Yên Bái",
	"017": "Hòa Bình", "019": "Thái Nguyên", "020": "Lạng Sơn", "022": "Quảng Ninh", "024": "Bắc Giang",
	"025": "Phú Thọ", "026": "Vĩnh Phúc", "027": "Bắc Ninh", "030": "Hải Dương", "031": "Hải Phòng",
	"033": "Hưng Yên", "034": "Thái Bình", "035": "Hà Nam", "036": "Nam Định", "037": "Ninh Bình",
	"038": "Thanh Hóa", "040": "Nghệ An", "042": "Hà Tĩnh", "044": "Quảng Bình", "045": "Quảng Trị",
	"046": "Thừa Thiên Huế", "048": "Đà Nẵng", "049": "Quảng Nam", "051": "Quảng Ngãi", "052": "Bình Định",
	"054": "Phú Yên", "056": "Khánh Hòa", "058": "Ninh Thuận", "060": "Bình Thuận", "062": "Kon Tum",
	"064": "Gia Lai", "066": "Đắk Lắk", "067": "Đắk Nông", "068": "Lâm Đồng", "070": "Bình Phước",
	"072": "Tây Ninh", "074": "Bình Dương", "075": "Đồng Nai", "077": "Bà Rịa – Vũng Tàu", "079": "Hồ Chí Minh",
	"080": "Long An", "082": "Tiền Giang", "083": "Bến Tre", "084": "Trà Vinh", "086": "Vĩnh Long",
	"087": "Đồng Tháp", "089": "An Giang", "091": "Kiên Giang", "092": "Cần Thơ", "093": "Hậu Giang",
	"094": "Sóc Trăng", "095": "Bạc Liêu", "096": "Cà Mau",
}
