// Package s3server runs an S3-compatible object store for tests and development:
// versitygw (github.com/versity/versitygw, Apache-2.0), a real S3 gateway serving a local
// directory, which `make deps` builds from its Go module. A bucket is a directory of the
// data dir. The server dies with the process that started it.
package s3server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// ErrBinaryNotFound is returned by Start when no versitygw executable is found.
var ErrBinaryNotFound = errors.New("versitygw not found (make deps builds it into $(go env GOPATH)/bin)")

// Server is a running versitygw. Close it when done.
type Server struct {
	cmd      *exec.Cmd
	addr     string
	access   string
	secret   string
	dir      string
	exited   chan struct{}
	stopOnce sync.Once
}

// Start starts versitygw on a free loopback port over dataDir (created if needed), with
// generated root credentials, creates the buckets (directories of dataDir), and returns once
// it answers its health check (ctx bounds the start). It returns an error wrapping
// ErrBinaryNotFound when versitygw is not installed.
func Start(ctx context.Context, dataDir string, buckets ...string) (*Server, error) {
	bin, err := findBinary()
	if err != nil {
		return nil, err
	}
	for _, b := range buckets {
		if err := os.MkdirAll(filepath.Join(dataDir, b), 0o700); err != nil {
			return nil, fmt.Errorf("s3 server: bucket %s: %w", b, err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("s3 server: free port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Server{addr: addr, access: "idstream" + rand.Text()[:8], secret: rand.Text(), dir: dataDir, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, "--port", addr, "--health", "/health", "posix", dataDir)
	// The credentials go through the environment, not the command line (ps shows it).
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.access, "ROOT_SECRET_ACCESS_KEY="+s.secret)
	logf, err := os.OpenFile(filepath.Join(filepath.Dir(dataDir), filepath.Base(dataDir)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("s3 server: log: %w", err)
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("s3 server: start %s: %w", bin, err)
	}
	go func() {
		_ = s.cmd.Wait()
		logf.Close()
		close(s.exited)
	}()
	if err := s.waitHealthy(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Endpoint is the server's host:port (plain HTTP).
func (s *Server) Endpoint() string { return s.addr }

// Credentials returns the root access key and secret.
func (s *Server) Credentials() (access, secret string) { return s.access, s.secret }

// Dir is the data directory: a bucket's objects are files under Dir()/<bucket>.
func (s *Server) Dir() string { return s.dir }

// Close stops the server (SIGTERM, SIGKILL after 5 s) and waits for it. Safe to call more
// than once.
func (s *Server) Close() error {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	return nil
}

// waitHealthy polls the health path until it answers 200, the process exits or ctx ends.
func (s *Server) waitHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/health", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("s3 server exited at start (log beside %s)", s.dir)
		case <-ctx.Done():
			return fmt.Errorf("s3 server on %s: not healthy: %w", s.addr, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// findBinary looks for versitygw on PATH, then in $GOBIN, $GOPATH/bin and ~/go/bin.
func findBinary() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	if d := os.Getenv("GOPATH"); d != "" {
		dirs = append(dirs, filepath.Join(d, "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrBinaryNotFound
}
