package consent

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"

	"gopkg.in/yaml.v3"
)

// PurposeEKYC is the purpose whose grant the edge's consent gate requires and whose
// withdrawal must erase biometric data.
const PurposeEKYC = "ekyc_identity_verification"

// Consent statuses (API.md section 2).
const (
	StatusGranted   = "granted"
	StatusDenied    = "denied"
	StatusWithdrawn = "withdrawn"
)

// ErrInvalidConfig is wrapped by every validation error of ParseConfig and LoadConfig.
var ErrInvalidConfig = errors.New("invalid consent configuration")

//go:embed config.default.yaml
var defaultConfigYAML []byte

// DefaultConfigYAML returns the embedded default configuration file (config.default.yaml),
// a starting point for operators.
func DefaultConfigYAML() []byte { return bytes.Clone(defaultConfigYAML) }

// CMPConfig is the versioned consent configuration file: what GET /v1/config serves and
// what POST /v1/consents validates against. Build it with ParseConfig, LoadConfig or
// DefaultConfig; do not modify it afterwards (it is shared by concurrent requests).
type CMPConfig struct {
	// Version identifies this configuration (e.g. "2026-11-01").
	Version         string     `yaml:"version"`
	DefaultLanguage string     `yaml:"default_language"`
	Languages       []string   `yaml:"languages"`
	Controller      Controller `yaml:"controller"`
	// CurrentNotice is the notice version served by GET /v1/config.
	CurrentNotice string `yaml:"current_notice"`
	// Notices lists every notice version a consent may name: the current one and the
	// earlier ones people have agreed to.
	Notices  []Notice  `yaml:"notices"`
	Purposes []Purpose `yaml:"purposes"`
}

// Controller is the data controller.
type Controller struct {
	Name    string `yaml:"name" json:"name"`
	Contact string `yaml:"contact" json:"contact"`
}

// Notice is one version of the privacy notice, with its text in every language.
type Notice struct {
	Version string            `yaml:"version" json:"version"`
	URL     string            `yaml:"url" json:"url"`
	Text    map[string]string `yaml:"text" json:"text"`
}

// Purpose is one processing purpose that consent is asked for.
type Purpose struct {
	ID             string            `yaml:"id" json:"id"`
	Required       bool              `yaml:"required" json:"required"`
	LegalBasis     string            `yaml:"legal_basis" json:"legal_basis"`
	Name           map[string]string `yaml:"name" json:"name"`
	Description    map[string]string `yaml:"description" json:"description"`
	DataCategories []string          `yaml:"data_categories" json:"data_categories"`
	RetentionDays  int               `yaml:"retention_days" json:"retention_days"`
}

// Legal bases a purpose may name (Decree 13/2023/ND-CP, art. 11 and 17).
var legalBases = map[string]bool{
	"consent": true, "contract": true, "legal_obligation": true, "vital_interests": true,
	"public_interest": true, "emergency": true,
}

var (
	langPattern    = regexp.MustCompile(`^[a-z]{2,3}$`)
	idPattern      = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	versionPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,32}$`)
)

// ParseConfig decodes and validates a configuration file. Unknown fields are errors.
// Every error of a well-formed but unusable file wraps ErrInvalidConfig.
func ParseConfig(data []byte) (*CMPConfig, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c CMPConfig
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty file", ErrInvalidConfig)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// LoadConfig reads and validates the configuration file at path; an empty path means the
// embedded default (DefaultConfig).
func LoadConfig(path string) (*CMPConfig, error) {
	if path == "" {
		return DefaultConfig()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("consent config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("consent config %s: %w", path, err)
	}
	return c, nil
}

// DefaultConfig returns the embedded default configuration (config.default.yaml).
func DefaultConfig() (*CMPConfig, error) {
	c, err := ParseConfig(defaultConfigYAML)
	if err != nil {
		return nil, fmt.Errorf("consent default config: %w", err)
	}
	return c, nil
}

// Validate returns an error wrapping ErrInvalidConfig when the configuration is unusable:
// a missing version, controller or language; a default language not listed; a notice or
// purpose lacking a text in some language; duplicate notice versions or purpose ids; an
// unknown current notice; an unknown legal basis; a negative retention.
func (c *CMPConfig) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if c.Version == "" {
		return bad("version is required")
	}
	if len(c.Languages) == 0 {
		return bad("languages must list at least one language")
	}
	langs := map[string]bool{}
	for _, l := range c.Languages {
		if !langPattern.MatchString(l) || langs[l] {
			return bad("languages: %q is not a distinct ISO 639 code", l)
		}
		langs[l] = true
	}
	if !langs[c.DefaultLanguage] {
		return bad("default_language %q is not in languages", c.DefaultLanguage)
	}
	if c.Controller.Name == "" || c.Controller.Contact == "" {
		return bad("controller name and contact are required")
	}
	texts := func(what string, m map[string]string) error {
		for _, l := range c.Languages {
			if m[l] == "" {
				return bad("%s has no text in %s", what, l)
			}
		}
		for l := range m {
			if !langs[l] {
				return bad("%s has a text in %q, which is not in languages", what, l)
			}
		}
		return nil
	}
	if len(c.Notices) == 0 {
		return bad("notices must list at least one notice")
	}
	seen := map[string]bool{}
	for _, n := range c.Notices {
		if !versionPattern.MatchString(n.Version) || seen[n.Version] {
			return bad("notice version %q is empty, malformed or duplicated", n.Version)
		}
		seen[n.Version] = true
		u, err := url.Parse(n.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return bad("notice %s: url must be an absolute http(s) URL", n.Version)
		}
		if err := texts("notice "+n.Version, n.Text); err != nil {
			return err
		}
	}
	if !seen[c.CurrentNotice] {
		return bad("current_notice %q is not among the notices", c.CurrentNotice)
	}
	if len(c.Purposes) == 0 {
		return bad("purposes must list at least one purpose")
	}
	ids := map[string]bool{}
	for _, p := range c.Purposes {
		if !idPattern.MatchString(p.ID) || ids[p.ID] {
			return bad("purpose id %q is empty, malformed or duplicated", p.ID)
		}
		ids[p.ID] = true
		if !legalBases[p.LegalBasis] {
			return bad("purpose %s: unknown legal_basis %q", p.ID, p.LegalBasis)
		}
		if err := texts("purpose "+p.ID+" name", p.Name); err != nil {
			return err
		}
		if err := texts("purpose "+p.ID+" description", p.Description); err != nil {
			return err
		}
		if len(p.DataCategories) == 0 {
			return bad("purpose %s: data_categories must not be empty", p.ID)
		}
		if p.RetentionDays < 0 {
			return bad("purpose %s: retention_days must not be negative", p.ID)
		}
	}
	return nil
}

// Notice returns the notice of version v.
func (c *CMPConfig) Notice(v string) (Notice, bool) {
	for _, n := range c.Notices {
		if n.Version == v {
			return n, true
		}
	}
	return Notice{}, false
}

// Purpose returns the purpose with id.
func (c *CMPConfig) Purpose(id string) (Purpose, bool) {
	for _, p := range c.Purposes {
		if p.ID == id {
			return p, true
		}
	}
	return Purpose{}, false
}
