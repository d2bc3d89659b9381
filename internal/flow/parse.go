package flow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"

	"gopkg.in/yaml.v3"
)

// fileFlow is one flow as written in configuration.
type fileFlow struct {
	Steps         []string `yaml:"steps"`
	OptionalSteps []string `yaml:"optional_steps"`
	DocumentType  string   `yaml:"document_type"`
	DocumentTypes []string `yaml:"document_types"`
}

type file struct {
	Flows map[string]fileFlow `yaml:"flows"`
}

// Parse reads flow configuration and returns the default flows (see Default) overridden and
// extended by it: a configured flow replaces the default flow of the same name, other
// configured flows are added. The format is
//
//	flows:
//	  id_card:
//	    steps: [document_front, document_back, selfie]
//	    optional_steps: [nfc]        # optional
//	    document_type: id_card       # optional, defaults to the flow name
//	    document_types: [legacy_id_card, id_card]  # optional: accepted types, default [document_type]
//
// Parse returns an error wrapping ErrInvalidFlow when a flow is invalid (see Flow.Validate),
// and an error when the YAML is malformed or has unknown keys. Empty input yields Default().
func Parse(data []byte) (Set, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return Set{}, fmt.Errorf("parse flow configuration: %w", err)
	}
	m := maps.Clone(Default().flows)
	for name, ff := range f.Flows {
		fl := Flow{Name: name, Steps: ff.Steps, OptionalSteps: ff.OptionalSteps, DocumentType: ff.DocumentType, DocumentTypes: ff.DocumentTypes}
		if fl.DocumentType == "" {
			fl.DocumentType = name
		}
		if err := fl.Validate(); err != nil {
			return Set{}, fmt.Errorf("parse flow configuration: %w", err)
		}
		m[name] = fl.clone()
	}
	return Set{flows: m}, nil
}
