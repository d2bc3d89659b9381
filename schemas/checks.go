package schemas

import "slices"

// Equal reports whether c and o are the same check: every field equal, optional ones by
// value (both unset, or both set to equal values).
func (c Check) Equal(o Check) bool {
	return c.Name == o.Name && c.Status == o.Status && c.Source == o.Source &&
		same(c.Score, o.Score) && same(c.Threshold, o.Threshold) && same(c.ReasonCode, o.ReasonCode) &&
		same(c.ModelVersion, o.ModelVersion) && same(c.CaptureID, o.CaptureID) && same(c.Detail, o.Detail)
}

// MergeChecks returns a new slice: cs with every check of add replacing the check of the
// same name, or appended in the order of add. It is how a session's state takes in the
// checks a group reports (the session group's fold): the one rule, which a group that
// reads the state uses too (ChecksChange) to tell whether its checks are news.
func MergeChecks(cs, add []Check) []Check {
	out := slices.Clone(cs)
	for _, a := range add {
		if i := slices.IndexFunc(out, func(c Check) bool { return c.Name == a.Name }); i >= 0 {
			out[i] = a
		} else {
			out = append(out, a)
		}
	}
	return out
}

// ChecksChange reports whether MergeChecks(cs, add) would change cs.
func ChecksChange(cs, add []Check) bool {
	for _, a := range add {
		i := slices.IndexFunc(cs, func(c Check) bool { return c.Name == a.Name })
		if i < 0 || !cs[i].Equal(a) {
			return true
		}
	}
	return false
}

func same[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
