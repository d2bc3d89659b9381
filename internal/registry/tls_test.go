package registry

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// testCA is a certificate authority generated for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// issue returns a leaf certificate (server if server is set, else client) and its PEM files.
func (ca *testCA) issue(t *testing.T, name string, server bool) (tls.Certificate, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return pair, certFile, keyFile
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMutualTLS(t *testing.T) {
	ca, rogue := newTestCA(t, "registry test CA"), newTestCA(t, "rogue CA")
	serverCert, _, _ := ca.issue(t, "registry", true)
	_, clientCertFile, clientKeyFile := ca.issue(t, "idstream", false)
	rogueClient, _, _ := rogue.issue(t, "intruder", false)
	caFile := writeFile(t, "ca.pem", ca.pem)

	var reached atomic.Int32
	sandbox := NewSandbox()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		sandbox.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.pool(),
		MinVersion:   tls.VersionTLS12,
	}
	// The server logs refused handshakes; keep test output quiet.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()

	t.Run("certificate from files", func(t *testing.T) {
		client, _, _ := newTestClient(t, srv.URL,
			WithClientCertificateFiles(clientCertFile, clientKeyFile), WithRootCAFile(caFile))
		res, err := client.CheckIdentity(context.Background(), validQuery())
		if err != nil || res.Outcome != IdentityMatch {
			t.Fatalf("CheckIdentity = %+v, %v; want match", res, err)
		}
	})

	refused := []struct {
		name string
		opts []ClientOption
	}{
		{"client certificate from another CA", []ClientOption{WithTLSConfig(&tls.Config{
			Certificates: []tls.Certificate{rogueClient}, RootCAs: ca.pool()})}},
		{"no client certificate", []ClientOption{WithRootCAFile(caFile)}},
		{"server not trusted", []ClientOption{WithClientCertificateFiles(clientCertFile, clientKeyFile),
			WithTLSConfig(&tls.Config{RootCAs: rogue.pool()})}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			before := reached.Load()
			client, sleeper, _ := newTestClient(t, srv.URL, append(tt.opts, WithMaxAttempts(3))...)
			_, err := client.CheckIdentity(context.Background(), validQuery())
			var re *Error
			if !errors.Is(err, ErrUnavailable) || !errors.As(err, &re) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			if reached.Load() != before {
				t.Errorf("the handler was reached")
			}
			// A TLS failure is not retried.
			if re.Attempts != 1 || len(sleeper.Waits()) != 0 {
				t.Errorf("attempts = %d, waits = %v; want 1 attempt, no wait (err %v)", re.Attempts, sleeper.Waits(), err)
			}
		})
	}
}

func TestRootCAFileWithoutCertificates(t *testing.T) {
	path := writeFile(t, "empty.pem", []byte("not a certificate\n"))
	if _, err := NewClient("https://127.0.0.1:1", WithRootCAFile(path)); err == nil {
		t.Fatal("NewClient accepted a CA file without certificates")
	}
}
