package idstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// apiOperations is every operation of API.md plus the operations endpoints,
// as "METHOD path". The document must describe exactly these.
var apiOperations = []string{
	"POST /v1/ekyc/sessions",
	"GET /v1/ekyc/sessions/{session_id}",
	"DELETE /v1/ekyc/sessions/{session_id}",
	"POST /v1/ekyc/sessions/{session_id}/document",
	"POST /v1/ekyc/sessions/{session_id}/nfc",
	"POST /v1/ekyc/sessions/{session_id}/selfie",
	"POST /v1/ekyc/sessions/{session_id}/handoff",
	"POST /v1/ekyc/sessions/{session_id}/sdk-token",
	"GET /v1/capture/{session_id}",
	"GET /v1/capture/{session_id}/phone",
	"GET /v1/capture/assets/{name}",
	"GET /v1/review/cases",
	"GET /v1/review/cases/{session_id}",
	"POST /v1/review/cases/{session_id}/claim",
	"POST /v1/review/cases/{session_id}/release",
	"POST /v1/review/cases/{session_id}/decision",
	"POST /v1/review/cases/{session_id}/retake",
	"GET /v1/review/analytics",
	"GET /v1/review/images/{token}",
	"GET /v1/review/ui",
	"POST /v1/admin/blocklist",
	"DELETE /v1/admin/blocklist/{id}",
	"POST /v1/admin/webhooks/replay",
	"GET /v1/config",
	"GET /v1/consents",
	"POST /v1/consents",
	"GET /healthz",
	"GET /readyz",
	"GET /openapi.json",
}

// apiStatuses is, per operation, the statuses API.md names for it.
var apiStatuses = map[string][]string{
	"POST /v1/ekyc/sessions":                        {"201", "401", "409", "413", "422", "429"},
	"GET /v1/ekyc/sessions/{session_id}":            {"200", "401", "404"},
	"DELETE /v1/ekyc/sessions/{session_id}":         {"204", "401", "404"},
	"POST /v1/ekyc/sessions/{session_id}/document":  {"200", "202", "409", "410", "413", "422", "429"},
	"POST /v1/ekyc/sessions/{session_id}/nfc":       {"202", "409", "410", "413", "422"},
	"POST /v1/ekyc/sessions/{session_id}/selfie":    {"200", "202", "409", "410", "413", "422", "429"},
	"POST /v1/ekyc/sessions/{session_id}/handoff":   {"201", "401", "403", "404", "409", "410", "422"},
	"POST /v1/ekyc/sessions/{session_id}/sdk-token": {"201", "401", "404", "409", "410"},
	"GET /v1/capture/{session_id}":                  {"200", "401", "404", "410"},
	"GET /v1/capture/{session_id}/phone":            {"200", "401", "404", "409", "410"},
	"GET /v1/capture/assets/{name}":                 {"200", "304", "404"},
	"GET /v1/review/cases":                          {"200", "401", "403", "422"},
	"GET /v1/review/cases/{session_id}":             {"200", "401", "403", "404"},
	"POST /v1/review/cases/{session_id}/claim":      {"200", "202", "401", "403", "404", "409"},
	"POST /v1/review/cases/{session_id}/release":    {"204", "202", "401", "403", "404", "409"},
	"POST /v1/review/cases/{session_id}/decision":   {"200", "202", "401", "403", "404", "409", "422"},
	"POST /v1/review/cases/{session_id}/retake":     {"200", "202", "401", "403", "404", "409", "422"},
	"GET /v1/review/images/{token}":                 {"200", "401", "404", "410"},
	"GET /v1/review/ui":                             {"200"},
	"POST /v1/admin/blocklist":                      {"201", "401", "403"},
	"DELETE /v1/admin/blocklist/{id}":               {"204", "401", "403"},
	"POST /v1/admin/webhooks/replay":                {"202", "401", "403"},
	"GET /v1/config":                                {"200", "401"},
	"GET /v1/consents":                              {"200", "400", "401"},
	"POST /v1/consents":                             {"201", "401", "413", "422"},
	"GET /healthz":                                  {"200"},
	"GET /readyz":                                   {"200", "503"},
	"GET /openapi.json":                             {"200"},
}

