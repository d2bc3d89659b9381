package mrtdtest_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
)

// TestSignerSavedAndLoaded: a SOD signed by a document signer saved and loaded again passes
// passive authentication against the CSCA directory it was saved with, as a service started
// with that --csca-dir checks it; the key is readable by its owner only; another PKI's CSCA
// does not anchor it.
func TestSignerSavedAndLoaded(t *testing.T) {
	p, err := mrtdtest.NewPKI(mrtdtest.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := p.SaveSigner(dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, mrtdtest.SignerFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("signer file: %v, %v", fi.Mode(), err)
	}
	loaded, err := mrtdtest.LoadSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	dgs := map[int][]byte{1: []byte("dg1"), 2: []byte("dg2")}
	raw, err := loaded.BuildSOD(dgs)
	if err != nil {
		t.Fatal(err)
	}
	sod, err := mrtd.ParseSOD(raw)
	if err != nil {
		t.Fatal(err)
	}
	trust, err := mrtd.LoadTrust(filepath.Join(dir, mrtdtest.SignerCSCADir))
	if err != nil {
		t.Fatal(err)
	}
	if res := mrtd.VerifyPassive(sod, dgs, trust, time.Now()); !res.Passed {
		t.Fatalf("a chip signed by the loaded signer: %v", res.FailureReasons())
	}
	other, err := mrtdtest.NewPKI(mrtdtest.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	if res := mrtd.VerifyPassive(sod, dgs, other.Trust(), time.Now()); res.Passed {
		t.Fatal("another CSCA anchored the loaded signer's chip")
	}
	if _, err := mrtdtest.LoadSigner(t.TempDir()); err == nil {
		t.Fatal("an empty directory loaded as a signer")
	}
	if err := other.SaveSigner(dir); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("another PKI saved over this one: %v, want fs.ErrExist", err)
	}
	if again, err := mrtdtest.LoadSigner(dir); err != nil || !again.CSCA.Certificate.Equal(p.CSCA.Certificate) {
		t.Fatalf("the PKI saved first is not the one there: %v", err)
	}
}
