// Package tenant holds the integrators (tenants) served by idstream: their hashed API, admin
// and CMP keys, webhook settings, allowed flows and retention, loaded from a YAML file and
// looked up by presented key in constant time.
package tenant

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Data retention modes (API.md, Session Init).
const (
	RetentionService    = "service"
	RetentionIntegrator = "integrator"
)

// DefaultSessionTTLSeconds is the session lifetime when a tenant does not set one.
const DefaultSessionTTLSeconds = 1800

// ErrInvalid is wrapped by every validation error of Load and Validate.
var ErrInvalid = errors.New("invalid tenant configuration")

// Tenant is one integrator. Key fields hold lowercase hex SHA-256 hashes of the keys, never
// the keys themselves; WebhookSecrets are kept usable because they sign deliveries.
type Tenant struct {
	ID                   string   `yaml:"id"`
	Name                 string   `yaml:"name"`
	APIKeyHashes         []string `yaml:"api_key_hashes"`
	AdminKeyHashes       []string `yaml:"admin_key_hashes"`
	CMPAPIKeyHashes      []string `yaml:"cmp_api_key_hashes"`
	WebhookURL           string   `yaml:"webhook_url"`
	WebhookSecrets       []string `yaml:"webhook_secrets"` // whsec_<base64>; the first signs
	AllowedFlows         []string `yaml:"allowed_flows"`   // empty: every flow
	DataRetention        string   `yaml:"data_retention"`  // service | integrator
	RetentionDays        int      `yaml:"retention_days"`
	RequireConsent       bool     `yaml:"require_consent"`
	AllowPrivateWebhooks bool     `yaml:"allow_private_webhooks"`
	SessionTTLSeconds    int      `yaml:"session_ttl_seconds"`   // default 1800
	RateLimitPerSecond   float64  `yaml:"rate_limit_per_second"` // 0: unlimited
	// Reviewers are the tenant's fraud analysts: each has keys of their own for the review
	// API, so that every claim, decision and view is theirs by name.
	Reviewers []Reviewer `yaml:"reviewers"`
}

// Reviewer is a named person who decides the tenant's sessions in review.
type Reviewer struct {
	ID        string   `yaml:"id"`
	Name      string   `yaml:"name"`
	KeyHashes []string `yaml:"key_hashes"`
}

// AllowsFlow reports whether the tenant may open sessions of flow name.
func (t *Tenant) AllowsFlow(name string) bool {
	if len(t.AllowedFlows) == 0 {
		return true
	}
	for _, f := range t.AllowedFlows {
		if f == name {
			return true
		}
	}
	return false
}

var (
	idPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	hashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// applyDefaults fills the zero values that have a documented default.
func (t *Tenant) applyDefaults() {
	if t.SessionTTLSeconds == 0 {
		t.SessionTTLSeconds = DefaultSessionTTLSeconds
	}
	if t.DataRetention == "" {
		t.DataRetention = RetentionService
	}
	for i, h := range t.APIKeyHashes {
		t.APIKeyHashes[i] = strings.ToLower(strings.TrimSpace(h))
	}
	for i, h := range t.AdminKeyHashes {
		t.AdminKeyHashes[i] = strings.ToLower(strings.TrimSpace(h))
	}
	for i, h := range t.CMPAPIKeyHashes {
		t.CMPAPIKeyHashes[i] = strings.ToLower(strings.TrimSpace(h))
	}
	for _, rv := range t.Reviewers {
		for i, h := range rv.KeyHashes {
			rv.KeyHashes[i] = strings.ToLower(strings.TrimSpace(h))
		}
	}
}

// Validate returns an error wrapping ErrInvalid when the tenant is not usable.
func (t *Tenant) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: tenant %q: %s", ErrInvalid, t.ID, fmt.Sprintf(format, args...))
	}
	if !idPattern.MatchString(t.ID) {
		return bad("id must match %s", idPattern)
	}
	for _, set := range []struct {
		name   string
		hashes []string
	}{{"api_key_hashes", t.APIKeyHashes}, {"admin_key_hashes", t.AdminKeyHashes}, {"cmp_api_key_hashes", t.CMPAPIKeyHashes}} {
		for i, h := range set.hashes {
			if !hashPattern.MatchString(h) {
				return bad("%s[%d] is not a lowercase hex SHA-256", set.name, i)
			}
		}
	}
	seenReviewers := map[string]bool{}
	for i, rv := range t.Reviewers {
		if !idPattern.MatchString(rv.ID) || seenReviewers[rv.ID] {
			return bad("reviewers[%d].id must match %s and be unique", i, idPattern)
		}
		seenReviewers[rv.ID] = true
		if len(rv.KeyHashes) == 0 {
			return bad("reviewer %q has no key_hashes", rv.ID)
		}
		for j, h := range rv.KeyHashes {
			if !hashPattern.MatchString(h) {
				return bad("reviewer %q key_hashes[%d] is not a lowercase hex SHA-256", rv.ID, j)
			}
		}
	}
	if t.WebhookURL != "" {
		u, err := url.Parse(t.WebhookURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return bad("webhook_url must be an absolute http(s) URL")
		}
	}
	for i, s := range t.WebhookSecrets {
		if !strings.HasPrefix(s, "whsec_") || len(s) < len("whsec_")+16 {
			return bad("webhook_secrets[%d] must start with whsec_", i)
		}
	}
	if t.DataRetention != RetentionService && t.DataRetention != RetentionIntegrator {
		return bad("data_retention must be service or integrator")
	}
	if t.RetentionDays < 0 {
		return bad("retention_days must not be negative")
	}
	if t.SessionTTLSeconds < 0 {
		return bad("session_ttl_seconds must not be negative")
	}
	if t.RateLimitPerSecond < 0 {
		return bad("rate_limit_per_second must not be negative")
	}
	return nil
}

