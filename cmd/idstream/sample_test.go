package main

import (
	"bytes"
	"errors"
	"image"
	"testing"

	"github.com/idstream/idstream/internal/imagequality"
)

// TestSampleImages: every card kind of `idstream sample-image` (README's curl session
// uploads vehicle-front and vehicle-back) is a JPEG the default quality gate passes as a
// document, and an unknown kind is a usage error.
func TestSampleImages(t *testing.T) {
	gate := imagequality.NewGate(imagequality.DefaultThresholds())
	for _, kind := range []string{"vehicle-front", "vehicle-back", "id-front", "id-back", "passport"} {
		var out bytes.Buffer
		if err := runSampleImage([]string{"--kind", kind, "--seed", "1"}, &out); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		img, format, err := image.Decode(&out)
		if err != nil || format != "jpeg" {
			t.Fatalf("%s: %s, %v; want a JPEG", kind, format, err)
		}
		if res := gate.Assess(img, imagequality.Document); !res.Passed {
			t.Errorf("%s: the gate answers %v (framing %s)", kind, res.Reasons, res.Framing)
		}
	}
	if err := runSampleImage([]string{"--kind", "selfie"}, &bytes.Buffer{}); !errors.Is(err, errUsage) {
		t.Errorf("unknown kind: %v, want a usage error", err)
	}
}
