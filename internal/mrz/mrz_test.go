package mrz

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// ICAO Doc 9303 specimens (fictitious holders of the fictitious state Utopia).
var (
	specimenTD3 = []string{ // Part 4, Appendix A
		"P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
		"L898902C36UTO7408122F1204159ZE184226B<<<<<10",
	}
	specimenTD1 = []string{ // Part 5, Appendix A
		"I<UTOD231458907<<<<<<<<<<<<<<<",
		"7408122F1204159UTO<<<<<<<<<<<6",
		"ERIKSSON<<ANNA<MARIA<<<<<<<<<<",
	}
	specimenTD1Long = []string{ // Part 5: a document number longer than nine characters
		"I<UTOD23145890<7349<<<<<<<<<<<",
		"3407127M9507122UTO<<<<<<<<<<<2",
		"STEVENSON<<PETER<JOHN<<<<<<<<<",
	}
	specimenTD2 = []string{ // Part 6, Appendix A
		"I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<",
		"D231458907UTO7408122F1204159<<<<<<<6",
	}
	specimenMRVA = []string{ // Part 7
		"V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
		"L8988901C4XXX4009078F96121096ZE184226B<<<<<<",
	}
	specimenMRVB = []string{ // Part 7
		"V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<",
		"L8988901C4XXX4009078F9612109<<<<<<<<",
	}
	// A synthetic Vietnamese chip ID card (CCCD): document number = last nine digits of the
	// 12-digit ID, optional data = the 12-digit ID. Not a real person.
	syntheticCCCD = []string{
		"IDVNM0990123459001099012345<<<",
		"9903159M3903157VNM<<<<<<<<<<<0",
		"NGUYEN<<VAN<A<<<<<<<<<<<<<<<<<",
	}
)

func mustParse(t *testing.T, lines []string) *MRZ {
	t.Helper()
	m, err := Parse(lines)
	if err != nil {
		t.Fatalf("Parse(%q): %v", lines, err)
	}
	return m
}

func TestCheckDigit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want byte
	}{
		{"L898902C3", '6'}, {"740812", '2'}, {"120415", '9'}, {"ZE184226B<<<<<", '1'},
		{"D23145890", '7'}, {"D23145890734", '9'}, {"", '0'}, {"<<<<<<", '0'},
	} {
		got, err := CheckDigit(c.in)
		if err != nil || got != c.want {
			t.Errorf("CheckDigit(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := CheckDigit("AB-1"); !errors.Is(err, ErrCharacter) {
		t.Errorf("CheckDigit with '-': err %v, want ErrCharacter", err)
	}
}

func TestParseSpecimens(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		lines  []string
		format string
		checks []string
		fields map[string]string
	}{
		{"TD3", specimenTD3, FormatTD3,
			[]string{CheckComposite, CheckDateOfBirth, CheckDocumentNumber, CheckExpiryDate, CheckOptionalData},
			map[string]string{
				"document_code": "P", "issuing_state": "UTO", "document_number": "L898902C3",
				"surname": "ERIKSSON", "given_names": "ANNA MARIA", "full_name": "ERIKSSON ANNA MARIA",
				"nationality": "UTO", "date_of_birth": "1974-08-12", "sex": "F",
				"expiry_date": "2012-04-15", "optional_data": "ZE184226B",
			}},
		{"TD1", specimenTD1, FormatTD1,
			[]string{CheckComposite, CheckDateOfBirth, CheckDocumentNumber, CheckExpiryDate},
			map[string]string{
				"document_code": "I", "issuing_state": "UTO", "document_number": "D23145890",
				"surname": "ERIKSSON", "given_names": "ANNA MARIA", "full_name": "ERIKSSON ANNA MARIA",
				"nationality": "UTO", "date_of_birth": "1974-08-12", "sex": "F",
				"expiry_date": "2012-04-15",
			}},
		{"TD1 long document number", specimenTD1Long, FormatTD1,
			[]string{CheckComposite, CheckDateOfBirth, CheckDocumentNumber, CheckExpiryDate},
			map[string]string{
				"document_code": "I", "issuing_state": "UTO", "document_number": "D23145890734",
				"surname": "STEVENSON", "given_names": "PETER JOHN", "full_name": "STEVENSON PETER JOHN",
				"nationality": "UTO", "date_of_birth": "1934-07-12", "sex": "M",
				"expiry_date": "2095-07-12",
			}},
		{"TD2", specimenTD2, FormatTD2,
			[]string{CheckComposite, CheckDateOfBirth, CheckDocumentNumber, CheckExpiryDate},
			map[string]string{
				"document_code": "I", "issuing_state": "UTO", "document_number": "D23145890",
				"surname": "ERIKSSON", "given_names": "ANNA MARIA", "full_name": "ERIKSSON ANNA MARIA",
				"nationality": "UTO", "date_of_birth": "1974-08-12", "sex": "F",
				"expiry_date": "2012-04-15",
			}},
		{"MRV-A", specimenMRVA, FormatMRVA,
			[]string{CheckDateOfBirth, CheckDocumentNumber, CheckExpiryDate},
			map[string]string{
				"document_code": "V", "issuing_state": "UTO", "document_number": "L8988901C",
				"surname": "ERIKSSON", "given_names": "ANNA MARIA", "full_name": "ERIKSSON ANNA MARIA",
				"nationality": "XXX", "date_of_birth": "1940-09-07", "sex": "F",
				"expiry_date": "2096-12-10", "optional_data": "6ZE184226B",
			}},
		{"MRV-B", specimenMRVB, FormatMRVB,
			[]string{CheckDateOfBirth, CheckDocumentNumber, CheckExpiryDate},
			map[string]string{
				"document_code": "V", "issuing_state": "UTO", "document_number": "L8988901C",
				"surname": "ERIKSSON", "given_names": "ANNA MARIA", "full_name": "ERIKSSON ANNA MARIA",
				"nationality": "XXX", "date_of_birth": "1940-09-07", "sex": "F",
				"expiry_date": "2096-12-10",
			}},
		{"synthetic CCCD", syntheticCCCD, FormatTD1,
			[]string{CheckComposite, CheckDateOfBirth, CheckDocumentNumber, CheckExpiryDate},
			map[string]string{
				"document_code": "ID", "issuing_state": "VNM", "document_number": "099012345",
				"surname": "NGUYEN", "given_names": "VAN A", "full_name": "NGUYEN VAN A",
				"nationality": "VNM", "date_of_birth": "1999-03-15", "sex": "M",
				"expiry_date": "2039-03-15", "optional_data": "001099012345", "id_number": "001099012345",
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := mustParse(t, c.lines)
			if m.Format != c.format {
				t.Errorf("Format = %q, want %q", m.Format, c.format)
			}
			if !m.Valid {
				t.Errorf("Valid = false, checks %v", m.Checks)
			}
			if got := slices.Sorted(maps.Keys(m.Checks)); !slices.Equal(got, c.checks) {
				t.Errorf("checks %v, want %v", got, c.checks)
			}
			if got := m.FieldsAt(now); !maps.Equal(got, c.fields) {
				t.Errorf("FieldsAt:\n got %v\nwant %v", got, c.fields)
			}
		})
	}
}

