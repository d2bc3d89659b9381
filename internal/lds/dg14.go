package lds

import (
	"crypto"
	"encoding/asn1"
	"fmt"
	"strings"

	"github.com/idstream/idstream/internal/tlv"
)

// Object identifiers of DG14 security infos (ICAO Doc 9303 Part 11, BSI TR-03110).
const (
	OIDActiveAuthentication = "2.23.136.1.1.5"
	// OIDChipAuthentication prefixes id-CA-* protocol identifiers (ChipAuthenticationInfo).
	OIDChipAuthentication = "0.4.0.127.0.7.2.2.3"
	// OIDChipAuthenticationPublicKey prefixes id-PK-* (ChipAuthenticationPublicKeyInfo).
	OIDChipAuthenticationPublicKey = "0.4.0.127.0.7.2.2.1"
)

// SecurityInfos is the content of EF.DG14.
type SecurityInfos struct {
	// ActiveAuthentication is the ActiveAuthenticationInfo, nil when DG14 has none (an RSA
	// chip names its hash in the signature itself).
	ActiveAuthentication *ActiveAuthenticationInfo
	// ChipAuthentication holds the ChipAuthenticationInfo and ChipAuthenticationPublicKeyInfo
	// elements, kept raw.
	ChipAuthentication []SecurityInfo
	// Other holds every other SecurityInfo (PACE, terminal authentication, ...), kept raw.
	Other []SecurityInfo
}

// ActiveAuthenticationInfo says how the chip signs for active authentication.
type ActiveAuthenticationInfo struct {
	Version            int
	SignatureAlgorithm string      // dotted object identifier
	Hash               crypto.Hash // the algorithm's hash; 0 when the algorithm is not known
}

// SecurityInfo is one SecurityInfo element: its protocol identifier and its DER bytes.
type SecurityInfo struct {
	Protocol string // dotted object identifier
	Raw      []byte
}

// ParseDG14 reads EF.DG14: tag 0x6E wrapping a SET OF SecurityInfo, each a SEQUENCE
// {protocol OBJECT IDENTIFIER, requiredData, optionalData OPTIONAL}. It decodes the
// ActiveAuthenticationInfo (protocol 2.23.136.1.1.5: version, signature algorithm and the
// hash it implies) and keeps the others raw, sorted into chip authentication and other.
// DG14 is covered by the SOD, so it is read strictly: any malformed element is an
// ErrMalformed error.
func ParseDG14(b []byte) (*SecurityInfos, error) {
	dg, err := openFile(b, TagDG14, "DG14")
	if err != nil {
		return nil, err
	}
	cs, err := children(dg, "DG14")
	if err != nil {
		return nil, err
	}
	set, err := find(cs, tagSet, "DG14")
	if err != nil {
		return nil, err
	}
	infos, err := children(set, "DG14 SecurityInfos")
	if err != nil {
		return nil, err
	}
	out := &SecurityInfos{}
	for i, info := range infos {
		if info.Tag != tagSequence {
			return nil, fmt.Errorf("%w: DG14 SecurityInfo %d has tag %X, want a SEQUENCE", ErrMalformed, i, info.Tag)
		}
		fs, err := children(info, fmt.Sprintf("DG14 SecurityInfo %d", i))
		if err != nil {
			return nil, err
		}
		if len(fs) < 2 {
			return nil, fmt.Errorf("%w: DG14 SecurityInfo %d has %d elements", ErrMalformed, i, len(fs))
		}
		proto, err := oid(fs[0])
		if err != nil {
			return nil, fmt.Errorf("DG14 SecurityInfo %d: %w", i, err)
		}
		switch {
		case proto == OIDActiveAuthentication:
			if out.ActiveAuthentication != nil {
				return nil, fmt.Errorf("%w: DG14 has two ActiveAuthenticationInfo", ErrMalformed)
			}
			aa, err := activeAuthentication(fs[1:])
			if err != nil {
				return nil, fmt.Errorf("DG14 SecurityInfo %d: %w", i, err)
			}
			out.ActiveAuthentication = aa
		case strings.HasPrefix(proto, OIDChipAuthentication+"."), strings.HasPrefix(proto, OIDChipAuthenticationPublicKey+"."):
			out.ChipAuthentication = append(out.ChipAuthentication, SecurityInfo{Protocol: proto, Raw: info.Raw})
		default:
			out.Other = append(out.Other, SecurityInfo{Protocol: proto, Raw: info.Raw})
		}
	}
	return out, nil
}

// activeAuthentication reads ActiveAuthenticationInfo's {version INTEGER, signatureAlgorithm
// OBJECT IDENTIFIER}.
func activeAuthentication(fs []tlv.TLV) (*ActiveAuthenticationInfo, error) {
	if len(fs) < 2 || fs[0].Tag != tagInteger {
		return nil, fmt.Errorf("%w: ActiveAuthenticationInfo wants a version and an algorithm", ErrMalformed)
	}
	version, ok := smallInt(fs[0].Value)
	if !ok {
		return nil, fmt.Errorf("%w: ActiveAuthenticationInfo version", ErrMalformed)
	}
	alg, err := oid(fs[1])
	if err != nil {
		return nil, fmt.Errorf("ActiveAuthenticationInfo algorithm: %w", err)
	}
	return &ActiveAuthenticationInfo{Version: version, SignatureAlgorithm: alg, Hash: signatureHash(alg)}, nil
}

// oid decodes an OBJECT IDENTIFIER element to its dotted form.
func oid(t tlv.TLV) (string, error) {
	if t.Tag != 0x06 {
		return "", fmt.Errorf("%w: tag %X where an OBJECT IDENTIFIER belongs", ErrMalformed, t.Tag)
	}
	var id asn1.ObjectIdentifier
	if _, err := asn1.Unmarshal(tlv.Encode(0x06, t.Value), &id); err != nil {
		return "", fmt.Errorf("%w: OBJECT IDENTIFIER: %w", ErrMalformed, err)
	}
	return id.String(), nil
}

// signatureHash returns the hash of an active authentication signature algorithm: ECDSA
// with SHA-x as named by X9.62/RFC 5758 and the plain ECDSA signatures of BSI TR-03111.
func signatureHash(alg string) crypto.Hash {
	switch alg {
	case "1.2.840.10045.4.1", "0.4.0.127.0.7.1.1.4.1.1":
		return crypto.SHA1
	case "1.2.840.10045.4.3.1", "0.4.0.127.0.7.1.1.4.1.2":
		return crypto.SHA224
	case "1.2.840.10045.4.3.2", "0.4.0.127.0.7.1.1.4.1.3":
		return crypto.SHA256
	case "1.2.840.10045.4.3.3", "0.4.0.127.0.7.1.1.4.1.4":
		return crypto.SHA384
	case "1.2.840.10045.4.3.4", "0.4.0.127.0.7.1.1.4.1.5":
		return crypto.SHA512
	case "0.4.0.127.0.7.1.1.4.1.6":
		return crypto.RIPEMD160
	}
	return 0
}
