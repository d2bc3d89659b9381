package idnumber

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/registry"
)

func TestProvinceCodes(t *testing.T) {
	codes := ProvinceCodes()
	if len(codes) != 63 || codes[0] != "001" || codes[len(codes)-1] != "096" {
		t.Fatalf("%d codes, first %s, last %s", len(codes), codes[0], codes[len(codes)-1])
	}
	if _, ok := ProvinceName("003"); ok {
		t.Fatal("003 is not assigned")
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want Info
	}{
		{"001090012345", Info{"001", "Hà Nội", 1900, SexMale, 1990}},
		{"038148003344", Info{"038", "Thanh Hóa", 1900, SexFemale, 1948}},
		{"031303007890", Info{"031", "Hải Phòng", 2000, SexFemale, 2003}},
		{"079 2 05-000.001", Info{"079", "Hồ Chí Minh", 2000, SexMale, 2005}},
		{"096415123456", Info{"096", "Cà Mau", 2100, SexMale, 2115}},
	} {
		got, err := Parse(tc.id)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.id, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "00109001234", "0010900123456", "00109001234A", "003090012345", "097090012345", "000090012345"} {
		if _, err := Parse(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) error = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestConsistent(t *testing.T) {
	info, err := Parse("001090012345") // man born 1990
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		dob  time.Time
		sex  string
		want []Mismatch
	}{
		{day("1990-03-15"), SexMale, nil},
		{day("1990-03-15"), "", nil},
		{time.Time{}, "X", nil},
		{day("1991-03-15"), SexMale, []Mismatch{MismatchBirthYear}},
		{day("2090-03-15"), SexMale, []Mismatch{MismatchCentury}},
		{day("1990-03-15"), SexFemale, []Mismatch{MismatchSex}},
		{day("2001-01-01"), SexFemale, []Mismatch{MismatchCentury, MismatchBirthYear, MismatchSex}},
	} {
		if got := Consistent(info, tc.dob, tc.sex); !slices.Equal(got, tc.want) {
			t.Errorf("Consistent(%v, %q) = %v, want %v", tc.dob, tc.sex, got, tc.want)
		}
	}
}

// Every sandbox persona's id number is documented as consistent with its data.
func TestSandboxPersonasAreConsistent(t *testing.T) {
	for _, p := range registry.Personas() {
		info, err := Parse(p.IDNumber)
		if err != nil {
			t.Fatalf("%s: %v", p.Key, err)
		}
		dob, _ := time.Parse(time.DateOnly, p.DateOfBirth)
		if m := Consistent(info, dob, p.Sex); m != nil {
			t.Errorf("%s: mismatches %v", p.Key, m)
		}
	}
}

func TestHash(t *testing.T) {
	key := []byte("secret")
	a := Hash(key, "001099012345")
	if len(a) != 64 || a != Hash(key, " 001-099.012 345 ") {
		t.Fatalf("hash %q is not stable under normalisation", a)
	}
	if a == Hash(key, "001099012346") || a == Hash([]byte("other"), "001099012345") {
		t.Fatal("different ids or keys give the same hash")
	}
	if Hash(key, "c1234567") != Hash(key, "C1234567") {
		t.Fatal("hash is case sensitive")
	}
	// The value the edge and the ClickHouse sink stored before this package.
	m := hmac.New(sha256.New, []byte("k"))
	m.Write([]byte("001099012345"))
	if got, want := Hash([]byte("k"), "001 099 012 345"), hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("Hash = %s, want %s", got, want)
	}
}
