// Package chserver runs a local clickhouse-server as a child process owned by the caller,
// for development (`make run`) and tests. It generates config.xml and users.xml under a data
// dir (listening on 127.0.0.1 only, every path and log under that dir), waits until the
// server answers /ping, and stops it on Close. Production points at an external ClickHouse
// and does not use this package.
package chserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrBinaryNotFound is wrapped by Start when the clickhouse-server binary cannot be found.
var ErrBinaryNotFound = errors.New("clickhouse-server binary not found (Debian: apt-get install --no-install-recommends clickhouse-server)")

// defaultBinaryPaths are tried in order when no binary is given and none is on PATH.
func defaultBinaryPaths() []string {
	return []string{"/usr/bin/clickhouse-server", "/usr/sbin/clickhouse-server", "/usr/bin/clickhouse"}
}

// Option configures Start.
type Option func(*config)

type config struct {
	binary       string
	dataDir      string
	tcpPort      int
	httpPort     int
	startTimeout time.Duration
	stopTimeout  time.Duration
	logLevel     string
	users        []user
	tlsCert      string // PEM server certificate for tcp_port_secure (WithTLS)
	tlsKey       string
	securePort   int
}

// user is a login added by WithUser.
type user struct{ name, password string }

// WithBinary sets the clickhouse-server executable (default: "clickhouse-server" on PATH,
// then /usr/bin/clickhouse-server, /usr/sbin/clickhouse-server, /usr/bin/clickhouse with the
// "server" argument).
func WithBinary(path string) Option { return func(c *config) { c.binary = path } }

// WithDataDir sets the directory holding the generated configuration, the data, the
// temporary files and the logs. Required. A server started again on the same dir finds its
// data again.
func WithDataDir(dir string) Option { return func(c *config) { c.dataDir = dir } }

// WithTCPPort sets the native-protocol port (default 0: a free port is chosen).
func WithTCPPort(port int) Option { return func(c *config) { c.tcpPort = port } }

// WithHTTPPort sets the HTTP port used for /ping (default 0: a free port is chosen).
func WithHTTPPort(port int) Option { return func(c *config) { c.httpPort = port } }

// WithStartTimeout bounds how long Start waits for /ping to answer (default 30s).
func WithStartTimeout(d time.Duration) Option { return func(c *config) { c.startTimeout = d } }

// WithStopTimeout bounds how long Close waits after SIGTERM before it kills the process
// (default 15s).
func WithStopTimeout(d time.Duration) Option { return func(c *config) { c.stopTimeout = d } }

// WithLogLevel sets the server's log level (default "warning").
func WithLogLevel(level string) Option { return func(c *config) { c.logLevel = level } }

// WithUser adds a login with a password (stored as its SHA-256 in users.xml), besides the
// passwordless "default" user the tests and dev use on loopback; a user named "default"
// gives that one a password.
func WithUser(name, password string) Option {
	return func(c *config) { c.users = append(c.users, user{name, password}) }
}

// WithTLS opens a second native-protocol port, tcp_port_secure (SecureAddr), speaking TLS
// with this PEM certificate and key.
func WithTLS(certFile, keyFile string) Option {
	return func(c *config) { c.tlsCert, c.tlsKey = certFile, keyFile }
}

// Server is a running clickhouse-server child process. Close it when done.
type Server struct {
	cfg      config
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has exited
	waitErr  error
	stopOnce sync.Once
	stopErr  error
}

// Start writes config.xml and users.xml into the data dir, starts clickhouse-server with
// them and returns once the server answers /ping on its HTTP port. A server that a parent
// which died left running on the data dir (found by its pid file) is stopped first; on Linux
// the server dies with its parent, killed or not. The process is owned by
// the caller: it is stopped by Close, not when ctx ends (ctx bounds the start only). Start
// returns an error wrapping ErrBinaryNotFound when the binary is missing, and an error with
// the tail of the server's error log when it exits or does not answer in time.
func Start(ctx context.Context, opts ...Option) (*Server, error) {
	cfg := config{startTimeout: 30 * time.Second, stopTimeout: 15 * time.Second, logLevel: "warning"}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.dataDir == "" {
		return nil, errors.New("start clickhouse: no data dir (use WithDataDir)")
	}
	bin, args, err := findBinary(cfg.binary)
	if err != nil {
		return nil, fmt.Errorf("start clickhouse: %w", err)
	}
	dir, err := filepath.Abs(cfg.dataDir)
	if err != nil {
		return nil, fmt.Errorf("start clickhouse: data dir: %w", err)
	}
	cfg.dataDir = dir
	// Ports left to Start are picked free, but another process may take one before the server
	// binds it: such a start is tried again on new ports (at most three times).
	var picked []*int
	for _, p := range []*int{&cfg.tcpPort, &cfg.httpPort, &cfg.securePort} {
		if *p == 0 && (p != &cfg.securePort || cfg.tlsCert != "") {
			picked = append(picked, p)
		}
	}
	for attempt := 1; ; attempt++ {
		for _, p := range picked {
			if *p, err = freePort(); err != nil {
				return nil, fmt.Errorf("start clickhouse: %w", err)
			}
		}
		s, err := start(ctx, cfg, bin, args)
		if err == nil || len(picked) == 0 || attempt == 3 || !errors.Is(err, errAddressInUse) {
			return s, err
		}
	}
}

