package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// helmBinary returns the helm executable (make deps builds it from its Go module where go
// install puts it: GOBIN, or the first GOPATH entry's bin), skipping the test when there is
// none.
func helmBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n"); err == nil && len(lines) == 2 {
		dir := strings.TrimSpace(lines[0])
		if dir == "" {
			dir = filepath.Join(strings.Split(strings.TrimSpace(lines[1]), string(os.PathListSeparator))[0], "bin")
		}
		if _, err := os.Stat(filepath.Join(dir, "helm")); err == nil {
			return filepath.Join(dir, "helm")
		}
	}
	t.Skip("helm is not installed (make deps builds it)")
	return ""
}

// chartValues are the --set flags of a release with the secrets the chart requires.
var chartValues = []string{
	"--set", "secretValues.tokenSecret=0123456789abcdef0123456789abcdef",
	"--set", "secretValues.clickhousePassword=ch-secret-value",
	"--set", "secretValues.s3AccessKey=ak", "--set", "secretValues.s3SecretKey=s3-secret-value",
	"--set-string", "secretValues.tenantsYAML=tenants: []",
}

// helm runs helm with args in a private home and returns its output and error.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		err = errors.New(strings.TrimSpace(errOut.String() + " " + err.Error()))
	}
	return out.String(), err
}

// manifest is the part of a rendered object the test reads.
type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Replicas *int `yaml:"replicas"`
		Template struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	SecurityContext struct {
		RunAsNonRoot bool `yaml:"runAsNonRoot"`
	} `yaml:"securityContext"`
	Containers []struct {
		Args []string `yaml:"args"`
		Env  []struct {
			Name      string         `yaml:"name"`
			Value     string         `yaml:"value"`
			ValueFrom map[string]any `yaml:"valueFrom"`
		} `yaml:"env"`
		ReadinessProbe struct {
			HTTPGet struct {
				Path string `yaml:"path"`
			} `yaml:"httpGet"`
		} `yaml:"readinessProbe"`
		Resources struct {
			Requests map[string]any `yaml:"requests"`
		} `yaml:"resources"`
	} `yaml:"containers"`
}

func render(t *testing.T, extra ...string) []manifest {
	t.Helper()
	out, err := helm(t, append(append([]string{"template", "rel", "helm/idstream"}, chartValues...), extra...)...)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	var ms []manifest
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var m manifest
		if err := dec.Decode(&m); err != nil {
			break
		}
		if m.Kind != "" {
			ms = append(ms, m)
		}
	}
	if strings.Contains(out, "ch-secret-value") && strings.Count(out, "ch-secret-value") != 1 {
		t.Errorf("the ClickHouse password appears outside its Secret")
	}
	return ms
}

