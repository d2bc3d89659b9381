package mrtd_test

import (
	"bytes"
	"crypto"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/internal/tlv"
)

// testDGs returns plausible data groups: DG1 with a TD1 MRZ, DG2, DG13, DG14.
func testDGs() map[int][]byte {
	mrz := "IDVNM0990123450001099012345<<<" + "9903151M3003152VNM<<<<<<<<<<<0" + "NGUYEN<<VAN<A<<<<<<<<<<<<<<<<<"
	return map[int][]byte{
		1:  tlv.Encode(0x61, tlv.Encode(0x5F1F, []byte(mrz))),
		2:  tlv.Encode(0x75, bytes.Repeat([]byte{0xFF, 0xD8, 0x42}, 500)),
		13: tlv.Encode(0x6D, []byte("\x30\x06\x02\x01\x01\x0c\x01\x41")),
		14: tlv.Encode(0x6E, []byte{0x31, 0x00}),
	}
}

func newPKI(t testing.TB, alg mrtdtest.Algorithm) *mrtdtest.PKI {
	t.Helper()
	p, err := mrtdtest.NewPKI(alg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// flipIn flips one bit of the first occurrence of needle inside b (a copy).
func flipIn(t *testing.T, b, needle []byte) []byte {
	t.Helper()
	i := bytes.Index(b, needle)
	if i < 0 {
		t.Fatal("needle not found in SOD")
	}
	out := bytes.Clone(b)
	out[i+len(needle)/2] ^= 0x01
	return out
}

func TestVerifyPassive(t *testing.T) {
	pkis := map[mrtdtest.Algorithm]*mrtdtest.PKI{}
	for _, a := range []mrtdtest.Algorithm{mrtdtest.ECDSAP256, mrtdtest.RSA2048, mrtdtest.RSAPSS2048} {
		pkis[a] = newPKI(t, a)
	}
	type tc struct {
		name string
		alg  mrtdtest.Algorithm
		opts func(p *mrtdtest.PKI) []mrtdtest.SODOption
		// mutate changes the encoded SOD; sod is parsed to find the bytes to change.
		mutate func(t *testing.T, raw []byte, sod *mrtd.SOD) []byte
		dgs    func(map[int][]byte)
		trust  func(p *mrtdtest.PKI) *mrtd.Trust
		at     func(p *mrtdtest.PKI) time.Time
		// fails maps each check expected to fail to its reason; every other check must pass.
		fails map[string]string
	}
	none := func(*mrtdtest.PKI) []mrtdtest.SODOption { return nil }
	tests := []tc{
		{name: "valid ECDSA", alg: mrtdtest.ECDSAP256, opts: none},
		{name: "valid RSA", alg: mrtdtest.RSA2048, opts: none},
		{name: "valid RSA-PSS", alg: mrtdtest.RSAPSS2048, opts: none},
		{name: "valid ECDSA SHA-384", alg: mrtdtest.ECDSAP256, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithHash(crypto.SHA384)}
		}},
		{name: "valid RSA SHA-1 with LDS version info", alg: mrtdtest.RSA2048, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithHash(crypto.SHA1), mrtdtest.WithLDSVersionInfo()}
		}},
		{name: "valid RSA-PSS SHA-512", alg: mrtdtest.RSAPSS2048, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithHash(crypto.SHA512)}
		}},
		{name: "PSS signature from an RSA PKCS#1 PKI", alg: mrtdtest.RSA2048, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithAlgorithm(mrtdtest.RSAPSS2048)}
		}},
		{name: "signer by SKI ECDSA", alg: mrtdtest.ECDSAP256, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithSignerBySKI()}
		}},
		{name: "signer by SKI RSA", alg: mrtdtest.RSA2048, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithSignerBySKI()}
		}},
		{name: "BER input ECDSA", alg: mrtdtest.ECDSAP256, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithBER()}
		}},
		{name: "BER input RSA-PSS by SKI", alg: mrtdtest.RSAPSS2048, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithBER(), mrtdtest.WithSignerBySKI()}
		}},
		{name: "tampered DG13", alg: mrtdtest.ECDSAP256, opts: none,
			dgs:   func(d map[int][]byte) { d[13] = bytes.Clone(d[13]); d[13][len(d[13])-1] ^= 1 },
			fails: map[string]string{"dg13_hash": mrtd.ReasonDGHashMismatch}},
		{name: "tampered DG1 RSA", alg: mrtdtest.RSA2048, opts: none,
			dgs:   func(d map[int][]byte) { d[1] = bytes.Clone(d[1]); d[1][10] = 'X' },
			fails: map[string]string{"dg1_hash": mrtd.ReasonDGHashMismatch}},
		{name: "DG not in SOD", alg: mrtdtest.ECDSAP256, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithoutDGHash(13)}
		}, fails: map[string]string{"dg13_hash": mrtd.ReasonDGNotInSOD}},
		{name: "extra DG supplied", alg: mrtdtest.RSAPSS2048, opts: none,
			dgs:   func(d map[int][]byte) { d[11] = []byte{0x6B, 0x00} },
			fails: map[string]string{"dg11_hash": mrtd.ReasonDGNotInSOD}},
		{name: "no data groups", alg: mrtdtest.ECDSAP256, opts: none,
			dgs: func(d map[int][]byte) {
				for k := range d {
					delete(d, k)
				}
			},
			fails: map[string]string{mrtd.CheckDataGroups: mrtd.ReasonNoDataGroups}},
		{name: "tampered signature ECDSA", alg: mrtdtest.ECDSAP256, opts: none,
			mutate: func(t *testing.T, raw []byte, sod *mrtd.SOD) []byte { return flipIn(t, raw, sod.Signer.Signature) },
			fails:  map[string]string{mrtd.CheckSignature: mrtd.ReasonSignatureInvalid}},
		{name: "tampered signature RSA", alg: mrtdtest.RSA2048, opts: none,
			mutate: func(t *testing.T, raw []byte, sod *mrtd.SOD) []byte { return flipIn(t, raw, sod.Signer.Signature) },
			fails:  map[string]string{mrtd.CheckSignature: mrtd.ReasonSignatureInvalid}},
		{name: "tampered signature RSA-PSS", alg: mrtdtest.RSAPSS2048, opts: none,
			mutate: func(t *testing.T, raw []byte, sod *mrtd.SOD) []byte { return flipIn(t, raw, sod.Signer.Signature) },
			fails:  map[string]string{mrtd.CheckSignature: mrtd.ReasonSignatureInvalid}},
		{name: "tampered DG hash inside the signed content", alg: mrtdtest.ECDSAP256, opts: none,
			mutate: func(t *testing.T, raw []byte, sod *mrtd.SOD) []byte { return flipIn(t, raw, sod.DataGroupHashes[2]) },
			fails:  map[string]string{mrtd.CheckSignature: mrtd.ReasonMessageDigestMismatch, "dg2_hash": mrtd.ReasonDGHashMismatch}},
		{name: "untrusted CSCA", alg: mrtdtest.ECDSAP256, opts: func(p *mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithSigner(p.RogueDS)}
		}, fails: map[string]string{mrtd.CheckChain: mrtd.ReasonCSCAUntrusted}},
		{name: "untrusted CSCA RSA", alg: mrtdtest.RSA2048, opts: func(p *mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithSigner(p.RogueDS)}
		}, fails: map[string]string{mrtd.CheckChain: mrtd.ReasonCSCAUntrusted}},
		{name: "no trust anchors", alg: mrtdtest.ECDSAP256, opts: none,
			trust: func(*mrtdtest.PKI) *mrtd.Trust { return nil },
			fails: map[string]string{mrtd.CheckChain: mrtd.ReasonCSCAUntrusted}},
		{name: "expired DS", alg: mrtdtest.ECDSAP256, opts: func(p *mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithSigner(p.ExpiredDS)}
		}, fails: map[string]string{mrtd.CheckChain: mrtd.ReasonDSExpired}},
		{name: "expired DS RSA-PSS", alg: mrtdtest.RSAPSS2048, opts: func(p *mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithSigner(p.ExpiredDS)}
		}, fails: map[string]string{mrtd.CheckChain: mrtd.ReasonDSExpired}},
		{name: "DS not yet valid", alg: mrtdtest.ECDSAP256, opts: none,
			at:    func(p *mrtdtest.PKI) time.Time { return p.Now.Add(-60 * 24 * time.Hour) },
			fails: map[string]string{mrtd.CheckChain: mrtd.ReasonDSNotYetValid}},
		{name: "expired CSCA", alg: mrtdtest.ECDSAP256, opts: func(p *mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithSigner(p.DSUnderExpiredCSCA)}
		}, trust: func(p *mrtdtest.PKI) *mrtd.Trust { return mrtd.NewTrust(p.ExpiredCSCA.Certificate) },
			fails: map[string]string{mrtd.CheckChain: mrtd.ReasonCSCAExpired}},
		{name: "expired CSCA RSA", alg: mrtdtest.RSA2048, opts: func(p *mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithSigner(p.DSUnderExpiredCSCA)}
		}, trust: func(p *mrtdtest.PKI) *mrtd.Trust {
			return mrtd.NewTrust(p.ExpiredCSCA.Certificate, p.CSCA.Certificate)
		}, fails: map[string]string{mrtd.CheckChain: mrtd.ReasonCSCAExpired}},
		{name: "DS certificate not embedded", alg: mrtdtest.ECDSAP256, opts: func(*mrtdtest.PKI) []mrtdtest.SODOption {
			return []mrtdtest.SODOption{mrtdtest.WithoutCertificates()}
		}, fails: map[string]string{mrtd.CheckSignature: mrtd.ReasonDSNotFound, mrtd.CheckChain: mrtd.ReasonDSNotFound}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pkis[tt.alg]
			dgs := testDGs()
			raw, err := p.BuildSOD(maps.Clone(dgs), tt.opts(p)...)
			if err != nil {
				t.Fatal(err)
			}
			if tt.mutate != nil {
				sod, err := mrtd.ParseSOD(raw)
				if err != nil {
					t.Fatal(err)
				}
				raw = tt.mutate(t, raw, sod)
			}
			if tt.dgs != nil {
				tt.dgs(dgs)
			}
			trust := p.Trust()
			if tt.trust != nil {
				trust = tt.trust(p)
			}
			at := p.Now
			if tt.at != nil {
				at = tt.at(p)
			}
			sod, err := mrtd.ParseSOD(raw)
			if err != nil {
				t.Fatalf("ParseSOD: %v", err)
			}
			res := mrtd.VerifyPassive(sod, dgs, trust, at)
			if want := len(tt.fails) == 0; res.Passed != want {
				t.Errorf("Passed = %v, want %v; checks %+v", res.Passed, want, res.Checks)
			}
			names := map[string]bool{}
			for _, c := range res.Checks {
				names[c.Name] = true
				want, shouldFail := tt.fails[c.Name]
				switch {
				case shouldFail && (c.Passed || c.Reason != want):
					t.Errorf("check %s: passed=%v reason=%q, want failure %q (%s)", c.Name, c.Passed, c.Reason, want, c.Detail)
				case !shouldFail && !c.Passed:
					t.Errorf("check %s failed unexpectedly: %s (%s)", c.Name, c.Reason, c.Detail)
				case c.Passed && c.Reason != "":
					t.Errorf("check %s passed with reason %q", c.Name, c.Reason)
				}
			}
			for name := range tt.fails {
				if !names[name] {
					t.Errorf("check %s missing from %+v", name, res.Checks)
				}
			}
			for n := range dgs {
				if !names[mrtd.DGCheckName(n)] {
					t.Errorf("no check for supplied data group %d", n)
				}
			}
			if !names[mrtd.CheckSignature] || !names[mrtd.CheckChain] {
				t.Errorf("signature or chain check missing: %+v", res.Checks)
			}
			if res.Passed && (res.DS == nil || res.CSCA == nil) {
				t.Error("passed without DS or CSCA in the result")
			}
		})
	}
}

