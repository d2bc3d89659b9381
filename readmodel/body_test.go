package readmodel

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

func TestDataGetBodyMapping(t *testing.T) {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.FixedZone("ICT", 7*3600))
	decided := created.Add(5 * time.Minute)
	score, thr, rc, mv := 0.91, 0.8, "face_mismatch", "fm-1"
	name, id := "NGUYỄN VĂN A", "001099012345"
	ref := "ref-9"
	st := &schemas.SessionState{
		Envelope: schemas.Envelope{SessionID: "ses_x", TenantID: "acme"},
		Status:   schemas.StatusRejected, Flow: "chip_id_card", ReferenceID: &ref,
		Steps:     []string{"document_front", "document_back", "nfc", "selfie"},
		CreatedAt: created, ExpiresAt: created.Add(30 * time.Minute), DecidedAt: &decided,
		Captures: []schemas.StepCapture{
			{Step: "document_front", CaptureID: "cap_1", Status: "accepted"},
			{Step: "selfie", CaptureID: "cap_2", Status: "retake"},
		},
		Checks: []schemas.Check{
			{Name: "chip.passive_authentication", Status: "pass", Source: "chip"},
			{Name: "face.selfie_document", Status: "fail", Score: &score, Threshold: &thr, ReasonCode: &rc, ModelVersion: &mv},
		},
		Decision: &schemas.DecisionResult{DecisionID: "dec_1", Outcome: "rejected", PolicyVersion: "2026-11",
			Reasons:   []schemas.Reason{{Code: "face_mismatch", Message: "faces differ"}},
			Extracted: &schemas.Extracted{DocumentType: "chip_id_card", IDNumber: &id, FullName: &name, Sources: map[string][]string{"full_name": {"ocr", "chip"}}},
		},
	}
	raw, err := json.Marshal(DataGetBody(st, created.Add(time.Hour), true))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"session_id":"ses_x","flow":"chip_id_card","reference_id":"ref-9","status":"rejected",
	"created_at":"2026-11-22T03:00:00Z","expires_at":"2026-11-22T03:30:00Z","decided_at":"2026-11-22T03:05:00Z",
	"steps":{"document_front":{"status":"accepted","capture_id":"cap_1"},"document_back":{"status":"pending"},
	         "nfc":{"status":"pending"},"selfie":{"status":"retake","capture_id":"cap_2"}},
	"decision":{"decided_by":"policy","outcome":"rejected","policy_version":"2026-11","reasons":[{"code":"face_mismatch","message":"faces differ"}]},
	"checks":[{"name":"chip.passive_authentication","status":"pass","score":null,"threshold":null,"reason_code":null,"model_version":null},
	          {"name":"face.selfie_document","status":"fail","score":0.91,"threshold":0.8,"reason_code":"face_mismatch","model_version":"fm-1"}],
	"extracted":{"document_type":"chip_id_card","id_number":"001099012345","full_name":"NGUYỄN VĂN A","date_of_birth":null,"sex":null,
	  "nationality":null,"place_of_origin":null,"place_of_residence":null,"issue_date":null,"expiry_date":null,"mrz":null,
	  "sources":{"full_name":["ocr","chip"]}}}`
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("Data Get body\n got %s\nwant %s", gb, wb)
	}

	sdk, _ := json.Marshal(DataGetBody(st, created, false))
	var sm map[string]any
	_ = json.Unmarshal(sdk, &sm)
	if len(sm) != 3 || sm["status"] != "rejected" || sm["steps"] == nil {
		t.Errorf("sdk view %s", sdk)
	}
}

func TestDataGetBodyBeforeDecision(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	st := &schemas.SessionState{Envelope: schemas.Envelope{SessionID: "ses_y"}, Status: schemas.StatusCapturing,
		CreatedAt: now, ExpiresAt: now.Add(time.Minute)}
	raw, _ := json.Marshal(DataGetBody(st, now, true))
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for _, k := range []string{"decision", "extracted", "decided_at", "reference_id"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s = %v, want present and null", k, v)
		}
	}
	if c, ok := m["checks"].([]any); !ok || len(c) != 0 {
		t.Errorf("checks %v, want []", m["checks"])
	}
	if m["status"] != "capturing" {
		t.Errorf("status %v", m["status"])
	}
	if got := DataGetBody(st, now.Add(time.Minute), true).Status; got != "expired" {
		t.Errorf("status at expires_at %q, want expired", got)
	}
	st.Status = schemas.StatusProcessing
	if got := DataGetBody(st, now.Add(time.Hour), true).Status; got != "processing" {
		t.Errorf("processing past expiry reported %q", got)
	}
}