// TestHelmChart: helm lint passes; the rendered release has a StatefulSet per stateful group
// (pod names as instance ids), a Deployment per other group and sink, a PodDisruptionBudget
// each, probes on /readyz, resource requests, non-root pods, secrets by reference only (the
// ClickHouse password for migrate and the ClickHouse sink alone); more replicas than
// partitions is refused; KEDA scales the groups marked scaleOnLag.
func TestHelmChart(t *testing.T) {
	if out, err := helm(t, append([]string{"lint", "--strict", "helm/idstream"}, chartValues...)...); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	ms := render(t)
	byName := map[string]manifest{}
	pdbs := map[string]bool{}
	for _, m := range ms {
		if m.Kind == "PodDisruptionBudget" {
			pdbs[m.Metadata.Name] = true
		}
		if m.Kind == "Deployment" || m.Kind == "StatefulSet" {
			byName[m.Metadata.Name] = m
		}
	}
	groups := []string{"session", "decision", "erasure", "quality", "ocr", "chip", "liveness", "facematch", "fraud",
		"erasure-index", "erasure-blobs", "sink-clickhouse", "sink-webhook", "edge", "consent"}
	for _, g := range groups {
		m, ok := byName["rel-"+g]
		if !ok {
			t.Errorf("no workload for %s", g)
			continue
		}
		stateful := g == "session" || g == "decision" || g == "erasure"
		if (m.Kind == "StatefulSet") != stateful {
			t.Errorf("%s is a %s", g, m.Kind)
		}
		if !pdbs["rel-"+g] {
			t.Errorf("%s has no PodDisruptionBudget", g)
		}
		pod := m.Spec.Template.Spec
		if !pod.SecurityContext.RunAsNonRoot || len(pod.Containers) != 1 {
			t.Errorf("%s: pod not non-root or not one container", g)
			continue
		}
		c := pod.Containers[0]
		if c.ReadinessProbe.HTTPGet.Path != "/readyz" || len(c.Resources.Requests) == 0 {
			t.Errorf("%s: readiness %q, requests %v", g, c.ReadinessProbe.HTTPGet.Path, c.Resources.Requests)
		}
		env := map[string]int{}
		for i, e := range c.Env {
			env[e.Name] = i
		}
		if i, ok := env["IDSTREAM_INSTANCE_ID"]; !ok || c.Env[i].Value != "$(POD_NAME)" {
			t.Errorf("%s: instance id is not the pod name", g)
		}
		_, hasPW := env["IDSTREAM_CLICKHOUSE_PASSWORD"]
		if hasPW != (g == "sink-clickhouse") {
			t.Errorf("%s: ClickHouse password in the environment: %v", g, hasPW)
		}
		for _, name := range []string{"IDSTREAM_TOKEN_SECRET", "AWS_SECRET_ACCESS_KEY"} {
			if i, ok := env[name]; !ok || c.Env[i].ValueFrom == nil || c.Env[i].Value != "" {
				t.Errorf("%s: %s not taken from the Secret", g, name)
			}
		}
	}

	if _, err := helm(t, append(append([]string{"template", "rel", "helm/idstream"}, chartValues...), "--set", "groups.ocr.replicas=13")...); err == nil ||
		!strings.Contains(err.Error(), "partitions") {
		t.Errorf("13 OCR replicas over 12 partitions: %v, want a refusal naming the partitions", err)
	}
	if _, err := helm(t, "template", "rel", "helm/idstream"); err == nil || !strings.Contains(err.Error(), "tokenSecret") {
		t.Errorf("no token secret: %v, want a refusal", err)
	}
	for _, m := range render(t, "--set", "tlsCASecret=ca", "--set", "kafka.tls=true") {
		if m.Kind != "Deployment" && m.Kind != "StatefulSet" {
			continue
		}
		found := false
		for _, e := range m.Spec.Template.Spec.Containers[0].Env {
			found = found || (e.Name == "IDSTREAM_KAFKA_TLS_CA" && e.Value == "/etc/idstream/tls/ca.pem")
		}
		if !found {
			t.Errorf("%s: no Kafka CA from tlsCASecret", m.Metadata.Name)
		}
	}
	var scaled []string
	for _, m := range render(t, "--set", "keda.enabled=true") {
		if m.Kind == "ScaledObject" {
			scaled = append(scaled, m.Metadata.Name)
		}
	}
	slices.Sort(scaled)
	if !slices.Equal(scaled, []string{"rel-liveness", "rel-ocr"}) {
		t.Errorf("ScaledObjects %v, want OCR and liveness", scaled)
	}
}

// TestHelmEdgeAnalytics: with edge.analyticsUser the edge serves the reviewers' analytics,
// reading ClickHouse as that user with its own password; no other pod gets that password,
// and without it the edge has none at all (TestHelmChart).
func TestHelmEdgeAnalytics(t *testing.T) {
	ms := render(t, "--set", "edge.analyticsUser=analyst", "--set", "secretValues.clickhouseAnalyticsPassword=ro-secret")
	seen := false
	for _, m := range ms {
		if m.Kind != "Deployment" && m.Kind != "StatefulSet" {
			continue
		}
		env := map[string]string{}
		for _, e := range m.Spec.Template.Spec.Containers[0].Env {
			v := e.Value
			if ref, ok := e.ValueFrom["secretKeyRef"].(map[string]any); ok {
				v = "secret:" + fmt.Sprint(ref["key"])
			}
			env[e.Name] = v
		}
		isEdge := strings.HasSuffix(m.Metadata.Name, "-edge")
		seen = seen || isEdge
		if isEdge && (env["IDSTREAM_EDGE_ANALYTICS"] != "1" || env["IDSTREAM_CLICKHOUSE_USER"] != "analyst" || env["IDSTREAM_CLICKHOUSE_PASSWORD"] != "secret:clickhouse-analytics-password") {
			t.Errorf("edge env %v: want analytics as analyst with the analytics password", env)
		}
		if !isEdge && (env["IDSTREAM_EDGE_ANALYTICS"] != "" || env["IDSTREAM_CLICKHOUSE_PASSWORD"] == "secret:clickhouse-analytics-password") {
			t.Errorf("%s: got the edge's analytics settings", m.Metadata.Name)
		}
	}
	if !seen {
		t.Fatal("no edge Deployment rendered")
	}
}
