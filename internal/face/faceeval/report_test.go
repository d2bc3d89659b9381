package faceeval_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/idstream/idstream/internal/face/facecorpus"
	"github.com/idstream/idstream/internal/face/faceeval"
	"github.com/idstream/idstream/internal/face/facetest"
)

// TestReport prints the liveness and face match figures of one half of the corpus:
//
//	IDSTREAM_FACE_REPORT=calibration go test -run TestReport -v -timeout 30m ./internal/face/faceeval/
//	IDSTREAM_FACE_REPORT=heldout     go test -run TestReport -v -timeout 30m ./internal/face/faceeval/
//
// It asserts nothing: the thresholds are chosen from the calibration figures (MODELS.md).
func TestReport(t *testing.T) {
	split := os.Getenv("IDSTREAM_FACE_REPORT")
	if split == "" {
		t.Skip("set IDSTREAM_FACE_REPORT=calibration or heldout")
	}
	env := facetest.New(t)
	e := env.Engine(t)
	c := env.Corpus(t)
	samples, err := faceeval.Liveness(e, c, split, facecorpus.Attacks, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("liveness on %s (bona fide photos and one rendering of each attack per photo):\n", split)
	for _, s := range samples {
		fmt.Printf("  %-8s %-48s found=%-5v score=%.3f replay=%.2f print=%.2f\n", s.Attack, s.PhotoID, s.Found, s.Score, s.Replay, s.Print)
	}
	for _, th := range []float64{0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99} {
		fmt.Println("  " + faceeval.Rates(samples, th).String())
	}
	fmt.Println("  at the configured threshold: " + faceeval.Rates(samples, e.Config().LivenessThreshold).String())

	m, err := faceeval.Match(e, c, split)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("face match on %s: %d genuine pairs, %d impostor pairs, %d photos without a face\n", split, len(m.Genuine), len(m.Impostor), m.Missing)
	fmt.Printf("  genuine scores %v\n", round(m.Genuine))
	if n := len(m.Impostor); n > 0 {
		fmt.Printf("  impostor scores: max %.3f, 99.9th %.3f, 99th %.3f, 95th %.3f, median %.3f\n", m.Impostor[n-1], m.Impostor[n*999/1000], m.Impostor[n*99/100], m.Impostor[n*95/100], m.Impostor[n/2])
	}
	for _, fmr := range []float64{0.001, 0.01} {
		th, fnmr := m.ThresholdAtFMR(fmr)
		fmt.Printf("  FMR %.1f%%: threshold %.3f, FNMR %.1f%%\n", 100*fmr, th, 100*fnmr)
	}
	fnmr, fmr := m.At(e.Config().MatchThreshold)
	fmt.Printf("  at the configured threshold %.2f: FNMR %.1f%%, FMR %.2f%%\n", e.Config().MatchThreshold, 100*fnmr, 100*fmr)
}

func round(v []float64) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = fmt.Sprintf("%.2f", x)
	}
	return out
}
