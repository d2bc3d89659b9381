package chserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
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

// TestLeftoverServerStopped: a server left running on a data dir by a parent that lost track
// of it (its pid file) is stopped by the next Start on that dir, which then starts.
func TestLeftoverServerStopped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	first, err := Start(ctx, WithDataDir(dir))
	if errors.Is(err, ErrBinaryNotFound) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := Start(ctx, WithDataDir(dir), WithStopTimeout(5*time.Second))
	if err != nil {
		t.Fatalf("start on a dir a leftover server holds: %v", err)
	}
	defer second.Close()
	select {
	case <-first.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the leftover server still runs")
	}
}

// TestServerDiesWithItsParent: a process that started a server and is killed with SIGKILL
// takes the server with it, and the data dir can be started on at once.
func TestServerDiesWithItsParent(t *testing.T) {
	if dir := os.Getenv("CHSERVER_TEST_PARENT_DIR"); dir != "" {
		// The parent, run as a child of the test: start, say so, wait to be killed.
		s, err := Start(context.Background(), WithDataDir(dir))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ready", s.cmd.Process.Pid)
		select {}
	}
	if runtime.GOOS != "linux" {
		t.Skip("the kernel kills a child with its parent on Linux only")
	}
	if _, _, err := findBinary(""); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	parent := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithItsParent$")
	parent.Env = append(os.Environ(), "CHSERVER_TEST_PARENT_DIR="+dir)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = parent.Process.Kill(); _ = parent.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	var pid int
	if _, serr := fmt.Sscanf(line, "ready %d", &pid); err != nil || serr != nil {
		t.Fatalf("the parent said %q (%v)", line, err)
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the server outlived its parent's SIGKILL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, WithDataDir(dir))
	if err != nil {
		t.Fatalf("start again on the dir: %v", err)
	}
	_ = s.Close()
}

// alive reports whether process pid runs (a zombie, ended but not yet reaped, does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// TestPortTakenIsTold: a start on a port another process holds fails as errAddressInUse,
// the error Start tries again on new ports when it picked them itself.
func TestPortTakenIsTold(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, WithDataDir(t.TempDir()), WithTCPPort(port))
	if errors.Is(err, ErrBinaryNotFound) {
		t.Skip(err)
	}
	if err == nil {
		s.Close()
		t.Fatal("started on a taken port")
	}
	if !errors.Is(err, errAddressInUse) {
		t.Errorf("error %v, want errAddressInUse", err)
	}
}
