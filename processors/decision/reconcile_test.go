package decision

import (
	"slices"
	"strings"
	"testing"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/schemas"
)

// withIdentity adds OCR, MRZ and chip data that agree on every field to st.
func withIdentity(st *schemas.SessionState) *schemas.SessionState {
	st.Documents = []schemas.DocumentRead{
		{Step: "document_front", CaptureID: "cap_f", Fields: []schemas.Field{
			{Name: "id_number", Value: "001099012345"},
			{Name: "full_name", Value: "  nguyễn văn a "},
			{Name: "date_of_birth", Value: "15/03/1999"},
			{Name: "sex", Value: "Nam"},
			{Name: "place_of_origin", Value: "Hà Nội"},
		}},
		{Step: "document_back", CaptureID: "cap_b", MRZ: &schemas.MRZ{Format: "TD1", Valid: true, Fields: map[string]string{
			"document_number": "099012345", "optional_data": "001099012345",
			"date_of_birth": "990315", "sex": "M", "nationality": "VNM", "expiry_date": "390315",
		}}},
	}
	st.Chip = &schemas.ChipVerified{CaptureID: "cap_n", Fields: []schemas.Field{
		{Name: "id_number", Value: "001099012345"},
		{Name: "full_name", Value: "NGUYỄN VĂN A"},
		{Name: "date_of_birth", Value: "15/03/1999"},
		{Name: "sex", Value: "Nam"},
		{Name: "nationality", Value: "Việt Nam"},
		{Name: "expiry_date", Value: "15/03/2039"},
	}}
	return st
}

func TestReconcileAgreeing(t *testing.T) {
	ex, checks := Reconcile(withIdentity(processing()))
	if *ex.IDNumber != "001099012345" || *ex.FullName != "NGUYỄN VĂN A" || *ex.DateOfBirth != "1999-03-15" ||
		*ex.Sex != "M" || *ex.Nationality != "VNM" || *ex.ExpiryDate != "2039-03-15" || *ex.PlaceOfOrigin != "Hà Nội" {
		t.Fatalf("extracted = %+v", ex)
	}
	if got := ex.Sources["id_number"]; !slices.Equal(got, []string{"ocr", "mrz", "chip"}) {
		t.Fatalf("id_number sources = %v", got)
	}
	if got := ex.Sources["full_name"]; !slices.Equal(got, []string{"ocr", "chip"}) {
		t.Fatalf("full_name sources = %v", got)
	}
	if got := ex.Sources["place_of_origin"]; !slices.Equal(got, []string{"ocr"}) {
		t.Fatalf("place_of_origin sources = %v", got)
	}
	if ex.MRZ["optional_data"] != "001099012345" {
		t.Fatalf("mrz = %v", ex.MRZ)
	}
	for _, c := range checks {
		if c.Status != schemas.CheckPass {
			t.Errorf("check %s = %s, want pass", c.Name, c.Status)
		}
	}
	if findCheck(checks, "data.place_of_origin_consistency") != nil {
		t.Error("a field from one source got a consistency check")
	}
	if findCheck(checks, "data.date_of_birth_consistency") == nil {
		t.Error("no date_of_birth consistency check")
	}
}

func TestReconcileMismatchRejects(t *testing.T) {
	st := withIdentity(processing())
	st.Chip.Fields[2].Value = "16/03/1999"           // date_of_birth disagrees with OCR and MRZ
	st.Documents[0].Fields[1].Value = "NGUYEN VAN A" // no diacritics folding: disagrees with chip
	d, ok := Decide(DefaultPolicy(flow.Default()), st)
	if !ok {
		t.Fatal("not decided")
	}
	if d.Outcome != schemas.StatusRejected {
		t.Fatalf("outcome = %s", d.Outcome)
	}
	for _, name := range []string{"data.date_of_birth_consistency", "data.full_name_consistency"} {
		c := findCheck(d.Checks, name)
		if c == nil || c.Status != schemas.CheckFail || c.ReasonCode == nil || *c.ReasonCode != "data_mismatch" {
			t.Fatalf("%s = %+v", name, c)
		}
	}
	if len(d.Reasons) != 2 || d.Reasons[0].Code != "data_mismatch" {
		t.Fatalf("reasons = %+v", d.Reasons)
	}
	for _, r := range d.Reasons {
		if strings.Contains(r.Message, "1999") || strings.Contains(r.Message, "NGUY") {
			t.Fatalf("reason leaks personal data: %q", r.Message)
		}
	}
	if *d.Extracted.DateOfBirth != "1999-03-16" || d.Extracted.DocumentType != "chip_id_card" {
		t.Fatalf("chip value must win: %+v", d.Extracted)
	}
}