// errAddressInUse marks a start that failed because a port was taken.
var errAddressInUse = errors.New("address already in use")

// start runs the server of cfg once (Start's ports chosen).
func start(ctx context.Context, cfg config, bin string, args []string) (*Server, error) {
	dir := cfg.dataDir
	for _, sub := range []string{"data", "tmp", "user_files", "format_schemas", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("start clickhouse: %w", err)
		}
	}
	// A failed attempt's error log would be read as this one's.
	_ = os.Remove(filepath.Join(dir, "log", "clickhouse-server.err.log"))
	if err := os.WriteFile(filepath.Join(dir, "config.xml"), []byte(configXML(cfg)), 0o644); err != nil {
		return nil, fmt.Errorf("start clickhouse: write config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.xml"), []byte(usersXML(cfg.users)), 0o600); err != nil {
		return nil, fmt.Errorf("start clickhouse: write users: %w", err)
	}

	args = append(slices.Clone(args), "--config-file="+filepath.Join(dir, "config.xml"))
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	stderr, err := os.OpenFile(filepath.Join(dir, "log", "stderr.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start clickhouse: %w", err)
	}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = childAttr()
	if err := stopLeftover(dir, cfg.stopTimeout); err != nil {
		stderr.Close()
		return nil, fmt.Errorf("start clickhouse: %w", err)
	}
	s := &Server{cfg: cfg, cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The kernel kills the server when the thread that started it ends (childAttr):
		// this goroutine keeps that thread, locked, for as long as the server runs.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.waitErr = cmd.Wait()
		stderr.Close()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		stderr.Close()
		return nil, fmt.Errorf("start clickhouse %s: %w", bin, err)
	}
	if err := os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("start clickhouse: %w", err)
	}
	if err := s.waitReady(ctx); err != nil {
		_ = s.Close()
		tail := s.logTail()
		if strings.Contains(tail, "Address already in use") {
			err = fmt.Errorf("%w: %w", errAddressInUse, err)
		}
		return nil, fmt.Errorf("start clickhouse on %s: %w%s", s.Addr(), err, tail)
	}
	return s, nil
}

// Addr returns the native-protocol address, "127.0.0.1:<tcp_port>".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.cfg.tcpPort)) }

// SecureAddr returns the TLS native-protocol address, "127.0.0.1:<tcp_port_secure>" (""
// without WithTLS).
func (s *Server) SecureAddr() string {
	if s.cfg.securePort == 0 {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.cfg.securePort))
}

// HTTPAddr returns the HTTP address, "127.0.0.1:<http_port>" (for /ping only: inserts over
// HTTP do not work with the Go driver against 18.16).
func (s *Server) HTTPAddr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.cfg.httpPort))
}

// TCPPort returns the native-protocol port.
func (s *Server) TCPPort() int { return s.cfg.tcpPort }

// HTTPPort returns the HTTP port.
func (s *Server) HTTPPort() int { return s.cfg.httpPort }

// DataDir returns the absolute data dir.
func (s *Server) DataDir() string { return s.cfg.dataDir }

// Close stops the server: SIGTERM, then SIGKILL if it has not exited within the stop
// timeout. It waits for the process to exit. Safe to call more than once; later calls
// return the first call's result.
func (s *Server) Close() error {
	s.stopOnce.Do(func() {
		select {
		case <-s.exited:
			return
		default:
		}
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			s.stopErr = fmt.Errorf("stop clickhouse: sigterm: %w", err)
		}
		select {
		case <-s.exited:
		case <-time.After(s.cfg.stopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.exited
			s.stopErr = fmt.Errorf("stop clickhouse: killed after %s without exiting on SIGTERM", s.cfg.stopTimeout)
		}
	})
	return s.stopErr
}

// waitReady polls /ping until it answers "Ok.", the process exits, or the start timeout or
// ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	url := "http://" + s.HTTPAddr() + "/ping"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == "Ok.\n" {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("server exited during start: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("server did not answer /ping: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail returns the end of the server's error log and stderr, for error messages.
func (s *Server) logTail() string {
	var out string
	for _, name := range []string{"clickhouse-server.err.log", "stderr.log"} {
		b, err := os.ReadFile(filepath.Join(s.cfg.dataDir, "log", name))
		if err != nil || len(b) == 0 {
			continue
		}
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		out += "\n--- " + name + " ---\n" + string(b)
	}
	return out
}

