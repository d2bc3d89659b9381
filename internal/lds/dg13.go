package lds

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/idstream/idstream/internal/tlv"
)

// DG13 entry ids of the Vietnamese chip ID card (PLATFORM.md: two independent readers agree
// on 1–13; higher ids differ between sources and land in VNIdentity.Other).
const (
	VNIDNumber         = 1
	VNFullName         = 2
	VNDateOfBirth      = 3
	VNSex              = 4
	VNNationality      = 5
	VNEthnicity        = 6
	VNReligion         = 7
	VNPlaceOfOrigin    = 8
	VNPlaceOfResidence = 9
	VNIdentifyingMarks = 10
	VNIssueDate        = 11
	VNExpiryDate       = 12
	VNParents          = 13
)

// Universal tags read in DG13.
const (
	tagInteger     = 0x02
	tagOctetString = 0x04
	tagUTF8String  = 0x0C
	tagPrintable   = 0x13
	tagT61String   = 0x14
	tagIA5String   = 0x16
	tagBMPString   = 0x1E
	tagSequence    = 0x30
	tagSet         = 0x31
)

// Bounds on the DG13 walk; a real DG13 is two levels deep with about fifteen entries.
const (
	dg13MaxDepth   = 8
	dg13MaxStrings = 16 // string leaves read from one entry
)

// VNIdentity holds the fields of a Vietnamese chip ID card's DG13. Dates are YYYY-MM-DD when
// the chip's dd/mm/yyyy parses, otherwise the chip's text as it is (for instance an expiry
// written out as "Không thời hạn"); Sex is M or F when the chip says Nam or Nữ, otherwise its
// text. Other strings are the chip's UTF-8 text, trimmed.
type VNIdentity struct {
	IDNumber         string
	FullName         string
	DateOfBirth      string
	Sex              string
	Nationality      string
	Ethnicity        string
	Religion         string
	PlaceOfOrigin    string
	PlaceOfResidence string
	IdentifyingMarks string
	IssueDate        string
	ExpiryDate       string
	FatherName       string
	MotherName       string
	// Other holds entries whose id is not 1–13, their string values joined by "; ".
	Other map[int]string
	// Skipped counts the entries that could not be read and were left out.
	Skipped int
}

// Field is one named value of a data group.
type Field struct {
	Name  string
	Value string
}

