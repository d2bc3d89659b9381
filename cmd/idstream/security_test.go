package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/idstream/idstream/internal/chserver"
	"github.com/idstream/idstream/internal/tlsfiles"
	"github.com/idstream/idstream/internal/tlsfiles/tlstest"
	chsink "github.com/idstream/idstream/sinks/clickhouse"
)

// TestSecuredConnections runs a session through the whole service against a Kafka cluster
// that requires TLS and SCRAM-SHA-256, with the ClickHouse sink logging in with a password
// over ClickHouse's TLS port; the decision reaches Data Get and ClickHouse. Then migrate with
// a wrong ClickHouse password fails at once, saying so.
func TestSecuredConnections(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(ca.ServerConfig(t, "broker", false)),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "idstream", "kafka-pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	_, chCert, chKey := ca.Issue(t, "clickhouse", true)
	ch, err := chserver.Start(context.Background(), chserver.WithDataDir(t.TempDir()),
		chserver.WithUser("sink", "ch-pw"), chserver.WithTLS(chCert, chKey))
	if errors.Is(err, chserver.ErrBinaryNotFound) {
		t.Skip("clickhouse-server is not installed (make deps installs it)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	dir := t.TempDir()
	kafkaPW, chPW := filepath.Join(dir, "kafka-pw"), filepath.Join(dir, "ch-pw")
	for path, pw := range map[string]string{kafkaPW: "kafka-pw\n", chPW: "ch-pw"} {
		if err := os.WriteFile(path, []byte(pw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conn := Connections{
		KafkaTLSFiles: tlsfiles.Files{CA: ca.File(t)}, KafkaSASL: "SCRAM-SHA-256", KafkaSASLUser: "idstream",
		KafkaSASLPassword: secret{file: kafkaPW},
		ClickHouseUser:    "sink", ClickHousePassword: secret{file: chPW},
		ClickHouseTLSFiles: tlsfiles.Files{CA: ca.File(t)},
	}
	s := testService(t, []string{"session", "quality", "chip", "liveness", "facematch", "fraud", "decision"}, func(c *Config) {
		c.Brokers, c.Conn = cluster.ListenAddrs(), conn
		c.Sinks, c.ClickHouseAddr = []string{"clickhouse"}, ch.SecureAddr()
	})
	c := newClient(t, s)
	id := runFlow(t, s, c, "nfc_only", 5)
	c.waitStatus(id, "verified")

	dialOpts, err := conn.clickHouseOptions()
	if err != nil {
		t.Fatal(err)
	}
	db, err := chsink.Dial(context.Background(), ch.SecureAddr(), dialOpts...)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var outcome string
		err := db.QueryRow(context.Background(), "SELECT outcome FROM idstream.decisions FINAL WHERE session_id = ?", id).Scan(&outcome)
		if err == nil && outcome == "verified" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no verified decisions row over the secured ClickHouse connection: %q %v", outcome, err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	t.Setenv("IDSTREAM_CLICKHOUSE_PASSWORD", "guess")
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(context.Background(), []string{"migrate", "--clickhouse-addr", ch.SecureAddr(), "--clickhouse-user", "sink",
		"--clickhouse-tls-ca", ca.File(t)}, &out, &errOut)
	if code == 0 {
		t.Fatalf("migrate with a wrong password succeeded: %s", out.String())
	}
	if elapsed := time.Since(start); elapsed > clickHouseWait/2 {
		t.Errorf("migrate with a wrong password waited %v for the server", elapsed)
	}
	if strings.Contains(errOut.String(), "guess") {
		t.Errorf("the password is in the output: %s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "password") && !strings.Contains(errOut.String(), "Authentication") {
		t.Errorf("migrate's error does not say the login was refused: %s", errOut.String())
	}
}

// TestConnectionFlags: the flags and variables of secured connections build the clients'
// options, and a half-configured connection is an error naming what is missing.
func TestConnectionFlags(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	_, cert, key := ca.Issue(t, "client", false)
	t.Setenv("IDSTREAM_KAFKA_SASL_PASSWORD", "pw")
	var cfg Config
	if err := parse(flagSet("edge", &cfg), []string{"--kafka-tls-ca", ca.File(t), "--kafka-tls-cert", cert, "--kafka-tls-key", key,
		"--kafka-sasl-mechanism", "scram-sha-512", "--kafka-sasl-user", "u"}); err != nil {
		t.Fatal(err)
	}
	opts, err := cfg.Conn.kafkaOptions()
	if err != nil || len(opts) != 2 {
		t.Fatalf("kafka options: %d, %v; want TLS and SASL", len(opts), err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown mechanism", []string{"--kafka-sasl-mechanism", "GSSAPI", "--kafka-sasl-user", "u"}, "GSSAPI"},
		{"no user", []string{"--kafka-sasl-mechanism", "PLAIN"}, "--kafka-sasl-user"},
		{"certificate without key", []string{"--kafka-tls-cert", cert}, "both"},
		{"CA file missing", []string{"--kafka-tls-ca", "/nonexistent.pem"}, "nonexistent"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cfg Config
			if err := parse(flagSet("edge", &cfg), tt.args); err != nil {
				t.Fatal(err)
			}
			_, err := cfg.Conn.kafkaOptions()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
	t.Setenv("IDSTREAM_KAFKA_SASL_PASSWORD", "")
	cfg = Config{}
	if err := parse(flagSet("edge", &cfg), []string{"--kafka-sasl-mechanism", "PLAIN", "--kafka-sasl-user", "u"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Conn.kafkaOptions(); !errors.Is(err, errSASLUser) {
		t.Fatalf("no password: %v", err)
	}
}
