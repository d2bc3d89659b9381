package schemas

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// TestTopicsCoverEveryTopicConstant parses types.go so that a topic constant added there
// without a table entry (and schema) fails here.
func TestTopicsCoverEveryTopicConstant(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "types.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if strings.HasPrefix(name.Name, "Topic") && i < len(vs.Values) {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					want = append(want, s)
				}
			}
		}
		return true
	})
	var got []string
	compacted := map[string]bool{}
	for _, ti := range Topics() {
		got = append(got, ti.Name)
		compacted[ti.Name] = ti.Compacted
		if reflect.TypeOf(ti.New()).Kind() != reflect.Pointer {
			t.Errorf("%s: New returns %T, want a pointer", ti.Name, ti.New())
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if len(want) < 14 || !reflect.DeepEqual(got, want) {
		t.Fatalf("topic table %v, types.go declares %v", got, want)
	}
	for name, c := range compacted {
		wantC := name == TopicSessionState || name == TopicDecisions || name == TopicBlocklist || name == TopicErasureState || name == TopicFaceIndex ||
			name == TopicCaptureIndex
		if c != wantC {
			t.Errorf("%s: compacted = %v, want %v", name, c, wantC)
		}
	}
}

// TestSchemasMatchGoTypes checks field by field, recursively, that every schema has exactly
// the avro-tagged fields of its Go type, with matching types. (hamba/avro silently drops a
// struct field the schema lacks, so a field added to types.go alone would be lost.)
func TestSchemasMatchGoTypes(t *testing.T) {
	for _, ti := range Topics() {
		matchSchema(t, ti.Name, ti.Schema, reflect.TypeOf(ti.New()).Elem())
	}
}

var timeType = reflect.TypeOf(time.Time{})

func matchSchema(t *testing.T, path string, s avro.Schema, typ reflect.Type) {
	t.Helper()
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	if u, ok := s.(*avro.UnionSchema); ok {
		types := u.Types()
		if len(types) != 2 || types[0].Type() != avro.Null || typ.Kind() != reflect.Pointer {
			t.Errorf("%s: union %s must be [null, T] for a Go pointer, Go type is %s", path, s, typ)
			return
		}
		matchSchema(t, path, types[1], typ.Elem())
		return
	}
	if typ.Kind() == reflect.Pointer {
		t.Errorf("%s: Go pointer %s needs an optional [null, T] schema, got %s", path, typ, s.Type())
		return
	}
	switch s := s.(type) {
	case *avro.RecordSchema:
		if typ.Kind() != reflect.Struct || typ == timeType {
			t.Errorf("%s: record %s for Go type %s", path, s.FullName(), typ)
			return
		}
		goFields := map[string]reflect.Type{}
		for i := range typ.NumField() {
			if tag := typ.Field(i).Tag.Get("avro"); tag != "" && tag != "-" {
				goFields[tag] = typ.Field(i).Type
			}
		}
		for _, f := range s.Fields() {
			ft, ok := goFields[f.Name()]
			if !ok {
				t.Errorf("%s: schema field %s has no Go field in %s", path, f.Name(), typ)
				continue
			}
			delete(goFields, f.Name())
			matchSchema(t, path+"."+f.Name(), f.Type(), ft)
		}
		for name := range goFields {
			t.Errorf("%s: Go field %s.%s is missing from the schema", path, typ.Name(), name)
		}
	case *avro.ArraySchema:
		if typ.Kind() != reflect.Slice || typ.Elem().Kind() == reflect.Uint8 {
			t.Errorf("%s: array for Go type %s", path, typ)
			return
		}
		matchSchema(t, path+"[]", s.Items(), typ.Elem())
	case *avro.MapSchema:
		if typ.Kind() != reflect.Map || typ.Key().Kind() != reflect.String {
			t.Errorf("%s: map for Go type %s", path, typ)
			return
		}
		matchSchema(t, path+"{}", s.Values(), typ.Elem())
	case *avro.PrimitiveSchema:
		logical := ""
		if s.Logical() != nil {
			logical = string(s.Logical().Type())
		}
		ok := false
		switch {
		case logical == "timestamp-millis":
			ok = s.Type() == avro.Long && typ == timeType
		case logical != "":
			ok = false
		case s.Type() == avro.String:
			ok = typ.Kind() == reflect.String
		case s.Type() == avro.Bytes:
			ok = typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Uint8
		case s.Type() == avro.Boolean:
			ok = typ.Kind() == reflect.Bool
		case s.Type() == avro.Int:
			ok = typ.Kind() == reflect.Int || typ.Kind() == reflect.Int32
		case s.Type() == avro.Long:
			ok = typ.Kind() == reflect.Int64
		case s.Type() == avro.Float:
			ok = typ.Kind() == reflect.Float32
		case s.Type() == avro.Double:
			ok = typ.Kind() == reflect.Float64
		}
		if !ok {
			t.Errorf("%s: schema %s (logical %q) does not fit Go type %s", path, s.Type(), logical, typ)
		}
	default:
		t.Errorf("%s: unexpected schema %s for Go type %s", path, s.Type(), typ)
	}
}

// TestSchemaFilesConventions checks the rules a data team relies on, on the JSON of each
// file: namespace, first field an inline Envelope identical in every file, a doc on every
// record and field, null defaults on optional fields, each named record defined once.
func TestSchemaFilesConventions(t *testing.T) {
	files, err := fs.Glob(schemaFiles, "*.avsc")
	if err != nil || len(files) < 13 {
		t.Fatalf("embedded schema files %v (%v), want 13", files, err)
	}
	var firstEnvelope any
	for _, name := range files {
		src, err := schemaFiles.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var root map[string]any
		if err := json.Unmarshal(src, &root); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantNS := "dev.idstream.ekyc"
		switch name {
		case "consent_recorded.avsc", "biometric_erasure_requested.avsc", "tracking_session_opened.avsc", "erasure_state.avsc":
			wantNS = "dev.idstream.cmp"
		}
		if root["namespace"] != wantNS {
			t.Errorf("%s: namespace %v, want %s", name, root["namespace"], wantNS)
		}
		fields, _ := root["fields"].([]any)
		if len(fields) == 0 {
			t.Fatalf("%s: no fields", name)
		}
		first, _ := fields[0].(map[string]any)
		env, _ := first["type"].(map[string]any)
		if first["name"] != "envelope" || env["name"] != "Envelope" || env["namespace"] != "dev.idstream.common" {
			t.Errorf("%s: first field must be envelope, an inline dev.idstream.common.Envelope; got %v", name, first)
		}
		if firstEnvelope == nil {
			firstEnvelope = env
		} else if !reflect.DeepEqual(env, firstEnvelope) {
			t.Errorf("%s: Envelope differs from %s's", name, files[0])
		}
		defined := map[string]int{}
		checkConventions(t, name, root, "", defined)
		for rec, n := range defined {
			if n > 1 {
				t.Errorf("%s: record %s defined %d times, define once and refer by name", name, rec, n)
			}
		}
		if _, err := ParseSchema(src); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func checkConventions(t *testing.T, file string, node any, ns string, defined map[string]int) {
	t.Helper()
	switch n := node.(type) {
	case []any:
		for _, x := range n {
			checkConventions(t, file, x, ns, defined)
		}
	case map[string]any:
		switch n["type"] {
		case "record":
			if s, ok := n["namespace"].(string); ok {
				ns = s
			}
			full := ns + "." + n["name"].(string)
			defined[full]++
			if d, _ := n["doc"].(string); d == "" {
				t.Errorf("%s: record %s has no doc", file, full)
			}
			for _, f := range n["fields"].([]any) {
				fm := f.(map[string]any)
				if d, _ := fm["doc"].(string); d == "" {
					t.Errorf("%s: field %s.%v has no doc", file, full, fm["name"])
				}
				if u, ok := fm["type"].([]any); ok {
					def, has := fm["default"]
					if len(u) == 0 || u[0] != "null" || !has || def != nil {
						t.Errorf("%s: optional field %s.%v must be [\"null\", T] with default null", file, full, fm["name"])
					}
				}
				if _, isEnum := fm["type"].(map[string]any); isEnum && fm["type"].(map[string]any)["type"] == "enum" {
					t.Errorf("%s: field %s.%v is an enum; use a string", file, full, fm["name"])
				}
				checkConventions(t, file, fm["type"], ns, defined)
			}
		case "array":
			checkConventions(t, file, n["items"], ns, defined)
		case "map":
			checkConventions(t, file, n["values"], ns, defined)
		}
	}
}

// TestReleasedCopiesExist makes sure every schema has a frozen released version (the codec
// recognises released fingerprints, and compat_test.go checks them without git).
func TestReleasedCopiesExist(t *testing.T) {
	released, err := loadReleased()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range released {
		have[r.File] = true
		if _, err := ParseSchema(r.Source); err != nil {
			t.Errorf("released/%s: %v", r.Name, err)
		}
	}
	for _, ti := range Topics() {
		if !have[ti.File] {
			t.Errorf("%s has no frozen copy under released/", ti.File)
		}
	}
}
