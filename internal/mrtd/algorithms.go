package mrtd

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"

	// Register the hash implementations the SOD may name.
	_ "crypto/sha1"
	_ "crypto/sha256"
	_ "crypto/sha512"
)

// Object identifiers used by ICAO 9303 part 10/11/12 and CMS (RFC 5652).
var (
	OIDLDSSecurityObject = asn1.ObjectIdentifier{2, 23, 136, 1, 1, 1}
	OIDCSCAMasterList    = asn1.ObjectIdentifier{2, 23, 136, 1, 1, 2}
	OIDSignedData        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	OIDAttrContentType   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	OIDAttrMessageDigest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}

	OIDSHA1   = asn1.ObjectIdentifier{1, 3, 14, 3, 2, 26}
	OIDSHA224 = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 4}
	OIDSHA256 = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	OIDSHA384 = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 2}
	OIDSHA512 = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 3}

	OIDRSAEncryption   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
	OIDSHA1WithRSA     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 5}
	OIDSHA224WithRSA   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 14}
	OIDSHA256WithRSA   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	OIDSHA384WithRSA   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 12}
	OIDSHA512WithRSA   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 13}
	OIDRSASSAPSS       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 10}
	OIDMGF1            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 8}
	OIDECPublicKey     = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	OIDECDSAWithSHA1   = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 1}
	OIDECDSAWithSHA224 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 1}
	OIDECDSAWithSHA256 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	OIDECDSAWithSHA384 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 3}
	OIDECDSAWithSHA512 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 4}
)

// ErrUnsupportedAlgorithm is returned (wrapped) for a hash or signature algorithm this package
// does not implement.
var ErrUnsupportedAlgorithm = errors.New("mrtd: unsupported algorithm")

var hashOIDs = []struct {
	oid  asn1.ObjectIdentifier
	hash crypto.Hash
}{
	{OIDSHA1, crypto.SHA1}, {OIDSHA224, crypto.SHA224}, {OIDSHA256, crypto.SHA256},
	{OIDSHA384, crypto.SHA384}, {OIDSHA512, crypto.SHA512},
}

// HashFromOID maps a digest algorithm identifier to its hash. It returns an error wrapping
// ErrUnsupportedAlgorithm for anything but SHA-1, SHA-224, SHA-256, SHA-384 and SHA-512.
func HashFromOID(oid asn1.ObjectIdentifier) (crypto.Hash, error) {
	for _, h := range hashOIDs {
		if h.oid.Equal(oid) {
			return h.hash, nil
		}
	}
	return 0, fmt.Errorf("%w: digest algorithm %s", ErrUnsupportedAlgorithm, oid)
}

// OIDFromHash is the inverse of HashFromOID; it returns nil for an unsupported hash.
func OIDFromHash(h crypto.Hash) asn1.ObjectIdentifier {
	for _, e := range hashOIDs {
		if e.hash == h {
			return e.oid
		}
	}
	return nil
}

var ecdsaSigOIDs = []struct {
	oid  asn1.ObjectIdentifier
	hash crypto.Hash
}{
	{OIDECDSAWithSHA1, crypto.SHA1}, {OIDECDSAWithSHA224, crypto.SHA224},
	{OIDECDSAWithSHA256, crypto.SHA256}, {OIDECDSAWithSHA384, crypto.SHA384},
	{OIDECDSAWithSHA512, crypto.SHA512},
}

var rsaSigOIDs = []struct {
	oid  asn1.ObjectIdentifier
	hash crypto.Hash
}{
	{OIDSHA1WithRSA, crypto.SHA1}, {OIDSHA224WithRSA, crypto.SHA224},
	{OIDSHA256WithRSA, crypto.SHA256}, {OIDSHA384WithRSA, crypto.SHA384},
	{OIDSHA512WithRSA, crypto.SHA512},
}

// ActiveAuthHash maps the signatureAlgorithm of a DG14 ActiveAuthenticationInfo
// (ecdsa-with-SHA1/224/256/384/512) to the hash VerifyActive must use for an ECDSA chip key.
// It returns an error wrapping ErrUnsupportedAlgorithm for any other identifier.
func ActiveAuthHash(oid asn1.ObjectIdentifier) (crypto.Hash, error) {
	for _, e := range ecdsaSigOIDs {
		if e.oid.Equal(oid) {
			return e.hash, nil
		}
	}
	return 0, fmt.Errorf("%w: active authentication algorithm %s", ErrUnsupportedAlgorithm, oid)
}

// ECDSASignatureOID returns ecdsa-with-<hash>, or nil for an unsupported hash.
func ECDSASignatureOID(h crypto.Hash) asn1.ObjectIdentifier {
	for _, e := range ecdsaSigOIDs {
		if e.hash == h {
			return e.oid
		}
	}
	return nil
}

// RSASignatureOID returns <hash>WithRSAEncryption, or nil for an unsupported hash.
func RSASignatureOID(h crypto.Hash) asn1.ObjectIdentifier {
	for _, e := range rsaSigOIDs {
		if e.hash == h {
			return e.oid
		}
	}
	return nil
}

// PSSParameters is RSASSA-PSS-params (RFC 4055); absent fields take the RFC defaults
// (SHA-1, MGF1 with SHA-1, salt length 20, trailer field 1).
type PSSParameters struct {
	Hash         pkix.AlgorithmIdentifier `asn1:"explicit,optional,tag:0"`
	MGF          pkix.AlgorithmIdentifier `asn1:"explicit,optional,tag:1"`
	SaltLength   int                      `asn1:"explicit,optional,default:20,tag:2"`
	TrailerField int                      `asn1:"explicit,optional,default:1,tag:3"`
}

// signatureKind is the family of a CMS signature algorithm.
type signatureKind int

