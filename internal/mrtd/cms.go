package mrtd

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"

	"github.com/idstream/idstream/internal/tlv"
)

// ErrMalformed is wrapped by every error about a structure that does not decode.
var ErrMalformed = errors.New("mrtd: malformed structure")

// maxCertificates bounds the certificates accepted from one CMS structure (a CSCA master
// list holds a few hundred).
const maxCertificates = 4096

// SignerInfo is a CMS SignerInfo (RFC 5652 section 5.3) with its signed attributes decoded.
type SignerInfo struct {
	// Issuer (raw DER Name) and SerialNumber identify the signer's certificate when the
	// signer is identified by issuerAndSerialNumber; both are nil otherwise.
	Issuer       []byte
	SerialNumber *big.Int
	// SubjectKeyID identifies the signer's certificate when the signer is identified by
	// subjectKeyIdentifier; nil otherwise.
	SubjectKeyID []byte
	// DigestAlgorithm hashes the encapsulated content for the message-digest attribute.
	DigestAlgorithm    crypto.Hash
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Signature          []byte
	// SignedAttrs is the DER SET OF Attribute the signature covers (tag 0x31).
	SignedAttrs []byte
	// ContentType and MessageDigest are the values of the two mandatory signed attributes.
	ContentType   asn1.ObjectIdentifier
	MessageDigest []byte
}

// signedData is a decoded CMS SignedData.
type signedData struct {
	ContentType  asn1.ObjectIdentifier
	Content      []byte
	Certificates []*x509.Certificate
	Signers      []SignerInfo
}

