package mrtd

import (
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"

	"github.com/idstream/idstream/internal/tlv"
)

// ErrWrongContentType is returned by ParseSOD when the SignedData does not encapsulate an
// id-icao-ldsSecurityObject (2.23.136.1.1.1), and by LoadTrust for a master list whose
// content is not id-icao-cscaMasterList (2.23.136.1.1.2).
var ErrWrongContentType = errors.New("mrtd: wrong encapsulated content type")

// TagSOD is the application tag wrapping EF.SOD.
const TagSOD = 0x77

// SOD is a decoded EF.SOD (ICAO 9303-10 section 4.6.2): a CMS SignedData whose content is the
// LDSSecurityObject listing the hash of every data group. A SOD is immutable once parsed and
// safe for concurrent use.
type SOD struct {
	// Version is the LDSSecurityObject version (0, or 1 with LDSVersionInfo).
	Version int
	// HashAlgorithm hashes the data groups.
	HashAlgorithm crypto.Hash
	// DataGroupHashes maps data-group number (1..16) to its hash.
	DataGroupHashes map[int][]byte
	// LDSVersion and UnicodeVersion come from the optional ldsVersionInfo ("" when absent).
	LDSVersion, UnicodeVersion string
	// Certificates are the certificates embedded in the SignedData (normally the DS).
	Certificates []*x509.Certificate
	// Signer is the single SignerInfo.
	Signer SignerInfo
	// Content is the encoded LDSSecurityObject, as digested by the signer.
	Content []byte
}

type ldsSecurityObjectASN1 struct {
	Version        int
	HashAlgorithm  pkix.AlgorithmIdentifier
	DataGroupHash  []dataGroupHashASN1
	LDSVersionInfo ldsVersionInfoASN1 `asn1:"optional"`
}

type dataGroupHashASN1 struct {
	Number int
	Hash   []byte
}

type ldsVersionInfoASN1 struct {
	LDSVersion     string `asn1:"printable"`
	UnicodeVersion string `asn1:"printable"`
}

// ParseSOD decodes EF.SOD: tag 0x77 (or a bare ContentInfo) wrapping CMS SignedData. BER
// input (indefinite lengths, constructed strings) is normalised to DER first. It returns an
// error wrapping ErrWrongContentType when the encapsulated content is not an
// LDSSecurityObject, ErrUnsupportedAlgorithm for a hash it cannot compute, and ErrMalformed
// for anything else that does not decode: no signed attributes, not exactly one signer, a
// data-group number outside 1..16 or repeated, a hash of the wrong length. It never panics.
func ParseSOD(b []byte) (*SOD, error) {
	outer, rest, err := tlv.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%w: EF.SOD: %v", ErrMalformed, err)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("%w: %d bytes after EF.SOD", ErrMalformed, len(rest))
	}
	ci := outer.Raw
	switch outer.Tag {
	case TagSOD:
		ci = outer.Value
	case 0x30:
	default:
		return nil, fmt.Errorf("%w: EF.SOD starts with tag %X, want 77", ErrMalformed, outer.Tag)
	}
	der, err := tlv.ToDER(ci)
	if err != nil {
		return nil, fmt.Errorf("%w: EF.SOD: %v", ErrMalformed, err)
	}
	sd, err := parseSignedData(der)
	if err != nil {
		return nil, fmt.Errorf("EF.SOD: %w", err)
	}
	if !sd.ContentType.Equal(OIDLDSSecurityObject) {
		return nil, fmt.Errorf("%w: EF.SOD content type %s, want %s", ErrWrongContentType, sd.ContentType, OIDLDSSecurityObject)
	}
	if len(sd.Signers) != 1 {
		return nil, fmt.Errorf("%w: EF.SOD has %d signers, ICAO 9303 requires one", ErrMalformed, len(sd.Signers))
	}
	lds, err := tlv.ToDER(sd.Content)
	if err != nil {
		return nil, fmt.Errorf("%w: LDSSecurityObject: %v", ErrMalformed, err)
	}
	var so ldsSecurityObjectASN1
	if rest, err := asn1.Unmarshal(lds, &so); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("%w: LDSSecurityObject: %v", ErrMalformed, err)
	}
	if so.Version != 0 && so.Version != 1 {
		return nil, fmt.Errorf("%w: LDSSecurityObject version %d", ErrMalformed, so.Version)
	}
	h, err := HashFromOID(so.HashAlgorithm.Algorithm)
	if err != nil {
		return nil, fmt.Errorf("LDSSecurityObject: %w", err)
	}
	sod := &SOD{
		Version:         so.Version,
		HashAlgorithm:   h,
		DataGroupHashes: make(map[int][]byte, len(so.DataGroupHash)),
		LDSVersion:      so.LDSVersionInfo.LDSVersion,
		UnicodeVersion:  so.LDSVersionInfo.UnicodeVersion,
		Certificates:    sd.Certificates,
		Signer:          sd.Signers[0],
		Content:         sd.Content,
	}
	for _, dg := range so.DataGroupHash {
		if dg.Number < 1 || dg.Number > 16 {
			return nil, fmt.Errorf("%w: data-group number %d outside 1..16", ErrMalformed, dg.Number)
		}
		if _, dup := sod.DataGroupHashes[dg.Number]; dup {
			return nil, fmt.Errorf("%w: data group %d listed twice", ErrMalformed, dg.Number)
		}
		if len(dg.Hash) != h.Size() {
			return nil, fmt.Errorf("%w: data group %d hash is %d bytes, %v needs %d", ErrMalformed, dg.Number, len(dg.Hash), h, h.Size())
		}
		sod.DataGroupHashes[dg.Number] = dg.Hash
	}
	if len(sod.DataGroupHashes) == 0 {
		return nil, fmt.Errorf("%w: LDSSecurityObject lists no data group", ErrMalformed)
	}
	return sod, nil
}

// SignerCertificate returns the embedded certificate that the signer info identifies (by
// issuer and serial number, or by subject key identifier), or nil when none matches.
func (s *SOD) SignerCertificate() *x509.Certificate {
	return findSignerCert(&s.Signer, s.Certificates)
}
