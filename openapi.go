// Package idstream holds the public contract documents of the service.
//
// The OpenAPI 3.0 document describing both REST interfaces (verification and
// consent) is embedded from openapi.yaml; the edge serves it as JSON at
// GET /openapi.json.
package idstream

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"gopkg.in/yaml.v3"
)

//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPIYAML returns the OpenAPI document as written (YAML). The caller owns
// the returned slice.
func OpenAPIYAML() []byte {
	return bytes.Clone(openapiYAML)
}

var openapiJSON = sync.OnceValues(func() ([]byte, error) {
	return yamlToJSON(openapiYAML)
})

// OpenAPIJSON returns the OpenAPI document converted to JSON, with keys in
// document order. Mapping keys stay strings exactly as written, so response
// codes such as "200" are not turned into numbers. The caller owns the
// returned slice.
func OpenAPIJSON() ([]byte, error) {
	b, err := openapiJSON()
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

// yamlToJSON converts a single YAML document to compact JSON. It walks the
// yaml.v3 node tree rather than decoding into map[string]any, which keeps the
// key order of the document and the key text as written.
func yamlToJSON(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("openapi: parse yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &doc, 0); err != nil {
		return nil, fmt.Errorf("openapi: convert to json: %w", err)
	}
	if !json.Valid(buf.Bytes()) {
		return nil, fmt.Errorf("openapi: convert to json: produced invalid json")
	}
	return buf.Bytes(), nil
}

// maxDepth bounds recursion, which also stops alias cycles.
const maxDepth = 512

func writeJSON(buf *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("line %d: nesting deeper than %d", n.Line, maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("expected one document, found %d", len(n.Content))
		}
		return writeJSON(buf, n.Content[0], depth+1)
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias, depth+1)
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: mapping key is not a scalar", k.Line)
			}
			if k.ShortTag() == "!!merge" {
				return fmt.Errorf("line %d: merge keys are not supported", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := appendJSON(buf, k.Value); err != nil {
				return fmt.Errorf("line %d: %w", k.Line, err)
			}
			buf.WriteByte(':')
			if err := writeJSON(buf, v, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, item, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	default:
		return fmt.Errorf("line %d: unsupported yaml node kind %v", n.Line, n.Kind)
	}
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	var v any
	switch n.ShortTag() {
	case "!!null":
		v = nil
	case "!!bool", "!!int", "!!float":
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
	default:
		// Strings, and scalars yaml would resolve to other types (such as
		// timestamps), are kept as the text written.
		v = n.Value
	}
	if err := appendJSON(buf, v); err != nil {
		return fmt.Errorf("line %d: %q has no json form: %w", n.Line, n.Value, err)
	}
	return nil
}

// appendJSON writes v as JSON without escaping <, > and &, which the
// document's descriptions use freely.
func appendJSON(buf *bytes.Buffer, v any) error {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
	return nil
}
