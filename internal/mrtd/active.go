package mrtd

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"

	"github.com/idstream/idstream/internal/tlv"
)

// ErrActiveAuthFailed is returned (wrapped) by VerifyActive when the signature does not prove
// possession of the chip key over the nonce.
var ErrActiveAuthFailed = errors.New("mrtd: active authentication failed")

// TagDG15 is the application tag wrapping EF.DG15.
const TagDG15 = 0x6F

// ISO/IEC 10118-3 hash identifiers used in the two-byte ISO/IEC 9796-2 trailer (xx CC).
var iso9796HashIDs = map[byte]crypto.Hash{
	0x33: crypto.SHA1, 0x34: crypto.SHA256, 0x35: crypto.SHA512, 0x36: crypto.SHA384, 0x38: crypto.SHA224,
}

// ISO9796HashID returns the ISO/IEC 10118-3 identifier of h for a 9796-2 trailer, or 0.
func ISO9796HashID(h crypto.Hash) byte {
	for id, hh := range iso9796HashIDs {
		if hh == h {
			return id
		}
	}
	return 0
}

// ParseDG15 decodes EF.DG15 (tag 0x6F wrapping a SubjectPublicKeyInfo) into the chip's active
// authentication public key: *rsa.PublicKey or *ecdsa.PublicKey. EC keys given with explicit
// domain parameters are accepted when the parameters are those of P-224, P-256, P-384 or
// P-521. It returns an error wrapping ErrMalformed for bad encodings and
// ErrUnsupportedAlgorithm for other key types or curves (brainpool curves among them).
func ParseDG15(b []byte) (crypto.PublicKey, error) {
	outer, rest, err := tlv.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%w: DG15: %v", ErrMalformed, err)
	}
	if outer.Tag != TagDG15 || len(rest) > 0 {
		return nil, fmt.Errorf("%w: DG15 must be one element with tag 6F, got tag %X and %d trailing bytes", ErrMalformed, outer.Tag, len(rest))
	}
	spki, err := tlv.ToDER(outer.Value)
	if err != nil {
		return nil, fmt.Errorf("%w: DG15 SubjectPublicKeyInfo: %v", ErrMalformed, err)
	}
	return parsePublicKey(spki)
}

type spkiASN1 struct {
	Algorithm pkix.AlgorithmIdentifier
	PublicKey asn1.BitString
}

type ecParametersASN1 struct {
	Version int
	FieldID struct {
		Type  asn1.ObjectIdentifier
		Prime *big.Int
	}
	Curve struct {
		A, B []byte
		Seed asn1.BitString `asn1:"optional"`
	}
	Base     []byte
	Order    *big.Int
	Cofactor int `asn1:"optional"`
}

var namedCurveOIDs = []struct {
	curve elliptic.Curve
	oid   asn1.ObjectIdentifier
}{
	{elliptic.P224(), asn1.ObjectIdentifier{1, 3, 132, 0, 33}},
	{elliptic.P256(), asn1.ObjectIdentifier{1, 2, 840, 10045, 3, 1, 7}},
	{elliptic.P384(), asn1.ObjectIdentifier{1, 3, 132, 0, 34}},
	{elliptic.P521(), asn1.ObjectIdentifier{1, 3, 132, 0, 35}},
}

func parsePublicKey(spki []byte) (crypto.PublicKey, error) {
	var info spkiASN1
	if rest, err := asn1.Unmarshal(spki, &info); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("%w: SubjectPublicKeyInfo: %v", ErrMalformed, err)
	}
	if info.Algorithm.Algorithm.Equal(OIDECPublicKey) && info.Algorithm.Parameters.Tag == asn1.TagSequence {
		oid, err := namedCurveFromExplicit(info.Algorithm.Parameters.FullBytes)
		if err != nil {
			return nil, err
		}
		params, _ := asn1.Marshal(oid)
		info.Algorithm.Parameters = asn1.RawValue{FullBytes: params}
		if spki, err = asn1.Marshal(info); err != nil {
			return nil, fmt.Errorf("%w: re-encoding EC key: %v", ErrMalformed, err)
		}
	}
	pub, err := x509.ParsePKIXPublicKey(spki)
	if err != nil {
		return nil, fmt.Errorf("%w: public key: %v", ErrUnsupportedAlgorithm, err)
	}
	switch pub.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey:
		return pub, nil
	}
	return nil, fmt.Errorf("%w: %T chip key", ErrUnsupportedAlgorithm, pub)
}

// namedCurveFromExplicit recognises explicit prime-field parameters of a NIST curve.
func namedCurveFromExplicit(der []byte) (asn1.ObjectIdentifier, error) {
	var p ecParametersASN1
	if rest, err := asn1.Unmarshal(der, &p); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("%w: explicit EC parameters: %v", ErrMalformed, err)
	}
	if p.FieldID.Prime == nil || p.Order == nil {
		return nil, fmt.Errorf("%w: explicit EC parameters without prime or order", ErrMalformed)
	}
	a := new(big.Int).SetBytes(p.Curve.A)
	b := new(big.Int).SetBytes(p.Curve.B)
	for _, nc := range namedCurveOIDs {
		cp := nc.curve.Params()
		if cp.P.Cmp(p.FieldID.Prime) != 0 || cp.N.Cmp(p.Order) != 0 || cp.B.Cmp(b) != 0 {
			continue
		}
		if new(big.Int).Sub(cp.P, big.NewInt(3)).Cmp(a) != 0 {
			continue
		}
		//lint:ignore SA1019 only used to compare the base point encoding
		g := elliptic.Marshal(nc.curve, cp.Gx, cp.Gy)
		if subtle.ConstantTimeCompare(g, p.Base) != 1 {
			continue
		}
		return nc.oid, nil
	}
	return nil, fmt.Errorf("%w: explicit EC parameters of a curve other than P-224/256/384/521", ErrUnsupportedAlgorithm)
}

