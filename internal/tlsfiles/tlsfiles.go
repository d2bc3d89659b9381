// Package tlsfiles builds the TLS configuration of a client connection (to Kafka,
// ClickHouse, the schema registry) from PEM files, as an operator configures them: a CA
// bundle to trust instead of the system's, and a client certificate for mutual TLS.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// Files names the PEM files of a client's TLS configuration. Every field is optional.
type Files struct {
	CA   string // CA certificates to trust (empty: the system's roots)
	Cert string // client certificate for mutual TLS (with Key)
	Key  string // its private key
}

// ErrHalfPair is returned by Config when only one of Cert and Key is set.
var ErrHalfPair = errors.New("tls: a client certificate needs both its certificate and its key file")

// Config returns the client TLS configuration of f: TLS 1.2 at least, the server verified
// against f.CA (or the system's roots) and its host name, f's client certificate when set.
// It returns ErrHalfPair when only one of Cert and Key is set, and an error naming the file
// that cannot be read or parsed.
func (f Files) Config() (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("tls CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls CA %s: no PEM certificate in it", f.CA)
		}
		c.RootCAs = pool
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, ErrHalfPair
	}
	if f.Cert != "" {
		pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("tls client certificate %s: %w", f.Cert, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// IsCertificateError reports whether err is a failed verification of the server's
// certificate (unknown authority, wrong host name, invalid or expired certificate): a
// configuration problem that waiting does not fix.
func IsCertificateError(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &hostname) || errors.As(err, &invalid)
}
