package schemas

import (
	"slices"
	"testing"
)

// TestMergeChecks: a check replaces the one of its name in place, a new one is appended in
// the order given, the input is left as it was; ChecksChange is false exactly when the merge
// changes nothing (optional fields compared by value).
func TestMergeChecks(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cs := []Check{{Name: "a", Status: CheckPass, Score: f(0.5)}, {Name: "b", Status: CheckFail}}
	add := []Check{{Name: "c", Status: CheckPass}, {Name: "a", Status: CheckPass, Score: f(0.7)}}
	got := MergeChecks(cs, add)
	names := func(cs []Check) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(names(got), want) || *got[0].Score != 0.7 {
		t.Errorf("merged %v (a's score %v), want %v with a's score 0.7", names(got), *got[0].Score, want)
	}
	if *cs[0].Score != 0.5 || len(cs) != 2 {
		t.Errorf("input changed: %+v", cs)
	}
	if !ChecksChange(cs, add) {
		t.Error("ChecksChange = false for a new score and a new check")
	}
	if ChecksChange(got, []Check{{Name: "a", Status: CheckPass, Score: f(0.7)}}) {
		t.Error("ChecksChange = true for an equal check with its score in another pointer")
	}
	if !ChecksChange(got, []Check{{Name: "a", Status: CheckPass}}) {
		t.Error("ChecksChange = false for a check that lost its score")
	}
}
