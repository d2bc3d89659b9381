package registry

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func validQuery() Query {
	return Query{IDNumber: PersonaMatchID, FullName: "NGUYỄN VĂN AN", DateOfBirth: "1990-03-15", Sex: SexMale}
}

func TestQueryValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Query)
		wantErr string // substring; "" means valid
	}{
		{"valid", func(*Query) {}, ""},
		{"legacy 9 digits", func(q *Query) { q.IDNumber = "012345678" }, ""},
		{"no sex", func(q *Query) { q.Sex = "" }, ""},
		{"document number", func(q *Query) { q.DocumentNumber = "090012345" }, ""},
		{"11 digits", func(q *Query) { q.IDNumber = "00109001234" }, "id_number"},
		{"letters in id", func(q *Query) { q.IDNumber = "00109001234A" }, "id_number"},
		{"empty id", func(q *Query) { q.IDNumber = "" }, "id_number"},
		{"blank name", func(q *Query) { q.FullName = " \t " }, "full_name is required"},
		{"decomposed name", func(q *Query) { q.FullName = "LE\u0302 VA\u0306N" }, "precomposed"},
		{"control char", func(q *Query) { q.FullName = "AN\x00" }, "control"},
		{"invalid utf8", func(q *Query) { q.FullName = "AN\xff" }, "UTF-8"},
		{"long name", func(q *Query) { q.FullName = strings.Repeat("A", MaxNameRunes+1) }, "at most"},
		{"impossible date", func(q *Query) { q.DateOfBirth = "1990-02-30" }, "date_of_birth"},
		{"dd/mm/yyyy", func(q *Query) { q.DateOfBirth = "15/03/1990" }, "date_of_birth"},
		{"sex word", func(q *Query) { q.Sex = "Nam" }, "sex"},
		{"bad document number", func(q *Query) { q.DocumentNumber = "ab-1" }, "document_number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := validQuery()
			tt.edit(&q)
			err := q.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidQuery) {
				t.Fatalf("Validate() = %v, want ErrInvalidQuery", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate() = %q, want it to mention %q", err, tt.wantErr)
			}
			assertNoPII(t, err, q)
		})
	}
}

func TestQueryValidateReportsEveryProblem(t *testing.T) {
	err := Query{IDNumber: "1", FullName: "", DateOfBirth: "x", Sex: "?"}.Validate()
	for _, field := range []string{"id_number", "full_name", "date_of_birth", "sex"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate() = %v, want it to name %s", err, field)
		}
	}
}

func TestNormalizeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"nguyễn  văn\tan ", "NGUYỄN VĂN AN"},
		{"đặng thị mai", "ĐẶNG THỊ MAI"},
		{"lê văn cường", "LÊ VĂN CƯỜNG"},
		{"\u00a0Trần\u00a0Thị ", "TRẦN THỊ"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := NormalizeName(tt.in); got != tt.want {
			t.Errorf("NormalizeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if NormalizeName("LÊ VĂN CƯỜNG") == NormalizeName("LÊ VĂN CƯƠNG") {
		t.Error("names differing only by a diacritic compare equal")
	}
	if NormalizeName("LE VAN AN") == NormalizeName("LÊ VĂN AN") {
		t.Error("a name without diacritics compares equal to one with them")
	}
}

// provinceCodes are the 63 province codes of 12-digit Vietnamese ID numbers.
var provinceCodes = strings.Fields(`001 002 004 006 008 010 011 012 014 015 017 019 020 022 024
025 026 027 030 031 033 034 035 036 037 038 040 042 044 045 046 048 049 051 052 054 056 058
060 062 064 066 067 068 070 072 074 075 077 079 080 082 083 084 086 087 089 091 092 093 094 095 096`)

// checkIDStructure reports why id is not a structurally valid 12-digit ID number for a person
// of this sex born on dob, "" if it is.
func checkIDStructure(id, dob, sex string) string {
	if len(id) != 12 || !allDigits(id) {
		return "not 12 digits"
	}
	found := false
	for _, p := range provinceCodes {
		if id[:3] == p {
			found = true
		}
	}
	if !found {
		return "unknown province code"
	}
	born, err := time.Parse(time.DateOnly, dob)
	if err != nil {
		return "bad date of birth"
	}
	centuryIndex := (born.Year()/100 - 19) * 2 // 1900s: 0, 2000s: 2, ...
	if sex == SexFemale {
		centuryIndex++
	}
	if int(id[3]-'0') != centuryIndex {
		return "century/sex digit disagrees with date of birth and sex"
	}
	if id[4:6] != dob[2:4] {
		return "birth-year digits disagree with date of birth"
	}
	return ""
}

func TestPersonasAreConsistent(t *testing.T) {
	seenID := map[string]bool{}
	seenKey := map[string]bool{}
	for _, p := range Personas() {
		if why := checkIDStructure(p.IDNumber, p.DateOfBirth, p.Sex); why != "" {
			t.Errorf("persona %s: ID number: %s", p.Key, why)
		}
		if err := p.Query().Validate(); err != nil {
			t.Errorf("persona %s: query invalid: %v", p.Key, err)
		}
		if seenID[p.IDNumber] || seenKey[p.Key] {
			t.Errorf("persona %s: duplicate ID number or key", p.Key)
		}
		seenID[p.IDNumber], seenKey[p.Key] = true, true
		if p.Description == "" {
			t.Errorf("persona %s: no description", p.Key)
		}
		if p.Behavior != BehaviorUnavailable {
			if !p.Identity.Valid() || !p.Tax.Valid() || !p.HealthInsurance.Valid() || !p.SocialInsurance.Valid() {
				t.Errorf("persona %s: an expected outcome is not a documented one", p.Key)
			}
		}
	}
	// Every documented outcome is reachable through some persona.
	identity := map[IdentityOutcome]bool{}
	records := map[Lookup]map[RecordOutcome]bool{}
	for _, p := range Personas() {
		identity[p.Identity] = true
		for l, o := range map[Lookup]RecordOutcome{LookupTax: p.Tax, LookupHealthInsurance: p.HealthInsurance, LookupSocialInsurance: p.SocialInsurance} {
			if records[l] == nil {
				records[l] = map[RecordOutcome]bool{}
			}
			records[l][o] = true
		}
	}
	for _, o := range []IdentityOutcome{IdentityMatch, IdentityNameMismatch, IdentityDOBMismatch, IdentityRevoked, IdentityDeceased, IdentityNotFound} {
		if !identity[o] {
			t.Errorf("no persona gives identity outcome %s", o)
		}
	}
	for _, l := range []Lookup{LookupTax, LookupHealthInsurance, LookupSocialInsurance} {
		for _, o := range []RecordOutcome{RecordFound, RecordNotFound, RecordInactive, RecordMismatch} {
			if !records[l][o] {
				t.Errorf("no persona gives %s outcome %s", l, o)
			}
		}
	}
}

// assertNoPII fails if err's text contains the query's ID number, name or date of birth.
func assertNoPII(t *testing.T, err error, q Query) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	for _, v := range []string{q.IDNumber, q.FullName, NormalizeName(q.FullName), q.DateOfBirth} {
		if len(v) >= 4 && strings.Contains(msg, v) {
			t.Errorf("error %q contains personal data", msg)
		}
	}
}