// VerifyActive verifies a chip's active authentication answer signature over nonce with the
// DG15 public key pub. For RSA keys it applies ISO/IEC 9796-2 digital signature scheme 1
// with partial message recovery (header 6A; trailer BC for SHA-1, or <hash id> CC), recovers
// M1 and compares hash(M1 || nonce) with the recovered hash in constant time; ecdsaHash is
// ignored. For ECDSA keys the signature is plain r||s (as chips return it) or ASN.1 DER, over
// ecdsaHash(nonce): pass the hash of DG14's ActiveAuthenticationInfo (see ActiveAuthHash).
// It returns nil when the signature is valid, an error wrapping ErrActiveAuthFailed when it
// is not (including the signature of another nonce, and a recovered block whose trailer
// names a hash this package does not know: an invalid signature recovers noise, which cannot
// be told from it), and ErrUnsupportedAlgorithm for other key types or ECDSA without
// ecdsaHash.
func VerifyActive(pub crypto.PublicKey, nonce, signature []byte, ecdsaHash crypto.Hash) error {
	if len(nonce) == 0 {
		return fmt.Errorf("%w: empty nonce", ErrActiveAuthFailed)
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return verifyISO9796(k, nonce, signature)
	case *ecdsa.PublicKey:
		if ecdsaHash == 0 || !ecdsaHash.Available() {
			return fmt.Errorf("%w: ECDSA active authentication needs a hash (DG14 ActiveAuthenticationInfo)", ErrUnsupportedAlgorithm)
		}
		h := ecdsaHash.New()
		h.Write(nonce)
		if !verifyECDSA(k, h.Sum(nil), signature) {
			return fmt.Errorf("%w: ECDSA signature does not verify over the nonce", ErrActiveAuthFailed)
		}
		return nil
	}
	return fmt.Errorf("%w: active authentication with a %T key", ErrUnsupportedAlgorithm, pub)
}

func verifyISO9796(pub *rsa.PublicKey, nonce, sig []byte) error {
	if pub.N == nil || pub.N.Sign() <= 0 || pub.E < 3 {
		return fmt.Errorf("%w: invalid RSA key", ErrUnsupportedAlgorithm)
	}
	k := (pub.N.BitLen() + 7) / 8
	if len(sig) == 0 || len(sig) > k {
		return fmt.Errorf("%w: RSA signature of %d bytes for a %d-byte modulus", ErrActiveAuthFailed, len(sig), k)
	}
	s := new(big.Int).SetBytes(sig)
	if s.Cmp(pub.N) >= 0 {
		return fmt.Errorf("%w: RSA signature not below the modulus", ErrActiveAuthFailed)
	}
	m := new(big.Int).Exp(s, big.NewInt(int64(pub.E)), pub.N)
	f := m.FillBytes(make([]byte, k))
	if f[k-1]&0x0F != 0x0C {
		// ISO/IEC 9796-2 permits the signature min(s, n-s): recover from n-m.
		m.Sub(pub.N, m)
		f = m.FillBytes(f)
	}
	// The header first: a block that is not a 9796-2 representative (an invalid signature
	// recovers noise) must read as a failed signature, not as an unknown trailer hash.
	if f[0] != 0x6A {
		return fmt.Errorf("%w: ISO/IEC 9796-2 header %02X, want 6A (partial recovery)", ErrActiveAuthFailed, f[0])
	}
	var hash crypto.Hash
	var trailer int
	switch {
	case f[k-1] == 0xBC:
		hash, trailer = crypto.SHA1, 1
	case f[k-1] == 0xCC:
		h, ok := iso9796HashIDs[f[k-2]]
		if !ok {
			// Noise from an invalid signature cannot be told from a hash this package does
			// not know (chips use SHA-1 and SHA-2): fail closed, naming the identifier.
			return fmt.Errorf("%w: ISO/IEC 9796-2 trailer names hash identifier %02X, none of the supported hashes", ErrActiveAuthFailed, f[k-2])
		}
		hash, trailer = h, 2
	default:
		return fmt.Errorf("%w: no ISO/IEC 9796-2 trailer (last byte %02X)", ErrActiveAuthFailed, f[k-1])
	}
	hLen := hash.Size()
	if 1+hLen+trailer > k {
		return fmt.Errorf("%w: modulus too short for %v", ErrActiveAuthFailed, hash)
	}
	m1 := f[1 : k-trailer-hLen]
	recovered := f[k-trailer-hLen : k-trailer]
	h := hash.New()
	h.Write(m1)
	h.Write(nonce)
	if subtle.ConstantTimeCompare(h.Sum(nil), recovered) != 1 {
		return fmt.Errorf("%w: recovered hash does not match M1 and the nonce", ErrActiveAuthFailed)
	}
	return nil
}
