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
	"github.com/idstream/idstream/schemas"
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
// require both (FaceAwaits); "2026-11-22.4" also awaits the fraud checks (FraudAwaits);
// "2026-11-22.5" also awaits the OCR checks of every document step (DocumentAwaits), the
// selfie ↔ document face match in flows with a selfie and a document photo, and the fraud
// session checks in flows without a chip (id_card, passport, vehicle_registration: the fraud
// group runs them once every document step is read); "2026-11-22.6" also awaits the fraud
// group's face session checks by name (FraudFaceAwaits: duplicate face, face blocklist,
// presentation attack; skipped with a reason in flows without a selfie); "2026-11-22.7" also
// awaits the fraud tamper check of each document step (FraudAwaits); "2026-11-22.8" also
// judges the document type the OCR recognised on each document step against the types the
// flow accepts (DocumentTypeCheckPrefix); "2026-11-22.9" reports the recognised document
// type as extracted.document_type (the chip's, else the documents'), the flow's only without
// one; "2026-11-26.1" reports printed names and places (with diacritics) before the MRZ's
// transliteration, the 12-digit ID number before an MRZ document number of its last 9 digits
// (which agree), compares nationality as a country, and a printed name with the MRZ's up to
// OCR-B look-alikes (the name line has no check digit) (Reconcile).
const DefaultPolicyVersion = "2026-11-26.1"

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
	CheckLivenessPassive    = "liveness.passive"
	CheckFaceSelfieChip     = "face.selfie_chip"
	CheckFaceSelfieDocument = "face.selfie_document"
)

// FaceAwaits returns the face checks a flow waits for: passive liveness when it has a
// selfie, the selfie ↔ chip match when it also requires the chip, and the selfie ↔ document
// match when it also requires a document step that carries the holder's photo (a card
// front or a passport page, whose face the ocr group crops). Exact names, not "face.*": the
// chip pair usually lands before the document pair, and a glob would let the session be
// decided on the first.
func FaceAwaits(f flow.Flow) []string {
	if !slices.Contains(f.Steps, flow.StepSelfie) {
		return nil
	}
	out := []string{CheckLivenessPassive}
	if slices.Contains(f.Steps, flow.StepNFC) {
		out = append(out, CheckFaceSelfieChip)
	}
	if slices.ContainsFunc(f.Steps, photoStep) {
		out = append(out, CheckFaceSelfieDocument)
	}
	return out
}

// photoStep reports whether step captures a document side that carries the holder's photo.
func photoStep(step string) bool {
	return step == flow.StepDocumentFront || step == flow.StepPassport
}

// identifiesPerson reports whether the flow verifies a person (it takes a selfie or reads a
// chip) rather than only a document such as a vehicle registration: its documents are then
// identity documents (a card whose back carries a TD1 zone, or a passport).
func identifiesPerson(f flow.Flow) bool {
	return slices.Contains(f.Steps, flow.StepSelfie) || slices.Contains(f.Steps, flow.StepNFC)
}

// OCR check names, per document step ("document.<kind>.<step>"), produced by the ocr group,
// which reports the three checks of a capture in one DocumentRead.
const (
	CheckDocumentMRZ    = "document.mrz"
	CheckDocumentFields = "document.fields"
	CheckDocumentType   = "document.type"
)

// DocumentAwaits returns the OCR checks a flow waits for, per required document step, so
// that every document step's read is in the snapshot before the decision: the printed
// fields and the document type of a card front; the machine readable zone of a card back in
// flows that identify a person (identity cards carry a TD1 zone there), else the back's
// document type (a vehicle registration's back has no zone and no layout, but its read
// still lands, and the fraud group waits for it); the zone and the printed fields of a
// passport page.
func DocumentAwaits(f flow.Flow) []string {
	var out []string
	for _, s := range f.Steps {
		switch s {
		case flow.StepDocumentFront:
			out = append(out, CheckDocumentFields+"."+s, CheckDocumentType+"."+s)
		case flow.StepDocumentBack:
			if identifiesPerson(f) {
				out = append(out, CheckDocumentMRZ+"."+s)
			} else {
				out = append(out, CheckDocumentType+"."+s)
			}
		case flow.StepPassport:
			out = append(out, CheckDocumentMRZ+"."+s, CheckDocumentFields+"."+s)
		}
	}
	return out
}

