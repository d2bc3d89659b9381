package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/idstream/idstream/schemas"
)

// TestOpsEndpoints: a process serves /metrics, /healthz and /readyz on --metrics-addr; it is
// ready once its group members have joined their groups and a broker answers, and not ready
// once the brokers are gone. The edge's public port
// serves no metrics.
func TestOpsEndpoints(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	s := testService(t, []string{"session", "quality"}, func(c *Config) { c.Brokers = cluster.ListenAddrs() })
	get := func(path string) (int, string) {
		res, err := http.Get("http://" + s.opsAddr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	readyz := func() (int, readinessReport) {
		code, body := get("/readyz")
		var r readinessReport
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("readyz body %q: %v", body, err)
		}
		return code, r
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, r := readyz()
		if code == http.StatusOK {
			if r.Status != "ready" || len(r.Problems) > 0 || r.BrokerAnswered == nil {
				t.Fatalf("200 with %+v", r)
			}
			for _, g := range []string{"session", "quality"} {
				if st := r.Groups[g]; !st.Joined || st.Generation < 0 {
					t.Errorf("group %s: %+v, want joined", g, st)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 30 s: %d %+v", code, r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("healthz: %d %s", code, body)
	}
	if res, err := http.Get("http://" + s.edgeAddr + "/healthz"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("edge healthz: %v", err)
	}
	code, metrics := get("/metrics")
	for _, want := range []string{`idstream_edge_requests_total{method="GET",route="/healthz",status="200"} 1`, "process_cpu_seconds_total", "go_goroutines"} {
		if code != http.StatusOK || !strings.Contains(metrics, want) {
			t.Errorf("/metrics (%d) lacks %s", code, want)
		}
	}
	if res, err := http.Get("http://" + s.edgeAddr + "/metrics"); err != nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("the edge's public port serves /metrics: %v %v", res.StatusCode, err)
	}

	cluster.Close()
	deadline = time.Now().Add(brokerSilence + 15*time.Second)
	for {
		code, r := readyz()
		if code == http.StatusServiceUnavailable && strings.Contains(strings.Join(r.Problems, "\n"), "kafka") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d %+v after the brokers went away", code, r)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestTopicsCommandSetsRetention: `idstream topics` creates the topics, then sets a changed
// --topic-retention and --erasure-lag on the existing ones (and nothing when unchanged).
func TestTopicsCommandSetsRetention(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	t.Setenv("KAFKA_BROKERS", strings.Join(cluster.ListenAddrs(), ","))
	topics := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(context.Background(), append([]string{"topics", "--partitions", "2"}, args...), &out, &errOut); code != 0 {
			t.Fatalf("topics %v: exit %d: %s", args, code, errOut.String())
		}
		return out.String()
	}
	if out := topics(); strings.Contains(out, "set on") {
		t.Fatalf("a first run changed existing topics: %s", out)
	}
	out := topics("--topic-retention", "24h", "--erasure-lag", "1h")
	n := len(schemas.Topics()) * 2 // every topic and its dead-letter topic
	consentAndErasure := 2         // kept forever: not changed
	if want := fmt.Sprintf("set on %d existing topics", n-consentAndErasure); !strings.Contains(out, want) {
		t.Errorf("second run: %q, want %q", out, want)
	}
	if out := topics("--topic-retention", "24h", "--erasure-lag", "1h"); strings.Contains(out, "set on") {
		t.Errorf("an unchanged run changed topics: %s", out)
	}
}