// findBinary returns the executable and the arguments that precede --config-file.
func findBinary(given string) (string, []string, error) {
	if given != "" {
		if _, err := os.Stat(given); err != nil {
			return "", nil, fmt.Errorf("%w: %s: %v", ErrBinaryNotFound, given, err)
		}
		if filepath.Base(given) == "clickhouse" {
			return given, []string{"server"}, nil
		}
		return given, nil, nil
	}
	if p, err := exec.LookPath("clickhouse-server"); err == nil {
		return p, nil, nil
	}
	for _, p := range defaultBinaryPaths() {
		if _, err := os.Stat(p); err == nil {
			if filepath.Base(p) == "clickhouse" {
				return p, []string{"server"}, nil
			}
			return p, nil, nil
		}
	}
	return "", nil, ErrBinaryNotFound
}

// pidFile, under the data dir, holds the pid of the server Start started there.
const pidFile = "clickhouse-server.pid"

// stopLeftover stops the server a previous Start left running on dir, if its pid file names
// a live clickhouse server of dir (its command line holds dir's config file): SIGTERM, then
// SIGKILL after timeout, and waits until it is gone. A pid file naming no such process (it
// ended, or the pid now belongs to another) is left alone.
func stopLeftover(dir string, timeout time.Duration) error {
	b, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return nil
	}
	ours := func() bool {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		return err == nil && strings.Contains(string(cmdline), filepath.Join(dir, "config.xml"))
	}
	if !ours() {
		return nil
	}
	gone := func() bool {
		for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if !ours() {
				return true
			}
		}
		return !ours()
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		_ = syscall.Kill(pid, sig)
		if gone() {
			return nil
		}
	}
	return fmt.Errorf("a server left running on %s (pid %d) did not stop", dir, pid)
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func configXML(c config) string {
	d := c.dataDir
	return `<?xml version="1.0"?>
<!-- Generated by idstream internal/chserver; rewritten on every start. -->
<yandex>
    <logger>
        <level>` + c.logLevel + `</level>
        <log>` + filepath.Join(d, "log", "clickhouse-server.log") + `</log>
        <errorlog>` + filepath.Join(d, "log", "clickhouse-server.err.log") + `</errorlog>
        <size>100M</size>
        <count>3</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>` + strconv.Itoa(c.tcpPort) + `</tcp_port>
    <http_port>` + strconv.Itoa(c.httpPort) + `</http_port>
` + secureXML(c) + `    <max_connections>256</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>64</max_concurrent_queries>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>
    <path>` + filepath.Join(d, "data") + `/</path>
    <tmp_path>` + filepath.Join(d, "tmp") + `/</tmp_path>
    <user_files_path>` + filepath.Join(d, "user_files") + `/</user_files_path>
    <format_schema_path>` + filepath.Join(d, "format_schemas") + `/</format_schema_path>
    <users_config>` + filepath.Join(d, "users.xml") + `</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
    <merge_tree>
        <max_suspicious_broken_parts>5</max_suspicious_broken_parts>
    </merge_tree>
</yandex>
`
}

// secureXML is the configuration of tcp_port_secure (empty without WithTLS).
func secureXML(c config) string {
	if c.tlsCert == "" {
		return ""
	}
	return `    <tcp_port_secure>` + strconv.Itoa(c.securePort) + `</tcp_port_secure>
    <openSSL>
        <server>
            <certificateFile>` + c.tlsCert + `</certificateFile>
            <privateKeyFile>` + c.tlsKey + `</privateKeyFile>
            <verificationMode>none</verificationMode>
            <loadDefaultCAFile>false</loadDefaultCAFile>
            <cacheSessions>true</cacheSessions>
            <disableProtocols>sslv2,sslv3,tlsv1,tlsv1_1</disableProtocols>
            <preferServerCiphers>true</preferServerCiphers>
        </server>
    </openSSL>
`
}

// usersXML is users.xml: the passwordless default user on loopback (unless users has one
// named "default"), then users with the SHA-256 of their passwords.
func usersXML(users []user) string {
	var b strings.Builder
	if !slices.ContainsFunc(users, func(u user) bool { return u.name == "default" }) {
		users = append([]user{{name: "default"}}, users...)
	}
	for _, u := range users {
		password := "<password></password>"
		if u.password != "" {
			sum := sha256.Sum256([]byte(u.password))
			password = "<password_sha256_hex>" + hex.EncodeToString(sum[:]) + "</password_sha256_hex>"
		}
		fmt.Fprintf(&b, `        <%s>
            %s
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </%s>
`, u.name, password, u.name)
	}
	return strings.Replace(usersTemplate, "USERS", b.String(), 1)
}

const usersTemplate = `<?xml version="1.0"?>
<!-- Generated by idstream internal/chserver; rewritten on every start. -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
            <allow_experimental_low_cardinality_type>1</allow_experimental_low_cardinality_type>
        </default>
    </profiles>
    <users>
USERS    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
`
