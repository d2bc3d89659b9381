// Package mrz parses the machine readable zone of ICAO Doc 9303 travel documents: TD1 cards
// (3 lines of 30), TD2 documents (2 lines of 36), TD3 passports (2 lines of 44) and the
// MRV-A/MRV-B visas of the same sizes. It verifies every check digit the format defines and
// maps the zone to the canonical field names the rest of idstream uses. It reads text that is
// already the MRZ (from a chip's DG1 or from OCR); it never guesses at OCR confusions such as
// O/0 — Normalize only trims, removes blanks and upper-cases. The package has no state and is
// safe for concurrent use.
package mrz

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Formats reported in MRZ.Format.
const (
	FormatTD1  = "TD1"  // 3 × 30, identity cards
	FormatTD2  = "TD2"  // 2 × 36, identity documents
	FormatTD3  = "TD3"  // 2 × 44, passports
	FormatMRVA = "MRVA" // 2 × 44 whose document code starts with V
	FormatMRVB = "MRVB" // 2 × 36 whose document code starts with V
)

// Names of the check digits reported in MRZ.Checks. A format has only the checks it defines:
// visas have no composite, only TD3 checks its optional data (the personal number).
const (
	CheckDocumentNumber = "document_number"
	CheckDateOfBirth    = "date_of_birth"
	CheckExpiryDate     = "expiry_date"
	CheckOptionalData   = "optional_data"
	CheckComposite      = "composite"
)

// Errors of Parse and CheckDigit, wrapped with context; test with errors.Is.
var (
	ErrFormat    = errors.New("mrz: not a TD1, TD2 or TD3 machine readable zone")
	ErrCharacter = errors.New("mrz: character outside the MRZ alphabet")
	ErrTooLong   = errors.New("mrz: input too long")
)

// maxInput bounds the bytes Parse and Normalize look at, so untrusted input costs little.
const maxInput = 1024

// MRZ is a parsed machine readable zone. Text fields hold the zone's characters with the
// filler '<' trimmed from both ends (inside a name, '<' becomes a space); dates are the raw
// YYMMDD of the zone. Checks has one entry per check digit of the format (see the Check*
// names); Valid is true when every one holds.
type MRZ struct {
	Format         string
	Lines          []string
	DocumentCode   string
	IssuingState   string
	DocumentNumber string
	OptionalData1  string // TD1 line 1, TD2 line 2, TD3 personal number, visa optional data
	OptionalData2  string // TD1 line 2 only
	DateOfBirth    string // YYMMDD as in the zone
	Sex            string // M, F, X or < as in the zone
	ExpiryDate     string // YYMMDD as in the zone
	Nationality    string
	Surname        string
	GivenNames     string
	Checks         map[string]bool
	Valid          bool
}

