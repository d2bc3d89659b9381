package mrz

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, that every error is one of the package's,
// and that an accepted zone is self-consistent: its check digits agree with CheckDigit and
// Valid is the conjunction of Checks. Seeds live in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, z := range [][]string{specimenTD1, specimenTD1Long, specimenTD2, specimenTD3, specimenMRVA, specimenMRVB, syntheticCCCD} {
		f.Add(strings.Join(z, "\n"))
	}
	f.Add("")
	f.Add("I<UTOD23145890<<<<<<<<<<<<<<<<\n3407127M9507122UTO<<<<<<<<<<<2\nSTEVENSON<<PETER<JOHN<<<<<<<<<")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := Parse(strings.Split(s, "\n"))
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrCharacter) && !errors.Is(err, ErrTooLong) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		valid := true
		for _, ok := range m.Checks {
			valid = valid && ok
		}
		if valid != m.Valid || len(m.Checks) == 0 {
			t.Fatalf("Valid %v with checks %v", m.Valid, m.Checks)
		}
		f := m.Fields()
		if v, ok := f[FieldSex]; ok && v != "M" && v != "F" && v != "X" {
			t.Fatalf("sex %q", v)
		}
	})
}