// Fields returns the non-empty fields under their canonical names, in this order: id_number,
// full_name, date_of_birth, sex, nationality, ethnicity, religion, place_of_origin,
// place_of_residence, identifying_marks, issue_date, expiry_date, father_name, mother_name.
// Entries in Other are not included.
func (v VNIdentity) Fields() []Field {
	var out []Field
	for _, f := range []Field{
		{"id_number", v.IDNumber}, {"full_name", v.FullName}, {"date_of_birth", v.DateOfBirth},
		{"sex", v.Sex}, {"nationality", v.Nationality}, {"ethnicity", v.Ethnicity},
		{"religion", v.Religion}, {"place_of_origin", v.PlaceOfOrigin},
		{"place_of_residence", v.PlaceOfResidence}, {"identifying_marks", v.IdentifyingMarks},
		{"issue_date", v.IssueDate}, {"expiry_date", v.ExpiryDate},
		{"father_name", v.FatherName}, {"mother_name", v.MotherName},
	} {
		if f.Value != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseDG13 reads the DG13 of a Vietnamese chip ID card: tag 0x6D wrapping SEQUENCEs
// {INTEGER id, value}, possibly inside further SEQUENCEs or SETs. A value is the text of the
// string elements under it (UTF8String, PrintableString, IA5String, T61String, BMPString, or
// an OCTET STRING holding UTF-8), at any depth; the parents entry (13) gives the father's name
// from its first string and the mother's from its second. It is tolerant: an entry that
// cannot be read (a broken nested encoding, no text, invalid UTF-8, an id that is not a small
// non-negative INTEGER) is counted in Skipped and left out; the first entry of an id wins. It
// fails, with ErrMalformed, only when b is not a 0x6D element with a readable first level.
func ParseDG13(b []byte) (*VNIdentity, error) {
	dg, err := openFile(b, TagDG13, "DG13")
	if err != nil {
		return nil, err
	}
	cs, err := children(dg, "DG13")
	if err != nil {
		return nil, err
	}
	v := &VNIdentity{}
	seen := map[int]bool{}
	for _, c := range cs {
		v.walk(c, 1, seen)
	}
	return v, nil
}

// walk reads the entries in t: t itself when it is a SEQUENCE starting with an INTEGER,
// otherwise the entries inside t when it is a constructed element.
func (v *VNIdentity) walk(t tlv.TLV, depth int, seen map[int]bool) {
	if !t.Constructed {
		return // a version number or other primitive beside the entries
	}
	if depth > dg13MaxDepth {
		v.Skipped++
		return
	}
	cs, err := t.Children()
	if err != nil {
		v.Skipped++
		return
	}
	if t.Tag != tagSequence || len(cs) == 0 || cs[0].Tag != tagInteger {
		for _, c := range cs {
			v.walk(c, depth+1, seen)
		}
		return
	}
	id, ok := smallInt(cs[0].Value)
	if !ok {
		v.Skipped++
		return
	}
	var texts []string
	for _, c := range cs[1:] {
		if texts, ok = appendTexts(texts, c, depth+1); !ok {
			break
		}
	}
	if !ok || len(texts) == 0 {
		v.Skipped++
		return
	}
	if seen[id] {
		return
	}
	seen[id] = true
	v.set(id, texts)
}

// appendTexts appends the text of every string element in t, depth first. It reports false
// when t holds something unreadable.
func appendTexts(texts []string, t tlv.TLV, depth int) ([]string, bool) {
	if depth > dg13MaxDepth || len(texts) >= dg13MaxStrings {
		return texts, false
	}
	if isStringTag(t.Tag &^ 0x20) {
		text, ok := stringValue(t, depth)
		if !ok {
			return texts, false
		}
		return append(texts, strings.TrimSpace(text)), true
	}
	if !t.Constructed {
		return texts, true // an INTEGER or other primitive beside the text: ignored
	}
	cs, err := t.Children()
	if err != nil {
		return texts, false
	}
	for _, c := range cs {
		var ok bool
		if texts, ok = appendTexts(texts, c, depth+1); !ok {
			return texts, false
		}
	}
	return texts, true
}

// isStringTag reports whether tag (in primitive form) is a string type DG13 values use.
func isStringTag(tag uint32) bool {
	switch tag {
	case tagUTF8String, tagPrintable, tagIA5String, tagT61String, tagOctetString, tagBMPString:
		return true
	}
	return false
}

// stringValue returns the text of a string element; BER's constructed form (tag | 0x20) is
// the concatenation of its segments.
func stringValue(t tlv.TLV, depth int) (string, bool) {
	b, ok := stringBytes(t, t.Tag&^0x20, depth)
	if !ok {
		return "", false
	}
	if t.Tag&^0x20 == tagBMPString {
		if len(b)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		}
		return string(utf16.Decode(u)), true
	}
	if !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// stringBytes returns the contents of a string element of type tag, joining the segments of
// a constructed encoding.
func stringBytes(t tlv.TLV, tag uint32, depth int) ([]byte, bool) {
	if t.Tag&^0x20 != tag || depth > dg13MaxDepth {
		return nil, false
	}
	if !t.Constructed {
		return t.Value, true
	}
	cs, err := t.Children()
	if err != nil {
		return nil, false
	}
	var out []byte
	for _, c := range cs {
		seg, ok := stringBytes(c, tag, depth+1)
		if !ok {
			return nil, false
		}
		out = append(out, seg...)
	}
	return out, true
}

// smallInt decodes a non-negative INTEGER of at most three content bytes.
func smallInt(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 3 || b[0]&0x80 != 0 {
		return 0, false
	}
	n := 0
	for _, x := range b {
		n = n<<8 | int(x)
	}
	return n, true
}

// set stores the texts of entry id.
func (v *VNIdentity) set(id int, texts []string) {
	joined := strings.Join(nonEmpty(texts), "; ")
	switch id {
	case VNIDNumber:
		v.IDNumber = joined
	case VNFullName:
		v.FullName = joined
	case VNDateOfBirth:
		v.DateOfBirth = vnDate(joined)
	case VNSex:
		v.Sex = vnSex(joined)
	case VNNationality:
		v.Nationality = joined
	case VNEthnicity:
		v.Ethnicity = joined
	case VNReligion:
		v.Religion = joined
	case VNPlaceOfOrigin:
		v.PlaceOfOrigin = joined
	case VNPlaceOfResidence:
		v.PlaceOfResidence = joined
	case VNIdentifyingMarks:
		v.IdentifyingMarks = joined
	case VNIssueDate:
		v.IssueDate = vnDate(joined)
	case VNExpiryDate:
		v.ExpiryDate = vnDate(joined)
	case VNParents:
		if len(texts) > 0 {
			v.FatherName = texts[0]
		}
		if len(texts) > 1 {
			v.MotherName = texts[1]
		}
	default:
		if v.Other == nil {
			v.Other = map[int]string{}
		}
		v.Other[id] = joined
	}
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// vnDate turns dd/mm/yyyy (also with '-' or '.') into YYYY-MM-DD; other text is kept.
func vnDate(s string) string {
	for _, layout := range []string{"02/01/2006", "2/1/2006", "02-01-2006", "02.01.2006", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format(time.DateOnly)
		}
	}
	return s
}

// vnSex maps Nam/Nữ (composed or decomposed, any case) and Male/Female to M/F; other text is
// kept.
func vnSex(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.Is(unicode.Mn, r): // combining marks of a decomposed Nữ
		case r == 'ư' || r == 'ữ':
			b.WriteRune('u')
		default:
			b.WriteRune(r)
		}
	}
	switch b.String() {
	case "nam", "male", "m":
		return "M"
	case "nu", "female", "f":
		return "F"
	}
	return s
}
