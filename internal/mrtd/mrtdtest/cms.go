package mrtdtest

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/tlv"
)

// SODOption configures BuildSOD (and BuildMasterList where it applies).
type SODOption func(*sodConfig)

type sodConfig struct {
	signer      *Cert
	bySKI       bool
	hash        crypto.Hash
	alg         Algorithm
	algSet      bool
	contentType asn1.ObjectIdentifier
	omit        map[int]bool
	ber         bool
	noCerts     bool
	ldsVersion  bool
}

// WithSigner signs with c instead of the PKI's DS (e.g. ExpiredDS, RogueDS).
func WithSigner(c *Cert) SODOption { return func(s *sodConfig) { s.signer = c } }

// WithSignerBySKI identifies the signer by subjectKeyIdentifier instead of issuer and serial.
func WithSignerBySKI() SODOption { return func(s *sodConfig) { s.bySKI = true } }

// WithHash sets the hash of the data groups and of the signature (default SHA-256).
func WithHash(h crypto.Hash) SODOption { return func(s *sodConfig) { s.hash = h } }

// WithAlgorithm sets the signature scheme (RSA2048 for PKCS#1 v1.5, RSAPSS2048 for PSS) when
// it differs from the PKI's; it must fit the signer's key type.
func WithAlgorithm(a Algorithm) SODOption {
	return func(s *sodConfig) { s.alg, s.algSet = a, true }
}

// WithContentType sets the encapsulated content type (and the content-type attribute).
func WithContentType(oid asn1.ObjectIdentifier) SODOption {
	return func(s *sodConfig) { s.contentType = oid }
}

// WithoutDGHash leaves data group n out of the LDSSecurityObject.
func WithoutDGHash(n int) SODOption {
	return func(s *sodConfig) {
		if s.omit == nil {
			s.omit = map[int]bool{}
		}
		s.omit[n] = true
	}
}

// WithBER encodes with indefinite lengths everywhere and splits OCTET STRINGs into
// constructed segments, as some chips do; the LDSSecurityObject itself is BER too.
func WithBER() SODOption { return func(s *sodConfig) { s.ber = true } }

// WithoutCertificates leaves the signer certificate out of the SignedData.
func WithoutCertificates() SODOption { return func(s *sodConfig) { s.noCerts = true } }

// WithLDSVersionInfo writes an LDSSecurityObject version 1 with ldsVersionInfo "0108"/"040000".
func WithLDSVersionInfo() SODOption { return func(s *sodConfig) { s.ldsVersion = true } }

type dataGroupHash struct {
	Number int
	Hash   []byte
}

type ldsVersionInfo struct {
	LDSVersion     string `asn1:"printable"`
	UnicodeVersion string `asn1:"printable"`
}

type ldsSecurityObjectV0 struct {
	Version       int
	HashAlgorithm pkix.AlgorithmIdentifier
	Hashes        []dataGroupHash
}

type ldsSecurityObjectV1 struct {
	Version       int
	HashAlgorithm pkix.AlgorithmIdentifier
	Hashes        []dataGroupHash
	VersionInfo   ldsVersionInfo
}

// BuildSOD returns a real EF.SOD (tag 0x77) over dgs, signed by the PKI's DS unless an option
// says otherwise.
func (p *PKI) BuildSOD(dgs map[int][]byte, opts ...SODOption) ([]byte, error) {
	cfg := sodConfig{signer: p.DS, hash: crypto.SHA256, alg: p.Algorithm, contentType: mrtd.OIDLDSSecurityObject}
	for _, o := range opts {
		o(&cfg)
	}
	hashOID := mrtd.OIDFromHash(cfg.hash)
	if hashOID == nil {
		return nil, fmt.Errorf("mrtdtest: unsupported hash %v", cfg.hash)
	}
	numbers := make([]int, 0, len(dgs))
	for n := range dgs {
		if !cfg.omit[n] {
			numbers = append(numbers, n)
		}
	}
	slices.Sort(numbers)
	hashes := make([]dataGroupHash, 0, len(numbers))
	for _, n := range numbers {
		h := cfg.hash.New()
		h.Write(dgs[n])
		hashes = append(hashes, dataGroupHash{n, h.Sum(nil)})
	}
	algID := pkix.AlgorithmIdentifier{Algorithm: hashOID, Parameters: asn1.NullRawValue}
	var content []byte
	var err error
	if cfg.ldsVersion {
		content, err = asn1.Marshal(ldsSecurityObjectV1{1, algID, hashes, ldsVersionInfo{"0108", "040000"}})
	} else {
		content, err = asn1.Marshal(ldsSecurityObjectV0{0, algID, hashes})
	}
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: LDSSecurityObject: %w", err)
	}
	if cfg.ber {
		if content, err = ToBER(content); err != nil {
			return nil, err
		}
	}
	ci, err := signCMS(&cfg, cfg.contentType, content)
	if err != nil {
		return nil, err
	}
	if cfg.ber {
		if ci, err = ToBER(ci); err != nil {
			return nil, err
		}
		// Wrap with an indefinite length too.
		return append(append([]byte{mrtd.TagSOD, 0x80}, ci...), 0, 0), nil
	}
	return tlv.Encode(mrtd.TagSOD, ci), nil
}