type contentInfoASN1 struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"explicit,tag:0"`
}

type encapContentInfoASN1 struct {
	EContentType asn1.ObjectIdentifier
	EContent     []byte `asn1:"explicit,optional,tag:0"`
}

type signedDataASN1 struct {
	Version          int
	DigestAlgorithms asn1.RawValue
	EncapContentInfo encapContentInfoASN1
	Certificates     asn1.RawValue    `asn1:"optional,tag:0"`
	CRLs             asn1.RawValue    `asn1:"optional,tag:1"`
	SignerInfos      []signerInfoASN1 `asn1:"set"`
}

type signerInfoASN1 struct {
	Version            int
	SID                asn1.RawValue
	DigestAlgorithm    pkix.AlgorithmIdentifier
	SignedAttrs        asn1.RawValue `asn1:"optional,tag:0"`
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Signature          []byte
	UnsignedAttrs      asn1.RawValue `asn1:"optional,tag:1"`
}

type issuerAndSerialASN1 struct {
	Issuer asn1.RawValue
	Serial *big.Int
}

type attributeASN1 struct {
	Type   asn1.ObjectIdentifier
	Values asn1.RawValue `asn1:"set"`
}

// parseSignedData decodes a DER ContentInfo carrying SignedData.
func parseSignedData(der []byte) (*signedData, error) {
	var ci contentInfoASN1
	rest, err := asn1.Unmarshal(der, &ci)
	if err != nil {
		return nil, fmt.Errorf("%w: ContentInfo: %v", ErrMalformed, err)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("%w: %d bytes after ContentInfo", ErrMalformed, len(rest))
	}
	if !ci.ContentType.Equal(OIDSignedData) {
		return nil, fmt.Errorf("%w: ContentInfo type %s is not signedData", ErrMalformed, ci.ContentType)
	}
	var sd signedDataASN1
	if rest, err = asn1.Unmarshal(ci.Content.Bytes, &sd); err != nil {
		return nil, fmt.Errorf("%w: SignedData: %v", ErrMalformed, err)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("%w: %d bytes after SignedData", ErrMalformed, len(rest))
	}
	if sd.EncapContentInfo.EContent == nil {
		return nil, fmt.Errorf("%w: SignedData without encapsulated content", ErrMalformed)
	}
	out := &signedData{ContentType: sd.EncapContentInfo.EContentType, Content: sd.EncapContentInfo.EContent}
	if len(sd.Certificates.Bytes) > 0 {
		certs, err := tlv.ParseAll(sd.Certificates.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: certificates: %v", ErrMalformed, err)
		}
		if len(certs) > maxCertificates {
			return nil, fmt.Errorf("%w: %d certificates (limit %d)", ErrMalformed, len(certs), maxCertificates)
		}
		for i, c := range certs {
			if c.Tag != 0x30 {
				continue // other CertificateChoices (attribute certificates) carry no keys we use
			}
			cert, err := x509.ParseCertificate(c.Raw)
			if err != nil {
				return nil, fmt.Errorf("%w: certificate %d: %v", ErrMalformed, i, err)
			}
			out.Certificates = append(out.Certificates, cert)
		}
	}
	if len(sd.SignerInfos) == 0 {
		return nil, fmt.Errorf("%w: SignedData without signer", ErrMalformed)
	}
	for i, raw := range sd.SignerInfos {
		si, err := decodeSignerInfo(raw)
		if err != nil {
			return nil, fmt.Errorf("signer %d: %w", i, err)
		}
		out.Signers = append(out.Signers, si)
	}
	return out, nil
}

func decodeSignerInfo(raw signerInfoASN1) (SignerInfo, error) {
	var si SignerInfo
	switch {
	case raw.SID.Class == asn1.ClassUniversal && raw.SID.Tag == asn1.TagSequence:
		var ias issuerAndSerialASN1
		if rest, err := asn1.Unmarshal(raw.SID.FullBytes, &ias); err != nil || len(rest) > 0 {
			return si, fmt.Errorf("%w: issuerAndSerialNumber", ErrMalformed)
		}
		si.Issuer, si.SerialNumber = ias.Issuer.FullBytes, ias.Serial
	case raw.SID.Class == asn1.ClassContextSpecific && raw.SID.Tag == 0 && !raw.SID.IsCompound:
		if len(raw.SID.Bytes) == 0 {
			return si, fmt.Errorf("%w: empty subjectKeyIdentifier", ErrMalformed)
		}
		si.SubjectKeyID = raw.SID.Bytes
	default:
		return si, fmt.Errorf("%w: signer identifier with class %d tag %d", ErrMalformed, raw.SID.Class, raw.SID.Tag)
	}
	h, err := HashFromOID(raw.DigestAlgorithm.Algorithm)
	if err != nil {
		return si, err
	}
	si.DigestAlgorithm = h
	si.SignatureAlgorithm = raw.SignatureAlgorithm
	si.Signature = raw.Signature
	if len(raw.SignedAttrs.FullBytes) == 0 {
		return si, fmt.Errorf("%w: signer without signed attributes (ICAO 9303 requires them)", ErrMalformed)
	}
	// The signature covers the DER SET OF encoding: the [0] IMPLICIT tag replaced by SET.
	set := append([]byte{0x31}, raw.SignedAttrs.FullBytes[1:]...)
	si.SignedAttrs = set
	var attrs []attributeASN1
	if rest, err := asn1.UnmarshalWithParams(set, &attrs, "set"); err != nil || len(rest) > 0 {
		return si, fmt.Errorf("%w: signed attributes: %v", ErrMalformed, err)
	}
	for _, a := range attrs {
		switch {
		case a.Type.Equal(OIDAttrContentType):
			if si.ContentType != nil {
				return si, fmt.Errorf("%w: duplicate content-type attribute", ErrMalformed)
			}
			var oid asn1.ObjectIdentifier
			if rest, err := asn1.Unmarshal(a.Values.Bytes, &oid); err != nil || len(rest) > 0 {
				return si, fmt.Errorf("%w: content-type attribute must hold one OID", ErrMalformed)
			}
			si.ContentType = oid
		case a.Type.Equal(OIDAttrMessageDigest):
			if si.MessageDigest != nil {
				return si, fmt.Errorf("%w: duplicate message-digest attribute", ErrMalformed)
			}
			var d []byte
			if rest, err := asn1.Unmarshal(a.Values.Bytes, &d); err != nil || len(rest) > 0 {
				return si, fmt.Errorf("%w: message-digest attribute must hold one OCTET STRING", ErrMalformed)
			}
			si.MessageDigest = d
		}
	}
	if si.ContentType == nil || si.MessageDigest == nil {
		return si, fmt.Errorf("%w: signed attributes lack content-type or message-digest", ErrMalformed)
	}
	return si, nil
}

// findSignerCert returns the certificate among certs that si identifies, or nil.
func findSignerCert(si *SignerInfo, certs []*x509.Certificate) *x509.Certificate {
	for _, c := range certs {
		if si.SubjectKeyID != nil {
			if bytes.Equal(c.SubjectKeyId, si.SubjectKeyID) {
				return c
			}
			continue
		}
		if c.SerialNumber != nil && si.SerialNumber != nil && c.SerialNumber.Cmp(si.SerialNumber) == 0 && bytes.Equal(c.RawIssuer, si.Issuer) {
			return c
		}
	}
	return nil
}

// Signer-verification failures, mapped to reason codes by VerifyPassive.
var (
	errContentTypeMismatch   = errors.New("content-type attribute differs from the encapsulated content type")
	errMessageDigestMismatch = errors.New("message-digest attribute differs from the digest of the content")
)

// verifySigner checks the signed attributes of si against content of type contentType, and
// the signature over them with cert's public key.
func verifySigner(si *SignerInfo, cert *x509.Certificate, contentType asn1.ObjectIdentifier, content []byte) error {
	if !si.ContentType.Equal(contentType) {
		return errContentTypeMismatch
	}
	if !si.DigestAlgorithm.Available() {
		return fmt.Errorf("%w: hash %v", ErrUnsupportedAlgorithm, si.DigestAlgorithm)
	}
	h := si.DigestAlgorithm.New()
	h.Write(content)
	if !bytes.Equal(h.Sum(nil), si.MessageDigest) {
		return errMessageDigestMismatch
	}
	return verifySignature(cert.PublicKey, si.SignatureAlgorithm, si.DigestAlgorithm, si.SignedAttrs, si.Signature)
}
