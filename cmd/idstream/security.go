package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/idstream/idstream/internal/tlsfiles"
	chsink "github.com/idstream/idstream/sinks/clickhouse"
	"github.com/idstream/idstream/stream"
)

// Connections holds how a process reaches Kafka, ClickHouse and the schema registry when
// they are secured. Secrets are never flag values (a flag shows in ps and in shell
// history): each password comes from an environment variable or from a file named by a
// flag (a mounted Kubernetes or Docker secret), and nothing here is ever logged.
type Connections struct {
	KafkaTLS          bool           // --kafka-tls: dial the brokers over TLS
	KafkaTLSFiles     tlsfiles.Files // --kafka-tls-ca, --kafka-tls-cert, --kafka-tls-key (any implies --kafka-tls)
	KafkaSASL         string         // --kafka-sasl-mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty: none)
	KafkaSASLUser     string         // --kafka-sasl-user
	KafkaSASLPassword secret         // IDSTREAM_KAFKA_SASL_PASSWORD or --kafka-sasl-password-file

	ClickHouseUser     string         // --clickhouse-user (default "default")
	ClickHousePassword secret         // IDSTREAM_CLICKHOUSE_PASSWORD or --clickhouse-password-file
	ClickHouseTLS      bool           // --clickhouse-tls: the native protocol over TLS (ClickHouse's tcp_port_secure)
	ClickHouseTLSFiles tlsfiles.Files // --clickhouse-tls-ca, -cert, -key (any implies --clickhouse-tls)

	RegistryUser     string         // SCHEMA_REGISTRY_USER: basic auth user of the schema registry
	RegistryPassword secret         // SCHEMA_REGISTRY_PASSWORD or --schema-registry-password-file
	RegistryTLSFiles tlsfiles.Files // --schema-registry-tls-ca, -cert, -key (for an https URL)
}

// secret is a password taken from an environment variable or read from a file.
type secret struct {
	env  string // the variable's name
	file string // the file's path (a flag)
}