// Face session checks of the fraud group (processors/fraud SessionCheckNames), reported in
// the same event as CheckFraudBlocklistID in every flow (skipped no_selfie without a
// selfie). A fail rejects: duplicate_face (the face of another identity's verified
// session), blocklisted (a blocklisted face), presentation_print / presentation_replay /
// presentation_mask (the liveness result names an attack).
const (
	CheckFraudDuplicateFace      = "fraud.duplicate_face"
	CheckFraudBlocklistFace      = "fraud.blocklist_face"
	CheckFraudPresentationAttack = "fraud.presentation_attack"
)

// FraudFaceAwaits returns the fraud group's face session checks, awaited by name in every
// flow so that a decision never goes out without them even if the fraud group one day
// reports them apart from the other session checks.
func FraudFaceAwaits() []string {
	return []string{CheckFraudDuplicateFace, CheckFraudBlocklistFace, CheckFraudPresentationAttack}
}

// CheckFraudBlocklistID is the first of the fraud group's session checks, which arrive
// together in one event: awaiting it awaits them all (blocklist, registries, ID structure,
// dates, replayed captures).
const CheckFraudBlocklistID = "fraud.blocklist_id"

// FraudAwaits returns the fraud checks a flow waits for: the injection-signal check of each
// image step ("fraud.injection_signals.<step>", one per capture as it arrives), the tamper
// check of each document step ("fraud.tamper.<step>", likewise) and the
// session checks, which the fraud group runs in every flow once the snapshot holds the
// identity data it reads: the chip's result in flows that require nfc, else a DocumentRead of
// every required document step (DocumentAwaits awaits each of them). A vehicle
// registration's documents carry no identity, so there most session checks are skipped, but
// they do arrive, and awaiting them keeps its decision from racing them. Exact names, not
// "fraud.*": the first injection check would match a glob before the session checks.
func FraudAwaits(f flow.Flow) []string {
	out := append([]string{CheckFraudBlocklistID}, FraudFaceAwaits()...)
	for _, s := range f.ImageSteps() {
		out = append(out, "fraud.injection_signals."+s)
	}
	for _, s := range f.ImageSteps() {
		if photoStep(s) || s == flow.StepDocumentBack {
			out = append(out, CheckFraudTamperPrefix+s)
		}
	}
	return out
}

// CheckFraudTamperPrefix prefixes the fraud group's per-capture tamper check of a document
// step ("fraud.tamper.<step>": document_front, document_back, passport), emitted with every
// document capture; its double_compression finding is a warn (processors/fraud TamperSteps).
const CheckFraudTamperPrefix = "fraud.tamper."

// ErrInvalidPolicy is wrapped by every validation error of ParsePolicy and Policy.Validate.
var ErrInvalidPolicy = errors.New("invalid decision policy")

// Policy is a versioned decision policy: per flow, what must be known before deciding and
// which failures only warn. A Policy is a value; Decide never modifies it.
type Policy struct {
	Version string
	Flows   map[string]FlowPolicy
	// Tenants adds review rules to every flow of a tenant's sessions.
	Tenants map[string]TenantPolicy
}

// TenantPolicy is what a tenant adds to the policy of every flow.
type TenantPolicy struct {
	Review []ReviewRule
}

// ReviewRule sends a session to human review instead of deciding it: a check whose name
// matches Check (a path.Match glob), whose status is one of Statuses (default: fail) and,
// when a band is given, whose score lies in [ScoreFrom, ScoreTo). Such a check does not
// reject; if no other hard check fails, the session goes to review, and a reviewer's
// decision becomes its decision. A hard failure elsewhere still rejects at once.
type ReviewRule struct {
	Check     string
	Statuses  []string
	ScoreFrom *float64
	ScoreTo   *float64
	// Reason is the reason code the case is opened with (default "review_required").
	Reason string
}

// DefaultReviewReason is a ReviewRule's reason code when it names none.
const DefaultReviewReason = "review_required"

// matches reports whether c triggers the rule.
func (r ReviewRule) matches(c schemas.Check) bool {
	if !matchAny([]string{r.Check}, c.Name) {
		return false
	}
	statuses := r.Statuses
	if len(statuses) == 0 {
		statuses = []string{schemas.CheckFail}
	}
	if !slices.Contains(statuses, c.Status) {
		return false
	}
	if r.ScoreFrom == nil && r.ScoreTo == nil {
		return true
	}
	if c.Score == nil {
		return false
	}
	return (r.ScoreFrom == nil || *c.Score >= *r.ScoreFrom) && (r.ScoreTo == nil || *c.Score < *r.ScoreTo)
}

