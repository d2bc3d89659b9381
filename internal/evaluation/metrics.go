package evaluation

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Rate is a count of successes out of a total.
type Rate struct {
	Hits  int `json:"hits"`
	Total int `json:"total"`
}

// Add counts one trial.
func (r *Rate) Add(hit bool) {
	r.Total++
	if hit {
		r.Hits++
	}
}

// Value is Hits/Total, or NaN when there was no trial.
func (r Rate) Value() float64 {
	if r.Total == 0 {
		return math.NaN()
	}
	return float64(r.Hits) / float64(r.Total)
}

// String is "hits/total (pct)", or "—" without trials.
func (r Rate) String() string {
	if r.Total == 0 {
		return "—"
	}
	return strconv.Itoa(r.Hits) + "/" + strconv.Itoa(r.Total) + " (" + fmtPct(r.Value()) + ")"
}

// NormalizeValue is the form field values are compared in: Unicode NFC, upper case, single
// spaces, no spaces around "," "/" "-" (diacritics are kept: "NGUYEN" is not "NGUYỄN").
func NormalizeValue(v string) string {
	v = strings.ToUpper(norm.NFC.String(v))
	v = strings.Join(strings.Fields(v), " ")
	for _, sep := range []string{",", "/", "-"} {
		v = strings.ReplaceAll(v, " "+sep, sep)
		v = strings.ReplaceAll(v, sep+" ", sep)
	}
	return v
}

// FieldMatch reports whether a value read for a field is the truth, after NormalizeValue.
func FieldMatch(truth, got string) bool {
	return NormalizeValue(truth) == NormalizeValue(got)
}

// Threshold figures of a score list where higher means "same person" or "live".

// ErrorRates returns, at threshold t (accept when score ≥ t), the share of positives
// rejected (false non-match / BPCER) and of negatives accepted (false match / APCER). A rate
// with nothing to count is NaN.
func ErrorRates(positives, negatives []float64, t float64) (falseReject, falseAccept float64) {
	falseReject, falseAccept = math.NaN(), math.NaN()
	if len(positives) > 0 {
		n := 0
		for _, s := range positives {
			if s < t {
				n++
			}
		}
		falseReject = float64(n) / float64(len(positives))
	}
	if len(negatives) > 0 {
		n := 0
		for _, s := range negatives {
			if s >= t {
				n++
			}
		}
		falseAccept = float64(n) / float64(len(negatives))
	}
	return falseReject, falseAccept
}

// DETPoint is one operating point of a detection error trade-off curve.
type DETPoint struct {
	Threshold   float64 `json:"threshold"`
	FalseReject float64 `json:"false_reject"` // FNMR or BPCER
	FalseAccept float64 `json:"false_accept"` // FMR or APCER
}

// DET returns the curve's operating points at every distinct score, in increasing threshold
// order (false accepts fall, false rejects rise).
func DET(positives, negatives []float64) []DETPoint {
	ts := slices.Concat(positives, negatives)
	slices.Sort(ts)
	ts = slices.Compact(ts)
	out := make([]DETPoint, 0, len(ts)+1)
	for _, t := range append(ts, math.Inf(1)) {
		fr, fa := ErrorRates(positives, negatives, t)
		out = append(out, DETPoint{Threshold: t, FalseReject: fr, FalseAccept: fa})
	}
	return out
}

// RejectAtAccept returns the smallest false-reject rate of a threshold whose false-accept
// rate is at most target, and that threshold. ok is false when either list is empty or the
// negatives are too few to support target by the rule of three (fewer than 3/target: with
// none of N negatives accepted, the 95 % upper bound of the rate is about 3/N), so a figure
// at FMR 0.1 % needs at least 3000 impostor pairs.
func RejectAtAccept(positives, negatives []float64, target float64) (falseReject, threshold float64, ok bool) {
	if len(positives) == 0 || len(negatives) == 0 || float64(len(negatives))*target < 3-1e-9 {
		return math.NaN(), math.NaN(), false
	}
	falseReject, threshold = math.Inf(1), math.NaN()
	for _, p := range DET(positives, negatives) {
		if p.FalseAccept <= target && p.FalseReject < falseReject {
			falseReject, threshold = p.FalseReject, p.Threshold
		}
	}
	return falseReject, threshold, !math.IsInf(falseReject, 1)
}

// fmtPct writes a share as a percentage with one decimal ("97.5 %"), "—" for NaN.
func fmtPct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64) + " %"
}
