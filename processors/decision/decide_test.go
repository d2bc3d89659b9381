package decision

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/schemas"
)

const sid = "ses_1"

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func check(name, status string) schemas.Check {
	return schemas.Check{Name: name, Status: status, Source: "test"}
}

// processing returns a chip_id_card snapshot whose captures all passed the quality gate and
// whose chip passed passive and active authentication, whose documents were read (the front
// has no MRZ: skipped) and whose faces match.
func processing(extra ...schemas.Check) *schemas.SessionState {
	return &schemas.SessionState{
		Envelope:  schemas.Envelope{EventID: "evt_x", SessionID: sid, TenantID: "ten_1", OccurredAt: t0.Add(time.Minute)},
		Version:   9,
		Status:    schemas.StatusProcessing,
		Flow:      "chip_id_card",
		Steps:     []string{"document_front", "document_back", "nfc", "selfie"},
		CreatedAt: t0,
		UpdatedAt: t0.Add(time.Minute),
		Checks: append([]schemas.Check{
			check("quality.document_front", "pass"), check("quality.document_back", "pass"), check("quality.selfie", "pass"),
			check("chip.passive_authentication", "pass"), check("chip.active_authentication", "pass"),
			check("liveness.passive", "pass"), check("face.selfie_chip", "pass"), check("fraud.blocklist_id", "pass"),
			check("fraud.injection_signals.document_front", "pass"), check("fraud.injection_signals.document_back", "pass"),
			check("fraud.injection_signals.selfie", "pass"),
			check("fraud.tamper.document_front", "pass"), check("fraud.tamper.document_back", "pass"),
			check("fraud.duplicate_face", "pass"), check("fraud.blocklist_face", "pass"), check("fraud.presentation_attack", "pass"),
			check("document.mrz.document_front", "skipped"), check("document.fields.document_front", "pass"),
			check("document.type.document_front", "pass"), check("document.mrz.document_back", "pass"),
			check("document.fields.document_back", "pass"), check("document.type.document_back", "pass"),
			check("face.selfie_document", "pass"),
		}, extra...),
	}
}

