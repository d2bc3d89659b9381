// Package faceeval measures the face engine on the face corpus (internal/face/facecorpus):
// liveness APCER/BPCER on bona fide photos and on attack renderings made from them, and face
// match FNMR/FMR on genuine and impostor pairs, each within one half of the corpus. The
// thresholds in face.Models were chosen from these figures on the calibration half; the
// held-out half is for reporting them (models/MODELS.md).
package faceeval

import (
	"fmt"
	"image"
	"math"
	"sort"

	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/face/facecorpus"
)

// LivenessSample is the engine's answer on one image: a bona fide photo or an attack.
type LivenessSample struct {
	PhotoID string
	Attack  facecorpus.Attack // "" for bona fide
	// Found is false when no face was detected (the pipeline then answers no_face: an attack
	// that hides the face is not accepted, a bona fide photo is rejected).
	Found bool
	face.Liveness
}

// Accepted reports whether the sample passes as live with liveness threshold t (model
// score ≥ t and the engine's 2-D signals below their limits).
func (s LivenessSample) Accepted(t float64) bool {
	return s.Found && s.Score >= t && s.Replay < face.SignalLimit && s.Print < face.SignalLimit
}

// largest returns the largest face of img (the corpus photos hold one person; an attack
// rendering may show a second, smaller face).
func largest(e *face.Engine, img image.Image) (face.Face, bool, error) {
	fs, err := e.Detect(img)
	if err != nil || len(fs) == 0 {
		return face.Face{}, false, err
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Box.Dx() > fs[j].Box.Dx() })
	return fs[0], true, nil
}

// Liveness runs the engine on every photo of split and on each attack of kinds rendered from
// it with seed (facecorpus.Render). progress, when not nil, is called after each photo.
func Liveness(e *face.Engine, c *facecorpus.Corpus, split string, kinds []facecorpus.Attack, seed uint64, progress func(done, total int)) ([]LivenessSample, error) {
	photos := c.Split(split)
	var out []LivenessSample
	run := func(img image.Image, id string, kind facecorpus.Attack) error {
		f, ok, err := largest(e, img)
		if err != nil {
			return fmt.Errorf("faceeval: %s %s: %w", id, kind, err)
		}
		s := LivenessSample{PhotoID: id, Attack: kind, Found: ok}
		if ok {
			if s.Liveness, err = e.Liveness(img, f); err != nil {
				return fmt.Errorf("faceeval: %s %s: %w", id, kind, err)
			}
		}
		out = append(out, s)
		return nil
	}
	for i, p := range photos {
		if err := run(p.Image, p.ID, ""); err != nil {
			return nil, err
		}
		for _, k := range kinds {
			img, err := facecorpus.Render(k, p.Image, p.Geometry(), seed+uint64(i))
			if err != nil {
				return nil, err
			}
			if err := run(img, p.ID, k); err != nil {
				return nil, err
			}
		}
		if progress != nil {
			progress(i+1, len(photos))
		}
	}
	return out, nil
}

// ErrorRates are ISO/IEC 30107-3 figures at one threshold.
type ErrorRates struct {
	Threshold float64
	// BPCER is the share of bona fide photos not accepted (Rejected of BonaFide).
	BPCER              float64
	Rejected, BonaFide int
	// APCER per attack kind: the share of its renderings accepted as live.
	APCER map[facecorpus.Attack]float64
	// Accepted and Attacks count per kind.
	Accepted, Attacks map[facecorpus.Attack]int
	// APCERMax is the largest APCER over the kinds.
	APCERMax float64
}

