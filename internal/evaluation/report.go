package evaluation

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idstream/idstream/internal/mrz"
)

// GateAnswer is the quality gate's answer to one upload.
type GateAnswer struct {
	Step      string   `json:"step"`
	CaptureID string   `json:"capture_id,omitempty"`
	Kind      string   `json:"kind"`   // document | selfie
	Expect    string   `json:"expect"` // ExpectGood, ExpectAttack or a reason code
	Status    string   `json:"status"` // accepted | retake | pending | error (an HTTP error: Detail)
	Reasons   []string `json:"reasons,omitempty"`
	Millis    float64  `json:"ms"`               // how long the step request took
	Late      bool     `json:"late,omitempty"`   // answered pending, Status resolved later from the session
	Detail    string   `json:"detail,omitempty"` // HTTP status and problem code of an error
}

// Check is one check of a session as Data Get reports it.
type Check struct {
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	Score      *float64 `json:"score,omitempty"`
	Threshold  *float64 `json:"threshold,omitempty"`
	ReasonCode string   `json:"reason_code,omitempty"`
}

// Outcome is what one session gave.
type Outcome struct {
	Session       Session           `json:"session"`
	Gate          []GateAnswer      `json:"gate"`
	Status        string            `json:"status"` // the session's last status
	ExtractedType string            `json:"document_type,omitempty"`
	Fields        map[string]string `json:"fields,omitempty"` // extracted, canonical and other
	MRZ           map[string]string `json:"mrz,omitempty"`
	Checks        []Check           `json:"checks,omitempty"`
	Reasons       []string          `json:"reasons,omitempty"`
	Err           string            `json:"error,omitempty"`
}

// Decided reports whether the session ended verified or rejected.
func (o Outcome) Decided() bool { return o.Status == "verified" || o.Status == "rejected" }

// FaceScores are cosine similarities of face pairs, scored by the face engine the facematch
// group uses.
type FaceScores struct {
	Genuine   []float64 `json:"genuine"`  // two photos of one person
	Impostor  []float64 `json:"impostor"` // photos of two people
	Threshold float64   `json:"threshold"`
}

// LivenessScores are liveness scores (P(live), higher is live) of bona fide photos and of
// attack renderings by attack kind.
type LivenessScores struct {
	BonaFide  []float64            `json:"bona_fide"`
	Attacks   map[string][]float64 `json:"attacks"`
	Threshold float64              `json:"threshold"`
}

// AllAttacks returns every attack score.
func (l LivenessScores) AllAttacks() []float64 {
	var out []float64
	for _, k := range slices.Sorted(maps.Keys(l.Attacks)) {
		out = append(out, l.Attacks[k]...)
	}
	return out
}

// Report is the figures of one split.
type Report struct {
	Split     string    `json:"split"`
	Generated time.Time `json:"generated"`
	Sessions  int       `json:"sessions"`

	GoodRejected map[string]*Rate `json:"gate_good_rejected"` // by capture kind: good captures sent back (genuine sessions)
	BadCaught    map[string]*Rate `json:"gate_bad_caught"`    // by expected reason: bad captures sent back
	BadReason    map[string]*Rate `json:"gate_bad_reason"`    // by expected reason: sent back with that reason
	Unanswered   Rate             `json:"gate_unanswered"`    // uploads answered neither accepted nor retake
	GateMillis   [2]Number        `json:"gate_ms_p50_p99"`    // step request time of good captures
	Errors       int              `json:"errors"`             // sessions that could not be run to their end

	DocumentType map[string]*Rate            `json:"document_type"` // by true type
	Fields       map[string]map[string]*Rate `json:"fields"`        // type → field → exact matches
	Baseline     map[string]map[string]*Rate `json:"baseline"`      // the same for the Baseline reader
	MRZ          map[string]*Rate            `json:"mrz_exact"`     // by type

	Face     FaceFigures     `json:"face_match"`
	Liveness LivenessFigures `json:"liveness"`

	GenuineVerified   Rate `json:"genuine_verified"`
	ImpostorsVerified Rate `json:"impostors_verified"`
	AttacksVerified   Rate `json:"attacks_verified"`
	NotDecided        Rate `json:"not_decided"`
}

// FaceFigures are face match error rates.
type FaceFigures struct {
	Pairs       [2]int  `json:"pairs"` // genuine, impostor
	Threshold   float64 `json:"threshold"`
	FNMR        Number  `json:"fnmr"`
	FMR         Number  `json:"fmr"`
	FNMRAt01    Number  `json:"fnmr_at_fmr_0_1pct"` // NaN (null) when the impostor pairs are too few
	FNMRAt1     Number  `json:"fnmr_at_fmr_1pct"`
	GenuineMin  Number  `json:"genuine_min"`
	ImpostorMax Number  `json:"impostor_max"`
}