func findCheck(cs []schemas.Check, name string) *schemas.Check {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func TestDefaultPolicy(t *testing.T) {
	p := DefaultPolicy(flow.Default())
	if p.Version != "2026-11-26.1" || len(p.Flows) != 5 {
		t.Fatalf("policy = %+v", p)
	}
	want := map[string][]string{
		"chip_id_card": {"quality.document_front", "quality.document_back", "quality.selfie",
			"chip.passive_authentication", "chip.active_authentication",
			"document.fields.document_front", "document.type.document_front", "document.mrz.document_back",
			"liveness.passive", "face.selfie_chip", "face.selfie_document",
			"fraud.blocklist_id", "fraud.duplicate_face", "fraud.blocklist_face", "fraud.presentation_attack", "fraud.injection_signals.document_front", "fraud.injection_signals.document_back",
			"fraud.injection_signals.selfie", "fraud.tamper.document_front", "fraud.tamper.document_back"},
		"passport": {"quality.passport", "quality.selfie", // nfc is optional: the chip is not awaited
			"document.mrz.passport", "document.fields.passport",
			"liveness.passive", "face.selfie_document",
			"fraud.blocklist_id", "fraud.duplicate_face", "fraud.blocklist_face", "fraud.presentation_attack", "fraud.injection_signals.passport", "fraud.injection_signals.selfie", "fraud.tamper.passport"},
		"nfc_only": {"quality.selfie", "chip.passive_authentication", "chip.active_authentication", "liveness.passive",
			"face.selfie_chip", "fraud.blocklist_id", "fraud.duplicate_face", "fraud.blocklist_face", "fraud.presentation_attack", "fraud.injection_signals.selfie"},
		"id_card": {"quality.document_front", "quality.document_back", "quality.selfie",
			"document.fields.document_front", "document.type.document_front", "document.mrz.document_back",
			"liveness.passive", "face.selfie_document",
			"fraud.blocklist_id", "fraud.duplicate_face", "fraud.blocklist_face", "fraud.presentation_attack", "fraud.injection_signals.document_front", "fraud.injection_signals.document_back",
			"fraud.injection_signals.selfie", "fraud.tamper.document_front", "fraud.tamper.document_back"},
		"vehicle_registration": {"quality.document_front", "quality.document_back",
			"document.fields.document_front", "document.type.document_front", "document.type.document_back", // no MRZ on its back
			"fraud.blocklist_id", "fraud.duplicate_face", "fraud.blocklist_face", "fraud.presentation_attack", "fraud.injection_signals.document_front", "fraud.injection_signals.document_back",
			"fraud.tamper.document_front", "fraud.tamper.document_back"},
	}
	types := map[string][]string{
		"chip_id_card": {"chip_id_card"}, "passport": {"passport"}, "nfc_only": {"nfc_only"},
		"id_card": {"legacy_id_card", "id_card", "chip_id_card"}, "vehicle_registration": {"vehicle_registration"},
	}
	for name, want := range types {
		if got := p.Flows[name].DocumentTypes; !slices.Equal(got, want) {
			t.Errorf("%s accepts document types %v, want %v", name, got, want)
		}
	}
	for name, await := range want {
		if got := p.Flows[name].Await; !slices.Equal(got, await) {
			t.Errorf("%s awaits %v, want %v", name, got, await)
		}
		if len(p.Flows[name].Soft) != 0 {
			t.Errorf("%s has soft checks", name)
		}
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy([]byte(`
version: "2026-12-01.1"
flows:
  chip_id_card:
    await: ["quality.*", "chip.passive_authentication"]
    soft: ["fraud.device_*"]
`))
	if err != nil {
		t.Fatal(err)
	}
	fp := p.Flows["chip_id_card"]
	if p.Version != "2026-12-01.1" || len(fp.Await) != 2 || fp.Soft[0] != "fraud.device_*" {
		t.Fatalf("policy = %+v", p)
	}
	for name, bad := range map[string]string{
		"no version":  "flows: {}\n",
		"bad glob":    "version: v\nflows:\n  x:\n    await: [\"quality.[\"]\n",
		"empty glob":  "version: v\nflows:\n  x:\n    soft: [\"\"]\n",
		"unknown key": "version: v\nflows:\n  x:\n    awaits: [a]\n",
		"malformed":   "version: [",
	} {
		if _, err := ParsePolicy([]byte(bad)); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
	if _, err := ParsePolicy([]byte("flows: {}\n")); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("err = %v, want ErrInvalidPolicy", err)
	}
}

func TestDecideWaits(t *testing.T) {
	p := DefaultPolicy(flow.Default())
	notProcessing := processing()
	notProcessing.Status = schemas.StatusCapturing
	missing := processing()
	missing.Checks = missing.Checks[:2] // no quality.selfie
	noChip := processing()
	noChip.Checks = noChip.Checks[:3] // quality only: the nfc capture is accepted, the chip group has not answered
	nfcOnly := processing()
	nfcOnly.Flow, nfcOnly.Steps = "nfc_only", []string{"nfc", "selfie"}
	nfcOnlyNoChip := processing()
	nfcOnlyNoChip.Flow, nfcOnlyNoChip.Steps = "nfc_only", []string{"nfc", "selfie"}
	nfcOnlyNoChip.Checks = []schemas.Check{check("quality.selfie", "pass"), check("chip.passive_authentication", "pass")}
	passport := &schemas.SessionState{
		Envelope: schemas.Envelope{SessionID: sid}, Status: schemas.StatusProcessing, Flow: "passport",
		Steps: []string{"passport", "selfie"},
		Checks: []schemas.Check{check("quality.passport", "pass"), check("quality.selfie", "pass"), check("liveness.passive", "pass"),
			check("document.mrz.passport", "pass"), check("document.fields.passport", "pass"), check("document.type.passport", "pass"),
			check("face.selfie_document", "pass"), check("fraud.blocklist_id", "pass"),
			check("fraud.injection_signals.passport", "pass"), check("fraud.injection_signals.selfie", "pass"),
			check("fraud.tamper.passport", "pass"),
			check("fraud.duplicate_face", "pass"), check("fraud.blocklist_face", "pass"), check("fraud.presentation_attack", "pass")},
	}
	without := func(st *schemas.SessionState, prefix string) *schemas.SessionState {
		c := *st
		c.Checks = slices.DeleteFunc(slices.Clone(st.Checks), func(c schemas.Check) bool { return strings.HasPrefix(c.Name, prefix) })
		return &c
	}
	idCard := processing()
	idCard.Flow, idCard.Steps = "id_card", []string{"document_front", "document_back", "selfie"}
	vehicle := &schemas.SessionState{
		Envelope: schemas.Envelope{SessionID: sid}, Status: schemas.StatusProcessing, Flow: "vehicle_registration",
		Steps: []string{"document_front", "document_back"},
		Checks: []schemas.Check{check("quality.document_front", "pass"), check("quality.document_back", "pass"),
			check("document.mrz.document_front", "skipped"), check("document.fields.document_front", "pass"),
			check("document.type.document_front", "pass"), check("document.mrz.document_back", "skipped"),
			check("document.fields.document_back", "skipped"), check("document.type.document_back", "warn"),
			check("fraud.blocklist_id", "skipped"),
			check("fraud.duplicate_face", "skipped"), check("fraud.blocklist_face", "skipped"), check("fraud.presentation_attack", "skipped"),
			check("fraud.injection_signals.document_front", "pass"), check("fraud.injection_signals.document_back", "pass"),
			check("fraud.tamper.document_front", "pass"), check("fraud.tamper.document_back", "skipped")},
	}
	globPolicy := Policy{Version: "v", Flows: map[string]FlowPolicy{"chip_id_card": {Await: []string{"quality.*", "fraud.*"}}}}
	noFraud := processing()
	noFraud.Checks = slices.DeleteFunc(noFraud.Checks, func(c schemas.Check) bool { return strings.HasPrefix(c.Name, "fraud.") })

	tests := []struct {
		name string
		p    Policy
		st   *schemas.SessionState
		want bool
	}{
		{"nil snapshot", p, nil, false},
		{"not processing", p, notProcessing, false},
		{"awaited check missing", p, missing, false},
		{"all awaited present", p, processing(), true},
		{"chip checks awaited", p, noChip, false},
		{"nfc_only with chip checks", p, nfcOnly, true},
		{"nfc_only without active authentication", p, nfcOnlyNoChip, false},
		{"passport does not await the optional chip", p, passport, true},
		{"passport awaits its OCR checks", p, without(passport, "document."), false},
		{"passport awaits the selfie-document match", p, without(passport, "face.selfie_document"), false},
		{"passport awaits the fraud session checks", p, without(passport, "fraud.blocklist_id"), false},
		{"passport awaits the duplicate-face check", p, without(passport, "fraud.duplicate_face"), false},
		{"chip_id_card awaits the face blocklist check", p, without(processing(), "fraud.blocklist_face"), false},
		{"chip_id_card awaits the presentation-attack check", p, without(processing(), "fraud.presentation_attack"), false},
		{"chip_id_card awaits the back's MRZ", p, without(processing(), "document.mrz.document_back"), false},
		{"chip_id_card awaits the selfie-document match", p, without(processing(), "face.selfie_document"), false},
		{"id_card with every awaited check", p, idCard, true},
		{"id_card awaits the front's fields", p, without(idCard, "document.fields.document_front"), false},
		{"id_card awaits the fraud session checks", p, without(idCard, "fraud.blocklist_id"), false},
		{"vehicle_registration with every awaited check", p, vehicle, true},
		{"vehicle_registration awaits the front's type", p, without(vehicle, "document.type.document_front"), false},
		{"vehicle_registration awaits the back's read", p, without(vehicle, "document.type.document_back"), false},
		{"vehicle_registration awaits the fraud session checks", p, without(vehicle, "fraud.blocklist_id"), false},
		{"vehicle_registration awaits the skipped face checks", p, without(vehicle, "fraud.duplicate_face"), false},
		{"glob awaits a fraud check", globPolicy, noFraud, false},
		{"glob satisfied", globPolicy, processing(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := Decide(tt.p, tt.st)
			if ok != tt.want || (ok && d == nil) || (!ok && d != nil) {
				t.Fatalf("Decide = %v, %v; want ok %v", d, ok, tt.want)
			}
		})
	}
}

func TestDecideUnknownFlowAwaitsQualityOfItsImageSteps(t *testing.T) {
	st := processing()
	st.Flow = "custom"
	p := Policy{Version: "v"}
	if _, ok := Decide(p, st); !ok {
		t.Fatal("not decided with every quality check present")
	}
	st.Checks = st.Checks[1:]
	if _, ok := Decide(p, st); ok {
		t.Fatal("decided without quality.document_front")
	}
}

func TestDecideOutcomes(t *testing.T) {
	p := DefaultPolicy(flow.Default())
	fp := p.Flows["chip_id_card"]
	fp.Soft = []string{"fraud.device_*"}
	p.Flows["chip_id_card"] = fp
	code := "face_mismatch"

	t.Run("all pass verifies", func(t *testing.T) {
		d, _ := Decide(p, processing(check("fraud.blocklist", "pass")))
		if d.Outcome != schemas.StatusVerified || len(d.Reasons) != 0 || len(d.Checks) != 24 {
			t.Fatalf("decision = %+v", d)
		}
	})
	t.Run("hard fail rejects with one reason per failing check", func(t *testing.T) {
		face := check("face.selfie_document", "fail")
		face.ReasonCode = &code
		st := processing(check("fraud.blocklist", "fail"), check("liveness.passive", "warn"))
		st.Checks = slices.DeleteFunc(st.Checks, func(c schemas.Check) bool {
			return c.Name == face.Name || c.Name == "liveness.passive" && c.Status == "pass"
		})
		st.Checks = append([]schemas.Check{face}, st.Checks...)
		d, _ := Decide(p, st)
		if d.Outcome != schemas.StatusRejected {
			t.Fatalf("outcome = %s", d.Outcome)
		}
		if len(d.Reasons) != 2 || d.Reasons[0].Code != "face_mismatch" || d.Reasons[1].Code != "fraud.blocklist" ||
			d.Reasons[0].Message == "" {
			t.Fatalf("reasons = %+v", d.Reasons)
		}
	})
	t.Run("soft fail verifies and warns", func(t *testing.T) {
		st := processing(check("fraud.device_integrity", "fail"))
		d, _ := Decide(p, st)
		if d.Outcome != schemas.StatusVerified || len(d.Reasons) != 0 {
			t.Fatalf("decision = %+v", d)
		}
		if c := findCheck(d.Checks, "fraud.device_integrity"); c == nil || c.Status != schemas.CheckWarn {
			t.Fatalf("soft check = %+v", c)
		}
		if findCheck(st.Checks, "fraud.device_integrity").Status != schemas.CheckFail {
			t.Fatal("Decide modified the snapshot")
		}
	})
}

// TestDecideJudgesDocumentType checks the recognised document type of each document read
// against the types the flow accepts.
func TestDecideJudgesDocumentType(t *testing.T) {
	p := DefaultPolicy(flow.Default())
	withDocs := func(flowName string, types ...string) *schemas.SessionState {
		st := processing()
		st.Flow = flowName
		for i, ty := range types {
			st.Documents = append(st.Documents, schemas.DocumentRead{
				CaptureID: fmt.Sprintf("cap_%d", i), Step: []string{"document_front", "document_back"}[i], DocumentType: ty})
		}
		return st
	}
	tests := []struct {
		name        string
		st          *schemas.SessionState
		outcome     string
		front, back string // status/reason of document.type_expected.<step>
		reported    string // extracted.document_type
	}{
		{"chip card in the chip flow", withDocs("chip_id_card", "chip_id_card", "chip_id_card"), schemas.StatusVerified, "pass/", "pass/", "chip_id_card"},
		{"passport in the chip flow", withDocs("chip_id_card", "passport", "chip_id_card"), schemas.StatusRejected, "fail/" + ReasonDocumentTypeMismatch, "pass/", "chip_id_card"},
		{"9-digit card in the id_card flow", withDocs("id_card", "legacy_id_card", "legacy_id_card"), schemas.StatusVerified, "pass/", "pass/", "legacy_id_card"},
		{"9-digit card in the chip flow", withDocs("chip_id_card", "legacy_id_card", "legacy_id_card"), schemas.StatusRejected,
			"fail/" + ReasonDocumentTypeMismatch, "fail/" + ReasonDocumentTypeMismatch, "chip_id_card"},
		{"unrecognised back", withDocs("chip_id_card", "chip_id_card", "unknown"), schemas.StatusVerified, "pass/", "skipped/" + ReasonDocumentTypeUnknown, "chip_id_card"},
		{"nothing recognised", withDocs("id_card", "unknown", "unknown"), schemas.StatusVerified,
			"skipped/" + ReasonDocumentTypeUnknown, "skipped/" + ReasonDocumentTypeUnknown, "id_card"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := Decide(p, tt.st)
			if !ok {
				t.Fatal("not decided")
			}
			if d.Outcome != tt.outcome {
				t.Errorf("outcome %s, want %s (reasons %+v)", d.Outcome, tt.outcome, d.Reasons)
			}
			for step, want := range map[string]string{"document_front": tt.front, "document_back": tt.back} {
				c := findCheck(d.Checks, DocumentTypeCheckPrefix+step)
				if c == nil {
					t.Fatalf("no %s check", DocumentTypeCheckPrefix+step)
				}
				got := c.Status + "/"
				if c.ReasonCode != nil {
					got += *c.ReasonCode
				}
				if got != want {
					t.Errorf("%s = %s, want %s", c.Name, got, want)
				}
			}
			if d.Extracted.DocumentType != tt.reported {
				t.Errorf("extracted.document_type %q, want %q", d.Extracted.DocumentType, tt.reported)
			}
			if tt.outcome == schemas.StatusRejected && (len(d.Reasons) == 0 || d.Reasons[0].Code != ReasonDocumentTypeMismatch) {
				t.Errorf("reasons %+v do not name %s", d.Reasons, ReasonDocumentTypeMismatch)
			}
		})
	}
}

func TestDecideIsDeterministic(t *testing.T) {
	p := DefaultPolicy(flow.Default())
	st := withIdentity(processing(check("fraud.blocklist", "fail")))
	a, _ := Decide(p, st)
	b, _ := Decide(p, st)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("decisions differ:\n%+v\n%+v", a, b)
	}
	sum := sha256.Sum256([]byte(sid))
	digits := hex.EncodeToString(sum[:])[:24]
	if a.DecisionID != "dec_"+digits || a.Envelope.EventID != "evt_"+digits || ID(sid) != a.DecisionID {
		t.Fatalf("ids = %s %s", a.DecisionID, a.Envelope.EventID)
	}
	if !a.DecidedAt.Equal(st.UpdatedAt) || !a.Envelope.OccurredAt.Equal(st.UpdatedAt) || a.Envelope.Producer != "decision" ||
		a.Envelope.SessionID != sid || a.Envelope.TenantID != "ten_1" || a.PolicyVersion != p.Version || a.Flow != "chip_id_card" {
		t.Fatalf("decision = %+v", a)
	}
}

