package deploy

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// definedMetrics returns the idstream_* metric names the Go code registers: a Name of
// "idstream_..." or Namespace "idstream" with a Subsystem and Name.
func definedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	full := regexp.MustCompile(`Name:\s*"(idstream_[a-z0-9_]+)"`)
	parts := regexp.MustCompile(`Namespace:\s*"idstream",\s*Subsystem:\s*"([a-z0-9_]+)",\s*Name:\s*"([a-z0-9_]+)"`)
	names := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".data" || d.Name() == "models") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range full.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		for _, m := range parts.FindAllStringSubmatch(string(b), -1) {
			names["idstream_"+m[1]+"_"+m[2]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// usedMetrics returns the idstream_* series text names, a histogram's _bucket, _count and
// _sum series under the histogram's name.
func usedMetrics(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`idstream_[a-z0-9_]+`).FindAllString(text, -1) {
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			m = strings.TrimSuffix(m, suffix)
		}
		out = append(out, m)
	}
	return out
}

// TestMonitoringNamesExistingMetrics: the alert rules and the Grafana dashboard parse, and
// every idstream metric they query is one the code registers (a renamed metric would
// silence an alert without a word).
func TestMonitoringNamesExistingMetrics(t *testing.T) {
	defined := definedMetrics(t)
	if len(defined) < 10 {
		t.Fatalf("found %d metrics in the code: %v", len(defined), defined)
	}
	rules, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(rules, &parsed); err != nil || len(parsed.Groups) == 0 {
		t.Fatalf("alerts.yml: %v", err)
	}
	var exprs []string
	for _, g := range parsed.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" {
				t.Errorf("a rule without a name or an expression: %+v", r)
			}
			exprs = append(exprs, r.Expr)
		}
	}
	dash, err := os.ReadFile("grafana/idstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(dash, &d); err != nil || len(d.Panels) == 0 {
		t.Fatalf("grafana/idstream.json: %v", err)
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, e := range exprs {
		for _, m := range usedMetrics(e) {
			if !defined[m] {
				t.Errorf("%s is queried (%q) but no code registers it", m, strings.TrimSpace(e))
			}
		}
	}
}