// LivenessFigures are presentation attack detection error rates at the threshold.
type LivenessFigures struct {
	BonaFide  int               `json:"bona_fide"`
	Attacks   int               `json:"attacks"`
	Threshold float64           `json:"threshold"`
	BPCER     Number            `json:"bpcer"`
	APCER     Number            `json:"apcer"`         // over every attack kind
	APCERBy   map[string]Number `json:"apcer_by_kind"` // per attack kind
	BPCERAt5  Number            `json:"bpcer_at_apcer_5pct"`
}

// Summarize computes the report of split from the sessions' outcomes and the score lists.
// A document's type, fields and MRZ are scored once, on its first session in outcomes that
// ran to its end (its impostor and attack sessions send the same pictures again); good
// captures are counted in genuine sessions only, for the same reason.
//
// baseline holds, per document id, the fields the Baseline reader found on its pictures; the
// report scores them beside idstream's own on the same documents.
func Summarize(c *Corpus, split string, outcomes []Outcome, baseline map[string]map[string]string, faces FaceScores, live LivenessScores) Report {
	r := Report{
		Split: split, Generated: time.Now().UTC().Truncate(time.Second),
		GoodRejected: map[string]*Rate{}, BadCaught: map[string]*Rate{}, BadReason: map[string]*Rate{},
		DocumentType: map[string]*Rate{}, Fields: map[string]map[string]*Rate{}, MRZ: map[string]*Rate{},
		Baseline: map[string]map[string]*Rate{},
	}
	rate := func(m map[string]*Rate, k string) *Rate {
		if m[k] == nil {
			m[k] = &Rate{}
		}
		return m[k]
	}
	read := map[string]bool{} // documents scored
	var millis []float64
	for _, o := range outcomes {
		if o.Session.Split != split {
			continue
		}
		r.Sessions++
		if o.Err != "" {
			r.Errors++
		}
		for _, g := range o.Gate {
			answered := g.Status == "accepted" || g.Status == "retake"
			r.Unanswered.Add(!answered)
			if !answered || g.Expect == ExpectAttack {
				continue // attacks are judged by liveness; unanswered uploads are counted above
			}
			retake := g.Status == "retake"
			if g.Expect == ExpectGood {
				// A document's pictures and a person's selfie come back in its impostor and
				// attack sessions: each good picture counts once, in its genuine session.
				if o.Session.Kind == Genuine {
					rate(r.GoodRejected, g.Kind).Add(retake)
					if !g.Late {
						millis = append(millis, g.Millis)
					}
				}
				continue
			}
			rate(r.BadCaught, g.Expect).Add(retake)
			rate(r.BadReason, g.Expect).Add(retake && slices.Contains(g.Reasons, g.Expect))
		}
		doc, ok := c.Document(o.Session.Document)
		if !ok {
			continue
		}
		r.endToEnd(doc, o)
		if read[doc.ID] || o.Err != "" {
			continue // scored once, on its first session that ran to its end
		}
		read[doc.ID] = true
		rate(r.DocumentType, doc.Type).Add(o.ExtractedType == doc.Type)
		fields := r.Fields[doc.Type]
		if fields == nil {
			fields = map[string]*Rate{}
			r.Fields[doc.Type] = fields
		}
		base := r.Baseline[doc.Type]
		if base == nil {
			base = map[string]*Rate{}
			r.Baseline[doc.Type] = base
		}
		for name, truth := range doc.Fields {
			rate(fields, name).Add(FieldMatch(truth, o.Fields[name]))
			if b, ok := baseline[doc.ID]; ok {
				rate(base, name).Add(FieldMatch(truth, b[name]))
			}
		}
		if len(doc.MRZ) > 0 {
			rate(r.MRZ, doc.Type).Add(mrzExact(doc.MRZ, o.MRZ))
		}
	}
	r.GateMillis = [2]Number{Number(percentile(millis, 0.5)), Number(percentile(millis, 0.99))}
	r.Face = faceFigures(faces)
	r.Liveness = livenessFigures(live)
	return r
}

// endToEnd counts the session's outcome by its kind.
func (r *Report) endToEnd(doc Document, o Outcome) {
	r.NotDecided.Add(!o.Decided())
	verified := o.Status == "verified"
	switch o.Session.Kind {
	case Genuine:
		if doc.Type != "legacy_id_card" { // every 9-digit card expired on 2024-12-31 (fraud.dates)
			r.GenuineVerified.Add(verified)
		}
	case Impostor:
		r.ImpostorsVerified.Add(verified)
	case Attack:
		r.AttacksVerified.Add(verified)
	}
}

