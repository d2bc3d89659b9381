package clickhouse

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// DialOption configures Dial.
type DialOption func(*ch.Options)

// DialAuth sets the user and password (default: user "default", no password).
func DialAuth(user, password string) DialOption {
	return func(o *ch.Options) { o.Auth.Username, o.Auth.Password = user, password }
}

// DialReadTimeout sets how long a query may wait for the server (default 15s). Keep it
// short: against ClickHouse 18.16 a statement the server does not answer poisons the
// connection until this timeout.
func DialReadTimeout(d time.Duration) DialOption { return func(o *ch.Options) { o.ReadTimeout = d } }

// Dial opens a native-protocol connection pool to addr ("host:port") and pings it.
func Dial(ctx context.Context, addr string, opts ...DialOption) (driver.Conn, error) {
	o := &ch.Options{
		Protocol:        ch.Native,
		Addr:            []string{addr},
		Auth:            ch.Auth{Database: "default", Username: "default"},
		DialTimeout:     3 * time.Second,
		ReadTimeout:     15 * time.Second,
		MaxOpenConns:    4,
		MaxIdleConns:    2,
		ConnMaxLifetime: time.Hour,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	conn, err := ch.Open(o)
	if err != nil {
		return nil, fmt.Errorf("clickhouse dial %s: %w", addr, err)
	}
	if err := conn.Ping(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("clickhouse ping %s: %w", addr, err)
	}
	return conn, nil
}

// DialTLS speaks the native protocol over TLS with c (the server's tcp_port_secure).
func DialTLS(c *tls.Config) DialOption { return func(o *ch.Options) { o.TLS = c } }

// IsAuthError reports whether err is the server refusing the login: unknown user, wrong or
// missing password, authentication failed (codes 192–194 and 516). Waiting does not help.
func IsAuthError(err error) bool {
	var ex *ch.Exception
	if !errors.As(err, &ex) {
		return false
	}
	switch ex.Code {
	case 192, 193, 194, 516:
		return true
	}
	return false
}
