package tenant

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SandboxID is the id of the development tenant created by Sandbox.
const SandboxID = "sandbox"

// Files Sandbox keeps its secrets in, inside the data dir.
const (
	SandboxAPIKeyFile        = "sandbox-api-key"
	SandboxAdminKeyFile      = "sandbox-admin-key"
	SandboxCMPKeyFile        = "sandbox-cmp-api-key"
	SandboxWebhookSecretFile = "sandbox-webhook-secret"
	SandboxReviewerKeyFile   = "sandbox-reviewer-key"
)

// SandboxReviewerID is the sandbox tenant's reviewer.
const SandboxReviewerID = "sandbox-reviewer"

// Secrets are the sandbox tenant's plaintext keys, for printing and for scripts.
type Secrets struct {
	APIKey        string
	AdminKey      string
	CMPAPIKey     string
	WebhookSecret string
	ReviewerKey   string
}

// Sandbox returns the development tenant "sandbox" and its plaintext secrets. The secrets
// are generated once and persisted in dataDir (files mode 0600, one per secret); later calls
// reuse them. The tenant stores only the keys' hashes, and the webhook secret as is. It
// allows every flow and private webhook URLs.
func Sandbox(dataDir string) (*Tenant, Secrets, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, Secrets{}, fmt.Errorf("sandbox: create data dir: %w", err)
	}
	var s Secrets
	var err error
	if s.APIKey, err = loadOrCreate(dataDir, SandboxAPIKeyFile, "sk_test_", randomToken); err != nil {
		return nil, Secrets{}, err
	}
	if s.AdminKey, err = loadOrCreate(dataDir, SandboxAdminKeyFile, "ak_test_", randomToken); err != nil {
		return nil, Secrets{}, err
	}
	if s.CMPAPIKey, err = loadOrCreate(dataDir, SandboxCMPKeyFile, "ck_test_", randomToken); err != nil {
		return nil, Secrets{}, err
	}
	if s.WebhookSecret, err = loadOrCreate(dataDir, SandboxWebhookSecretFile, "whsec_", randomWebhookSecret); err != nil {
		return nil, Secrets{}, err
	}
	if s.ReviewerKey, err = loadOrCreate(dataDir, SandboxReviewerKeyFile, "rk_test_", randomToken); err != nil {
		return nil, Secrets{}, err
	}
	t := &Tenant{
		ID:                   SandboxID,
		Name:                 "Sandbox",
		APIKeyHashes:         []string{HashKey(s.APIKey)},
		AdminKeyHashes:       []string{HashKey(s.AdminKey)},
		CMPAPIKeyHashes:      []string{HashKey(s.CMPAPIKey)},
		WebhookSecrets:       []string{s.WebhookSecret},
		DataRetention:        RetentionService,
		RetentionDays:        30,
		AllowPrivateWebhooks: true,
		SessionTTLSeconds:    DefaultSessionTTLSeconds,
		Reviewers:            []Reviewer{{ID: SandboxReviewerID, Name: "Sandbox reviewer", KeyHashes: []string{HashKey(s.ReviewerKey)}}},
	}
	return t, s, nil
}

// randomToken returns 32 random bytes as unpadded base64url.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// randomWebhookSecret returns 32 random bytes as standard base64 (Standard Webhooks).
func randomWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// loadOrCreate returns the secret in dataDir/name, creating it as prefix+gen() when absent.
// A file that exists but does not hold a secret with prefix is an error, not overwritten.
func loadOrCreate(dataDir, name, prefix string, gen func() (string, error)) (string, error) {
	path := filepath.Join(dataDir, name)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		v := strings.TrimSpace(string(data))
		if !strings.HasPrefix(v, prefix) || len(v) <= len(prefix) {
			return "", fmt.Errorf("sandbox: %s does not hold a %s secret", name, prefix)
		}
		return v, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("sandbox: read %s: %w", name, err)
	}
	body, err := gen()
	if err != nil {
		return "", fmt.Errorf("sandbox: generate %s: %w", name, err)
	}
	v := prefix + body
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) { // another process won the race: use its secret
			return loadOrCreate(dataDir, name, prefix, gen)
		}
		return "", fmt.Errorf("sandbox: create %s: %w", name, err)
	}
	if _, err := f.WriteString(v + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("sandbox: write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("sandbox: close %s: %w", name, err)
	}
	return v, nil
}