// Normalize returns the lines of an MRZ as Parse reads them: input elements are split at line
// breaks, blanks anywhere in a line are removed, letters are upper-cased and empty lines are
// dropped. It corrects nothing else. Input beyond 1 KiB in total is cut off.
func Normalize(lines []string) []string {
	var out []string
	total := 0
	for _, in := range lines {
		if total >= maxInput {
			break
		}
		if len(in) > maxInput-total {
			in = in[:maxInput-total]
		}
		total += len(in)
		for _, l := range strings.FieldsFunc(in, func(r rune) bool { return r == '\n' || r == '\r' }) {
			l = strings.ToUpper(strings.Join(strings.Fields(l), ""))
			if l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// Parse normalises lines (see Normalize), recognises the format from the number and length
// of the lines, splits the fields and verifies every check digit. A zone of the right shape
// whose check digits fail is returned with Valid false and no error; an error (ErrFormat,
// ErrCharacter, ErrTooLong) means the input is not an MRZ at all.
func Parse(lines []string) (*MRZ, error) {
	total := 0
	for _, l := range lines {
		total += len(l)
	}
	if total > maxInput {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLong, total, maxInput)
	}
	ls := Normalize(lines)
	for i, l := range ls {
		for j := 0; j < len(l); j++ {
			if charValue(l[j]) < 0 {
				return nil, fmt.Errorf("%w: %q at line %d, position %d", ErrCharacter, l[j], i+1, j+1)
			}
		}
	}
	shape := make([]string, len(ls))
	for i, l := range ls {
		shape[i] = fmt.Sprint(len(l))
	}
	var m *MRZ
	switch {
	case len(ls) == 3 && len(ls[0]) == 30 && len(ls[1]) == 30 && len(ls[2]) == 30:
		m = parseTD1(ls)
	case len(ls) == 2 && len(ls[0]) == 36 && len(ls[1]) == 36:
		m = parseTD2(ls)
	case len(ls) == 2 && len(ls[0]) == 44 && len(ls[1]) == 44:
		m = parseTD3(ls)
	default:
		return nil, fmt.Errorf("%w: %d lines of lengths [%s]", ErrFormat, len(ls), strings.Join(shape, " "))
	}
	m.Valid = true
	for _, ok := range m.Checks {
		m.Valid = m.Valid && ok
	}
	return m, nil
}

// parseTD1 splits a TD1 zone (Doc 9303 Part 5).
func parseTD1(ls []string) *MRZ {
	l1, l2, l3 := ls[0], ls[1], ls[2]
	m := &MRZ{Format: FormatTD1, Lines: ls, Checks: map[string]bool{}}
	m.DocumentCode = trim(l1[0:2])
	m.IssuingState = trim(l1[2:5])
	m.DocumentNumber, m.OptionalData1, m.Checks[CheckDocumentNumber] = longDocumentNumber(l1[5:14], l1[14], l1[15:30])
	m.DateOfBirth = l2[0:6]
	m.Checks[CheckDateOfBirth] = checks(l2[0:6], l2[6])
	m.Sex = l2[7:8]
	m.ExpiryDate = l2[8:14]
	m.Checks[CheckExpiryDate] = checks(l2[8:14], l2[14])
	m.Nationality = trim(l2[15:18])
	m.OptionalData2 = trim(l2[18:29])
	m.Checks[CheckComposite] = checks(l1[5:30]+l2[0:7]+l2[8:15]+l2[18:29], l2[29])
	m.Surname, m.GivenNames = names(l3)
	return m
}

// parseTD2 splits a TD2 zone (Part 6) or an MRV-B visa (Part 7).
func parseTD2(ls []string) *MRZ {
	l1, l2 := ls[0], ls[1]
	m := &MRZ{Format: FormatTD2, Lines: ls, Checks: map[string]bool{}}
	m.DocumentCode = trim(l1[0:2])
	m.IssuingState = trim(l1[2:5])
	m.Surname, m.GivenNames = names(l1[5:36])
	m.Nationality = trim(l2[10:13])
	m.DateOfBirth = l2[13:19]
	m.Checks[CheckDateOfBirth] = checks(l2[13:19], l2[19])
	m.Sex = l2[20:21]
	m.ExpiryDate = l2[21:27]
	m.Checks[CheckExpiryDate] = checks(l2[21:27], l2[27])
	if l1[0] == 'V' {
		m.Format = FormatMRVB
		m.DocumentNumber = trim(l2[0:9])
		m.Checks[CheckDocumentNumber] = checks(l2[0:9], l2[9])
		m.OptionalData1 = trim(l2[28:36])
		return m
	}
	m.DocumentNumber, m.OptionalData1, m.Checks[CheckDocumentNumber] = longDocumentNumber(l2[0:9], l2[9], l2[28:35])
	m.Checks[CheckComposite] = checks(l2[0:10]+l2[13:20]+l2[21:35], l2[35])
	return m
}

// parseTD3 splits a TD3 zone (Part 4) or an MRV-A visa (Part 7).
func parseTD3(ls []string) *MRZ {
	l1, l2 := ls[0], ls[1]
	m := &MRZ{Format: FormatTD3, Lines: ls, Checks: map[string]bool{}}
	m.DocumentCode = trim(l1[0:2])
	m.IssuingState = trim(l1[2:5])
	m.Surname, m.GivenNames = names(l1[5:44])
	m.DocumentNumber = trim(l2[0:9])
	m.Checks[CheckDocumentNumber] = checks(l2[0:9], l2[9])
	m.Nationality = trim(l2[10:13])
	m.DateOfBirth = l2[13:19]
	m.Checks[CheckDateOfBirth] = checks(l2[13:19], l2[19])
	m.Sex = l2[20:21]
	m.ExpiryDate = l2[21:27]
	m.Checks[CheckExpiryDate] = checks(l2[21:27], l2[27])
	if l1[0] == 'V' {
		m.Format = FormatMRVA
		m.OptionalData1 = trim(l2[28:44])
		return m
	}
	m.OptionalData1 = trim(l2[28:42])
	// An empty personal number may carry '<' or '0' as its check digit (Part 4, 4.2.2).
	m.Checks[CheckOptionalData] = checks(l2[28:42], l2[42]) || (m.OptionalData1 == "" && l2[42] == '<')
	m.Checks[CheckComposite] = checks(l2[0:10]+l2[13:20]+l2[21:43], l2[43])
	return m
}

// longDocumentNumber reads a TD1/TD2 document number. When its check digit position holds
// '<', the number has more than nine characters: it continues at the start of the optional
// data, followed by its check digit and a filler (Part 5 note j, Part 6 note j). It returns
// the number, the optional data that remains and whether the check digit holds.
func longDocumentNumber(principal string, check byte, optional string) (number, rest string, ok bool) {
	if check != '<' {
		return trim(principal), trim(optional), checks(principal, check)
	}
	cont := strings.TrimRight(optional, "<")
	end := strings.IndexByte(cont, '<')
	if end < 0 {
		end = len(cont)
	}
	if end < 1 {
		return trim(principal), "", false
	}
	full := principal + cont[:end-1]
	return trim(full), trim(cont[end:]), checks(full, cont[end-1])
}

// checks reports whether c is the check digit of s.
func checks(s string, c byte) bool {
	d, err := CheckDigit(s)
	return err == nil && d == c
}

// CheckDigit returns the ICAO 9303 check digit ('0'–'9') of s: the sum of the character
// values (digits as themselves, A–Z as 10–35, '<' as 0) weighted 7, 3, 1 in turn, modulo 10.
// Any other character is an ErrCharacter.
func CheckDigit(s string) (byte, error) {
	weights := [3]int{7, 3, 1}
	sum := 0
	for i := 0; i < len(s); i++ {
		v := charValue(s[i])
		if v < 0 {
			return 0, fmt.Errorf("%w: %q at position %d", ErrCharacter, s[i], i+1)
		}
		sum += v * weights[i%3]
	}
	return byte('0' + sum%10), nil
}

// charValue returns the check digit value of an MRZ character, -1 outside the alphabet.
func charValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	case c == '<':
		return 0
	}
	return -1
}