const (
	sigRSAPKCS1 signatureKind = iota + 1
	sigRSAPSS
	sigECDSA
)

// signatureScheme resolves a CMS signatureAlgorithm. digest is the SignerInfo's
// digestAlgorithm, used when the identifier does not name a hash (rsaEncryption,
// id-ecPublicKey).
func signatureScheme(alg pkix.AlgorithmIdentifier, digest crypto.Hash) (signatureKind, crypto.Hash, *rsa.PSSOptions, error) {
	for _, e := range rsaSigOIDs {
		if e.oid.Equal(alg.Algorithm) {
			return sigRSAPKCS1, e.hash, nil, nil
		}
	}
	for _, e := range ecdsaSigOIDs {
		if e.oid.Equal(alg.Algorithm) {
			return sigECDSA, e.hash, nil, nil
		}
	}
	switch {
	case alg.Algorithm.Equal(OIDRSAEncryption):
		return sigRSAPKCS1, digest, nil, nil
	case alg.Algorithm.Equal(OIDECPublicKey):
		return sigECDSA, digest, nil, nil
	case alg.Algorithm.Equal(OIDRSASSAPSS):
		p := PSSParameters{SaltLength: 20, TrailerField: 1}
		if len(alg.Parameters.FullBytes) > 0 && alg.Parameters.Tag != asn1.TagNull {
			rest, err := asn1.Unmarshal(alg.Parameters.FullBytes, &p)
			if err != nil || len(rest) > 0 {
				return 0, 0, nil, fmt.Errorf("%w: malformed RSASSA-PSS parameters", ErrMalformed)
			}
		}
		h := crypto.SHA1
		if len(p.Hash.Algorithm) > 0 {
			var err error
			if h, err = HashFromOID(p.Hash.Algorithm); err != nil {
				return 0, 0, nil, err
			}
		}
		mgfHash := crypto.SHA1
		if len(p.MGF.Algorithm) > 0 {
			if !p.MGF.Algorithm.Equal(OIDMGF1) {
				return 0, 0, nil, fmt.Errorf("%w: PSS mask generation %s", ErrUnsupportedAlgorithm, p.MGF.Algorithm)
			}
			var mh pkix.AlgorithmIdentifier
			if _, err := asn1.Unmarshal(p.MGF.Parameters.FullBytes, &mh); err != nil {
				return 0, 0, nil, fmt.Errorf("%w: malformed MGF1 parameters", ErrMalformed)
			}
			var err error
			if mgfHash, err = HashFromOID(mh.Algorithm); err != nil {
				return 0, 0, nil, err
			}
		}
		if mgfHash != h {
			return 0, 0, nil, fmt.Errorf("%w: PSS with MGF1 hash %v different from message hash %v", ErrUnsupportedAlgorithm, mgfHash, h)
		}
		if p.TrailerField != 1 {
			return 0, 0, nil, fmt.Errorf("%w: PSS trailer field %d", ErrUnsupportedAlgorithm, p.TrailerField)
		}
		if p.SaltLength < 0 {
			return 0, 0, nil, fmt.Errorf("%w: negative PSS salt length", ErrMalformed)
		}
		return sigRSAPSS, h, &rsa.PSSOptions{SaltLength: p.SaltLength, Hash: h}, nil
	}
	return 0, 0, nil, fmt.Errorf("%w: signature algorithm %s", ErrUnsupportedAlgorithm, alg.Algorithm)
}

// verifySignature checks sig over message with pub under the CMS signature algorithm alg.
// It returns an error wrapping ErrUnsupportedAlgorithm when alg or the key type is not
// supported, or errSignatureInvalid when the signature does not verify.
func verifySignature(pub crypto.PublicKey, alg pkix.AlgorithmIdentifier, digestAlg crypto.Hash, message, sig []byte) error {
	kind, h, pss, err := signatureScheme(alg, digestAlg)
	if err != nil {
		return err
	}
	if !h.Available() {
		return fmt.Errorf("%w: hash %v", ErrUnsupportedAlgorithm, h)
	}
	hh := h.New()
	hh.Write(message)
	digest := hh.Sum(nil)
	switch kind {
	case sigRSAPKCS1, sigRSAPSS:
		rk, ok := pub.(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("%w: RSA signature with a %T key", ErrUnsupportedAlgorithm, pub)
		}
		if kind == sigRSAPSS {
			err = rsa.VerifyPSS(rk, h, digest, sig, pss)
		} else {
			err = rsa.VerifyPKCS1v15(rk, h, digest, sig)
		}
		if err != nil {
			return fmt.Errorf("%w: %v", errSignatureInvalid, err)
		}
		return nil
	case sigECDSA:
		ek, ok := pub.(*ecdsa.PublicKey)
		if !ok {
			return fmt.Errorf("%w: ECDSA signature with a %T key", ErrUnsupportedAlgorithm, pub)
		}
		if !verifyECDSA(ek, digest, sig) {
			return errSignatureInvalid
		}
		return nil
	}
	return fmt.Errorf("%w: signature kind %d", ErrUnsupportedAlgorithm, kind)
}

var errSignatureInvalid = errors.New("mrtd: signature does not verify")

// verifyECDSA accepts an ASN.1 DER Ecdsa-Sig-Value or the plain r||s concatenation that
// chips return (each half the byte length of the curve order).
func verifyECDSA(pub *ecdsa.PublicKey, digest, sig []byte) bool {
	size := (pub.Curve.Params().N.BitLen() + 7) / 8
	if len(sig) == 2*size {
		der, err := asn1.Marshal(struct{ R, S *big.Int }{
			new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:]),
		})
		if err == nil && ecdsa.VerifyASN1(pub, digest, der) {
			return true
		}
	}
	return ecdsa.VerifyASN1(pub, digest, sig)
}
