package decision

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/idstream/idstream/internal/flow"
)

// DefaultPolicyVersion is the version of DefaultPolicy.
//
// Bump it whenever the default policy changes. The chip, vision and fraud issues add their
// check names (e.g. "chip.*", "liveness.*", "face.*", "fraud.*") to the Await lists of the
// flows that produce them, with a version bump, so that no session is decided before those
// checks are in its snapshot.
//
// History: "2026-11-22.1" awaited the quality checks only; "2026-11-22.2" also awaits the
// chip checks (ChipAwaits) in flows that require the nfc step; "2026-11-22.3" also awaits
// passive liveness in flows with a selfie, and the selfie ↔ chip face match in flows that
// require both (FaceAwaits); "2026-11-22.4" also awaits the fraud checks (FraudAwaits).
const DefaultPolicyVersion = "2026-11-22.4"

// Chip check names the default policy awaits (they are produced by the chip group, which
// reports every chip check of a capture in one event).
const (
	CheckChipPassiveAuthentication = "chip.passive_authentication"
	CheckChipActiveAuthentication  = "chip.active_authentication"
	// CheckChipRegistryIdentity is not awaited (it arrives with the two above). It is hard
	// like every other check: its fail (name_mismatch, dob_mismatch, sex_mismatch, revoked,
	// deceased, not_found) rejects, while its warn (registry_unavailable, registry_error) is
	// acceptable and never rejects, as no warn does.
	CheckChipRegistryIdentity = "chip.registry_identity"
)

// ChipAwaits returns the chip checks awaited by a flow that requires the nfc step.
func ChipAwaits() []string {
	return []string{CheckChipPassiveAuthentication, CheckChipActiveAuthentication}
}

// Face check names the default policy awaits (produced by the liveness and facematch groups).
const (
	CheckLivenessPassive = "liveness.passive"
	CheckFaceSelfieChip  = "face.selfie_chip"
)

// FaceAwaits returns the face checks a flow waits for: passive liveness when it has a
// selfie, and the selfie ↔ chip match when it also requires the chip. Exact names, not
// "face.*": the chip pair usually lands before the document pair, and a glob would let the
// session be decided on the first. selfie ↔ document joins when OCR crops the document face.
func FaceAwaits(f flow.Flow) []string {
	if !slices.Contains(f.Steps, flow.StepSelfie) {
		return nil
	}
	out := []string{CheckLivenessPassive}
	if slices.Contains(f.Steps, flow.StepNFC) {
		out = append(out, CheckFaceSelfieChip)
	}
	return out
}

// CheckFraudBlocklistID is the first of the fraud group's session checks, which arrive
// together in one event: awaiting it awaits them all (blocklist, registries, ID structure,
// dates, replayed captures).
const CheckFraudBlocklistID = "fraud.blocklist_id"

// FraudAwaits returns the fraud checks a flow waits for: the injection-signal check of each
// image step ("fraud.injection_signals.<step>", one per capture as it arrives) and, in flows
// that require the chip, the session checks. Flows without a chip get the session checks
// once OCR reads their documents (the fraud group waits for the identity data). Exact names,
// not "fraud.*": the first injection check would match a glob before the session checks.
func FraudAwaits(f flow.Flow) []string {
	var out []string
	if slices.Contains(f.Steps, flow.StepNFC) {
		out = append(out, CheckFraudBlocklistID)
	}
	for _, s := range f.ImageSteps() {
		out = append(out, "fraud.injection_signals."+s)
	}
	return out
}

// ErrInvalidPolicy is wrapped by every validation error of ParsePolicy and Policy.Validate.
var ErrInvalidPolicy = errors.New("invalid decision policy")

// Policy is a versioned decision policy: per flow, what must be known before deciding and
// which failures only warn. A Policy is a value; Decide never modifies it.
type Policy struct {
	Version string
	Flows   map[string]FlowPolicy
}

// FlowPolicy is the policy of one flow. Patterns are path.Match globs over check names
// ("quality.*" matches every quality check).
type FlowPolicy struct {
	// Await lists check-name patterns that must each match at least one check of the
	// snapshot before the session is decided.
	Await []string
	// Soft lists check-name patterns whose fail is reported as warn and does not reject.
	// Every other check is hard: its fail rejects the session.
	Soft []string
	// DocumentType is reported as extracted.document_type; empty means the flow name.
	DocumentType string
}

