package stream

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/idstream/idstream/internal/tlsfiles"
)

// dialTimeout bounds one broker connection attempt (kgo's default).
const dialTimeout = 10 * time.Second

// WithTLS makes every client dial the brokers over TLS with c (nil: plaintext). An empty
// ServerName is taken from each broker's host name, as the brokers advertise it.
func WithTLS(c *tls.Config) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.tls = c.Clone()
		}
	}
}

// WithSASL makes every client authenticate each broker connection with m (such as
// scram.Auth{User, Pass}.AsSha512Mechanism() or plain.Auth{...}.AsMechanism(); nil: no
// authentication). Over plaintext the credentials of PLAIN cross the network readable: pair
// it with WithTLS.
func WithSASL(m sasl.Mechanism) Option {
	return func(cfg *config) {
		if m != nil {
			cfg.sasl = m
		}
	}
}

// dial opens one connection to a broker: TCP, then the TLS handshake when WithTLS is set.
// Every client of the runtime dials through it (a killSwitch wraps it), so that TLS holds
// for the group clients whose dialer is their own.
func (c *config) dial(ctx context.Context, network, host string) (net.Conn, error) {
	d := &net.Dialer{Timeout: dialTimeout}
	if c.tls == nil {
		return d.DialContext(ctx, network, host)
	}
	return (&tls.Dialer{NetDialer: d, Config: c.tls}).DialContext(ctx, network, host)
}

// securityOpts are the kgo options of the connection: the dialer and the SASL mechanism.
func (c *config) securityOpts() []kgo.Opt {
	opts := []kgo.Opt{kgo.Dialer(c.dial)}
	if c.sasl != nil {
		opts = append(opts, kgo.SASL(c.sasl))
	}
	return opts
}

// IsConnectionRefused reports whether err says that the brokers refuse this client for
// good, whatever the wait: SASL authentication failed, or the broker's certificate is not
// trusted. A client that starts with such an error should
// stop and say so instead of waiting for the brokers. A broker that closes the connection at
// once (kgo.ErrFirstReadEOF: "is SASL missing?", "is TLS missing?", or kfake's answer to a
// wrong password) is not counted: a broker that restarts does the same. Nor is TLS to a
// plaintext broker, which does not answer the handshake (the dial times out).
func IsConnectionRefused(err error) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.IllegalSaslState) || tlsfiles.IsCertificateError(err)
}