// trim removes the filler from both ends of s.
func trim(s string) string { return strings.Trim(s, "<") }

// names splits a name field at its first "<<" into the primary and secondary identifiers,
// each with its inner fillers turned into spaces.
func names(field string) (surname, given string) {
	field = strings.TrimRight(field, "<")
	sur, giv, _ := strings.Cut(field, "<<")
	return spaced(sur), spaced(giv)
}

func spaced(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "<", " ")), " ")
}

// Canonical field names returned by Fields.
const (
	FieldDocumentCode   = "document_code"
	FieldDocumentNumber = "document_number"
	FieldSurname        = "surname"
	FieldGivenNames     = "given_names"
	FieldFullName       = "full_name"
	FieldDateOfBirth    = "date_of_birth"
	FieldExpiryDate     = "expiry_date"
	FieldSex            = "sex"
	FieldNationality    = "nationality"
	FieldIssuingState   = "issuing_state"
	FieldOptionalData   = "optional_data"
	FieldOptionalData2  = "optional_data_2"
	FieldIDNumber       = "id_number"
)

// Fields returns the zone under canonical field names, dates resolved against the current
// time (see FieldsAt).
func (m MRZ) Fields() map[string]string { return m.FieldsAt(time.Now()) }

// FieldsAt returns the zone under canonical field names, leaving out empty ones:
// document_code, document_number, surname, given_names, full_name ("SURNAME GIVEN NAMES"),
// date_of_birth and expiry_date (YYYY-MM-DD; left out when the zone's date is not a whole
// valid date), sex (M, F or X for '<'), nationality, issuing_state, optional_data
// (OptionalData1), optional_data_2 (OptionalData2) and id_number. Century pivot: an expiry
// date is always 20YY; a birth date is 20YY unless that is after now's date, then 19YY.
// id_number is the 12-digit citizen identity number of a Vietnamese card (see
// VietnameseIDNumber); other documents have none.
func (m MRZ) FieldsAt(now time.Time) map[string]string {
	f := map[string]string{}
	put := func(k, v string) {
		if v != "" {
			f[k] = v
		}
	}
	put(FieldDocumentCode, m.DocumentCode)
	put(FieldDocumentNumber, m.DocumentNumber)
	put(FieldSurname, m.Surname)
	put(FieldGivenNames, m.GivenNames)
	put(FieldFullName, strings.TrimSpace(m.Surname+" "+m.GivenNames))
	if d, ok := date(m.DateOfBirth); ok {
		if d.After(now) {
			d = d.AddDate(-100, 0, 0)
		}
		put(FieldDateOfBirth, d.Format(time.DateOnly))
	}
	if d, ok := date(m.ExpiryDate); ok {
		put(FieldExpiryDate, d.Format(time.DateOnly))
	}
	switch m.Sex {
	case "M", "F", "X":
		put(FieldSex, m.Sex)
	case "<":
		put(FieldSex, "X")
	}
	put(FieldNationality, m.Nationality)
	put(FieldIssuingState, m.IssuingState)
	put(FieldOptionalData, m.OptionalData1)
	put(FieldOptionalData2, m.OptionalData2)
	if id, ok := m.VietnameseIDNumber(); ok {
		put(FieldIDNumber, id)
	}
	return f
}