// DefaultPolicy returns the default policy for flows (version DefaultPolicyVersion): every
// flow awaits "quality.<step>" for each of its required image steps and, when nfc is one of
// its required steps (chip_id_card, nfc_only), the chip checks of ChipAwaits; a flow where
// nfc is optional (passport) does not wait for the chip; flows with a selfie also await the
// checks of FaceAwaits, and every flow those of FraudAwaits. Every check is hard: any fail
// rejects (a failed passive or active authentication among them), and a warn never does
// (chip.registry_identity warns when the registry is unavailable).
func DefaultPolicy(flows flow.Set) Policy {
	p := Policy{Version: DefaultPolicyVersion, Flows: make(map[string]FlowPolicy)}
	for _, name := range flows.Names() {
		f, _ := flows.Get(name)
		await := qualityAwaits(f.ImageSteps())
		if slices.Contains(f.Steps, flow.StepNFC) {
			await = append(await, ChipAwaits()...)
		}
		await = append(await, FaceAwaits(f)...)
		await = append(await, FraudAwaits(f)...)
		p.Flows[name] = FlowPolicy{Await: await, DocumentType: f.DocumentType}
	}
	return p
}

// qualityAwaits returns "quality.<step>" for each step that captures an image.
func qualityAwaits(steps []string) []string {
	out := make([]string, 0, len(steps))
	for _, s := range steps {
		if s != flow.StepNFC {
			out = append(out, "quality."+s)
		}
	}
	return out
}

// Validate returns an error wrapping ErrInvalidPolicy when the policy has no version, a flow
// has no name, or a pattern is empty or malformed.
func (p Policy) Validate() error {
	if p.Version == "" {
		return fmt.Errorf("%w: empty version", ErrInvalidPolicy)
	}
	for name, fp := range p.Flows {
		if name == "" {
			return fmt.Errorf("%w: flow with empty name", ErrInvalidPolicy)
		}
		for _, pat := range append(append([]string(nil), fp.Await...), fp.Soft...) {
			if pat == "" {
				return fmt.Errorf("%w: flow %q has an empty pattern", ErrInvalidPolicy, name)
			}
			if _, err := path.Match(pat, ""); err != nil {
				return fmt.Errorf("%w: flow %q pattern %q: %v", ErrInvalidPolicy, name, pat, err)
			}
		}
	}
	return nil
}

type policyFile struct {
	Version string                    `yaml:"version"`
	Flows   map[string]flowPolicyFile `yaml:"flows"`
}

type flowPolicyFile struct {
	Await        []string `yaml:"await"`
	Soft         []string `yaml:"soft"`
	DocumentType string   `yaml:"document_type"`
}

// ParsePolicy reads a policy from YAML:
//
//	version: "2026-12-01.1"
//	flows:
//	  chip_id_card:
//	    await: ["quality.*", "chip.passive_authentication"]
//	    soft: ["fraud.device_*"]
//	    document_type: chip_id_card   # optional
//
// It returns an error for malformed YAML or unknown keys, and an error wrapping
// ErrInvalidPolicy when the policy is invalid (see Policy.Validate).
func ParsePolicy(data []byte) (Policy, error) {
	var f policyFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return Policy{}, fmt.Errorf("parse decision policy: %w", err)
	}
	p := Policy{Version: f.Version, Flows: make(map[string]FlowPolicy, len(f.Flows))}
	for name, fp := range f.Flows {
		p.Flows[name] = FlowPolicy{Await: fp.Await, Soft: fp.Soft, DocumentType: fp.DocumentType}
	}
	if err := p.Validate(); err != nil {
		return Policy{}, fmt.Errorf("parse decision policy: %w", err)
	}
	return p, nil
}

// matchAny reports whether name matches one of patterns. Malformed patterns match nothing.
func matchAny(patterns []string, name string) bool {
	for _, pat := range patterns {
		if ok, err := path.Match(pat, name); err == nil && ok {
			return true
		}
	}
	return false
}
