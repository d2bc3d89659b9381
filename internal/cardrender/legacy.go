package cardrender

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// LegacyPerson holds the values printed on the 9-digit identity card ("GIẤY CHỨNG MINH NHÂN
// DÂN", CMND). The card has no sex, nationality or expiry date printed; it is valid for 15
// years from IssueDate.
type LegacyPerson struct {
	IDNumber         string // 9 digits
	FullName         string // upper case, Vietnamese diacritics
	DateOfBirth      time.Time
	PlaceOfOrigin    string // "Nguyên quán"
	PlaceOfResidence string // "Nơi ĐKHK thường trú"
	Ethnicity        string // "Dân tộc", e.g. "Kinh"
	Religion         string // "Tôn giáo", e.g. "Không"
	Marks            string // "Dấu vết riêng và dị hình"
	IssueDate        time.Time
	IssuingAuthority string // upper case, e.g. "CÔNG AN TP. HÀ NỘI"
}

// Legacy card values. The 9-digit number starts with a two-digit code standing for the
// issuing province (codes invented for the synthetic provinces).
var (
	ethnicities = []string{"Kinh", "Tày", "Thái", "Mường", "Khmer", "Hoa", "Nùng", "Dao"}
	religions   = []string{"Không", "Phật giáo", "Công giáo", "Tin lành", "Cao đài"}
	legacyCodes = map[string]string{
		"001": "01", "079": "02", "031": "03", "048": "20", "092": "36", "038": "17",
		"040": "18", "046": "19", "036": "16", "034": "15", "056": "22", "066": "24",
	}
)

// authority returns the issuing authority of a province as printed on the 9-digit card:
// "CÔNG AN TP. <CITY>" for the centrally governed cities, "CÔNG AN TỈNH <PROVINCE>" else.
func (p province) authority() string {
	name := strings.ToUpper(p.name)
	switch p.code {
	case "001", "031", "048", "092":
		return "CÔNG AN TP. " + name
	case "079":
		return "CÔNG AN " + name // already "TP. HỒ CHÍ MINH"
	}
	return "CÔNG AN TỈNH " + name
}

// SyntheticLegacyPerson returns a random 9-digit card holder for seed: the name, date of birth
// and places of SyntheticPerson(seed), a 9-digit number whose first two digits stand for the
// issuing province, and a card issued between 2005 and 2015 by the police of that province,
// at age 14 or later.
func SyntheticLegacyPerson(seed uint64) LegacyPerson {
	p := SyntheticPerson(seed)
	rng := rand.New(rand.NewPCG(seed, 0x9d191c3))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	issuer := provinces[rng.IntN(len(provinces))]
	issue := time.Date(2005+rng.IntN(11), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
	if min14 := p.DateOfBirth.AddDate(14, 0, 0); issue.Before(min14) {
		issue = min14.AddDate(0, 1+rng.IntN(6), 0)
	}
	return LegacyPerson{
		IDNumber:         fmt.Sprintf("%s%07d", legacyCodes[issuer.code], rng.IntN(10_000_000)),
		FullName:         p.FullName,
		DateOfBirth:      p.DateOfBirth,
		PlaceOfOrigin:    p.PlaceOfOrigin,
		PlaceOfResidence: p.PlaceOfResidence,
		Ethnicity:        pick(ethnicities),
		Religion:         pick(religions),
		Marks:            p.Marks,
		IssueDate:        issue,
		IssuingAuthority: issuer.authority(),
	}
}

// SyntheticIDCardPerson returns SyntheticPerson(seed) as the holder of a 12-digit card without
// chip (the 2016–2020 "CĂN CƯỚC CÔNG DÂN"): issued between 2016 and 2020, expiring at age
// 25, 40 or 60 as the card rules say (or 2060 past that). The other values are those of
// SyntheticPerson(seed).
func SyntheticIDCardPerson(seed uint64) Person {
	p := SyntheticPerson(seed)
	rng := rand.New(rand.NewPCG(seed, 0x12cccd))
	p.IssueDate = time.Date(2016+rng.IntN(5), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
	p.ExpiryDate = expiryFor(p.DateOfBirth, p.IssueDate)
	return p
}

// expiryFor returns the expiry of a 12-digit card issued at issue to someone born at birth:
// the first of the 25th, 40th and 60th birthdays more than two years after issue, else 2060.
func expiryFor(birth, issue time.Time) time.Time {
	for _, age := range []int{25, 40, 60} {
		if at := birth.AddDate(age, 0, 0); at.After(issue.AddDate(2, 0, 0)) {
			return at
		}
	}
	return time.Date(2060, birth.Month(), birth.Day(), 0, 0, 0, 0, time.UTC)
}

// vnDateDash formats a date as the 9-digit card prints it, with dashes.
func vnDateDash(t time.Time) string { return t.Format("02-01-2006") }
