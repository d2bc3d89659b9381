package faceeval_test

import (
	"testing"

	"github.com/idstream/idstream/internal/face/facecorpus"
	"github.com/idstream/idstream/internal/face/faceeval"
	"github.com/idstream/idstream/internal/face/facetest"
)

// The configured liveness threshold on the calibration half, where it was chosen (figures in
// face.DefaultLivenessThreshold and MODELS.md): counts over the whole half, not single images.
// The renderings are deterministic, so the counts are those measured, with one image of slack
// for floating-point differences between machines.
func TestLivenessOnCalibrationHalf(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 112 attacks (about a minute)")
	}
	env := facetest.New(t)
	e := env.Engine(t)
	c := env.Corpus(t)
	samples, err := faceeval.Liveness(e, c, facecorpus.Calibration, facecorpus.Attacks, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := faceeval.Rates(samples, e.Config().LivenessThreshold)
	t.Log(r)
	if accepted := r.BonaFide - r.Rejected; r.BonaFide != 28 || accepted < 19 {
		t.Errorf("bona fide accepted %d of %d, want at least 19 of 28 (measured 20)", accepted, r.BonaFide)
	}
	// measured accepted: print 1, screen 0, cut-out 3, mask 1 of 28 each
	for kind, max := range map[facecorpus.Attack]int{facecorpus.Print: 2, facecorpus.Screen: 1, facecorpus.Cutout: 4, facecorpus.Mask: 2} {
		if r.Attacks[kind] != 28 || r.Accepted[kind] > max {
			t.Errorf("%s: %d of %d renderings accepted as live, want at most %d of 28", kind, r.Accepted[kind], r.Attacks[kind], max)
		}
	}
	// Without the model, the screen renderings are still caught by the replay signal.
	caught := 0
	for _, s := range samples {
		if s.Attack == facecorpus.Screen && (!s.Found || s.Replay >= 0.5) {
			caught++
		}
	}
	if caught < 24 { // measured 25
		t.Errorf("replay signal caught %d of 28 screen renderings", caught)
	}
}

// The configured match threshold on the calibration half: every impostor pair below it,
// every genuine pair at or above it.
func TestMatchOnCalibrationHalf(t *testing.T) {
	env := facetest.New(t)
	e := env.Engine(t)
	c := env.Corpus(t)
	m, err := faceeval.Match(e, c, facecorpus.Calibration)
	if err != nil {
		t.Fatal(err)
	}
	th := e.Config().MatchThreshold
	fnmr, fmr := m.At(th)
	t.Logf("%d genuine, %d impostor pairs: FNMR %.3f, FMR %.4f at %.2f", len(m.Genuine), len(m.Impostor), fnmr, fmr, th)
	if len(m.Genuine) < 2 || len(m.Impostor) < 300 || m.Missing != 0 {
		t.Fatalf("corpus pairs: %d genuine, %d impostor, %d photos without a face", len(m.Genuine), len(m.Impostor), m.Missing)
	}
	if fmr != 0 || fnmr != 0 {
		t.Errorf("at %.2f: FNMR %.3f, FMR %.4f; want 0 and 0 on the half the threshold was chosen on", th, fnmr, fmr)
	}
}

func TestRatesAndThresholds(t *testing.T) {
	s := []faceeval.LivenessSample{
		{Found: true}, {Found: true}, {Found: false}, {Found: true, Attack: facecorpus.Print}, {Found: true, Attack: facecorpus.Print}, {Found: false, Attack: facecorpus.Mask},
	}
	s[0].Score, s[1].Score, s[3].Score, s[4].Score = 0.9, 0.3, 0.95, 0.1
	s[3].Print = 0.7 // the print signal rejects it whatever the score
	r := faceeval.Rates(s, 0.5)
	if r.Rejected != 2 || r.BonaFide != 3 || r.Accepted[facecorpus.Print] != 0 || r.Attacks[facecorpus.Mask] != 1 || r.APCERMax != 0 {
		t.Errorf("rates %+v", r)
	}
	m := faceeval.MatchScores{Genuine: []float64{0.3, 0.6, 0.8}, Impostor: []float64{-0.1, 0.1, 0.2, 0.5}}
	if fnmr, fmr := m.At(0.5); fnmr != 1.0/3 || fmr != 0.25 {
		t.Errorf("At(0.5) = %v, %v", fnmr, fmr)
	}
	if th, fnmr := m.ThresholdAtFMR(0.001); !(th > 0.5 && th < 0.5001) || fnmr != 1.0/3 {
		t.Errorf("ThresholdAtFMR = %v, %v", th, fnmr)
	}
}
