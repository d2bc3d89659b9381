// Package mrtdtest generates eMRTD test material at run time: a CSCA / Document Signer PKI
// (with rogue and expired variants), real EF.SOD files over given data groups, CSCA master
// lists, and chip keys that answer active authentication like a chip, with their DG15.
// Nothing is committed: every key is generated when a test asks for it.
//
// It is test support, importable by any package's tests, and the load generator's (`idstream
// bench`, `idstream chip-pki`); no service verifies anything with it.
package mrtdtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"time"

	"github.com/idstream/idstream/internal/mrtd"
)

// Algorithm selects the key type and signature scheme of a PKI.
type Algorithm int

const (
	// ECDSAP256 uses ECDSA P-256 keys and ecdsa-with-SHA256.
	ECDSAP256 Algorithm = iota
	// RSA2048 uses RSA-2048 keys and sha256WithRSAEncryption (PKCS#1 v1.5).
	RSA2048
	// RSAPSS2048 uses RSA-2048 keys and RSASSA-PSS with SHA-256 (salt 32).
	RSAPSS2048
)

func (a Algorithm) String() string {
	switch a {
	case ECDSAP256:
		return "ECDSA-P256"
	case RSA2048:
		return "RSA-2048"
	case RSAPSS2048:
		return "RSA-PSS-2048"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

func (a Algorithm) isRSA() bool { return a == RSA2048 || a == RSAPSS2048 }

// Cert is a certificate with its private key.
type Cert struct {
	Certificate *x509.Certificate
	Key         crypto.Signer
}

// PKI is a test CSCA hierarchy. Everything is valid at Now except the certificates named
// expired.
type PKI struct {
	Algorithm Algorithm
	// Now is the reference verification time.
	Now time.Time
	// CSCA is the trusted country signing CA; DS is a Document Signer it issued.
	CSCA, DS *Cert
	// RogueCSCA has the same subject as CSCA but another key; RogueDS is issued by it with
	// the same subject as DS.
	RogueCSCA, RogueDS *Cert
	// ExpiredDS is issued by CSCA and expired a day before Now.
	ExpiredDS *Cert
	// ExpiredCSCA expired a day before Now; DSUnderExpiredCSCA, valid at Now, is issued by it.
	ExpiredCSCA, DSUnderExpiredCSCA *Cert
	// MasterListSigner is issued by CSCA, for signing CSCA master lists.
	MasterListSigner *Cert
}

// NewPKI generates a PKI for alg. RSA key generation takes a moment: build one per test
// function and share it among subtests.
func NewPKI(alg Algorithm) (*PKI, error) {
	p := &PKI{Algorithm: alg, Now: time.Now().UTC().Truncate(time.Second)}
	keys := make([]crypto.Signer, 4)
	for i := range keys {
		k, err := newKey(alg)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	cscaKey, dsKey, rogueKey, oldKey := keys[0], keys[1], keys[2], keys[3]
	year := 365 * 24 * time.Hour
	day := 24 * time.Hour
	var err error
	cscaName := pkix.Name{Country: []string{"VN"}, Organization: []string{"idstream test"}, CommonName: "CSCA " + alg.String()}
	dsName := pkix.Name{Country: []string{"VN"}, Organization: []string{"idstream test"}, CommonName: "DS " + alg.String()}
	if p.CSCA, err = p.issue(cscaName, cscaKey, nil, true, p.Now.Add(-year), p.Now.Add(10*year)); err != nil {
		return nil, err
	}
	if p.DS, err = p.issue(dsName, dsKey, p.CSCA, false, p.Now.Add(-30*day), p.Now.Add(3*year)); err != nil {
		return nil, err
	}
	if p.RogueCSCA, err = p.issue(cscaName, rogueKey, nil, true, p.Now.Add(-year), p.Now.Add(10*year)); err != nil {
		return nil, err
	}
	if p.RogueDS, err = p.issue(dsName, dsKey, p.RogueCSCA, false, p.Now.Add(-30*day), p.Now.Add(3*year)); err != nil {
		return nil, err
	}
	if p.ExpiredDS, err = p.issue(dsName, dsKey, p.CSCA, false, p.Now.Add(-3*year), p.Now.Add(-day)); err != nil {
		return nil, err
	}
	oldName := pkix.Name{Country: []string{"VN"}, Organization: []string{"idstream test"}, CommonName: "CSCA expired " + alg.String()}
	if p.ExpiredCSCA, err = p.issue(oldName, oldKey, nil, true, p.Now.Add(-10*year), p.Now.Add(-day)); err != nil {
		return nil, err
	}
	if p.DSUnderExpiredCSCA, err = p.issue(dsName, dsKey, p.ExpiredCSCA, false, p.Now.Add(-30*day), p.Now.Add(year)); err != nil {
		return nil, err
	}
	mlName := pkix.Name{Country: []string{"VN"}, Organization: []string{"idstream test"}, CommonName: "Master List Signer " + alg.String()}
	if p.MasterListSigner, err = p.issue(mlName, dsKey, p.CSCA, false, p.Now.Add(-30*day), p.Now.Add(3*year)); err != nil {
		return nil, err
	}
	return p, nil
}

// Trust returns a Trust anchored on CSCA only.
func (p *PKI) Trust() *mrtd.Trust { return mrtd.NewTrust(p.CSCA.Certificate) }

func newKey(alg Algorithm) (crypto.Signer, error) {
	if alg.isRSA() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("mrtdtest: RSA key: %w", err)
		}
		return k, nil
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: ECDSA key: %w", err)
	}
	return k, nil
}

func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
}

// issue creates a certificate for key; parent nil means self-signed.
func (p *PKI) issue(name pkix.Name, key crypto.Signer, parent *Cert, ca bool, notBefore, notAfter time.Time) (*Cert, error) {
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	spki, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	ski := sha1.Sum(append(spki, serial.Bytes()...))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      name,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		SubjectKeyId: ski[:],
	}
	if ca {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.MaxPathLenZero = true, true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	}
	if p.Algorithm == RSAPSS2048 {
		tmpl.SignatureAlgorithm = x509.SHA256WithRSAPSS
	}
	parentCert, parentKey := tmpl, key
	if parent != nil {
		parentCert, parentKey = parent.Certificate, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: certificate %q: %w", name.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Cert{Certificate: cert, Key: key}, nil
}
