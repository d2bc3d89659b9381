package mrtd_test

import (
	"testing"

	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
)

// BenchmarkVerifyPassive measures a full passive authentication (ParseSOD of the chip's
// EF.SOD, then VerifyPassive over four data groups) on one goroutine, and reports
// passive authentications per second. Run with -cpu 1 for the one-core figure.
func BenchmarkVerifyPassive(b *testing.B) {
	for _, alg := range []mrtdtest.Algorithm{mrtdtest.RSA2048, mrtdtest.ECDSAP256} {
		b.Run(alg.String(), func(b *testing.B) {
			p, err := mrtdtest.NewPKI(alg)
			if err != nil {
				b.Fatal(err)
			}
			dgs := testDGs()
			raw, err := p.BuildSOD(dgs)
			if err != nil {
				b.Fatal(err)
			}
			trust := p.Trust()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				sod, err := mrtd.ParseSOD(raw)
				if err != nil {
					b.Fatal(err)
				}
				if res := mrtd.VerifyPassive(sod, dgs, trust, p.Now); !res.Passed {
					b.Fatalf("failed: %v", res.FailureReasons())
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pa/s")
		})
	}
}