// Registry is an immutable set of tenants. It is safe for concurrent use.
type Registry struct {
	tenants []*Tenant
	byID    map[string]*Tenant
}

// NewRegistry returns a registry of the given tenants, applying defaults. It does not
// validate them (Load does); tenants with duplicate ids keep the first.
func NewRegistry(tenants ...*Tenant) *Registry {
	r := &Registry{byID: make(map[string]*Tenant, len(tenants))}
	for _, t := range tenants {
		if t == nil {
			continue
		}
		t.applyDefaults()
		if _, dup := r.byID[t.ID]; dup {
			continue
		}
		r.tenants = append(r.tenants, t)
		r.byID[t.ID] = t
	}
	return r
}

type file struct {
	Tenants []*Tenant `yaml:"tenants"`
}

// Load reads and validates a YAML tenants file. It returns an error wrapping ErrInvalid
// when a tenant is invalid or two tenants share an id.
func Load(path string) (*Registry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tenants file: %w", err)
	}
	return Parse(data)
}

// Parse is Load over bytes already read.
func Parse(data []byte) (*Registry, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: parse tenants: %v", ErrInvalid, err)
	}
	seen := make(map[string]bool, len(f.Tenants))
	for i, t := range f.Tenants {
		if t == nil {
			return nil, fmt.Errorf("%w: tenants[%d] is empty", ErrInvalid, i)
		}
		t.applyDefaults()
		if err := t.Validate(); err != nil {
			return nil, err
		}
		if seen[t.ID] {
			return nil, fmt.Errorf("%w: duplicate tenant id %q", ErrInvalid, t.ID)
		}
		seen[t.ID] = true
	}
	return NewRegistry(f.Tenants...), nil
}

// HashKey returns the lowercase hex SHA-256 of key, the form keys are stored in.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Get returns the tenant with id.
func (r *Registry) Get(id string) (*Tenant, bool) {
	t, ok := r.byID[id]
	return t, ok
}

// All returns the tenants in file order. The slice is a copy.
func (r *Registry) All() []*Tenant {
	return append([]*Tenant(nil), r.tenants...)
}

// ByAPIKey returns the tenant owning the integrator API key. It compares the key's hash
// against every stored hash of every tenant in constant time, without early exit.
func (r *Registry) ByAPIKey(key string) (*Tenant, bool) {
	return r.lookup(key, func(t *Tenant) []string { return t.APIKeyHashes })
}

// ByAdminKey is ByAPIKey for admin keys.
func (r *Registry) ByAdminKey(key string) (*Tenant, bool) {
	return r.lookup(key, func(t *Tenant) []string { return t.AdminKeyHashes })
}

// ByReviewerKey returns the tenant and the reviewer owning a reviewer key, comparing its
// hash with every reviewer's of every tenant in constant time, without early exit.
func (r *Registry) ByReviewerKey(key string) (*Tenant, *Reviewer, bool) {
	if key == "" {
		return nil, nil, false
	}
	presented := []byte(HashKey(key))
	var ft *Tenant
	var fr *Reviewer
	for _, t := range r.tenants {
		for i := range t.Reviewers {
			for _, h := range t.Reviewers[i].KeyHashes {
				if subtle.ConstantTimeCompare(presented, []byte(h)) == 1 && ft == nil {
					ft, fr = t, &t.Reviewers[i]
				}
			}
		}
	}
	return ft, fr, ft != nil
}

// ByCMPKey is ByAPIKey for consent (CMP) API keys.
func (r *Registry) ByCMPKey(key string) (*Tenant, bool) {
	return r.lookup(key, func(t *Tenant) []string { return t.CMPAPIKeyHashes })
}

func (r *Registry) lookup(key string, hashes func(*Tenant) []string) (*Tenant, bool) {
	if key == "" {
		return nil, false
	}
	presented := []byte(HashKey(key))
	var found *Tenant
	for _, t := range r.tenants {
		for _, h := range hashes(t) {
			if subtle.ConstantTimeCompare(presented, []byte(h)) == 1 && found == nil {
				found = t
			}
		}
	}
	return found, found != nil
}
