package mrtdtest

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Where SaveSigner writes under its directory.
const (
	// SignerCSCADir is the directory of the CSCA certificate: a service's --csca-dir.
	SignerCSCADir = "csca"
	// SignerFile holds the document signer's certificate and private key.
	SignerFile = "signer.pem"
)

// SaveSigner writes the PKI's CSCA certificate and its document signer under dir, for a PKI
// shared between processes (a load generator signing chips for a service that trusts its
// CSCA): dir/csca/csca.pem (the CSCA certificate alone, so that dir/csca can be a service's
// --csca-dir) and dir/signer.pem (the DS certificate and its PKCS#8 private key, mode 0600).
// Nothing else of the PKI is written, and nothing is overwritten: a file already there is an
// error (fs.ErrExist).
func (p *PKI) SaveSigner(dir string) error {
	if p.CSCA == nil || p.DS == nil || p.DS.Key == nil {
		return errors.New("mrtdtest: save signer: the PKI has no CSCA or document signer")
	}
	key, err := x509.MarshalPKCS8PrivateKey(p.DS.Key)
	if err != nil {
		return fmt.Errorf("mrtdtest: save signer: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, SignerCSCADir), 0o755); err != nil {
		return fmt.Errorf("mrtdtest: save signer: %w", err)
	}
	signer := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.DS.Certificate.Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})...)
	if err := writeNew(filepath.Join(dir, SignerFile), signer, 0o600); err != nil {
		return err
	}
	csca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.CSCA.Certificate.Raw})
	return writeNew(filepath.Join(dir, SignerCSCADir, "csca.pem"), csca, 0o644)
}

// writeNew writes data to a file that must not exist yet, with mode perm.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("mrtdtest: save signer: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("mrtdtest: save signer: %w", err)
	}
	return nil
}

// LoadSigner reads what SaveSigner wrote under dir: a PKI whose CSCA holds the certificate
// only and whose DS signs (BuildSOD), Now the current time; its other certificates are nil.
// The algorithm is the document signer key's (ECDSAP256 or RSA2048). A document signer that
// is not valid now (its chips would fail passive authentication) is an error.
func LoadSigner(dir string) (*PKI, error) {
	csca, err := readPEM(filepath.Join(dir, SignerCSCADir, "csca.pem"))
	if err != nil {
		return nil, err
	}
	signer, err := readPEM(filepath.Join(dir, SignerFile))
	if err != nil {
		return nil, err
	}
	if len(csca["CERTIFICATE"]) == 0 || len(signer["CERTIFICATE"]) == 0 || len(signer["PRIVATE KEY"]) == 0 {
		return nil, fmt.Errorf("mrtdtest: load signer from %s: a certificate or the key is missing", dir)
	}
	cscaCert, err := x509.ParseCertificate(csca["CERTIFICATE"])
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: load signer: CSCA: %w", err)
	}
	dsCert, err := x509.ParseCertificate(signer["CERTIFICATE"])
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: load signer: DS: %w", err)
	}
	key, err := x509.ParsePKCS8PrivateKey(signer["PRIVATE KEY"])
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: load signer: key: %w", err)
	}
	p := &PKI{Now: time.Now().UTC().Truncate(time.Second), CSCA: &Cert{Certificate: cscaCert}}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		p.Algorithm, p.DS = ECDSAP256, &Cert{Certificate: dsCert, Key: k}
	case *rsa.PrivateKey:
		p.Algorithm, p.DS = RSA2048, &Cert{Certificate: dsCert, Key: k}
	default:
		return nil, fmt.Errorf("mrtdtest: load signer: a %T key", key)
	}
	if err := dsCert.CheckSignatureFrom(cscaCert); err != nil {
		return nil, fmt.Errorf("mrtdtest: load signer: the DS is not the CSCA's: %w", err)
	}
	if p.Now.Before(dsCert.NotBefore) || p.Now.After(dsCert.NotAfter) || p.Now.After(cscaCert.NotAfter) {
		return nil, fmt.Errorf("mrtdtest: load signer from %s: not valid now (the DS until %s)", dir, dsCert.NotAfter.Format(time.DateOnly))
	}
	return p, nil
}

// readPEM returns the first block of each type in the PEM file at path.
func readPEM(path string) (map[string][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mrtdtest: %w", err)
	}
	blocks := map[string][]byte{}
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return blocks, nil
		}
		if _, ok := blocks[b.Type]; !ok {
			blocks[b.Type] = b.Bytes
		}
	}
}