// apiProblemCodes is, per operation, the problem codes API.md ties to it;
// each must appear in an example of one of the operation's responses.
var apiProblemCodes = map[string][]string{
	"POST /v1/ekyc/sessions":                       {"unauthorized", "idempotency_key_reused", "invalid_flow", "consent_required", "rate_limited"},
	"GET /v1/ekyc/sessions/{session_id}":           {"unauthorized", "session_not_found"},
	"POST /v1/ekyc/sessions/{session_id}/document": {"invalid_image", "step_not_in_flow", "session_expired", "session_closed", "payload_too_large"},
	"POST /v1/ekyc/sessions/{session_id}/nfc":      {"invalid_chip_data", "session_expired", "session_closed"},
	"POST /v1/ekyc/sessions/{session_id}/selfie":   {"invalid_image", "step_not_in_flow", "session_expired", "session_closed"},
	"POST /v1/admin/blocklist":                     {"forbidden"},
	"GET /v1/consents":                             {"tracking_id_required", "unauthorized"},
	"POST /v1/consents":                            {"invalid_purpose", "invalid_notice_version"},
}

var problemCodes = []string{
	"unauthorized", "forbidden", "session_not_found", "not_found", "method_not_allowed",
	"invalid_json", "invalid_request", "unsupported_media_type", "payload_too_large",
	"rate_limited", "invalid_flow", "consent_required", "idempotency_key_reused",
	"invalid_image", "step_not_in_flow", "session_expired", "session_closed",
	"invalid_chip_data", "invalid_purpose", "invalid_notice_version",
	"tracking_id_required", "internal", "overloaded",
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

type obj = map[string]any

func loadDoc(t *testing.T) obj {
	t.Helper()
	b, err := OpenAPIJSON()
	if err != nil {
		t.Fatalf("OpenAPIJSON: %v", err)
	}
	var doc obj
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("OpenAPIJSON produced invalid JSON: %v", err)
	}
	return doc
}

// walk returns the value at a path of object keys, or nil.
func walk(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(obj)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func asObj(t *testing.T, v any, what string) obj {
	t.Helper()
	m, ok := v.(obj)
	if !ok {
		t.Fatalf("%s: want an object, got %T", what, v)
	}
	return m
}

// resolve follows a local $ref (JSON pointer) to its target.
func resolve(doc obj, v any) (any, error) {
	for range 32 {
		m, ok := v.(obj)
		if !ok {
			return v, nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return v, nil
		}
		if !strings.HasPrefix(ref, "#/") {
			return nil, fmt.Errorf("non-local $ref %q", ref)
		}
		var cur any = doc
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			next := walk(cur, tok)
			if next == nil {
				return nil, fmt.Errorf("$ref %q does not resolve", ref)
			}
			cur = next
		}
		v = cur
	}
	return nil, fmt.Errorf("$ref chain too long")
}

// schemaOf resolves a schema, looking through a $ref and a single-entry
// allOf (the OpenAPI 3.0 way of making a referenced schema nullable).
func schemaOf(t *testing.T, doc obj, v any, what string) obj {
	t.Helper()
	r, err := resolve(doc, v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	s := asObj(t, r, what)
	if all, ok := s["allOf"].([]any); ok && len(all) == 1 && s["properties"] == nil {
		return schemaOf(t, doc, all[0], what)
	}
	return s
}

type operation struct {
	key       string // "METHOD path"
	path      string
	op        obj
	responses obj
}

func operations(t *testing.T, doc obj) []operation {
	t.Helper()
	var ops []operation
	for path, item := range asObj(t, doc["paths"], "paths") {
		for _, m := range httpMethods {
			op, ok := asObj(t, item, path)[m].(obj)
			if !ok {
				continue
			}
			key := strings.ToUpper(m) + " " + path
			ops = append(ops, operation{key, path, op, asObj(t, op["responses"], key+" responses")})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].key < ops[j].key })
	return ops
}

func isV1(path string) bool { return strings.HasPrefix(path, "/v1/") }

func TestOpenAPIYAMLParses(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(OpenAPIYAML(), &doc); err != nil {
		t.Fatalf("openapi.yaml does not parse: %v", err)
	}
	if doc["openapi"] != "3.0.3" {
		t.Errorf("openapi = %v, want 3.0.3", doc["openapi"])
	}
	for _, k := range []string{"info", "servers", "paths", "components", "x-webhooks"} {
		if doc[k] == nil {
			t.Errorf("top-level %q missing", k)
		}
	}
}