// mrzExact reports whether the MRZ fields read equal every field of the true lines.
func mrzExact(lines []string, got map[string]string) bool {
	m, err := mrz.Parse(lines)
	if err != nil || len(got) == 0 {
		return false
	}
	for k, v := range m.FieldsAt(time.Now()) {
		if got[k] != v {
			return false
		}
	}
	return true
}

func faceFigures(s FaceScores) FaceFigures {
	f := FaceFigures{Pairs: [2]int{len(s.Genuine), len(s.Impostor)}, Threshold: s.Threshold}
	fnmr, fmr := ErrorRates(s.Genuine, s.Impostor, s.Threshold)
	at01, _, _ := RejectAtAccept(s.Genuine, s.Impostor, 0.001)
	at1, _, _ := RejectAtAccept(s.Genuine, s.Impostor, 0.01)
	f.FNMR, f.FMR, f.FNMRAt01, f.FNMRAt1 = Number(fnmr), Number(fmr), Number(at01), Number(at1)
	f.GenuineMin, f.ImpostorMax = Number(math.NaN()), Number(math.NaN())
	if len(s.Genuine) > 0 {
		f.GenuineMin = Number(slices.Min(s.Genuine))
	}
	if len(s.Impostor) > 0 {
		f.ImpostorMax = Number(slices.Max(s.Impostor))
	}
	return f
}

func livenessFigures(s LivenessScores) LivenessFigures {
	all := s.AllAttacks()
	f := LivenessFigures{BonaFide: len(s.BonaFide), Attacks: len(all), Threshold: s.Threshold, APCERBy: map[string]Number{}}
	bpcer, apcer := ErrorRates(s.BonaFide, all, s.Threshold)
	f.BPCER, f.APCER = Number(bpcer), Number(apcer)
	for k, v := range s.Attacks {
		_, a := ErrorRates(nil, v, s.Threshold)
		f.APCERBy[k] = Number(a)
	}
	at5, _, _ := RejectAtAccept(s.BonaFide, all, 0.05)
	f.BPCERAt5 = Number(at5)
	return f
}

// Target is one of the targets and whether the report meets it.
type Target struct {
	Name   string `json:"name"`
	Figure string `json:"figure"`
	Met    bool   `json:"met"`
}

// Targets returns the accuracy targets idstream holds itself to, judged on r.
func (r Report) Targets() []Target {
	var out []Target
	add := func(name, figure string, met bool) { out = append(out, Target{name, figure, met}) }
	good, bad := sumRates(r.GoodRejected), sumRates(r.BadCaught)
	add("gate false rejection ≤ 2 %", good.String(), good.Total > 0 && good.Value() <= 0.02)
	add("gate catch rate ≥ 95 %", bad.String(), bad.Total > 0 && bad.Value() >= 0.95)
	types := sumRates(r.DocumentType)
	add("document type ≥ 99 %", types.String(), types.Total > 0 && types.Value() >= 0.99)
	m := sumRates(r.MRZ)
	add("MRZ exact 100 %", m.String(), m.Total > 0 && m.Hits == m.Total)
	for _, t := range slices.Sorted(maps.Keys(r.Fields)) {
		want := 0.95
		if t == "chip_id_card" {
			want = 0.98
		}
		worst, worstName := Rate{}, ""
		for _, name := range slices.Sorted(maps.Keys(r.Fields[t])) {
			f := *r.Fields[t][name]
			if worstName == "" || f.Value() < worst.Value() {
				worst, worstName = f, name
			}
		}
		add(fmt.Sprintf("%s every field ≥ %.0f %%", t, 100*want), "worst "+worstName+" "+worst.String(),
			worst.Total > 0 && worst.Value() >= want)
	}
	behind := []string{}
	for _, t := range slices.Sorted(maps.Keys(r.Fields)) {
		for _, name := range slices.Sorted(maps.Keys(r.Fields[t])) {
			if b := r.Baseline[t][name]; b != nil && b.Total > 0 && r.Fields[t][name].Hits < b.Hits {
				behind = append(behind, t+"."+name)
			}
		}
	}
	add("ahead of the baseline on every field", "behind on "+fmt.Sprint(len(behind))+" "+strings.Join(behind, " "), len(behind) == 0)
	add("face FNMR ≤ 1 % at FMR 0.1 %", fmtPct(float64(r.Face.FNMRAt01)), !math.IsNaN(float64(r.Face.FNMRAt01)) && r.Face.FNMRAt01 <= 0.01)
	l := r.Liveness
	add("liveness BPCER ≤ 5 % at APCER ≤ 5 % (configured threshold)", "BPCER "+fmtPct(float64(l.BPCER))+", APCER "+fmtPct(float64(l.APCER)),
		l.BonaFide > 0 && l.Attacks > 0 && l.BPCER <= 0.05 && l.APCER <= 0.05)
	add("genuine verified ≥ 95 %", r.GenuineVerified.String(), r.GenuineVerified.Total > 0 && r.GenuineVerified.Value() >= 0.95)
	add("impostors verified 0", r.ImpostorsVerified.String(), r.ImpostorsVerified.Total > 0 && r.ImpostorsVerified.Hits == 0)
	return out
}

