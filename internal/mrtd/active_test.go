package mrtd_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"math/big"
	"testing"

	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/internal/tlv"
)

func TestVerifyActive(t *testing.T) {
	mk := func(k *mrtdtest.ChipKey, err error) *mrtdtest.ChipKey {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	keys := map[string]*mrtdtest.ChipKey{
		"RSA-1024 SHA-1":      mk(mrtdtest.NewRSAChipKey(1024, crypto.SHA1)),
		"RSA-1024 SHA-256":    mk(mrtdtest.NewRSAChipKey(1024, crypto.SHA256)),
		"RSA-2048 SHA-512":    mk(mrtdtest.NewRSAChipKey(2048, crypto.SHA512)),
		"ECDSA P-256 SHA-256": mk(mrtdtest.NewECDSAChipKey(elliptic.P256(), crypto.SHA256)),
		"ECDSA P-384 SHA-1":   mk(mrtdtest.NewECDSAChipKey(elliptic.P384(), crypto.SHA1)),
	}
	nonce := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	otherNonce := []byte{1, 2, 3, 4, 5, 6, 7, 9}
	for name, key := range keys {
		t.Run(name, func(t *testing.T) {
			dg15, err := key.DG15()
			if err != nil {
				t.Fatal(err)
			}
			pub, err := mrtd.ParseDG15(dg15)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := key.SignNonce(nonce)
			if err != nil {
				t.Fatal(err)
			}
			if err := mrtd.VerifyActive(pub, nonce, sig, key.Hash()); err != nil {
				t.Fatalf("right nonce: %v", err)
			}
			if err := mrtd.VerifyActive(pub, otherNonce, sig, key.Hash()); !errors.Is(err, mrtd.ErrActiveAuthFailed) {
				t.Fatalf("wrong nonce: err = %v, want ErrActiveAuthFailed", err)
			}
			bad := bytes.Clone(sig)
			bad[len(bad)/2] ^= 0x10
			if err := mrtd.VerifyActive(pub, nonce, bad, key.Hash()); !errors.Is(err, mrtd.ErrActiveAuthFailed) {
				t.Fatalf("tampered signature: err = %v, want ErrActiveAuthFailed", err)
			}
			if err := mrtd.VerifyActive(pub, nonce, nil, key.Hash()); !errors.Is(err, mrtd.ErrActiveAuthFailed) {
				t.Fatalf("empty signature: err = %v, want ErrActiveAuthFailed", err)
			}
			if _, isEC := pub.(*ecdsa.PublicKey); isEC {
				der, err := key.SignNonceASN1(nonce)
				if err != nil {
					t.Fatal(err)
				}
				if err := mrtd.VerifyActive(pub, nonce, der, key.Hash()); err != nil {
					t.Fatalf("ASN.1 signature: %v", err)
				}
				if err := mrtd.VerifyActive(pub, otherNonce, der, key.Hash()); !errors.Is(err, mrtd.ErrActiveAuthFailed) {
					t.Fatalf("ASN.1 signature, wrong nonce: err = %v", err)
				}
				if err := mrtd.VerifyActive(pub, nonce, sig, 0); !errors.Is(err, mrtd.ErrUnsupportedAlgorithm) {
					t.Fatalf("ECDSA without hash: err = %v, want ErrUnsupportedAlgorithm", err)
				}
			}
		})
	}
	t.Run("another chip's key", func(t *testing.T) {
		a, b := keys["RSA-1024 SHA-1"], mk(mrtdtest.NewRSAChipKey(1024, crypto.SHA1))
		sig, _ := a.SignNonce(nonce)
		if err := mrtd.VerifyActive(b.Public(), nonce, sig, 0); !errors.Is(err, mrtd.ErrActiveAuthFailed) {
			t.Fatalf("err = %v, want ErrActiveAuthFailed", err)
		}
	})
	t.Run("PKCS#1 v1.5 signature is not 9796-2", func(t *testing.T) {
		priv, err := rsa.GenerateKey(rand.Reader, 1024)
		if err != nil {
			t.Fatal(err)
		}
		h := crypto.SHA1.New()
		h.Write(nonce)
		sig, _ := rsa.SignPKCS1v15(nil, priv, crypto.SHA1, h.Sum(nil))
		if err := mrtd.VerifyActive(&priv.PublicKey, nonce, sig, 0); !errors.Is(err, mrtd.ErrActiveAuthFailed) {
			t.Fatalf("err = %v, want ErrActiveAuthFailed", err)
		}
	})
}

func TestParseDG15(t *testing.T) {
	key, err := mrtdtest.NewECDSAChipKey(elliptic.P256(), crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	dg15, _ := key.DG15()
	t.Run("explicit EC parameters", func(t *testing.T) {
		pub := key.Public().(*ecdsa.PublicKey)
		explicit := explicitP256SPKI(t, pub)
		got, err := mrtd.ParseDG15(tlv.Encode(0x6F, explicit))
		if err != nil {
			t.Fatal(err)
		}
		if !pub.Equal(got) {
			t.Fatal("explicit-parameter key differs")
		}
	})
	for name, b := range map[string][]byte{
		"empty":          nil,
		"wrong tag":      append([]byte{0x6E}, dg15[1:]...),
		"trailing bytes": append(bytes.Clone(dg15), 0),
		"not SPKI":       tlv.Encode(0x6F, []byte{0x30, 0x00}),
		"truncated":      dg15[:len(dg15)-3],
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := mrtd.ParseDG15(b); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// explicitP256SPKI encodes pub with explicit domain parameters, as many chips do.
func explicitP256SPKI(t *testing.T, pub *ecdsa.PublicKey) []byte {
	t.Helper()
	p := elliptic.P256().Params()
	type fieldID struct {
		Type  asn1.ObjectIdentifier
		Prime *big.Int
	}
	type curve struct{ A, B []byte }
	type ecParams struct {
		Version  int
		FieldID  fieldID
		Curve    curve
		Base     []byte
		Order    *big.Int
		Cofactor int
	}
	point, err := pub.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	g := append([]byte{4}, append(p.Gx.FillBytes(make([]byte, 32)), p.Gy.FillBytes(make([]byte, 32))...)...)
	params, err := asn1.Marshal(ecParams{1, fieldID{asn1.ObjectIdentifier{1, 2, 840, 10045, 1, 1}, p.P},
		curve{new(big.Int).Sub(p.P, big.NewInt(3)).FillBytes(make([]byte, 32)), p.B.FillBytes(make([]byte, 32))}, g, p.N, 1})
	if err != nil {
		t.Fatal(err)
	}
	type algID struct {
		Algorithm  asn1.ObjectIdentifier
		Parameters asn1.RawValue
	}
	spki, err := asn1.Marshal(struct {
		Alg algID
		Key asn1.BitString
	}{algID{mrtd.OIDECPublicKey, asn1.RawValue{FullBytes: params}}, asn1.BitString{Bytes: point, BitLength: 8 * len(point)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x509.ParsePKIXPublicKey(spki); err == nil {
		t.Fatal("crypto/x509 parsed explicit parameters: the test no longer exercises the mapping")
	}
	return spki
}

// TestVerifyActiveTamperedAlwaysFails flips each byte of a valid RSA answer in turn: an
// invalid signature recovers noise, and whatever that noise looks like (a trailer naming an
// unknown hash included), the answer must fail active authentication, never read as an
// unsupported algorithm.
func TestVerifyActiveTamperedAlwaysFails(t *testing.T) {
	key, err := mrtdtest.NewRSAChipKey(1024, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	dg15, err := key.DG15()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := mrtd.ParseDG15(dg15)
	if err != nil {
		t.Fatal(err)
	}
	nonce := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	sig, err := key.SignNonce(nonce)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sig {
		for _, flip := range []byte{0x01, 0x10, 0x80} {
			bad := bytes.Clone(sig)
			bad[i] ^= flip
			if err := mrtd.VerifyActive(pub, nonce, bad, key.Hash()); !errors.Is(err, mrtd.ErrActiveAuthFailed) {
				t.Fatalf("byte %d ^ %#x: err = %v, want ErrActiveAuthFailed", i, flip, err)
			}
		}
	}
}