func TestOpenAPIJSONMatchesYAML(t *testing.T) {
	b, err := OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatal("OpenAPIJSON is not valid JSON")
	}
	if !bytes.HasPrefix(b, []byte(`{"openapi":"3.0.3",`)) {
		t.Errorf("JSON does not start with the openapi version in document order: %.40s", b)
	}
	if !bytes.Contains(b, []byte(`"200":{`)) {
		t.Error(`response code keys are not the strings "200"`)
	}
	var fromJSON any
	if err := json.Unmarshal(b, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if fromJSON.(obj)["openapi"] != "3.0.3" {
		t.Errorf(`"openapi" = %v, want "3.0.3"`, fromJSON.(obj)["openapi"])
	}
	// The same document decoded by yaml.v3 and sent through encoding/json
	// must be identical: the converter adds, drops and retypes nothing. This
	// also fails if any key yaml would read as a non-string is left unquoted.
	var fromYAML any
	if err := yaml.Unmarshal(OpenAPIYAML(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	rt, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatalf("yaml.v3 decoding is not JSON-encodable (unquoted non-string key?): %v", err)
	}
	var want any
	if err := json.Unmarshal(rt, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON, want) {
		t.Error("OpenAPIJSON differs from the YAML document")
	}
}

func TestOpenAPIAccessorsReturnCopies(t *testing.T) {
	y := OpenAPIYAML()
	y[0] = 'X'
	if OpenAPIYAML()[0] == 'X' {
		t.Error("OpenAPIYAML shares its backing array with callers")
	}
	j, err := OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	j[0] = 'X'
	j2, _ := OpenAPIJSON()
	if j2[0] != '{' {
		t.Error("OpenAPIJSON shares its backing array with callers")
	}
}

func TestYAMLToJSON(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{name: "numeric keys stay strings", in: "200: a\n404: b\n", want: `{"200":"a","404":"b"}`},
		{name: "bool and null keys stay as written", in: "true: 1\nnull: 2\n", want: `{"true":1,"null":2}`},
		{name: "order kept", in: "b: 1\na: 2\n", want: `{"b":1,"a":2}`},
		{name: "scalars typed", in: "i: 3\nf: 1.5\nb: false\nn: null\ns: '3'\n", want: `{"i":3,"f":1.5,"b":false,"n":null,"s":"3"}`},
		{name: "timestamps stay strings", in: "t: 2026-11-22T10:30:00Z\nd: 2026-11-01\n", want: `{"t":"2026-11-22T10:30:00Z","d":"2026-11-01"}`},
		{name: "html not escaped", in: "x: <a & b>\n", want: `{"x":"<a & b>"}`},
		{name: "aliases expand", in: "a: &x {k: [1, 2]}\nb: *x\n", want: `{"a":{"k":[1,2]},"b":{"k":[1,2]}}`},
		{name: "duplicate key", in: "a: 1\na: 2\n", err: "duplicate key"},
		{name: "merge key", in: "a: &x {k: 1}\nb:\n  <<: *x\n", err: "merge keys"},
		{name: "infinity", in: "x: .inf\n", err: "no json form"},
		{name: "complex key", in: "? [a]\n: 1\n", err: "not a scalar"},
		{name: "bad yaml", in: "a: [\n", err: "parse yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := yamlToJSON([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestOpenAPIOperationsAreExactlyTheContract(t *testing.T) {
	doc := loadDoc(t)
	var got []string
	for _, op := range operations(t, doc) {
		got = append(got, op.key)
	}
	want := slices.Clone(apiOperations)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("operations:\n got  %v\n want %v", got, want)
	}
}

func TestOpenAPIOperationStatuses(t *testing.T) {
	doc := loadDoc(t)
	for _, op := range operations(t, doc) {
		for _, status := range apiStatuses[op.key] {
			if op.responses[status] == nil {
				t.Errorf("%s: no %s response", op.key, status)
			}
		}
		if !isV1(op.path) {
			continue
		}
		mustAnswer := []string{"401", "429", "500"}
		if op.path == "/v1/capture/assets/{name}" || op.path == "/v1/review/ui" { // public files: no credential, no tenant to limit
			mustAnswer = []string{"500"}
		}
		for _, status := range mustAnswer {
			if op.responses[status] == nil {
				t.Errorf("%s: no %s response", op.key, status)
			}
		}
		if op.op["requestBody"] != nil {
			for _, status := range []string{"400", "413", "415"} {
				if op.responses[status] == nil {
					t.Errorf("%s: has a body but no %s response", op.key, status)
				}
			}
		}
	}
}

func TestOpenAPIProblemCodes(t *testing.T) {
	doc := loadDoc(t)
	code := schemaOf(t, doc, walk(doc, "components", "schemas", "Problem", "properties", "code"), "Problem.code")
	var enum []string
	for _, v := range code["enum"].([]any) {
		enum = append(enum, v.(string))
	}
	for _, c := range problemCodes {
		if !slices.Contains(enum, c) {
			t.Errorf("problem code %q missing from the enum", c)
		}
	}
	// Codes beyond the contract's are allowed (API.md: what is not named may
	// be added), but each must be explained in the code table.
	desc, _ := code["description"].(string)
	for _, c := range enum {
		if !strings.Contains(desc, "| `"+c+"` |") {
			t.Errorf("problem code %q is not in the description's table", c)
		}
	}
	problem := schemaOf(t, doc, walk(doc, "components", "schemas", "Problem"), "Problem")
	for _, f := range []string{"type", "title", "status", "detail", "code", "request_id"} {
		if walk(problem, "properties", f) == nil {
			t.Errorf("Problem has no %q", f)
		}
	}
}

// TestOpenAPIProblemExamples checks every problem example against the
// contract: a known code, the type URI built from it, and the status of the
// response it is listed under. It also checks that each operation shows the
// codes API.md ties to it.
func TestOpenAPIProblemExamples(t *testing.T) {
	doc := loadDoc(t)
	known := enumOf(schemaOf(t, doc, walk(doc, "components", "schemas", "ProblemCode"), "ProblemCode"))
	for _, op := range operations(t, doc) {
		seen := map[string]bool{}
		for status, rv := range op.responses {
			r, err := resolve(doc, rv)
			if err != nil {
				t.Fatalf("%s %s: %v", op.key, status, err)
			}
			media, ok := walk(r, "content", "application/problem+json").(obj)
			if !ok {
				continue
			}
			var examples []any
			if ex := media["example"]; ex != nil {
				examples = append(examples, ex)
			}
			for _, ex := range asObj(t, orEmpty(media["examples"]), "examples") {
				examples = append(examples, walk(ex, "value"))
			}
			if len(examples) == 0 {
				t.Errorf("%s %s: problem response without an example", op.key, status)
			}
			for _, ex := range examples {
				e := asObj(t, ex, op.key+" "+status+" example")
				c, _ := e["code"].(string)
				seen[c] = true
				if !slices.Contains(known, c) {
					t.Errorf("%s %s: example code %q is not in the code enum", op.key, status, c)
				}
				if e["type"] != "https://idstream.dev/problems/"+c {
					t.Errorf("%s %s: example type %v does not match code %q", op.key, status, e["type"], c)
				}
				if fmt.Sprint(e["status"]) != status {
					t.Errorf("%s %s: example status %v", op.key, status, e["status"])
				}
				for _, f := range []string{"title", "detail", "request_id"} {
					if e[f] == nil {
						t.Errorf("%s %s: example %q without %s", op.key, status, c, f)
					}
				}
			}
		}
		for _, c := range apiProblemCodes[op.key] {
			if !seen[c] {
				t.Errorf("%s: no response shows problem code %q", op.key, c)
			}
		}
	}
}

func orEmpty(v any) any {
	if v == nil {
		return obj{}
	}
	return v
}

func TestOpenAPIRefsResolve(t *testing.T) {
	doc := loadDoc(t)
	used := map[string]bool{}
	var visit func(v any, at string)
	visit = func(v any, at string) {
		switch x := v.(type) {
		case obj:
			if ref, ok := x["$ref"]; ok {
				s, ok := ref.(string)
				if !ok || !strings.HasPrefix(s, "#/components/") {
					t.Errorf("%s: $ref %v is not a local component reference", at, ref)
				} else if _, err := resolve(doc, x); err != nil {
					t.Errorf("%s: %v", at, err)
				}
				used[fmt.Sprint(ref)] = true
			}
			for k, c := range x {
				visit(c, at+"/"+k)
			}
		case []any:
			for i, c := range x {
				visit(c, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	visit(doc, "#")
	if len(used) == 0 {
		t.Fatal("no $ref found")
	}
	// Every component is referenced: an unreferenced one is dead text that
	// drifts from the contract.
	for _, kind := range []string{"schemas", "responses", "parameters", "headers"} {
		for name := range asObj(t, walk(doc, "components", kind), kind) {
			if !used["#/components/"+kind+"/"+name] {
				t.Errorf("component %s/%s is never referenced", kind, name)
			}
		}
	}
}

// TestOpenAPIStaysOn30 rejects OpenAPI 3.1 constructs that 3.0 tools reject.
func TestOpenAPIStaysOn30(t *testing.T) {
	doc := loadDoc(t)
	if doc["webhooks"] != nil {
		t.Error(`top-level "webhooks" is OpenAPI 3.1; use x-webhooks`)
	}
	var visit func(v any, at string)
	visit = func(v any, at string) {
		switch x := v.(type) {
		case obj:
			if _, ok := x["type"].([]any); ok {
				t.Errorf("%s: type as an array is OpenAPI 3.1; use nullable", at)
			}
			if _, ok := x["const"]; ok && !strings.HasSuffix(at, "/properties") {
				t.Errorf("%s: const is OpenAPI 3.1", at)
			}
			if ref, ok := x["$ref"]; ok && len(x) > 1 {
				t.Errorf("%s: siblings of $ref (%v) are ignored in OpenAPI 3.0", at, ref)
			}
			for k, c := range x {
				visit(c, at+"/"+k)
			}
		case []any:
			for i, c := range x {
				visit(c, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	visit(doc, "#")
}

func TestOpenAPIResponsesHaveContentAndRequestID(t *testing.T) {
	doc := loadDoc(t)
	for _, op := range operations(t, doc) {
		for status, rv := range op.responses {
			r, err := resolve(doc, rv)
			if err != nil {
				t.Fatalf("%s %s: %v", op.key, status, err)
			}
			where := op.key + " " + status
			if walk(r, "headers", "X-Request-Id", "$ref") != "#/components/headers/X-Request-Id" {
				t.Errorf("%s: no X-Request-Id header referencing the component", where)
			}
			if status == "429" && walk(r, "headers", "Retry-After") == nil {
				t.Errorf("%s: 429 without Retry-After", where)
			}
			content, _ := walk(r, "content").(obj)
			if status == "204" {
				if len(content) != 0 {
					t.Errorf("%s: 204 with content", where)
				}
				continue
			}
			if len(content) == 0 {
				t.Errorf("%s: no content", where)
			}
			for mt, m := range content {
				if walk(m, "schema") == nil {
					t.Errorf("%s %s: no schema", where, mt)
				}
			}
			if strings.HasPrefix(status, "4") || strings.HasPrefix(status, "5") {
				if walk(content, "application/problem+json", "schema", "$ref") != "#/components/schemas/Problem" {
					t.Errorf("%s: error response is not application/problem+json with the Problem schema", where)
				}
			}
		}
	}
}

// TestOpenAPIEveryAPIOperationHasProblem4xx: every /v1 operation documents
// at least one client error as a Problem. The operations endpoints (probes,
// metrics, this document) and the back office's page read no input and answer no 4xx of
// their own.
func TestOpenAPIEveryAPIOperationHasProblem4xx(t *testing.T) {
	doc := loadDoc(t)
	for _, op := range operations(t, doc) {
		if !isV1(op.path) || op.path == "/v1/review/ui" {
			continue
		}
		found := false
		for status, rv := range op.responses {
			r, _ := resolve(doc, rv)
			if strings.HasPrefix(status, "4") &&
				walk(r, "content", "application/problem+json", "schema", "$ref") == "#/components/schemas/Problem" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no 4xx Problem response", op.key)
		}
	}
}

func TestOpenAPISecurity(t *testing.T) {
	doc := loadDoc(t)
	schemes := asObj(t, walk(doc, "components", "securitySchemes"), "securitySchemes")
	for name, want := range map[string][2]string{
		"apiKey": {"http", "bearer"}, "sdkToken": {"http", "bearer"}, "adminKey": {"http", "bearer"},
	} {
		if walk(schemes, name, "type") != want[0] || walk(schemes, name, "scheme") != want[1] {
			t.Errorf("security scheme %s is not %s %s", name, want[0], want[1])
		}
	}
	if walk(schemes, "cmpApiKey", "type") != "apiKey" || walk(schemes, "cmpApiKey", "in") != "header" ||
		walk(schemes, "cmpApiKey", "name") != "x-cmp-api-key" {
		t.Error("cmpApiKey is not the x-cmp-api-key header")
	}
	sdkTokenOps := []string{
		"GET /v1/ekyc/sessions/{session_id}",
		"POST /v1/ekyc/sessions/{session_id}/document",
		"POST /v1/ekyc/sessions/{session_id}/nfc",
		"POST /v1/ekyc/sessions/{session_id}/selfie",
	}
	for _, op := range operations(t, doc) {
		sec, ok := op.op["security"].([]any)
		if !ok {
			t.Errorf("%s: no explicit security", op.key)
			continue
		}
		var got []string
		for _, req := range sec {
			for name := range asObj(t, req, op.key+" security") {
				got = append(got, name)
			}
		}
		sort.Strings(got)
		var want []string
		switch {
		case op.key == "POST /v1/ekyc/sessions/{session_id}/nfc": // a phone's chip step too
			want = []string{"apiKey", "handoffToken", "sdkToken"}
		case op.key == "POST /v1/ekyc/sessions/{session_id}/handoff": // the SDK's, never the backend's
			want = []string{"sdkToken"}
		case slices.Contains(sdkTokenOps, op.key):
			want = []string{"apiKey", "sdkToken"}
		case strings.HasPrefix(op.path, "/v1/ekyc/"):
			want = []string{"apiKey"}
		case strings.HasPrefix(op.path, "/v1/admin/"):
			want = []string{"adminKey"}
		case op.path == "/v1/review/images/{token}" || op.path == "/v1/review/ui": // a signed URL; a page
			want = nil
		case strings.HasPrefix(op.path, "/v1/review/"):
			want = []string{"reviewerKey"}
		case op.path == "/v1/config" || op.path == "/v1/consents":
			want = []string{"cmpApiKey"}
		default:
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: security %v, want %v", op.key, got, want)
		}
	}
}

func TestOpenAPIServers(t *testing.T) {
	doc := loadDoc(t)
	var top []string
	for _, s := range doc["servers"].([]any) {
		top = append(top, walk(s, "url").(string))
	}
	if !slices.Equal(top, []string{"{base_url}", "{cmp_base_url}"}) {
		t.Errorf("servers = %v", top)
	}
	for path, item := range asObj(t, doc["paths"], "paths") {
		want := "{base_url}"
		if path == "/v1/config" || path == "/v1/consents" {
			want = "{cmp_base_url}"
		}
		servers, _ := walk(item, "servers").([]any)
		if len(servers) != 1 || walk(servers[0], "url") != want {
			t.Errorf("%s: servers %v, want only %s", path, servers, want)
			continue
		}
		v := strings.Trim(want, "{}")
		if walk(servers[0], "variables", v, "default") == nil {
			t.Errorf("%s: server variable %s has no default", path, v)
		}
	}
}

// respSchema is the application/json schema of an operation's response,
// looking through a response $ref.
func respSchema(t *testing.T, doc obj, path, method, status, what string) obj {
	t.Helper()
	r, err := resolve(doc, walk(doc, "paths", path, method, "responses", status))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return schemaOf(t, doc, walk(r, "content", "application/json", "schema"), what)
}

func propNames(s obj) []string {
	var names []string
	for k := range asObjOrNil(s["properties"]) {
		names = append(names, k)
	}
	return names
}

func asObjOrNil(v any) obj { m, _ := v.(obj); return m }

func enumOf(s obj) []string {
	var out []string
	for _, v := range asSlice(s["enum"]) {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func requireProps(t *testing.T, s obj, what string, names ...string) {
	t.Helper()
	have := propNames(s)
	for _, n := range names {
		if !slices.Contains(have, n) {
			t.Errorf("%s has no %q", what, n)
		}
	}
}

func requireEnum(t *testing.T, s obj, what string, values ...string) {
	t.Helper()
	if got := enumOf(s); !slices.Equal(got, values) {
		t.Errorf("%s enum = %v, want %v", what, got, values)
	}
}

func TestOpenAPISessionView(t *testing.T) {
	doc := loadDoc(t)
	sch := func(v any, what string) obj { return schemaOf(t, doc, v, what) }
	view := respSchema(t, doc, "/v1/ekyc/sessions/{session_id}", "get", "200", "Data Get 200")
	requireProps(t, view, "SessionView", "session_id", "flow", "reference_id", "status", "created_at",
		"expires_at", "decided_at", "steps", "decision", "checks", "extracted")
	props := view["properties"].(obj)

	requireEnum(t, sch(props["status"], "status"), "SessionView.status",
		"open", "capturing", "processing", "verified", "rejected", "expired", "cancelled")

	step := sch(walk(props, "steps", "additionalProperties"), "steps entry")
	requireProps(t, step, "steps entry", "status", "capture_id")

	for _, f := range []string{"decision", "extracted", "decided_at"} {
		if walk(props, f, "nullable") != true {
			t.Errorf("SessionView.%s is not nullable", f)
		}
	}
	decision := sch(props["decision"], "decision")
	requireProps(t, decision, "decision", "outcome", "policy_version", "reasons")
	requireProps(t, sch(walk(decision, "properties", "reasons", "items"), "reason"), "decision reason", "code", "message")

	check := sch(walk(props, "checks", "items"), "check")
	requireProps(t, check, "check", "name", "status", "score", "threshold", "reason_code", "model_version")
	requireEnum(t, sch(walk(check, "properties", "status"), "check status"), "check.status", "pass", "fail", "warn", "skipped")
	for _, f := range []string{"score", "threshold", "reason_code", "model_version"} {
		if walk(check, "properties", f, "nullable") != true {
			t.Errorf("check.%s is not nullable", f)
		}
	}

	extracted := sch(props["extracted"], "extracted")
	requireProps(t, extracted, "extracted", "document_type", "id_number", "full_name", "date_of_birth",
		"sex", "nationality", "place_of_origin", "place_of_residence", "issue_date", "expiry_date", "mrz", "sources")
	requireEnum(t, sch(walk(extracted, "properties", "sources", "additionalProperties", "items"), "sources item"),
		"extracted.sources", "ocr", "mrz", "chip")

	// The webhook carries the same body.
	event := sch(walk(doc, "x-webhooks", "ekyc.session.completed", "post", "requestBody", "content", "application/json", "schema"), "webhook body")
	requireProps(t, event, "webhook body", "type", "timestamp", "data")
	requireEnum(t, sch(walk(event, "properties", "type"), "webhook type"), "webhook type", "ekyc.session.completed", "ekyc.session.retake_requested")
	if walk(doc, "x-webhooks", "ekyc.session.retake_requested", "post") == nil {
		t.Error("the retake-requested webhook is not described")
	}
	if !reflect.DeepEqual(sch(walk(event, "properties", "data"), "webhook data"), view) {
		t.Error("webhook data is not the Data Get body")
	}
}

func TestOpenAPIWebhookHeaders(t *testing.T) {
	doc := loadDoc(t)
	post := asObj(t, walk(doc, "x-webhooks", "ekyc.session.completed", "post"), "x-webhooks post")
	var headers []string
	for _, p := range asSlice(post["parameters"]) {
		if walk(p, "in") == "header" && walk(p, "required") == true {
			headers = append(headers, walk(p, "name").(string))
		}
	}
	if !slices.Equal(headers, []string{"webhook-id", "webhook-timestamp", "webhook-signature"}) {
		t.Errorf("webhook headers = %v", headers)
	}
	desc, _ := post["description"].(string)
	for _, s := range []string{"at least 8 attempts", "24 hours", "HMAC-SHA256"} {
		if !strings.Contains(desc, s) {
			t.Errorf("webhook description does not state %q", s)
		}
	}
}

func TestOpenAPIRequestBodies(t *testing.T) {
	doc := loadDoc(t)
	sch := func(v any, what string) obj { return schemaOf(t, doc, v, what) }
	body := func(path, method, media string) obj {
		return sch(walk(doc, "paths", path, method, "requestBody", "content", media, "schema"), path+" "+media)
	}

	initReq := body("/v1/ekyc/sessions", "post", "application/json")
	requireProps(t, initReq, "session init", "flow", "reference_id", "tracking_id", "webhook_url", "locale", "data_retention")
	requireEnum(t, sch(walk(initReq, "properties", "locale"), "locale"), "locale", "vi", "en")
	requireEnum(t, sch(walk(initReq, "properties", "data_retention"), "data_retention"), "data_retention", "service", "integrator")
	var hasIdem bool
	for _, p := range asSlice(walk(doc, "paths", "/v1/ekyc/sessions", "post", "parameters")) {
		p, _ := resolve(doc, p)
		hasIdem = hasIdem || (walk(p, "name") == "Idempotency-Key" && walk(p, "in") == "header")
	}
	if !hasIdem {
		t.Error("session init has no Idempotency-Key header")
	}
	created := respSchema(t, doc, "/v1/ekyc/sessions", "post", "201", "init 201")
	requireProps(t, created, "session init 201", "session_id", "expires_in", "expires_at", "flow", "steps", "sdk_token", "nonce")

	for _, step := range []string{"document", "selfie"} {
		path := "/v1/ekyc/sessions/{session_id}/" + step
		mp := body(path, "post", "multipart/form-data")
		js := body(path, "post", "application/json")
		requireProps(t, mp, step+" multipart", "image")
		requireProps(t, js, step+" json", "image")
		if walk(mp, "properties", "image", "format") != "binary" || walk(js, "properties", "image", "format") != "byte" {
			t.Errorf("%s: image is not binary in multipart and base64 in JSON", step)
		}
		if walk(mp, "properties", "image", "maxLength") != float64(10<<20) {
			t.Errorf("%s: multipart image is not limited to 10 MiB", step)
		}
		res := respSchema(t, doc, path, "post", "200", step+" 200")
		requireProps(t, res, step+" result", "capture_id", "step", "status", "quality")
		requireEnum(t, sch(walk(res, "properties", "status"), "capture status"), "capture status", "accepted", "retake", "pending")
		quality := sch(walk(res, "properties", "quality"), "quality")
		requireProps(t, quality, "quality", "passed", "blur", "glare", "framing", "reasons")
		requireEnum(t, sch(walk(quality, "properties", "reasons", "items"), "reason"), "quality reasons",
			"blurry", "glare", "not_framed", "too_dark", "no_document", "no_face", "multiple_faces", "face_too_small")
	}
	doc2 := body("/v1/ekyc/sessions/{session_id}/document", "post", "multipart/form-data")
	requireEnum(t, sch(walk(doc2, "properties", "side"), "side"), "side", "front", "back", "passport")
	requireProps(t, body("/v1/ekyc/sessions/{session_id}/selfie", "post", "multipart/form-data"), "selfie multipart", "video")

	nfc := body("/v1/ekyc/sessions/{session_id}/nfc", "post", "application/json")
	requireProps(t, nfc, "nfc", "sod", "dg1", "dg2", "dg13", "dg14", "dg15", "aa_signature")
	if req := asSlice(nfc["required"]); len(req) != 2 || req[0] != "sod" || req[1] != "dg1" {
		t.Errorf("nfc required = %v, want [sod dg1]", req)
	}

	consent := body("/v1/consents", "post", "application/json")
	requireProps(t, consent, "consent request", "tracking_id", "decisions", "notice_version", "channel", "ip", "user_agent")
	dec := sch(walk(consent, "properties", "decisions", "items"), "decision")
	requireEnum(t, sch(walk(dec, "properties", "status"), "consent status"), "consent status", "granted", "denied", "withdrawn")

	cfg := respSchema(t, doc, "/v1/config", "get", "200", "config")
	requireProps(t, cfg, "config", "version", "default_language", "languages", "controller", "notice", "purposes")
	requireProps(t, sch(walk(cfg, "properties", "notice"), "notice"), "notice", "version", "url", "text")

	data := respSchema(t, doc, "/v1/consents", "get", "200", "consent data")
	requireProps(t, data, "consent data", "tracking_id", "purposes", "records")
	requireProps(t, sch(walk(data, "properties", "records", "items"), "record"), "consent record",
		"consent_id", "purpose_id", "status", "notice_version", "recorded_at", "channel", "ip", "user_agent", "proof_sha256")

	blk := respSchema(t, doc, "/v1/admin/blocklist", "post", "201", "blocklist 201")
	requireProps(t, blk, "blocklist entry", "id", "kind", "created_at")
	requireEnum(t, sch(walk(blk, "properties", "kind"), "kind"), "blocklist kind", "id_number", "face")
	replay := respSchema(t, doc, "/v1/admin/webhooks/replay", "post", "202", "replay 202")
	requireProps(t, replay, "replay result", "replayed")
}
