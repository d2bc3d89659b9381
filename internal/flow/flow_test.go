package flow

import (
	"errors"
	"slices"
	"testing"
)

func TestDefaultFlows(t *testing.T) {
	s := Default()
	want := map[string][]string{
		"id_card":              {"document_front", "document_back", "selfie"},
		"chip_id_card":         {"document_front", "document_back", "nfc", "selfie"},
		"passport":             {"passport", "selfie"},
		"nfc_only":             {"nfc", "selfie"},
		"vehicle_registration": {"document_front", "document_back"},
	}
	if got := s.Names(); !slices.Equal(got, []string{"chip_id_card", "id_card", "nfc_only", "passport", "vehicle_registration"}) {
		t.Fatalf("Names() = %v", got)
	}
	for name, steps := range want {
		f, ok := s.Get(name)
		if !ok {
			t.Fatalf("Get(%q) missing", name)
		}
		if !slices.Equal(f.Steps, steps) {
			t.Errorf("%s steps = %v, want %v", name, f.Steps, steps)
		}
		if err := f.Validate(); err != nil {
			t.Errorf("%s invalid: %v", name, err)
		}
	}
	p, _ := s.Get("passport")
	if !p.Allows("nfc") || !p.Allows("selfie") || p.Allows("document_front") {
		t.Errorf("passport Allows wrong: %+v", p)
	}
	if _, ok := s.Get("nope"); ok {
		t.Error("Get(nope) found a flow")
	}
}

func TestImageSteps(t *testing.T) {
	f, _ := Default().Get("chip_id_card")
	if got := f.ImageSteps(); !slices.Equal(got, []string{"document_front", "document_back", "selfie"}) {
		t.Fatalf("ImageSteps = %v", got)
	}
	p, _ := Default().Get("passport")
	if got := p.ImageSteps(); !slices.Equal(got, []string{"passport", "selfie"}) {
		t.Fatalf("passport ImageSteps = %v (optional nfc must not appear)", got)
	}
}

func TestGetReturnsCopy(t *testing.T) {
	s := Default()
	f, _ := s.Get("id_card")
	f.Steps[0] = "mutated"
	g, _ := s.Get("id_card")
	if g.Steps[0] != "document_front" {
		t.Fatal("mutating a returned flow changed the set")
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr bool
		check   func(t *testing.T, s Set)
	}{
		{name: "empty yields defaults", yaml: "", check: func(t *testing.T, s Set) {
			if len(s.Names()) != 5 {
				t.Fatalf("names = %v", s.Names())
			}
		}},
		{name: "override and extend", yaml: `
flows:
  id_card:
    steps: [document_front, selfie]
  selfie_only:
    steps: [selfie]
    optional_steps: [nfc]
    document_type: none
`, check: func(t *testing.T, s Set) {
			f, _ := s.Get("id_card")
			if !slices.Equal(f.Steps, []string{"document_front", "selfie"}) || f.DocumentType != "id_card" {
				t.Fatalf("id_card = %+v", f)
			}
			g, ok := s.Get("selfie_only")
			if !ok || g.DocumentType != "none" || !g.Allows("nfc") {
				t.Fatalf("selfie_only = %+v", g)
			}
			if _, ok := s.Get("passport"); !ok {
				t.Fatal("defaults lost")
			}
		}},
		{name: "unknown step", yaml: "flows:\n  x:\n    steps: [document_front, retina]\n", wantErr: true},
		{name: "duplicate step", yaml: "flows:\n  x:\n    steps: [selfie, selfie]\n", wantErr: true},
		{name: "duplicate across optional", yaml: "flows:\n  x:\n    steps: [selfie]\n    optional_steps: [selfie]\n", wantErr: true},
		{name: "no required step", yaml: "flows:\n  x:\n    optional_steps: [nfc]\n", wantErr: true},
		{name: "unknown key", yaml: "flows:\n  x:\n    stepz: [selfie]\n", wantErr: true},
		{name: "malformed", yaml: "flows: [", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.yaml))
			if tt.wantErr {
				if err == nil {
					t.Fatal("want error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

func TestParseInvalidWrapsErrInvalidFlow(t *testing.T) {
	_, err := Parse([]byte("flows:\n  x:\n    steps: [retina]\n"))
	if !errors.Is(err, ErrInvalidFlow) {
		t.Fatalf("err = %v, want ErrInvalidFlow", err)
	}
}

func TestNewSet(t *testing.T) {
	if _, err := NewSet(Flow{Name: "a", Steps: []string{"selfie"}}, Flow{Name: "a", Steps: []string{"nfc"}}); !errors.Is(err, ErrInvalidFlow) {
		t.Fatalf("duplicate name: err = %v", err)
	}
	s, err := NewSet(Flow{Name: "a", Steps: []string{"selfie"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("a"); !ok {
		t.Fatal("flow a missing")
	}
	var zero Set
	if _, ok := zero.Get("id_card"); ok || len(zero.Names()) != 0 {
		t.Fatal("zero Set is not empty")
	}
}

func TestAcceptedDocumentTypes(t *testing.T) {
	s := Default()
	for _, c := range []struct {
		flow, docType string
		want          bool
	}{
		{"id_card", "legacy_id_card", true},
		{"id_card", "id_card", true},
		{"id_card", "chip_id_card", true},
		{"id_card", "passport", false},
		{"id_card", "vehicle_registration", false},
		{"chip_id_card", "chip_id_card", true},
		{"chip_id_card", "id_card", false},
		{"chip_id_card", "legacy_id_card", false},
		{"passport", "passport", true},
		{"passport", "chip_id_card", false},
		{"vehicle_registration", "vehicle_registration", true},
		{"vehicle_registration", "unknown", false},
	} {
		f, _ := s.Get(c.flow)
		if got := f.AcceptsDocumentType(c.docType); got != c.want {
			t.Errorf("%s accepts %s = %v, want %v", c.flow, c.docType, got, c.want)
		}
	}
	parsed, err := Parse([]byte("flows:\n  id_card:\n    steps: [document_front, document_back, selfie]\n    document_types: [id_card]\n"))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := parsed.Get("id_card")
	if f.AcceptsDocumentType("legacy_id_card") || !f.AcceptsDocumentType("id_card") {
		t.Errorf("configured document_types not applied: %+v", f)
	}
	f.DocumentTypes[0] = "mutated"
	if g, _ := parsed.Get("id_card"); g.DocumentTypes[0] != "id_card" {
		t.Error("mutating a returned flow's document types changed the set")
	}
}