func TestDefaultPolicyChipOutcomes(t *testing.T) {
	p := DefaultPolicy(flow.Default())
	withReason := func(name, status, code string) schemas.Check {
		c := check(name, status)
		c.ReasonCode = &code
		return c
	}
	tests := []struct {
		name    string
		checks  []schemas.Check // replace the chip checks of processing() by name
		outcome string
		reason  string
	}{
		{"registry match verifies", []schemas.Check{check("chip.registry_identity", "pass")}, schemas.StatusVerified, ""},
		{"registry unavailable (warn) verifies",
			[]schemas.Check{withReason("chip.registry_identity", "warn", "registry_unavailable")}, schemas.StatusVerified, ""},
		{"registry name mismatch rejects",
			[]schemas.Check{withReason("chip.registry_identity", "fail", "name_mismatch")}, schemas.StatusRejected, "name_mismatch"},
		{"tampered data group rejects",
			[]schemas.Check{withReason("chip.passive_authentication", "fail", "dg_hash_mismatch")}, schemas.StatusRejected, "dg_hash_mismatch"},
		{"cloned chip rejects",
			[]schemas.Check{withReason("chip.active_authentication", "fail", "aa_signature_invalid")}, schemas.StatusRejected, "aa_signature_invalid"},
		{"chip without active authentication (skipped) verifies",
			[]schemas.Check{withReason("chip.active_authentication", "skipped", "aa_not_supported")}, schemas.StatusVerified, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := processing()
			for _, c := range tt.checks {
				if i := slices.IndexFunc(st.Checks, func(x schemas.Check) bool { return x.Name == c.Name }); i >= 0 {
					st.Checks[i] = c
				} else {
					st.Checks = append(st.Checks, c)
				}
			}
			d, ok := Decide(p, st)
			if !ok {
				t.Fatal("not decided")
			}
			if d.Outcome != tt.outcome {
				t.Fatalf("outcome = %s, want %s (reasons %+v)", d.Outcome, tt.outcome, d.Reasons)
			}
			if tt.reason != "" && (len(d.Reasons) != 1 || d.Reasons[0].Code != tt.reason) {
				t.Fatalf("reasons = %+v, want %s", d.Reasons, tt.reason)
			}
		})
	}
}