func TestReconcileOtherFieldsAndNoData(t *testing.T) {
	st := processing()
	st.Flow = "vehicle_registration"
	st.Documents = []schemas.DocumentRead{{Step: "document_front", Fields: []schemas.Field{{Name: "plate", Value: "29A-12345"}}}}
	ex, checks := Reconcile(st)
	if ex.Other["plate"] != "29A-12345" || len(checks) != 0 || ex.IDNumber != nil || len(ex.Sources) != 0 {
		t.Fatalf("extracted = %+v checks %v", ex, checks)
	}
}

func TestNormalizeDate(t *testing.T) {
	ref := t0
	for in, want := range map[string]string{
		"1999-03-15": "1999-03-15", "15/03/1999": "1999-03-15", "15-03-1999": "1999-03-15",
		"15.03.1999": "1999-03-15", "19990315": "1999-03-15", "990315": "1999-03-15", "050315": "2005-03-15",
	} {
		if got, ok := normalizeDate(in, true, ref); !ok || got != want {
			t.Errorf("birth %q = %q %v, want %q", in, got, ok, want)
		}
	}
	if got, _ := normalizeDate("390315", false, ref); got != "2039-03-15" {
		t.Errorf("expiry 390315 = %q", got)
	}
	if _, ok := normalizeDate("31/02/1999", true, ref); ok {
		t.Error("impossible date accepted")
	}
}

func TestAgreeAgainstMRZ(t *testing.T) {
	long := "NGUYỄN THỊ PHƯƠNG THẢO ĐOÀN MINH"
	tests := []struct {
		a, va, b, vb string
		want         bool
	}{
		{SourceOCR, "NGUYỄN VĂN A", SourceMRZ, "NGUYEN VAN A", true},
		{SourceMRZ, "NGUYEN VAN A", SourceChip, "NGUYỄN VĂN A", true},
		{SourceOCR, "ĐẶNG VĂN B", SourceMRZ, "DANG VAN B", true},
		{SourceOCR, "NGUYỄN VĂN A", SourceMRZ, "NGUYEN VAN B", false},
		{SourceOCR, "NGUYỄN VĂN A", SourceChip, "NGUYEN VAN A", false}, // only the MRZ lacks diacritics
		{SourceChip, long, SourceMRZ, "NGUYEN THI PHUONG THAO DOAN", true},
		{SourceChip, long, SourceMRZ, "NGUYEN THI", false},
		{SourceOCR, "LÊ THỊ THU LINH", SourceMRZ, "IF THI THU ILINH", true}, // OCR-B look-alikes, one insertion
		{SourceOCR, "LÊ THỊ THU LINH", SourceMRZ, "LE THI THU HANH", false}, // another name
		{SourceOCR, "LÊ VĂN AN", SourceMRZ, "LE VAN AM", false},             // not look-alikes
		{SourceOCR, "LÊ VĂN AN", SourceMRZ, "LE VAN ANH", false},
		{SourceOCR, "ĐỖ VĂN AN", SourceMRZ, "0O VAN AN", true},
		{SourceOCR, "MAI MINH TOÀN", SourceMRZ, "MAT MTNH TOAN", true},    // a serifed mono I read as T
		{SourceOCR, "QUÁCH THỊ UYÊN", SourceMRZ, "OUACH THI UYEFN", true}, // an E read twice, as E and F
		{SourceOCR, "LÊ THANH MAI", SourceMRZ, "TFF THANH MAI", true},
		{SourceOCR, "LÊ THANH MAI", SourceMRZ, "TFFF THANH MAI", true},          // two glyphs read twice
		{SourceOCR, "LÊ HỮU TOÀN", SourceMRZ, "IEFE HUU TOAN", true},            // likewise, on a 2024 card
		{SourceOCR, "LÊ THANH MAI", SourceMRZ, "TFFFF THANH MAI", false},        // three
		{SourceOCR, "LÊ THANH MAI", SourceMRZ, "TFF THANH MAT", true},           // a look-alike beside them
		{SourceOCR, "LÊ THANH MAI", SourceMRZ, "TFF THANH MAO", false},          // another letter beside them
		{SourceOCR, "LƯƠNG PHƯƠNG THỦY", SourceMRZ, "IIIONG PHUONG THUY", true}, // a U read as its two stems
		{SourceOCR, "LƯƠNG PHƯƠNG THỦY", SourceMRZ, "IIONG PHUONG THUY", false}, // U and L as two stems: no
		// Different real names stay different: a letter more or less is never an OCR slip.
		{SourceOCR, "LAN", SourceMRZ, "AN", false}, {SourceOCR, "HẢI", SourceMRZ, "HA", false},
		{SourceOCR, "HOÀI", SourceMRZ, "HOA", false}, {SourceOCR, "MAI", SourceMRZ, "MA", false},
		{SourceOCR, "THÁI", SourceMRZ, "THA", false}, {SourceOCR, "LÝ", SourceMRZ, "Y", false},
		{SourceOCR, "LONG", SourceMRZ, "ONG", false}, {SourceOCR, "AN", SourceMRZ, "LAN", false},
		{SourceOCR, "LÊ VĂN AN", SourceMRZ, "LE VAN BINH", false},
	}
	for _, tt := range tests {
		if got := agree("full_name", tt.a, tt.va, tt.b, tt.vb); got != tt.want {
			t.Errorf("agree(%s %q, %s %q) = %v, want %v", tt.a, tt.va, tt.b, tt.vb, got, tt.want)
		}
	}
}

