package mrtdtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"math/big"

	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/tlv"
)

// ChipKey is a chip's active authentication key pair. Safe for concurrent use.
type ChipKey struct {
	key  crypto.Signer
	hash crypto.Hash
}

// NewRSAChipKey generates an RSA chip key of bits (1024 is what most chips carry) that signs
// with ISO/IEC 9796-2 scheme 1 and hash h: SHA-1 uses the one-byte trailer BC, other hashes
// the two-byte trailer <id> CC.
func NewRSAChipKey(bits int, h crypto.Hash) (*ChipKey, error) {
	if mrtd.ISO9796HashID(h) == 0 {
		return nil, fmt.Errorf("mrtdtest: no ISO/IEC 9796-2 identifier for %v", h)
	}
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: RSA chip key: %w", err)
	}
	return &ChipKey{key: k, hash: h}, nil
}

// NewECDSAChipKey generates an ECDSA chip key on curve that signs hash h of the nonce (the
// hash a DG14 ActiveAuthenticationInfo would name).
func NewECDSAChipKey(curve elliptic.Curve, h crypto.Hash) (*ChipKey, error) {
	k, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: ECDSA chip key: %w", err)
	}
	return &ChipKey{key: k, hash: h}, nil
}

// Public returns the public key.
func (k *ChipKey) Public() crypto.PublicKey { return k.key.Public() }

// Hash returns the hash the key signs with.
func (k *ChipKey) Hash() crypto.Hash { return k.hash }

// DG15 returns EF.DG15: tag 0x6F wrapping the SubjectPublicKeyInfo.
func (k *ChipKey) DG15() ([]byte, error) {
	spki, err := x509.MarshalPKIXPublicKey(k.key.Public())
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: DG15: %w", err)
	}
	return tlv.Encode(mrtd.TagDG15, spki), nil
}

// SignNonce answers INTERNAL AUTHENTICATE like a chip: for RSA an ISO/IEC 9796-2 scheme 1
// signature with partial message recovery (random M1, M2 = nonce); for ECDSA the plain r||s
// concatenation.
func (k *ChipKey) SignNonce(nonce []byte) ([]byte, error) {
	switch key := k.key.(type) {
	case *rsa.PrivateKey:
		return signISO9796(key, k.hash, nonce)
	case *ecdsa.PrivateKey:
		h := k.hash.New()
		h.Write(nonce)
		der, err := ecdsa.SignASN1(rand.Reader, key, h.Sum(nil))
		if err != nil {
			return nil, err
		}
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(der, &rs); err != nil {
			return nil, err
		}
		size := (key.Curve.Params().N.BitLen() + 7) / 8
		out := make([]byte, 2*size)
		rs.R.FillBytes(out[:size])
		rs.S.FillBytes(out[size:])
		return out, nil
	}
	return nil, fmt.Errorf("mrtdtest: %T chip key", k.key)
}

// SignNonceASN1 is SignNonce for ECDSA keys with an ASN.1 DER signature instead of r||s.
func (k *ChipKey) SignNonceASN1(nonce []byte) ([]byte, error) {
	key, ok := k.key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("mrtdtest: SignNonceASN1 needs an ECDSA key, have %T", k.key)
	}
	h := k.hash.New()
	h.Write(nonce)
	return ecdsa.SignASN1(rand.Reader, key, h.Sum(nil))
}

// signISO9796 computes F = 6A || M1 || H(M1 || nonce) || trailer and returns F^d mod n.
func signISO9796(key *rsa.PrivateKey, h crypto.Hash, nonce []byte) ([]byte, error) {
	k := (key.N.BitLen() + 7) / 8
	if key.N.BitLen()%8 != 0 {
		return nil, fmt.Errorf("mrtdtest: modulus of %d bits is not byte-aligned", key.N.BitLen())
	}
	trailer := []byte{0xBC}
	if h != crypto.SHA1 {
		trailer = []byte{mrtd.ISO9796HashID(h), 0xCC}
	}
	m1Len := k - 1 - h.Size() - len(trailer)
	if m1Len < 1 {
		return nil, fmt.Errorf("mrtdtest: %d-byte modulus too short for %v", k, h)
	}
	m1 := make([]byte, m1Len)
	if _, err := rand.Read(m1); err != nil {
		return nil, err
	}
	d := h.New()
	d.Write(m1)
	d.Write(nonce)
	f := make([]byte, 0, k)
	f = append(f, 0x6A)
	f = append(f, m1...)
	f = d.Sum(f)
	f = append(f, trailer...)
	s := new(big.Int).Exp(new(big.Int).SetBytes(f), key.D, key.N)
	return s.FillBytes(make([]byte, k)), nil
}
