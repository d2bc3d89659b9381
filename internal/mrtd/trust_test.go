package mrtd_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
)

func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadTrust(t *testing.T) {
	p := newPKI(t, mrtdtest.ECDSAP256)
	other := newPKI(t, mrtdtest.ECDSAP256)
	dgs := testDGs()
	sodRaw, err := p.BuildSOD(dgs)
	if err != nil {
		t.Fatal(err)
	}
	sod, err := mrtd.ParseSOD(sodRaw)
	if err != nil {
		t.Fatal(err)
	}
	pemCert := func(c *mrtdtest.Cert) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate.Raw})
	}
	ml, err := p.BuildMasterList(p.MasterListSigner, []*x509.Certificate{p.CSCA.Certificate, other.CSCA.Certificate})
	if err != nil {
		t.Fatal(err)
	}
	mlBER, err := p.BuildMasterList(p.MasterListSigner, []*x509.Certificate{p.CSCA.Certificate}, mrtdtest.WithBER(), mrtdtest.WithSignerBySKI())
	if err != nil {
		t.Fatal(err)
	}
	// Signed by a signer the list's CSCAs did not issue.
	mlRogue, err := p.BuildMasterList(p.RogueDS, []*x509.Certificate{p.CSCA.Certificate})
	if err != nil {
		t.Fatal(err)
	}
	wrongType, err := p.BuildMasterList(p.MasterListSigner, []*x509.Certificate{p.CSCA.Certificate}, mrtdtest.WithContentType(mrtd.OIDLDSSecurityObject))
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Clone(ml)
	tampered[len(tampered)-5] ^= 0x01 // inside the signature

	tests := []struct {
		name      string
		files     map[string][]byte
		wantErr   error // nil: load must succeed
		anyErr    bool
		wantCerts int
		verifies  bool // the SOD by p.DS chains to a loaded anchor
	}{
		{name: "PEM certificate", files: map[string][]byte{"csca.pem": pemCert(p.CSCA)}, wantCerts: 1, verifies: true},
		{name: "DER certificate and hidden file", files: map[string][]byte{"csca.cer": p.CSCA.Certificate.Raw, ".notes": []byte("x")}, wantCerts: 1, verifies: true},
		{name: "other country only", files: map[string][]byte{"other.pem": pemCert(other.CSCA)}, wantCerts: 1, verifies: false},
		{name: "master list DER", files: map[string][]byte{"icao.ml": ml}, wantCerts: 2, verifies: true},
		{name: "master list BER, signer by SKI", files: map[string][]byte{"icao.ml": mlBER}, wantCerts: 1, verifies: true},
		{name: "master list in PEM CMS block", files: map[string][]byte{"icao.pem": pem.EncodeToMemory(&pem.Block{Type: "CMS", Bytes: ml})}, wantCerts: 2, verifies: true},
		{name: "master list and the same CSCA as a file", files: map[string][]byte{"icao.ml": ml, "csca.pem": pemCert(p.CSCA)}, wantCerts: 2, verifies: true},
		{name: "master list signer unchained", files: map[string][]byte{"rogue.ml": mlRogue}, wantErr: mrtd.ErrMasterListSigner},
		{name: "master list tampered", files: map[string][]byte{"bad.ml": tampered}, wantErr: mrtd.ErrMasterListSigner},
		{name: "master list wrong content type", files: map[string][]byte{"x.ml": wrongType}, wantErr: mrtd.ErrWrongContentType},
		{name: "empty directory", files: map[string][]byte{}, wantErr: mrtd.ErrNoAnchors},
		{name: "garbage file", files: map[string][]byte{"junk.bin": []byte("not a certificate")}, anyErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				writeFile(t, dir, name, data)
			}
			trust, err := mrtd.LoadTrust(dir)
			if tt.wantErr != nil || tt.anyErr {
				if err == nil {
					t.Fatalf("loaded %d anchors, want an error", trust.Len())
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if trust.Len() != tt.wantCerts {
				t.Errorf("%d anchors, want %d", trust.Len(), tt.wantCerts)
			}
			res := mrtd.VerifyPassive(sod, dgs, trust, p.Now)
			if res.Passed != tt.verifies {
				t.Errorf("passive authentication passed = %v, want %v (%v)", res.Passed, tt.verifies, res.FailureReasons())
			}
		})
	}
	t.Run("missing directory", func(t *testing.T) {
		if _, err := mrtd.LoadTrust(filepath.Join(t.TempDir(), "absent")); err == nil {
			t.Fatal("no error for a missing directory")
		}
	})
}