// A chip ID card read without its chip: the printed name keeps its diacritics while the MRZ
// confirms it; the 12-digit number comes from the front when the MRZ holds only its last
// nine digits as the document number; the printed nationality is a country.
func TestReconcilePrintedOverMRZ(t *testing.T) {
	st := processing()
	st.Documents = []schemas.DocumentRead{
		{Step: "document_front", CaptureID: "cap_f", Fields: []schemas.Field{
			{Name: "id_number", Value: "001099012345"},
			{Name: "full_name", Value: "MAI PHƯƠNG VY"},
			{Name: "nationality", Value: "Việt Nam"},
		}},
		{Step: "document_back", CaptureID: "cap_b", MRZ: &schemas.MRZ{Format: "TD1", Valid: true, Fields: map[string]string{
			"document_code": "ID", "issuing_state": "VNM", "document_number": "099012345",
			"full_name": "MAI PHUONG VY", "nationality": "VNM",
		}}},
	}
	ex, checks := Reconcile(st)
	if *ex.FullName != "MAI PHƯƠNG VY" || *ex.IDNumber != "001099012345" || *ex.Nationality != "VNM" {
		t.Fatalf("extracted = %s / %s / %s", *ex.FullName, *ex.IDNumber, *ex.Nationality)
	}
	for _, c := range checks {
		if c.Status != schemas.CheckPass {
			t.Errorf("check %s = %s, want pass", c.Name, c.Status)
		}
	}
	if len(checks) != 3 {
		t.Fatalf("checks = %d, want id_number, full_name and nationality", len(checks))
	}

	// A passport's document number is not an ID number.
	pp := processing()
	pp.Documents = []schemas.DocumentRead{{Step: "passport", MRZ: &schemas.MRZ{Format: "TD3", Fields: map[string]string{
		"document_code": "P", "issuing_state": "VNM", "document_number": "C1234567"}}, Fields: []schemas.Field{{Name: "id_number", Value: "001099012345"}}}}
	if ex, checks := Reconcile(pp); *ex.IDNumber != "001099012345" || findCheck(checks, "data.id_number_consistency") != nil {
		t.Fatalf("passport id_number = %s, checks %+v", *ex.IDNumber, checks)
	}

	// The MRZ's 12-digit optional data wins over a misread front, and disagrees with it.
	st.Documents[0].Fields[0].Value = "001099012346"
	st.Documents[1].MRZ.Fields["id_number"] = "001099012345"
	ex, checks = Reconcile(st)
	if *ex.IDNumber != "001099012345" {
		t.Fatalf("id_number = %s, want the MRZ's", *ex.IDNumber)
	}
	if c := findCheck(checks, "data.id_number_consistency"); c == nil || c.Status != schemas.CheckFail {
		t.Fatalf("id_number consistency = %+v", c)
	}
}

