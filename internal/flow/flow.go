// Package flow defines verification flows: which capture steps a session of a given flow
// requires, in which order, which steps it may take optionally, and the document type the
// flow verifies. It knows neither Kafka nor the event schemas.
package flow

import (
	"errors"
	"fmt"
	"slices"
	"sort"
)

// Step names a flow may use.
const (
	StepDocumentFront = "document_front"
	StepDocumentBack  = "document_back"
	StepPassport      = "passport"
	StepNFC           = "nfc"
	StepSelfie        = "selfie"
)

// ErrInvalidFlow is wrapped by every validation error of NewSet and Parse.
var ErrInvalidFlow = errors.New("invalid flow")

// KnownStep reports whether step is one of the step names a flow may use.
func KnownStep(step string) bool {
	switch step {
	case StepDocumentFront, StepDocumentBack, StepPassport, StepNFC, StepSelfie:
		return true
	}
	return false
}

// Flow is one verification flow.
type Flow struct {
	Name          string
	Steps         []string // required, in order
	OptionalSteps []string // may be captured, never required
	DocumentType  string   // reported as extracted.document_type
	// DocumentTypes lists the document types, as the ocr group recognises them, that the
	// flow accepts on its document steps; empty means DocumentType alone.
	DocumentTypes []string
}

// AcceptsDocumentType reports whether a document recognised as docType is one the flow
// takes (see DocumentTypes). Judging it is the decision's job: the ocr group reports the type
// it recognises without knowing the flow.
func (f Flow) AcceptsDocumentType(docType string) bool {
	if len(f.DocumentTypes) == 0 {
		return docType == f.DocumentType
	}
	return slices.Contains(f.DocumentTypes, docType)
}

// Allows reports whether step is a required or an optional step of the flow.
func (f Flow) Allows(step string) bool {
	return slices.Contains(f.Steps, step) || slices.Contains(f.OptionalSteps, step)
}

// ImageSteps returns the required steps that capture an image (every step but nfc), in order.
func (f Flow) ImageSteps() []string {
	out := make([]string, 0, len(f.Steps))
	for _, s := range f.Steps {
		if s != StepNFC {
			out = append(out, s)
		}
	}
	return out
}

// Validate returns an error wrapping ErrInvalidFlow when the flow has no name, no required
// step, an unknown step name or a step listed twice (required and optional steps together).
func (f Flow) Validate() error {
	if f.Name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidFlow)
	}
	if len(f.Steps) == 0 {
		return fmt.Errorf("%w: flow %q has no required step", ErrInvalidFlow, f.Name)
	}
	seen := make(map[string]bool, len(f.Steps)+len(f.OptionalSteps))
	for _, s := range slices.Concat(f.Steps, f.OptionalSteps) {
		if !KnownStep(s) {
			return fmt.Errorf("%w: flow %q has unknown step %q", ErrInvalidFlow, f.Name, s)
		}
		if seen[s] {
			return fmt.Errorf("%w: flow %q lists step %q twice", ErrInvalidFlow, f.Name, s)
		}
		seen[s] = true
	}
	return nil
}

func (f Flow) clone() Flow {
	f.Steps = slices.Clone(f.Steps)
	f.OptionalSteps = slices.Clone(f.OptionalSteps)
	f.DocumentTypes = slices.Clone(f.DocumentTypes)
	return f
}

// Set is an immutable collection of flows by name. The zero Set holds no flow. A Set is safe
// for concurrent use; the Flows it returns are copies the caller may modify.
type Set struct {
	flows map[string]Flow
}

// NewSet returns a Set of the given flows. It returns an error wrapping ErrInvalidFlow when a
// flow is invalid (see Flow.Validate) or two flows share a name.
func NewSet(flows ...Flow) (Set, error) {
	m := make(map[string]Flow, len(flows))
	for _, f := range flows {
		if err := f.Validate(); err != nil {
			return Set{}, err
		}
		if _, dup := m[f.Name]; dup {
			return Set{}, fmt.Errorf("%w: flow %q defined twice", ErrInvalidFlow, f.Name)
		}
		m[f.Name] = f.clone()
	}
	return Set{flows: m}, nil
}

// Get returns the flow called name, or false when the set has none.
func (s Set) Get(name string) (Flow, bool) {
	f, ok := s.flows[name]
	if !ok {
		return Flow{}, false
	}
	return f.clone(), true
}

// Names returns the names of the flows of the set, sorted.
func (s Set) Names() []string {
	names := make([]string, 0, len(s.flows))
	for n := range s.flows {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Default returns the default flows of DESIGN.md: id_card, chip_id_card, passport (nfc
// optional), nfc_only and vehicle_registration. Each flow's document type is its name.
//
// Accepted document types (DocumentTypes; the names are the ocr group's): id_card takes the
// cards read optically, the 9-digit card (legacy_id_card), the 12-digit card without chip
// (id_card) and also the 12-digit chip card (chip_id_card) — a chip card is the same citizen
// ID, and the flow simply does not read its chip; chip_id_card takes only the chip card, whose
// chip it reads; passport, vehicle_registration and nfc_only take their own type only.
func Default() Set {
	return Set{flows: map[string]Flow{
		"id_card": {
			Name: "id_card", DocumentType: "id_card",
			DocumentTypes: []string{"legacy_id_card", "id_card", "chip_id_card"},
			Steps:         []string{StepDocumentFront, StepDocumentBack, StepSelfie},
		},
		"chip_id_card": {
			Name: "chip_id_card", DocumentType: "chip_id_card",
			Steps: []string{StepDocumentFront, StepDocumentBack, StepNFC, StepSelfie},
		},
		"passport": {
			Name: "passport", DocumentType: "passport",
			Steps: []string{StepPassport, StepSelfie}, OptionalSteps: []string{StepNFC},
		},
		"nfc_only": {
			Name: "nfc_only", DocumentType: "nfc_only",
			Steps: []string{StepNFC, StepSelfie},
		},
		"vehicle_registration": {
			Name: "vehicle_registration", DocumentType: "vehicle_registration",
			Steps: []string{StepDocumentFront, StepDocumentBack},
		},
	}}
}
