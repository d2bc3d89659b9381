package consent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultConfig(t *testing.T) {
	c, err := LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.Purpose(PurposeEKYC)
	if !ok || !p.Required || p.LegalBasis != "consent" || p.RetentionDays != 30 ||
		strings.Join(p.DataCategories, ",") != "id_document,face_image,biometric_template" {
		t.Errorf("ekyc purpose: %+v", p)
	}
	optional := false
	for _, p := range c.Purposes {
		optional = optional || !p.Required
	}
	if !optional {
		t.Error("no optional purpose")
	}
	n, ok := c.Notice(c.CurrentNotice)
	if !ok || n.Text["vi"] == "" || n.Text["en"] == "" {
		t.Errorf("current notice: %+v", n)
	}
}

func TestLoadConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "consent.yaml")
	data := strings.Replace(string(DefaultConfigYAML()), `version: "2026-11-01"`, `version: "2027-01-15"`, 1)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil || c.Version != "2027-01-15" {
		t.Fatalf("load: %v %+v", err, c)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file loaded")
	}
}

func TestConfigValidation(t *testing.T) {
	base := string(DefaultConfigYAML())
	cases := map[string][2]string{
		"no version":               {`version: "2026-11-01"`, `version: ""`},
		"default language missing": {`default_language: vi`, `default_language: fr`},
		"unknown field":            {`current_notice: "1"`, "current_notice: \"1\"\nextra: true"},
		"unknown current notice":   {`current_notice: "1"`, `current_notice: "9"`},
		"notice without english":   {`      en: |` + "\n        Notice on", `      de: |` + "\n        Notice on"},
		"bad notice url":           {`url: https://example.com/privacy/ekyc/v1`, `url: ftp://example.com`},
		"duplicate purpose":        {`  - id: marketing`, `  - id: ekyc_identity_verification`},
		"unknown legal basis":      {"    legal_basis: consent\n    name:\n      vi: Tiếp thị", "    legal_basis: whim\n    name:\n      vi: Tiếp thị"},
		"negative retention":       {`retention_days: 365`, `retention_days: -1`},
		"no data categories":       {`data_categories: [contact_details]`, `data_categories: []`},
		"no controller contact":    {`contact: dpo@example.com`, `contact: ""`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(base, c[0]) {
				t.Fatalf("default config lacks %q", c[0])
			}
			_, err := ParseConfig([]byte(strings.Replace(base, c[0], c[1], 1)))
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("err = %v, want ErrInvalidConfig", err)
			}
		})
	}
	if _, err := ParseConfig(nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("empty file: %v", err)
	}
}