// VietnameseIDNumber returns the 12-digit citizen identity number that a Vietnamese ID
// card's zone (issuing state VNM) carries at the start of its optional data, whose document
// number is only the last 9 digits. Printers differ in what follows the 12 digits: nothing,
// fillers, or fillers and a check digit ("001099012345<<4"), or the number's check digit
// directly ("0010990123451"); all are accepted, anything else is not an ID number.
func (m MRZ) VietnameseIDNumber() (string, bool) {
	s := m.OptionalData1
	if m.IssuingState != "VNM" || len(s) < 12 || !isDigits(s[:12], 12) {
		return "", false
	}
	rest := s[12:]
	if len(rest) == 1 && checks(s[:12], rest[0]) {
		return s[:12], true // the number's check digit right after it
	}
	tail := strings.TrimLeft(rest, "<")
	if (rest == "" || tail != rest) && (tail == "" || isDigits(tail, 1)) {
		return s[:12], true // fillers, then at most one digit
	}
	return "", false
}

// date reads a YYMMDD date as 20YY-MM-DD; it rejects fillers and impossible dates.
func date(s string) (time.Time, bool) {
	if !isDigits(s, 6) {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102", "20"+s)
	return t, err == nil
}

// isDigits reports whether s is exactly n ASCII digits.
func isDigits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
