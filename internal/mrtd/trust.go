package mrtd

import (
	"bytes"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/idstream/idstream/internal/tlv"
)

// maxTrustFileSize bounds a file LoadTrust reads (the ICAO master lists are a few MiB).
const maxTrustFileSize = 32 << 20

var (
	// ErrNoAnchors is returned by LoadTrust when the directory holds no certificate.
	ErrNoAnchors = errors.New("mrtd: no CSCA certificates found")
	// ErrMasterListSigner is returned (wrapped) when a master list's signature does not verify
	// or its signer certificate does not chain to a CSCA.
	ErrMasterListSigner = errors.New("mrtd: master list signer not verified")
)

// Trust is a set of CSCA trust anchors. It is immutable and safe for concurrent use.
type Trust struct {
	anchors   []*x509.Certificate
	bySubject map[string][]*x509.Certificate
}

// NewTrust returns a Trust holding certs (nil entries and duplicates are dropped). Every
// certificate is an anchor: CSCA link certificates are anchors too, as with an ICAO master list.
func NewTrust(certs ...*x509.Certificate) *Trust {
	t := &Trust{bySubject: make(map[string][]*x509.Certificate)}
	seen := make(map[string]bool)
	for _, c := range certs {
		if c == nil || seen[string(c.Raw)] {
			continue
		}
		seen[string(c.Raw)] = true
		t.anchors = append(t.anchors, c)
		t.bySubject[string(c.RawSubject)] = append(t.bySubject[string(c.RawSubject)], c)
	}
	return t
}

// Certificates returns the anchors (a copy of the slice).
func (t *Trust) Certificates() []*x509.Certificate {
	if t == nil {
		return nil
	}
	return append([]*x509.Certificate(nil), t.anchors...)
}

// Len is the number of anchors.
func (t *Trust) Len() int {
	if t == nil {
		return 0
	}
	return len(t.anchors)
}

// issuersOf returns the anchors whose subject is c's issuer and whose key signed c.
func (t *Trust) issuersOf(c *x509.Certificate) []*x509.Certificate {
	if t == nil {
		return nil
	}
	var out []*x509.Certificate
	for _, ca := range t.bySubject[string(c.RawIssuer)] {
		if len(c.AuthorityKeyId) > 0 && len(ca.SubjectKeyId) > 0 && !bytes.Equal(c.AuthorityKeyId, ca.SubjectKeyId) {
			continue
		}
		if c.CheckSignatureFrom(ca) == nil {
			out = append(out, ca)
		}
	}
	return out
}

// LoadTrust reads every regular file under dir (recursively, skipping names that start with
// a dot) as CSCA trust anchors: PEM (CERTIFICATE blocks, and CMS or PKCS7 blocks holding
// master lists) or DER (an X.509 certificate or an ICAO CSCA master list). A master list is
// accepted only when its signature verifies and its signer certificate is signed by a CSCA
// in the list itself or in a certificate file of dir; validity dates of the master-list
// signer are not enforced (published lists outlive their signer certificates). It returns
// an error naming the file for anything unreadable or unrecognised, and ErrNoAnchors when
// dir holds no certificate.
func LoadTrust(dir string) (*Trust, error) {
	var certs []*x509.Certificate
	var masterLists []struct {
		name string
		der  []byte
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && path != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := readBounded(path)
		if err != nil {
			return err
		}
		fileCerts, mls, err := decodeTrustFile(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		certs = append(certs, fileCerts...)
		for _, ml := range mls {
			masterLists = append(masterLists, struct {
				name string
				der  []byte
			}{path, ml})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mrtd: loading CSCA trust from %s: %w", dir, err)
	}
	fileAnchors := NewTrust(certs...)
	for _, ml := range masterLists {
		mlCerts, err := ParseMasterList(ml.der, fileAnchors)
		if err != nil {
			return nil, fmt.Errorf("mrtd: loading CSCA trust: %s: %w", ml.name, err)
		}
		certs = append(certs, mlCerts...)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoAnchors, dir)
	}
	return NewTrust(certs...), nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTrustFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTrustFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxTrustFileSize)
	}
	return data, nil
}