type cscaMasterList struct {
	Version  int
	CertList []asn1.RawValue `asn1:"set"`
}

// BuildMasterList returns an ICAO CSCA master list (DER CMS ContentInfo, content type
// 2.23.136.1.1.2) holding certs, signed by signer (normally MasterListSigner). WithBER,
// WithHash, WithSignerBySKI and WithContentType apply.
func (p *PKI) BuildMasterList(signer *Cert, certs []*x509.Certificate, opts ...SODOption) ([]byte, error) {
	cfg := sodConfig{signer: signer, hash: crypto.SHA256, alg: p.Algorithm, contentType: mrtd.OIDCSCAMasterList}
	for _, o := range opts {
		o(&cfg)
	}
	ml := cscaMasterList{}
	for _, c := range certs {
		ml.CertList = append(ml.CertList, asn1.RawValue{FullBytes: c.Raw})
	}
	content, err := asn1.Marshal(ml)
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: CscaMasterList: %w", err)
	}
	ci, err := signCMS(&cfg, cfg.contentType, content)
	if err != nil {
		return nil, err
	}
	if cfg.ber {
		return ToBER(ci)
	}
	return ci, nil
}

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue // [0] EXPLICIT, built by hand: Marshal writes FullBytes verbatim
}

type encapContentInfo struct {
	EContentType asn1.ObjectIdentifier
	EContent     []byte `asn1:"explicit,tag:0"`
}

type signedData struct {
	Version          int
	DigestAlgorithms []pkix.AlgorithmIdentifier `asn1:"set"`
	EncapContentInfo encapContentInfo
	Certificates     asn1.RawValue `asn1:"optional,tag:0"`
	SignerInfos      []signerInfo  `asn1:"set"`
}

type signerInfo struct {
	Version            int
	SID                asn1.RawValue
	DigestAlgorithm    pkix.AlgorithmIdentifier
	SignedAttrs        asn1.RawValue
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Signature          []byte
}

type issuerAndSerial struct {
	Issuer asn1.RawValue
	Serial *big.Int
}

type attribute struct {
	Type   asn1.ObjectIdentifier
	Values []asn1.RawValue `asn1:"set"`
}

func signCMS(cfg *sodConfig, contentType asn1.ObjectIdentifier, content []byte) ([]byte, error) {
	if cfg.signer == nil {
		return nil, errors.New("mrtdtest: no signer")
	}
	h := cfg.hash
	hashAlg := pkix.AlgorithmIdentifier{Algorithm: mrtd.OIDFromHash(h), Parameters: asn1.NullRawValue}
	md := h.New()
	md.Write(content)
	ctVal, err := asn1.Marshal(contentType)
	if err != nil {
		return nil, err
	}
	mdVal, err := asn1.Marshal(md.Sum(nil))
	if err != nil {
		return nil, err
	}
	var encAttrs [][]byte
	for _, a := range []attribute{
		{mrtd.OIDAttrContentType, []asn1.RawValue{{FullBytes: ctVal}}},
		{mrtd.OIDAttrMessageDigest, []asn1.RawValue{{FullBytes: mdVal}}},
	} {
		b, err := asn1.Marshal(a)
		if err != nil {
			return nil, err
		}
		encAttrs = append(encAttrs, b)
	}
	slices.SortFunc(encAttrs, bytes.Compare) // DER SET OF order
	attrSet := tlv.Encode(0x31, bytes.Join(encAttrs, nil))

	sig, sigAlg, err := sign(cfg, attrSet)
	if err != nil {
		return nil, err
	}
	cert := cfg.signer.Certificate
	si := signerInfo{
		Version:            1,
		DigestAlgorithm:    hashAlg,
		SignedAttrs:        asn1.RawValue{FullBytes: append([]byte{0xA0}, attrSet[1:]...)},
		SignatureAlgorithm: sigAlg,
		Signature:          sig,
	}
	if cfg.bySKI {
		si.Version = 3
		si.SID = asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: cert.SubjectKeyId}
	} else {
		ias, err := asn1.Marshal(issuerAndSerial{asn1.RawValue{FullBytes: cert.RawIssuer}, cert.SerialNumber})
		if err != nil {
			return nil, err
		}
		si.SID = asn1.RawValue{FullBytes: ias}
	}
	sd := signedData{
		Version:          3,
		DigestAlgorithms: []pkix.AlgorithmIdentifier{hashAlg},
		EncapContentInfo: encapContentInfo{contentType, content},
		SignerInfos:      []signerInfo{si},
	}
	if !cfg.noCerts {
		sd.Certificates = asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: cert.Raw}
	}
	sdDER, err := asn1.Marshal(sd)
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: SignedData: %w", err)
	}
	return asn1.Marshal(contentInfo{mrtd.OIDSignedData, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: sdDER}})
}