// reason is the code a case opened by the rule carries.
func (r ReviewRule) reason() string {
	if r.Reason != "" {
		return r.Reason
	}
	return DefaultReviewReason
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
	// DocumentType is reported as extracted.document_type when neither the chip nor the OCR
	// recognised the document's type; empty means the flow name.
	DocumentType string
	// DocumentTypes are the document types (as the ocr group names them) the flow accepts on
	// its document steps; empty accepts any. See DocumentTypeCheckPrefix.
	DocumentTypes []string
	// Review lists the rules that send a session of the flow to human review.
	Review []ReviewRule
}

// DefaultPolicy returns the default policy for flows (version DefaultPolicyVersion): every
// flow awaits "quality.<step>" for each of its required image steps and, when nfc is one of
// its required steps (chip_id_card, nfc_only), the chip checks of ChipAwaits; a flow where
// nfc is optional (passport) does not wait for the chip; flows with document steps await
// the OCR checks of DocumentAwaits, flows with a selfie the checks of FaceAwaits, and every
// flow those of FraudAwaits. Every check is hard: any fail
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
		await = append(await, DocumentAwaits(f)...)
		await = append(await, FaceAwaits(f)...)
		await = append(await, FraudAwaits(f)...)
		types := f.DocumentTypes
		if len(types) == 0 && f.DocumentType != "" {
			types = []string{f.DocumentType}
		}
		p.Flows[name] = FlowPolicy{Await: await, DocumentType: f.DocumentType, DocumentTypes: slices.Clone(types)}
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
// or tenant has no name, a pattern is empty or malformed, or a review rule names a status
// that is not a check status or an empty score band.
func (p Policy) Validate() error {
	if p.Version == "" {
		return fmt.Errorf("%w: empty version", ErrInvalidPolicy)
	}
	for name, fp := range p.Flows {
		if name == "" {
			return fmt.Errorf("%w: flow with empty name", ErrInvalidPolicy)
		}
		pats := append(append([]string(nil), fp.Await...), fp.Soft...)
		for _, r := range fp.Review {
			pats = append(pats, r.Check)
		}
		for _, pat := range pats {
			if pat == "" {
				return fmt.Errorf("%w: flow %q has an empty pattern", ErrInvalidPolicy, name)
			}
			if _, err := path.Match(pat, ""); err != nil {
				return fmt.Errorf("%w: flow %q pattern %q: %v", ErrInvalidPolicy, name, pat, err)
			}
		}
		if err := validateRules(fp.Review); err != nil {
			return fmt.Errorf("%w: flow %q: %v", ErrInvalidPolicy, name, err)
		}
	}
	for name, tp := range p.Tenants {
		if name == "" {
			return fmt.Errorf("%w: tenant with empty name", ErrInvalidPolicy)
		}
		if err := validateRules(tp.Review); err != nil {
			return fmt.Errorf("%w: tenant %q: %v", ErrInvalidPolicy, name, err)
		}
	}
	return nil
}

func validateRules(rules []ReviewRule) error {
	for _, r := range rules {
		if r.Check == "" {
			return errors.New("a review rule has no check")
		}
		if _, err := path.Match(r.Check, ""); err != nil {
			return fmt.Errorf("review rule %q: %v", r.Check, err)
		}
		for _, st := range r.Statuses {
			if st != schemas.CheckFail && st != schemas.CheckWarn && st != schemas.CheckSkipped && st != schemas.CheckPass {
				return fmt.Errorf("review rule %q: status %q is not pass, fail, warn or skipped", r.Check, st)
			}
		}
		if r.ScoreFrom != nil && r.ScoreTo != nil && *r.ScoreFrom >= *r.ScoreTo {
			return fmt.Errorf("review rule %q: empty score band [%g, %g)", r.Check, *r.ScoreFrom, *r.ScoreTo)
		}
	}
	return nil
}

type policyFile struct {
	Version string                    `yaml:"version"`
	Base    string                    `yaml:"base"`
	Flows   map[string]flowPolicyFile `yaml:"flows"`
	Tenants map[string]struct {
		Review []reviewRuleFile `yaml:"review"`
	} `yaml:"tenants"`
}

