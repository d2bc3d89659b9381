package docgen

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkPhotograph(b *testing.B) {
	rd := newTestRenderer(b)
	r := rand.New(rand.NewPCG(1, 2))
	d, err := rd.Render(NewPerson(r, testRef), ChipIDCard, HeldOut, r, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Photograph(d.Sides[StepFront], HeldOut, r)
	}
}

func BenchmarkRender(b *testing.B) {
	rd := newTestRenderer(b)
	r := rand.New(rand.NewPCG(1, 2))
	p := NewPerson(r, testRef)
	for b.Loop() {
		if _, err := rd.Render(p, ChipIDCard, HeldOut, r, nil); err != nil {
			b.Fatal(err)
		}
	}
}