// sign signs message with cfg's signer under cfg's algorithm and hash.
func sign(cfg *sodConfig, message []byte) ([]byte, pkix.AlgorithmIdentifier, error) {
	h := cfg.hash
	d := h.New()
	d.Write(message)
	digest := d.Sum(nil)
	key := cfg.signer.Key
	switch key.(type) {
	case *rsa.PrivateKey:
		if !cfg.alg.isRSA() {
			return nil, pkix.AlgorithmIdentifier{}, fmt.Errorf("mrtdtest: %v with an RSA key", cfg.alg)
		}
		if cfg.alg == RSAPSS2048 {
			sig, err := key.Sign(rand.Reader, digest, &rsa.PSSOptions{SaltLength: h.Size(), Hash: h})
			if err != nil {
				return nil, pkix.AlgorithmIdentifier{}, err
			}
			params, err := pssParams(h)
			return sig, pkix.AlgorithmIdentifier{Algorithm: mrtd.OIDRSASSAPSS, Parameters: asn1.RawValue{FullBytes: params}}, err
		}
		sig, err := key.Sign(rand.Reader, digest, h)
		return sig, pkix.AlgorithmIdentifier{Algorithm: mrtd.RSASignatureOID(h), Parameters: asn1.NullRawValue}, err
	default:
		if cfg.alg.isRSA() {
			return nil, pkix.AlgorithmIdentifier{}, fmt.Errorf("mrtdtest: %v with a %T key", cfg.alg, key)
		}
		sig, err := key.Sign(rand.Reader, digest, h)
		return sig, pkix.AlgorithmIdentifier{Algorithm: mrtd.ECDSASignatureOID(h)}, err
	}
}

func pssParams(h crypto.Hash) ([]byte, error) {
	hashAlg := pkix.AlgorithmIdentifier{Algorithm: mrtd.OIDFromHash(h), Parameters: asn1.NullRawValue}
	hashDER, err := asn1.Marshal(hashAlg)
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(mrtd.PSSParameters{
		Hash:         hashAlg,
		MGF:          pkix.AlgorithmIdentifier{Algorithm: mrtd.OIDMGF1, Parameters: asn1.RawValue{FullBytes: hashDER}},
		SaltLength:   h.Size(),
		TrailerField: 1,
	})
}

// ToBER re-encodes DER with indefinite lengths on every constructed element and OCTET STRINGs
// longer than 8 bytes split into constructed segments. tlv.ToDER(ToBER(x)) == x for DER x.
func ToBER(der []byte) ([]byte, error) {
	var out []byte
	for len(der) > 0 {
		t, rest, err := tlv.Parse(der)
		if err != nil {
			return nil, fmt.Errorf("mrtdtest: ToBER: %w", err)
		}
		if out, err = appendBER(out, t); err != nil {
			return nil, err
		}
		der = rest
	}
	return out, nil
}

func appendBER(dst []byte, t tlv.TLV) ([]byte, error) {
	if !t.Constructed {
		if t.Tag == 0x04 && len(t.Value) > 8 {
			dst = append(dst, 0x24, 0x80)
			for v := t.Value; len(v) > 0; {
				n := min(8, len(v))
				dst = append(dst, tlv.Encode(0x04, v[:n])...)
				v = v[n:]
			}
			return append(dst, 0, 0), nil
		}
		return append(dst, t.Raw...), nil
	}
	children, err := t.Children()
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: ToBER: %w", err)
	}
	dst = append(dst, t.Raw[:len(t.Raw)-len(t.Value)-lenLen(t)]...)
	dst = append(dst, 0x80)
	for _, c := range children {
		if dst, err = appendBER(dst, c); err != nil {
			return nil, err
		}
	}
	return append(dst, 0, 0), nil
}

// lenLen is the size of t's length field (t is definite, as ToBER input is DER).
func lenLen(t tlv.TLV) int {
	switch n := len(t.Value); {
	case n < 0x80:
		return 1
	case n <= 0xFF:
		return 2
	case n <= 0xFFFF:
		return 3
	case n <= 0xFFFFFF:
		return 4
	default:
		return 5
	}
}