type flowPolicyFile struct {
	Await         []string         `yaml:"await"`
	Soft          []string         `yaml:"soft"`
	DocumentType  string           `yaml:"document_type"`
	DocumentTypes []string         `yaml:"document_types"`
	Review        []reviewRuleFile `yaml:"review"`
}

type reviewRuleFile struct {
	Check    string     `yaml:"check"`
	Statuses []string   `yaml:"statuses"`
	Score    []*float64 `yaml:"score"` // [from, to): either may be null
	Reason   string     `yaml:"reason"`
}

func (r reviewRuleFile) rule() (ReviewRule, error) {
	out := ReviewRule{Check: r.Check, Statuses: r.Statuses, Reason: r.Reason}
	switch len(r.Score) {
	case 0:
	case 2:
		out.ScoreFrom, out.ScoreTo = r.Score[0], r.Score[1]
	default:
		return out, fmt.Errorf("%w: review rule %q: score must be [from, to]", ErrInvalidPolicy, r.Check)
	}
	return out, nil
}

func rules(files []reviewRuleFile) ([]ReviewRule, error) {
	var out []ReviewRule
	for _, f := range files {
		r, err := f.rule()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ParsePolicy reads a policy from YAML:
//
//	version: "2026-12-01.1"
//	base: default                      # optional: start from the default policy (ParsePolicyOver)
//	flows:
//	  chip_id_card:
//	    await: ["quality.*", "chip.passive_authentication"]
//	    soft: ["fraud.device_*"]
//	    document_type: chip_id_card   # optional
//	    document_types: [chip_id_card] # optional: the recognised types accepted
//	    review:                        # optional: send to a person instead of deciding
//	      - check: liveness.passive
//	        statuses: [pass, fail]     # default [fail]
//	        score: [0.6, 0.8]          # [from, to); null for an open end
//	        reason: liveness_grey_band
//	tenants:                           # optional: review rules added to every flow of a tenant
//	  acme:
//	    review:
//	      - check: chip.registry_identity
//	        statuses: [warn]
//	        reason: registry_unavailable
//
// It returns an error for malformed YAML or unknown keys, and an error wrapping
// ErrInvalidPolicy when the policy is invalid (see Policy.Validate).
func ParsePolicy(data []byte) (Policy, error) { return ParsePolicyOver(data, nil) }

// ParsePolicyOver is ParsePolicy for a file that may start from base with `base: default`:
// the file's version replaces base's; a flow it names keeps base's lists except those the
// file gives (await, document_type, document_types replace; soft and review add); flows it
// does not name are base's. Without `base`, the file is the whole policy. base == nil
// refuses `base: default`.
func ParsePolicyOver(data []byte, base *Policy) (Policy, error) {
	var f policyFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return Policy{}, fmt.Errorf("parse decision policy: %w", err)
	}
	p := Policy{Version: f.Version, Flows: make(map[string]FlowPolicy, len(f.Flows))}
	switch f.Base {
	case "":
	case "default":
		if base == nil {
			return Policy{}, fmt.Errorf("parse decision policy: %w: base: default needs the default policy", ErrInvalidPolicy)
		}
		for name, fp := range base.Flows {
			p.Flows[name] = fp
		}
	default:
		return Policy{}, fmt.Errorf("parse decision policy: %w: base must be default or absent", ErrInvalidPolicy)
	}
	for name, fp := range f.Flows {
		review, err := rules(fp.Review)
		if err != nil {
			return Policy{}, fmt.Errorf("parse decision policy: %w", err)
		}
		next := p.Flows[name] // base's, or zero
		if fp.Await != nil || f.Base == "" {
			next.Await = fp.Await
		}
		if fp.DocumentType != "" || f.Base == "" {
			next.DocumentType = fp.DocumentType
		}
		if fp.DocumentTypes != nil || f.Base == "" {
			next.DocumentTypes = fp.DocumentTypes
		}
		next.Soft = append(slices.Clone(next.Soft), fp.Soft...)
		next.Review = append(slices.Clone(next.Review), review...)
		p.Flows[name] = next
	}
	for name, tp := range f.Tenants {
		review, err := rules(tp.Review)
		if err != nil {
			return Policy{}, fmt.Errorf("parse decision policy: %w", err)
		}
		if p.Tenants == nil {
			p.Tenants = map[string]TenantPolicy{}
		}
		p.Tenants[name] = TenantPolicy{Review: review}
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
