package tenant

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadValidFileAndLookups(t *testing.T) {
	body := `tenants:
  - id: acme
    name: Acme Bank
    api_key_hashes: [` + HashKey("sk_acme_1") + `, ` + strings.ToUpper(HashKey("sk_acme_2")) + `]
    admin_key_hashes: [` + HashKey("ak_acme") + `]
    cmp_api_key_hashes: [` + HashKey("ck_acme") + `]
    webhook_url: https://acme.example/hooks
    webhook_secrets: [whsec_c2VjcmV0c2VjcmV0c2VjcmV0]
    allowed_flows: [chip_id_card]
    require_consent: true
    rate_limit_per_second: 5
  - id: beta
    api_key_hashes: [` + HashKey("sk_beta") + `]
    data_retention: integrator
    session_ttl_seconds: 600
`
	r, err := Load(writeFile(t, body))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	acme, ok := r.Get("acme")
	if !ok || acme.SessionTTLSeconds != DefaultSessionTTLSeconds || acme.DataRetention != RetentionService {
		t.Fatalf("acme defaults not applied: %+v", acme)
	}
	if beta, _ := r.Get("beta"); beta.SessionTTLSeconds != 600 || beta.DataRetention != RetentionIntegrator {
		t.Fatalf("beta settings lost: %+v", beta)
	}
	for key, want := range map[string]string{"sk_acme_1": "acme", "sk_acme_2": "acme", "sk_beta": "beta"} {
		got, ok := r.ByAPIKey(key)
		if !ok || got.ID != want {
			t.Errorf("ByAPIKey(%q) = %v, %v; want %s", key, got, ok, want)
		}
	}
	if _, ok := r.ByAPIKey("ak_acme"); ok {
		t.Error("an admin key must not authenticate as an API key")
	}
	if _, ok := r.ByAPIKey(""); ok {
		t.Error("empty key accepted")
	}
	if _, ok := r.ByAPIKey("sk_wrong"); ok {
		t.Error("wrong key accepted")
	}
	if got, ok := r.ByAdminKey("ak_acme"); !ok || got.ID != "acme" {
		t.Error("ByAdminKey failed")
	}
	if _, ok := r.ByAdminKey("sk_acme_1"); ok {
		t.Error("an API key must not be an admin key")
	}
	if got, ok := r.ByCMPKey("ck_acme"); !ok || got.ID != "acme" {
		t.Error("ByCMPKey failed")
	}
	if !acme.AllowsFlow("chip_id_card") || acme.AllowsFlow("passport") {
		t.Error("AllowsFlow ignores allowed_flows")
	}
	if beta, _ := r.Get("beta"); !beta.AllowsFlow("passport") {
		t.Error("empty allowed_flows must allow every flow")
	}
}

func TestLoadRejectsInvalid(t *testing.T) {
	cases := map[string]string{
		"bad hash":        "tenants:\n  - id: a\n    api_key_hashes: [abc]\n",
		"bad id":          "tenants:\n  - id: 'A B'\n",
		"duplicate":       "tenants:\n  - id: a\n  - id: a\n",
		"bad retention":   "tenants:\n  - id: a\n    data_retention: forever\n",
		"bad webhook":     "tenants:\n  - id: a\n    webhook_url: ftp://x\n",
		"bad secret":      "tenants:\n  - id: a\n    webhook_secrets: [nope]\n",
		"unknown field":   "tenants:\n  - id: a\n    api_keys: [x]\n",
		"negative rate":   "tenants:\n  - id: a\n    rate_limit_per_second: -1\n",
		"not yaml at all": "tenants: [",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load(writeFile(t, body))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Load = %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestSandboxPersistsSecrets(t *testing.T) {
	dir := t.TempDir()
	ten, sec, err := Sandbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ten.ID != "sandbox" || !ten.AllowPrivateWebhooks {
		t.Fatalf("unexpected sandbox tenant %+v", ten)
	}
	for _, c := range []struct{ v, prefix, file string }{
		{sec.APIKey, "sk_test_", SandboxAPIKeyFile},
		{sec.AdminKey, "ak_test_", SandboxAdminKeyFile},
		{sec.CMPAPIKey, "ck_test_", SandboxCMPKeyFile},
		{sec.WebhookSecret, "whsec_", SandboxWebhookSecretFile},
	} {
		if !strings.HasPrefix(c.v, c.prefix) || len(c.v) < len(c.prefix)+40 {
			t.Errorf("secret %q lacks prefix %s or entropy", c.file, c.prefix)
		}
		fi, err := os.Stat(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", c.file, fi.Mode().Perm())
		}
	}
	for _, h := range append(append(ten.APIKeyHashes, ten.AdminKeyHashes...), ten.CMPAPIKeyHashes...) {
		if strings.Contains(h, "_test_") {
			t.Fatal("plaintext key stored in the tenant")
		}
	}
	r := NewRegistry(ten)
	if _, ok := r.ByAPIKey(sec.APIKey); !ok {
		t.Error("sandbox API key does not authenticate")
	}
	if err := ten.Validate(); err != nil {
		t.Errorf("sandbox tenant invalid: %v", err)
	}

	_, again, err := Sandbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again != sec {
		t.Error("secrets were regenerated instead of reused")
	}
	if _, other, _ := Sandbox(t.TempDir()); other.APIKey == sec.APIKey {
		t.Error("two data dirs share a key")
	}
}

func TestSandboxRejectsCorruptFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, SandboxAPIKeyFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Sandbox(dir); err == nil {
		t.Fatal("corrupt key file accepted")
	}
}

func TestReviewers(t *testing.T) {
	reg, err := Parse([]byte(`tenants:
  - id: acme
    reviewers:
      - {id: ana, name: Ana, key_hashes: ["` + HashKey("rk_ana") + `"]}
      - {id: bao, key_hashes: ["` + strings.ToUpper(HashKey("rk_bao")) + `"]}
  - id: beta
    reviewers:
      - {id: cuc, key_hashes: ["` + HashKey("rk_cuc") + `"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"rk_ana": "acme/ana", "rk_bao": "acme/bao", "rk_cuc": "beta/cuc"} {
		tn, r, ok := reg.ByReviewerKey(key)
		if !ok || tn.ID+"/"+r.ID != want {
			t.Errorf("%s: %v %v", key, ok, want)
		}
	}
	if _, _, ok := reg.ByReviewerKey("rk_nobody"); ok {
		t.Error("an unknown key found a reviewer")
	}
	if _, _, ok := reg.ByReviewerKey(""); ok {
		t.Error("the empty key found a reviewer")
	}
	if _, ok := reg.ByAPIKey("rk_ana"); ok {
		t.Error("a reviewer key is an API key")
	}
	for _, bad := range []string{
		"tenants:\n  - id: a\n    reviewers:\n      - {id: x, key_hashes: []}\n",
		"tenants:\n  - id: a\n    reviewers:\n      - {id: x, key_hashes: [nothex]}\n",
		"tenants:\n  - id: a\n    reviewers:\n      - {id: x, key_hashes: [\"" + HashKey("1") + "\"]}\n      - {id: x, key_hashes: [\"" + HashKey("2") + "\"]}\n",
		"tenants:\n  - id: a\n    reviewers:\n      - {id: \"Bad Id\", key_hashes: [\"" + HashKey("1") + "\"]}\n",
	} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", bad, err)
		}
	}
}
