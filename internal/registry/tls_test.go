package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/idstream/idstream/internal/tlsfiles/tlstest"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMutualTLS(t *testing.T) {
	ca, rogue := tlstest.NewCA(t, "registry test CA"), tlstest.NewCA(t, "rogue CA")
	serverCert, _, _ := ca.Issue(t, "registry", true)
	_, clientCertFile, clientKeyFile := ca.Issue(t, "idstream", false)
	rogueClient, _, _ := rogue.Issue(t, "intruder", false)
	caFile := ca.File(t)

	var reached atomic.Int32
	sandbox := NewSandbox()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		sandbox.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.Pool(),
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
			Certificates: []tls.Certificate{rogueClient}, RootCAs: ca.Pool()})}},
		{"no client certificate", []ClientOption{WithRootCAFile(caFile)}},
		{"server not trusted", []ClientOption{WithClientCertificateFiles(clientCertFile, clientKeyFile),
			WithTLSConfig(&tls.Config{RootCAs: rogue.Pool()})}},
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