// TestCorruptedDigit changes one character of each checked field in turn and expects exactly
// the checks that cover it to fail.
func TestCorruptedDigit(t *testing.T) {
	type corruption struct {
		line, pos int
		failing   []string
	}
	for _, c := range []struct {
		name  string
		lines []string
		cs    []corruption
	}{
		{"TD3", specimenTD3, []corruption{
			{1, 3, []string{CheckDocumentNumber, CheckComposite}},
			{1, 9, []string{CheckDocumentNumber, CheckComposite}}, // the check digit itself
			{1, 15, []string{CheckDateOfBirth, CheckComposite}},
			{1, 24, []string{CheckExpiryDate, CheckComposite}},
			{1, 30, []string{CheckOptionalData, CheckComposite}},
			{1, 43, []string{CheckComposite}},
		}},
		{"TD1", specimenTD1, []corruption{
			{0, 7, []string{CheckDocumentNumber, CheckComposite}},
			{1, 2, []string{CheckDateOfBirth, CheckComposite}},
			{1, 10, []string{CheckExpiryDate, CheckComposite}},
			{0, 20, []string{CheckComposite}}, // optional data 1 is covered by the composite only
			{1, 20, []string{CheckComposite}}, // optional data 2 likewise
			{1, 29, []string{CheckComposite}},
		}},
		{"TD1 long document number", specimenTD1Long, []corruption{
			{0, 16, []string{CheckDocumentNumber, CheckComposite}}, // in the continuation
			{0, 18, []string{CheckDocumentNumber, CheckComposite}}, // its check digit
		}},
		{"TD2", specimenTD2, []corruption{
			{1, 4, []string{CheckDocumentNumber, CheckComposite}},
			{1, 16, []string{CheckDateOfBirth, CheckComposite}},
			{1, 23, []string{CheckExpiryDate, CheckComposite}},
			{1, 35, []string{CheckComposite}},
		}},
		{"CCCD", syntheticCCCD, []corruption{
			{0, 10, []string{CheckDocumentNumber, CheckComposite}},
			{0, 22, []string{CheckComposite}},
		}},
	} {
		for _, k := range c.cs {
			lines := slices.Clone(c.lines)
			b := []byte(lines[k.line])
			if b[k.pos] == '1' {
				b[k.pos] = '2'
			} else {
				b[k.pos] = '1'
			}
			lines[k.line] = string(b)
			m := mustParse(t, lines)
			var failing []string
			for name, ok := range m.Checks {
				if !ok {
					failing = append(failing, name)
				}
			}
			slices.Sort(failing)
			slices.Sort(k.failing)
			if !slices.Equal(failing, k.failing) || m.Valid {
				t.Errorf("%s line %d pos %d: failing %v (valid %v), want %v", c.name, k.line+1, k.pos+1, failing, m.Valid, k.failing)
			}
		}
	}
}

