package schemas

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
)

// schemaVersion is one earlier version of a schema file.
type schemaVersion struct {
	label  string // commit or released file name
	source []byte
}

// checkBackwardCompatible returns an error when data written with old cannot be read with
// current.
func checkBackwardCompatible(current, old []byte) error {
	reader, err := ParseSchema(current)
	if err != nil {
		return err
	}
	writer, err := ParseSchema(old)
	if err != nil {
		return err
	}
	return avro.NewSchemaCompatibility().Compatible(reader, writer)
}

// gitVersions returns every committed version of file (relative to this package) from git
// history. The second result is false when git or the history is unavailable.
func gitVersions(t *testing.T, file string) ([]schemaVersion, bool) {
	t.Helper()
	out, err := exec.Command("git", "log", "--format=%H", "--", file).Output()
	if err != nil {
		t.Logf("git history unavailable for %s (%v): using released/ only", file, err)
		return nil, false
	}
	var versions []schemaVersion
	for _, commit := range strings.Fields(string(out)) {
		src, err := exec.Command("git", "show", commit+":./"+file).Output()
		if err != nil {
			continue // the commit deleted or renamed the file
		}
		versions = append(versions, schemaVersion{label: "commit " + commit[:12], source: src})
	}
	return versions, true
}

// TestSchemasBackwardCompatible: every earlier committed version of every schema file, and
// every frozen copy under released/, must be readable by the current schema.
func TestSchemasBackwardCompatible(t *testing.T) {
	released, err := loadReleased()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ti := range Topics() {
		if seen[ti.File] {
			continue
		}
		seen[ti.File] = true
		t.Run(ti.File, func(t *testing.T) {
			versions, fromGit := gitVersions(t, ti.File)
			for _, r := range released {
				if r.File == ti.File {
					versions = append(versions, schemaVersion{label: "released/" + r.Name, source: r.Source})
				}
			}
			if len(versions) == 0 {
				t.Fatalf("no earlier version found (git available: %v); add released/%s", fromGit,
					strings.TrimSuffix(ti.File, ".avsc")+".v1.avsc")
			}
			for _, v := range versions {
				if err := checkBackwardCompatible(ti.Source, v.source); err != nil {
					t.Errorf("data written with %s of %s is not readable by the current schema: %v", v.label, ti.File, err)
				}
			}
		})
	}
}

// withRootField returns schema text with field appended to its root record.
func withRootField(t *testing.T, src []byte, field map[string]any) []byte {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(src, &root); err != nil {
		t.Fatal(err)
	}
	root["fields"] = append(root["fields"].([]any), field)
	out, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompatibilityCheckBites proves the check above would catch an incompatible change.
func TestCompatibilityCheckBites(t *testing.T) {
	current, err := schemaFiles.ReadFile("session_state.avsc")
	if err != nil {
		t.Fatal(err)
	}
	required := withRootField(t, current, map[string]any{"name": "risk_tier", "type": "string", "doc": "no default"})
	if err := checkBackwardCompatible(required, current); err == nil {
		t.Fatal("a new field without a default was accepted as backward compatible")
	}

	optional := withRootField(t, current, map[string]any{
		"name": "risk_tier", "type": []any{"null", "string"}, "default": nil, "doc": "optional",
	})
	if err := checkBackwardCompatible(optional, current); err != nil {
		t.Fatalf("a new optional field with default null was rejected: %v", err)
	}

	// Resolution (what the codec does for an older writer) succeeds for the compatible change.
	reader, err := ParseSchema(optional)
	if err != nil {
		t.Fatal(err)
	}
	writer, err := ParseSchema(current)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := avro.NewSchemaCompatibility().Resolve(reader, writer); err != nil {
		t.Fatalf("resolving an older writer into a reader with an added optional field: %v", err)
	}
}