// decodeTrustFile splits a trust file into certificates and master-list encodings.
func decodeTrustFile(data []byte) (certs []*x509.Certificate, masterLists [][]byte, err error) {
	if bytes.Contains(data, []byte("-----BEGIN ")) {
		rest := data
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			switch block.Type {
			case "CERTIFICATE":
				c, err := x509.ParseCertificate(block.Bytes)
				if err != nil {
					return nil, nil, fmt.Errorf("PEM certificate: %w", err)
				}
				certs = append(certs, c)
			case "CMS", "PKCS7":
				masterLists = append(masterLists, block.Bytes)
			default:
				return nil, nil, fmt.Errorf("unexpected PEM block %q", block.Type)
			}
		}
		if len(certs) == 0 && len(masterLists) == 0 {
			return nil, nil, errors.New("no PEM block decoded")
		}
		return certs, masterLists, nil
	}
	c, certErr := x509.ParseCertificate(data)
	if certErr == nil {
		return []*x509.Certificate{c}, nil, nil
	}
	if looksLikeSignedData(data) {
		return nil, [][]byte{data}, nil
	}
	return nil, nil, fmt.Errorf("neither a certificate nor a CMS master list: %w", certErr)
}

func looksLikeSignedData(data []byte) bool {
	t, _, err := tlv.Parse(data)
	if err != nil || t.Tag != 0x30 {
		return false
	}
	kids, err := t.Children()
	if err != nil || len(kids) == 0 || kids[0].Tag != 0x06 {
		return false
	}
	var oid asn1.ObjectIdentifier
	_, err = asn1.Unmarshal(kids[0].Raw, &oid)
	return err == nil && oid.Equal(OIDSignedData)
}

type cscaMasterListASN1 struct {
	Version  int
	CertList []asn1.RawValue `asn1:"set"`
}

// ParseMasterList decodes an ICAO CSCA master list (CMS SignedData, content type
// id-icao-cscaMasterList 2.23.136.1.1.2; BER accepted) and returns its CSCA certificates.
// The signature must verify with the embedded signer certificate, and that certificate must
// be signed by a CSCA in the list or in anchors (which may be nil); otherwise it returns an
// error wrapping ErrMasterListSigner. A different content type yields ErrWrongContentType.
func ParseMasterList(b []byte, anchors *Trust) ([]*x509.Certificate, error) {
	der, err := tlv.ToDER(b)
	if err != nil {
		return nil, fmt.Errorf("%w: master list: %v", ErrMalformed, err)
	}
	sd, err := parseSignedData(der)
	if err != nil {
		return nil, fmt.Errorf("master list: %w", err)
	}
	if !sd.ContentType.Equal(OIDCSCAMasterList) {
		return nil, fmt.Errorf("%w: master list content type %s, want %s", ErrWrongContentType, sd.ContentType, OIDCSCAMasterList)
	}
	content, err := tlv.ToDER(sd.Content)
	if err != nil {
		return nil, fmt.Errorf("%w: CscaMasterList: %v", ErrMalformed, err)
	}
	var ml cscaMasterListASN1
	if rest, err := asn1.Unmarshal(content, &ml); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("%w: CscaMasterList: %v", ErrMalformed, err)
	}
	if len(ml.CertList) > maxCertificates {
		return nil, fmt.Errorf("%w: master list of %d certificates (limit %d)", ErrMalformed, len(ml.CertList), maxCertificates)
	}
	certs := make([]*x509.Certificate, 0, len(ml.CertList))
	for i, raw := range ml.CertList {
		c, err := x509.ParseCertificate(raw.FullBytes)
		if err != nil {
			return nil, fmt.Errorf("%w: master list certificate %d: %v", ErrMalformed, i, err)
		}
		certs = append(certs, c)
	}
	inList := NewTrust(certs...)
	for i := range sd.Signers {
		si := &sd.Signers[i]
		signer := findSignerCert(si, sd.Certificates)
		if signer == nil {
			signer = findSignerCert(si, certs)
		}
		if signer == nil {
			return nil, fmt.Errorf("%w: signer %d certificate not found", ErrMasterListSigner, i)
		}
		if err := verifySigner(si, signer, sd.ContentType, sd.Content); err != nil {
			return nil, fmt.Errorf("%w: signer %d: %v", ErrMasterListSigner, i, err)
		}
		if len(inList.issuersOf(signer)) == 0 && len(anchors.issuersOf(signer)) == 0 {
			return nil, fmt.Errorf("%w: signer %q is not signed by a known CSCA", ErrMasterListSigner, signer.Subject)
		}
	}
	return certs, nil
}