func sumRates(m map[string]*Rate) Rate {
	var s Rate
	for _, r := range m {
		s.Hits += r.Hits
		s.Total += r.Total
	}
	return s
}

// WriteText prints the report as tables a person reads.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("idstream eval — split %s, %d sessions\n\n", r.Split, r.Sessions)
	p("quality gate (answer p50 / p99 %s / %s ms; uploads unanswered %s)\t\n", fmtNum(r.GateMillis[0]), fmtNum(r.GateMillis[1]), r.Unanswered.String())
	for _, k := range slices.Sorted(maps.Keys(r.GoodRejected)) {
		p("  good %s captures sent back\t%s\n", k, r.GoodRejected[k])
	}
	for _, k := range slices.Sorted(maps.Keys(r.BadCaught)) {
		p("  %s captures caught\t%s\twith that reason %s\n", k, r.BadCaught[k], r.BadReason[k])
	}
	p("\ndocuments\t\n")
	for _, t := range slices.Sorted(maps.Keys(r.DocumentType)) {
		p("  %s type recognised\t%s\n", t, r.DocumentType[t])
		if m := r.MRZ[t]; m != nil {
			p("  %s MRZ exact\t%s\n", t, m)
		}
		p("    field\tidstream\tbaseline (plain Tesseract)\n")
		for _, f := range slices.Sorted(maps.Keys(r.Fields[t])) {
			base := "—"
			if b := r.Baseline[t][f]; b != nil {
				base = b.String()
			}
			p("    %s\t%s\t%s\n", f, r.Fields[t][f], base)
		}
	}
	f := r.Face
	p("\nface match (%d genuine, %d impostor pairs)\t\n", f.Pairs[0], f.Pairs[1])
	p("  at threshold %.3f\tFNMR %s\tFMR %s\n", f.Threshold, fmtPct(float64(f.FNMR)), fmtPct(float64(f.FMR)))
	p("  FNMR at FMR 1 %% / 0.1 %%\t%s / %s\t(— : too few impostor pairs to resolve)\n", fmtPct(float64(f.FNMRAt1)), fmtPct(float64(f.FNMRAt01)))
	p("  lowest genuine / highest impostor\t%s / %s\n", fmtNum(f.GenuineMin), fmtNum(f.ImpostorMax))
	l := r.Liveness
	p("\nliveness (%d bona fide, %d attacks)\t\n", l.BonaFide, l.Attacks)
	p("  at threshold %.3f\tBPCER %s\tAPCER %s\n", l.Threshold, fmtPct(float64(l.BPCER)), fmtPct(float64(l.APCER)))
	for _, k := range slices.Sorted(maps.Keys(l.APCERBy)) {
		p("    APCER %s\t%s\n", k, fmtPct(float64(l.APCERBy[k])))
	}
	p("  BPCER at APCER 5 %% (threshold picked on this split: for information)\t%s\n", fmtPct(float64(l.BPCERAt5)))
	p("\nend to end\t\n")
	p("  genuine people verified\t%s\t(9-digit cards excluded: expired by law)\n", r.GenuineVerified.String())
	p("  impostors verified\t%s\n", r.ImpostorsVerified.String())
	p("  attacks verified\t%s\n", r.AttacksVerified.String())
	p("  sessions not decided\t%s\n", r.NotDecided.String())
	p("  sessions that failed to run\t%d\n", r.Errors)
	p("\ntargets\t\n")
	for _, t := range r.Targets() {
		mark := "MISSED"
		if t.Met {
			mark = "met"
		}
		p("  %s\t%s\t%s\n", t.Name, t.Figure, mark)
	}
	return tw.Flush()
}

// percentile returns the q-quantile (nearest rank) of v, NaN when empty.
func percentile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// fmtNum writes a figure with three decimals, "—" when undefined.
func fmtNum(n Number) string {
	if math.IsNaN(float64(n)) {
		return "—"
	}
	return strconv.FormatFloat(float64(n), 'f', 3, 64)
}