func TestParseSOD(t *testing.T) {
	p := newPKI(t, mrtdtest.ECDSAP256)
	dgs := testDGs()

	t.Run("fields", func(t *testing.T) {
		raw, err := p.BuildSOD(dgs, mrtdtest.WithHash(crypto.SHA384), mrtdtest.WithLDSVersionInfo())
		if err != nil {
			t.Fatal(err)
		}
		sod, err := mrtd.ParseSOD(raw)
		if err != nil {
			t.Fatal(err)
		}
		if sod.HashAlgorithm != crypto.SHA384 || sod.Version != 1 || sod.LDSVersion != "0108" || sod.UnicodeVersion != "040000" {
			t.Errorf("hash %v version %d lds %q unicode %q", sod.HashAlgorithm, sod.Version, sod.LDSVersion, sod.UnicodeVersion)
		}
		if len(sod.DataGroupHashes) != len(dgs) {
			t.Errorf("%d DG hashes, want %d", len(sod.DataGroupHashes), len(dgs))
		}
		h := crypto.SHA384.New()
		h.Write(dgs[13])
		if !bytes.Equal(sod.DataGroupHashes[13], h.Sum(nil)) {
			t.Error("DG13 hash differs")
		}
		if c := sod.SignerCertificate(); c == nil || !c.Equal(p.DS.Certificate) {
			t.Error("signer certificate is not the DS")
		}
		if sod.Signer.Issuer == nil || sod.Signer.SerialNumber.Cmp(p.DS.Certificate.SerialNumber) != 0 {
			t.Error("issuer and serial number not decoded")
		}
	})
	t.Run("signer by SKI", func(t *testing.T) {
		raw, err := p.BuildSOD(dgs, mrtdtest.WithSignerBySKI())
		if err != nil {
			t.Fatal(err)
		}
		sod, err := mrtd.ParseSOD(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sod.Signer.SubjectKeyID, p.DS.Certificate.SubjectKeyId) || sod.Signer.Issuer != nil {
			t.Errorf("SKI %X issuer %X", sod.Signer.SubjectKeyID, sod.Signer.Issuer)
		}
	})
	t.Run("BER is really BER", func(t *testing.T) {
		raw, err := p.BuildSOD(dgs, mrtdtest.WithBER())
		if err != nil {
			t.Fatal(err)
		}
		top, _, err := tlv.Parse(raw)
		if err != nil || !top.Indefinite {
			t.Fatalf("BER SOD not indefinite-length: %v", err)
		}
		der, _ := p.BuildSOD(dgs)
		a, err1 := mrtd.ParseSOD(raw)
		b, err2 := mrtd.ParseSOD(der)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !maps.EqualFunc(a.DataGroupHashes, b.DataGroupHashes, bytes.Equal) {
			t.Error("BER and DER SODs disagree")
		}
	})
	t.Run("wrong content type", func(t *testing.T) {
		raw, err := p.BuildSOD(dgs, mrtdtest.WithContentType(mrtd.OIDCSCAMasterList))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mrtd.ParseSOD(raw); !errors.Is(err, mrtd.ErrWrongContentType) {
			t.Fatalf("err = %v, want ErrWrongContentType", err)
		}
	})
	t.Run("rejects", func(t *testing.T) {
		good, _ := p.BuildSOD(dgs)
		for name, b := range map[string][]byte{
			"empty":          nil,
			"truncated":      good[:len(good)-10],
			"wrong tag":      append([]byte{0x6E}, good[1:]...),
			"trailing bytes": append(bytes.Clone(good), 0x00),
			"not CMS":        tlv.Encode(0x77, tlv.Encode(0x30, []byte{0x02, 0x01, 0x00})),
		} {
			if _, err := mrtd.ParseSOD(b); err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
	})
}