// Rates computes the error rates of samples at liveness threshold t.
func Rates(samples []LivenessSample, t float64) ErrorRates {
	r := ErrorRates{Threshold: t, APCER: map[facecorpus.Attack]float64{}, Accepted: map[facecorpus.Attack]int{}, Attacks: map[facecorpus.Attack]int{}}
	for _, s := range samples {
		if s.Attack == "" {
			r.BonaFide++
			if !s.Accepted(t) {
				r.Rejected++
			}
			continue
		}
		r.Attacks[s.Attack]++
		if s.Accepted(t) {
			r.Accepted[s.Attack]++
		}
	}
	if r.BonaFide > 0 {
		r.BPCER = float64(r.Rejected) / float64(r.BonaFide)
	}
	for k, n := range r.Attacks {
		r.APCER[k] = float64(r.Accepted[k]) / float64(n)
		r.APCERMax = math.Max(r.APCERMax, r.APCER[k])
	}
	return r
}

// String is one line: threshold, BPCER and APCER per kind with counts.
func (r ErrorRates) String() string {
	s := fmt.Sprintf("t=%.2f BPCER %5.1f%% (%d/%d)", r.Threshold, 100*r.BPCER, r.Rejected, r.BonaFide)
	for _, k := range facecorpus.Attacks {
		if n := r.Attacks[k]; n > 0 {
			s += fmt.Sprintf("  APCER %s %5.1f%% (%d/%d)", k, 100*r.APCER[k], r.Accepted[k], n)
		}
	}
	return s + fmt.Sprintf("  APCER max %.1f%%", 100*r.APCERMax)
}

// MatchScores are the cosine similarities of the genuine and impostor pairs of one half.
type MatchScores struct {
	Genuine, Impostor []float64
	// Missing counts photos without a detected face (their pairs are left out).
	Missing int
}

// Match embeds every photo of split (its largest face) and scores the corpus's genuine and
// impostor pairs of that half.
func Match(e *face.Engine, c *facecorpus.Corpus, split string) (MatchScores, error) {
	var m MatchScores
	emb := map[int][]float32{}
	for i, p := range c.Photos {
		if p.Split != split {
			continue
		}
		f, ok, err := largest(e, p.Image)
		if err != nil {
			return m, fmt.Errorf("faceeval: %s: %w", p.ID, err)
		}
		if !ok {
			m.Missing++
			continue
		}
		if emb[i], err = e.Embed(p.Image, f); err != nil {
			return m, fmt.Errorf("faceeval: %s: %w", p.ID, err)
		}
	}
	score := func(pairs []facecorpus.Pair, into *[]float64) {
		for _, pr := range pairs {
			a, b := emb[pr.A], emb[pr.B]
			if a != nil && b != nil {
				*into = append(*into, face.Cosine(a, b))
			}
		}
	}
	score(c.GenuinePairs(split), &m.Genuine)
	score(c.ImpostorPairs(split), &m.Impostor)
	sort.Float64s(m.Genuine)
	sort.Float64s(m.Impostor)
	return m, nil
}

// At returns FNMR (genuine below t) and FMR (impostors at or above t).
func (m MatchScores) At(t float64) (fnmr, fmr float64) {
	below := sort.SearchFloat64s(m.Genuine, t)
	atOrAbove := len(m.Impostor) - sort.SearchFloat64s(m.Impostor, t)
	if len(m.Genuine) > 0 {
		fnmr = float64(below) / float64(len(m.Genuine))
	}
	if len(m.Impostor) > 0 {
		fmr = float64(atOrAbove) / float64(len(m.Impostor))
	}
	return fnmr, fmr
}

// ThresholdAtFMR returns the lowest threshold whose FMR is at most fmr (just above the
// impostor score that would exceed it), and the FNMR there. With fewer impostor pairs than
// 1/fmr it is the threshold above the highest impostor score.
func (m MatchScores) ThresholdAtFMR(fmr float64) (t, fnmr float64) {
	if len(m.Impostor) == 0 {
		return 0, 0
	}
	allowed := int(math.Floor(fmr * float64(len(m.Impostor))))
	t = math.Nextafter(m.Impostor[len(m.Impostor)-1-allowed], math.Inf(1))
	fnmr, _ = m.At(t)
	return t, fnmr
}