// value returns the secret: the file's content without its final newline when a file is
// named, else the variable's value ("" when neither is set).
func (s secret) value() (string, error) {
	if s.file != "" {
		b, err := os.ReadFile(s.file)
		if err != nil {
			return "", fmt.Errorf("read secret: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return os.Getenv(s.env), nil
}

// connectionFlags adds the flags of c to fs, with defaults from the environment.
func connectionFlags(fs *flag.FlagSet, c *Connections) {
	boolVar := func(p *bool, name, help string) { boolFlag(fs, p, name, help) }
	str := func(p *string, name, def, help string) { stringFlag(fs, p, name, def, help) }
	tlsFlags := func(f *tlsfiles.Files, prefix, what string) {
		str(&f.CA, prefix+"-ca", "", "PEM file of the CA certificates that sign "+what+"'s certificate (default: the system's roots)")
		str(&f.Cert, prefix+"-cert", "", "PEM client certificate for mutual TLS with "+what)
		str(&f.Key, prefix+"-key", "", "PEM private key of that client certificate")
	}
	boolVar(&c.KafkaTLS, "kafka-tls", "dial the Kafka brokers over TLS")
	tlsFlags(&c.KafkaTLSFiles, "kafka-tls", "the Kafka brokers")
	str(&c.KafkaSASL, "kafka-sasl-mechanism", "", "SASL mechanism of the Kafka brokers: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty: no SASL)")
	str(&c.KafkaSASLUser, "kafka-sasl-user", "", "SASL user name")
	c.KafkaSASLPassword.env = envName("kafka-sasl-password")
	str(&c.KafkaSASLPassword.file, "kafka-sasl-password-file", "", "file holding the SASL password (else env "+c.KafkaSASLPassword.env+")")

	str(&c.ClickHouseUser, "clickhouse-user", "default", "ClickHouse user")
	c.ClickHousePassword.env = envName("clickhouse-password")
	str(&c.ClickHousePassword.file, "clickhouse-password-file", "", "file holding the ClickHouse password (else env "+c.ClickHousePassword.env+")")
	boolVar(&c.ClickHouseTLS, "clickhouse-tls", "ClickHouse's native protocol over TLS (the server's tcp_port_secure)")
	tlsFlags(&c.ClickHouseTLSFiles, "clickhouse-tls", "ClickHouse")

	c.RegistryUser = os.Getenv("SCHEMA_REGISTRY_USER")
	c.RegistryPassword.env = "SCHEMA_REGISTRY_PASSWORD"
	str(&c.RegistryPassword.file, "schema-registry-password-file", "", "file holding the schema registry's basic auth password (else env SCHEMA_REGISTRY_PASSWORD; the user is SCHEMA_REGISTRY_USER)")
	tlsFlags(&c.RegistryTLSFiles, "schema-registry-tls", "the schema registry")
}

// errSASLUser is returned when a SASL mechanism is set without a user.
var errSASLUser = errors.New("--kafka-sasl-mechanism needs --kafka-sasl-user and a password")

// kafkaOptions returns the stream options of c's Kafka connection: TLS, SASL.
func (c Connections) kafkaOptions() ([]stream.Option, error) {
	var opts []stream.Option
	if c.KafkaTLS || c.KafkaTLSFiles != (tlsfiles.Files{}) {
		tc, err := c.KafkaTLSFiles.Config()
		if err != nil {
			return nil, fmt.Errorf("kafka: %w", err)
		}
		opts = append(opts, stream.WithTLS(tc))
	}
	if c.KafkaSASL == "" {
		return opts, nil
	}
	pass, err := c.KafkaSASLPassword.value()
	if err != nil {
		return nil, fmt.Errorf("kafka sasl password: %w", err)
	}
	if c.KafkaSASLUser == "" || pass == "" {
		return nil, errSASLUser
	}
	var m sasl.Mechanism
	switch strings.ToUpper(c.KafkaSASL) {
	case "PLAIN":
		m = plain.Auth{User: c.KafkaSASLUser, Pass: pass}.AsMechanism()
	case "SCRAM-SHA-256":
		m = scram.Auth{User: c.KafkaSASLUser, Pass: pass}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		m = scram.Auth{User: c.KafkaSASLUser, Pass: pass}.AsSha512Mechanism()
	default:
		return nil, fmt.Errorf("--kafka-sasl-mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.KafkaSASL)
	}
	return append(opts, stream.WithSASL(m)), nil
}

// clickHouseOptions returns the dial options of c's ClickHouse connection: user, password,
// TLS.
func (c Connections) clickHouseOptions() ([]chsink.DialOption, error) {
	pass, err := c.ClickHousePassword.value()
	if err != nil {
		return nil, fmt.Errorf("clickhouse password: %w", err)
	}
	user := c.ClickHouseUser
	if user == "" {
		user = "default"
	}
	opts := []chsink.DialOption{chsink.DialAuth(user, pass)}
	if c.ClickHouseTLS || c.ClickHouseTLSFiles != (tlsfiles.Files{}) {
		tc, err := c.ClickHouseTLSFiles.Config()
		if err != nil {
			return nil, fmt.Errorf("clickhouse: %w", err)
		}
		opts = append(opts, chsink.DialTLS(tc))
	}
	return opts, nil
}

// registryOptions returns the schema registry client's options: basic auth, TLS files.
func (c Connections) registryOptions() ([]sr.ClientOpt, error) {
	var opts []sr.ClientOpt
	pass, err := c.RegistryPassword.value()
	if err != nil {
		return nil, fmt.Errorf("schema registry password: %w", err)
	}
	if c.RegistryUser != "" {
		opts = append(opts, sr.BasicAuth(c.RegistryUser, pass))
	}
	if c.RegistryTLSFiles != (tlsfiles.Files{}) {
		tc, err := c.RegistryTLSFiles.Config()
		if err != nil {
			return nil, fmt.Errorf("schema registry: %w", err)
		}
		opts = append(opts, sr.DialTLSConfig(tc))
	}
	return opts, nil
}