func TestTD3EmptyPersonalNumber(t *testing.T) {
	// An empty personal number may have '<' or '0' as its check digit.
	for _, cd := range []byte{'<', '0'} {
		l2 := []byte("L898902C36UTO7408122F1204159<<<<<<<<<<<<<<" + "<0")
		l2[42] = cd
		c, _ := CheckDigit(string(l2[0:10]) + string(l2[13:20]) + string(l2[21:43]))
		l2[43] = c
		m := mustParse(t, []string{specimenTD3[0], string(l2)})
		if !m.Valid {
			t.Errorf("check digit %q: checks %v", cd, m.Checks)
		}
	}
}

func TestNormalize(t *testing.T) {
	in := []string{"  p<uto eriksson<<anna<maria<<<<<<<<<<<<<<<<<<<\r\n", "", "L898902C36UTO7408122F1204159ZE184226B<<<<<10 \n"}
	got := Normalize(in)
	if !slices.Equal(got, specimenTD3) {
		t.Fatalf("Normalize = %q", got)
	}
	// A single string with line breaks parses too.
	m := mustParse(t, []string{strings.Join(specimenTD1, "\n")})
	if m.Format != FormatTD1 || !m.Valid {
		t.Fatalf("joined TD1: %+v", m)
	}
	// OCR confusions are not corrected: an O in a digit field fails its check.
	l2 := strings.Replace(specimenTD3[1], "7408122", "74O8122", 1)
	m = mustParse(t, []string{specimenTD3[0], l2})
	if m.Checks[CheckDateOfBirth] || m.Valid {
		t.Fatalf("O for 0 accepted: %v", m.Checks)
	}
	if _, ok := m.FieldsAt(time.Now())[FieldDateOfBirth]; ok {
		t.Fatalf("a date with a letter gave a date_of_birth")
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		want  error
	}{
		{"empty", nil, ErrFormat},
		{"one line", specimenTD3[:1], ErrFormat},
		{"short line", []string{specimenTD3[0], specimenTD3[1][:43]}, ErrFormat},
		{"mixed lengths", []string{specimenTD2[0], specimenTD3[1]}, ErrFormat},
		{"four lines", append(slices.Clone(specimenTD1), specimenTD1[0]), ErrFormat},
		{"bad character", []string{specimenTD2[0], strings.Replace(specimenTD2[1], "UTO", "U-O", 1)}, ErrCharacter},
		{"non-ASCII", []string{specimenTD2[0], strings.Replace(specimenTD2[1], "UTO", "UÖ", 1)}, ErrCharacter},
		{"huge", []string{strings.Repeat("<", 5000)}, ErrTooLong},
	} {
		m, err := Parse(c.lines)
		if !errors.Is(err, c.want) || m != nil {
			t.Errorf("%s: Parse = %v, %v; want %v", c.name, m, err, c.want)
		}
	}
}

func TestFieldsDates(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct{ dob, exp, wantDOB, wantExp string }{
		{"260531", "360531", "2026-05-31", "2036-05-31"}, // born yesterday
		{"260602", "990101", "1926-06-02", "2099-01-01"}, // tomorrow would be the future
		{"000229", "250101", "2000-02-29", "2025-01-01"},
		{"990230", "25<<<<", "", ""}, // impossible or partial dates are left out
	} {
		f := MRZ{DateOfBirth: c.dob, ExpiryDate: c.exp}.FieldsAt(now)
		if f[FieldDateOfBirth] != c.wantDOB || f[FieldExpiryDate] != c.wantExp {
			t.Errorf("%s/%s: got %q/%q, want %q/%q", c.dob, c.exp, f[FieldDateOfBirth], f[FieldExpiryDate], c.wantDOB, c.wantExp)
		}
	}
	if got := (MRZ{Sex: "<"}).FieldsAt(now)[FieldSex]; got != "X" {
		t.Errorf("sex '<' gave %q, want X", got)
	}
	// A 12-digit optional data is an id_number only on a Vietnamese document.
	if _, ok := (MRZ{IssuingState: "UTO", OptionalData1: "001099012345"}).FieldsAt(now)[FieldIDNumber]; ok {
		t.Errorf("id_number from a non-Vietnamese document")
	}
}

func TestVietnameseIDNumber(t *testing.T) {
	check, err := CheckDigit("001099012345")
	if err != nil {
		t.Fatal(err)
	}
	wrong := '0' + (check-'0'+1)%10
	for _, c := range []struct {
		state, optional string
		want            bool
	}{
		{"VNM", "001099012345", true},
		{"VNM", "001099012345<<4", true},                    // fillers and a trailing digit
		{"VNM", "001099012345" + string(rune(check)), true}, // the number's own check digit
		{"VNM", "001099012345" + string(rune(wrong)), false},
		{"VNM", "0010990123456789", false}, // a longer number is not a 12-digit ID
		{"VNM", "00109901234", false},
		{"VNM", "00109901234A", false},
		{"VNM", "001099012345<<45", false},
		{"UTO", "001099012345", false},
	} {
		id, ok := (MRZ{IssuingState: c.state, OptionalData1: c.optional}).VietnameseIDNumber()
		if ok != c.want || (ok && id != "001099012345") {
			t.Errorf("%s %q: got %q %v, want %v", c.state, c.optional, id, ok, c.want)
		}
	}
}