func TestAgreeIDNumberAndCountry(t *testing.T) {
	for _, tt := range []struct {
		a, va, b, vb string
		want         bool
	}{
		{SourceOCR, "001099012345", SourceMRZ, "099012345", true},
		{SourceMRZ, "099012345", SourceChip, "001099012345", true},
		{SourceOCR, "001099012345", SourceMRZ, "099012346", false},
		{SourceOCR, "001099012345", SourceChip, "099012345", false}, // only the MRZ holds 9 digits
		{SourceOCR, "01099012345", SourceMRZ, "099012345", false},
	} {
		if got := agree("id_number", tt.a, tt.va, tt.b, tt.vb); got != tt.want {
			t.Errorf("agree(%s %q, %s %q) = %v, want %v", tt.a, tt.va, tt.b, tt.vb, got, tt.want)
		}
	}
	for in, want := range map[string]string{
		"Việt Nam": "VNM", "VIỆT NAM": "VNM", "viet  nam": "VNM", "Vietnamese": "VNM", "VNM": "VNM",
		"Hàn Quốc": "KOR", "CHN": "CHN", "Atlantis": "ATLANTIS",
	} {
		if got := normalize("nationality", in, t0); got != want {
			t.Errorf("nationality %q = %q, want %q", in, got, want)
		}
	}
}

// TestMRZNameMendedFromThePrintedName: a zone's name read with look-alikes (QUACH as OUACH,
// MAI MINH as MAT MTNH) is reported with the printed name's letters; another name, a name
// of other words or a chip's DG1 is reported as read.
func TestMRZNameMendedFromThePrintedName(t *testing.T) {
	zone := func(sur, given string) map[string]string {
		return map[string]string{"document_code": "ID", "issuing_state": "VNM", "surname": sur, "given_names": given, "full_name": sur + " " + given}
	}
	for _, tt := range []struct {
		printed, sur, given string
		want                string // the full name reported in the MRZ fields
	}{
		{"QUÁCH HỒNG MAI", "OUACH", "HONG MAI", "QUACH HONG MAI"},
		{"MAI MINH TOÀN", "MAT", "MTNH TOAN", "MAI MINH TOAN"},
		{"MAI MINH TOÀN", "MAI", "MINH TOAN", "MAI MINH TOAN"},
		{"TRỊNH VĂN BÌNH", "TRINH", "YAN BINH", "TRINH VAN BINH"},
		{"LÊ VĂN AN", "LE", "VAN AM", "LE VAN AM"},         // M is no look-alike of N
		{"LÊ VĂN AN", "LE", "VAN ANH", "LE VAN ANH"},       // a letter more
		{"LÊ THỊ AN", "LE", "THI THU AN", "LE THI THU AN"}, // a word more
	} {
		st := processing()
		st.Documents = []schemas.DocumentRead{
			{Step: "document_front", Fields: []schemas.Field{{Name: "full_name", Value: tt.printed}}},
			{Step: "document_back", MRZ: &schemas.MRZ{Format: "TD1", Valid: true, Fields: zone(tt.sur, tt.given)}},
		}
		ex, _ := Reconcile(st)
		if got := ex.MRZ["full_name"]; got != tt.want {
			t.Errorf("printed %q, zone %q %q: MRZ name %q, want %q", tt.printed, tt.sur, tt.given, got, tt.want)
		}
	}
	st := processing()
	st.Documents = []schemas.DocumentRead{{Step: "document_front", Fields: []schemas.Field{{Name: "full_name", Value: "QUÁCH HỒNG MAI"}}}}
	st.Chip = &schemas.ChipVerified{MRZ: &schemas.MRZ{Format: "TD1", Valid: true, Fields: zone("OUACH", "HONG MAI")}}
	if ex, _ := Reconcile(st); ex.MRZ["surname"] != "OUACH" {
		t.Errorf("chip's DG1 mended: surname %q", ex.MRZ["surname"])
	}
}

// TestPassportNumberFromTheZone: a passport's number is the zone's when its check digits hold,
// whatever the page read; a zone failing them, or another document's zone, leaves the page's.
func TestPassportNumberFromTheZone(t *testing.T) {
	for _, c := range []struct {
		name  string
		code  string
		valid bool
		want  string
	}{
		{"passport, zone valid", "P", true, "C7910086"},
		{"passport, zone failing its digits", "P", false, "O6121988"},
		{"ID card's zone", "ID", true, "O6121988"},
	} {
		st := processing()
		st.Flow = "passport"
		st.Documents = []schemas.DocumentRead{{Step: "passport", Fields: []schemas.Field{{Name: "passport_number", Value: "O6121988"}},
			MRZ: &schemas.MRZ{Format: "TD3", Valid: c.valid, Fields: map[string]string{"document_code": c.code, "document_number": "C7910086"}}}}
		ex, checks := Reconcile(st)
		if got := ex.Other["passport_number"]; got != c.want {
			t.Errorf("%s: passport number %q, want %q", c.name, got, c.want)
		}
		for _, ch := range checks {
			if ch.Status == schemas.CheckFail {
				t.Errorf("%s: check %s fails", c.name, ch.Name)
			}
		}
	}
}
