package chserver

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStartPingRestartClose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	s, err := Start(ctx, WithDataDir(dir))
	if errors.Is(err, ErrBinaryNotFound) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	ping := func(addr string) error {
		resp, err := http.Get("http://" + addr + "/ping")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := ping(s.HTTPAddr()); err != nil {
		t.Fatalf("ping: %v", err)
	}
	for _, f := range []string{"config.xml", "users.xml", "data", "log/clickhouse-server.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("expected %s under the data dir: %v", f, err)
		}
	}
	tcp, httpPort := s.TCPPort(), s.HTTPPort()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if ping(s.HTTPAddr()) == nil {
		t.Fatal("server still answers after Close")
	}
	// Same dir and ports again.
	s2, err := Start(ctx, WithDataDir(dir), WithTCPPort(tcp), WithHTTPPort(httpPort))
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer s2.Close()
	if s2.Addr() != s.Addr() {
		t.Fatalf("restart on %s, want %s", s2.Addr(), s.Addr())
	}
}

func TestMissingBinary(t *testing.T) {
	_, err := Start(context.Background(), WithDataDir(t.TempDir()), WithBinary("/nonexistent/clickhouse-server"))
	if !errors.Is(err, ErrBinaryNotFound) {
		t.Fatalf("want ErrBinaryNotFound, got %v", err)
	}
}

func TestNoDataDir(t *testing.T) {
	if _, err := Start(context.Background()); err == nil {
		t.Fatal("want an error without a data dir")
	}
}
