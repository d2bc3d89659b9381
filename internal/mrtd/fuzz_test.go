package mrtd_test

import (
	"crypto"
	"testing"

	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
)

// FuzzParseSOD feeds arbitrary bytes to ParseSOD (and, when it succeeds, to VerifyPassive):
// neither may panic. Seeds: testdata/fuzz/FuzzParseSOD plus SODs generated here.
func FuzzParseSOD(f *testing.F) {
	p, err := mrtdtest.NewPKI(mrtdtest.ECDSAP256)
	if err != nil {
		f.Fatal(err)
	}
	dgs := map[int][]byte{1: []byte("dg1"), 2: []byte("dg2")}
	for _, opts := range [][]mrtdtest.SODOption{
		nil,
		{mrtdtest.WithBER()},
		{mrtdtest.WithSignerBySKI(), mrtdtest.WithHash(crypto.SHA1)},
		{mrtdtest.WithLDSVersionInfo()},
	} {
		sod, err := p.BuildSOD(dgs, opts...)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(sod)
	}
	trust := p.Trust()
	f.Fuzz(func(t *testing.T, b []byte) {
		sod, err := mrtd.ParseSOD(b)
		if err != nil {
			if sod != nil {
				t.Fatal("non-nil SOD with an error")
			}
			return
		}
		res := mrtd.VerifyPassive(sod, dgs, trust, p.Now)
		if len(res.Checks) < 2 {
			t.Fatalf("only %d checks", len(res.Checks))
		}
	})
}

// FuzzParseDG15 checks ParseDG15 and VerifyActive never panic on arbitrary keys and answers.
func FuzzParseDG15(f *testing.F) {
	for _, k := range []func() (*mrtdtest.ChipKey, error){
		func() (*mrtdtest.ChipKey, error) { return mrtdtest.NewRSAChipKey(1024, crypto.SHA1) },
	} {
		key, err := k()
		if err != nil {
			f.Fatal(err)
		}
		dg15, _ := key.DG15()
		sig, _ := key.SignNonce([]byte("12345678"))
		f.Add(dg15, sig)
	}
	f.Fuzz(func(t *testing.T, dg15, sig []byte) {
		pub, err := mrtd.ParseDG15(dg15)
		if err != nil {
			return
		}
		_ = mrtd.VerifyActive(pub, []byte("12345678"), sig, crypto.SHA256)
	})
}
