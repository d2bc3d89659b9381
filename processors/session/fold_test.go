package session

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

const sid = "ses_1"

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func env(id string, sec int) schemas.Envelope {
	return schemas.Envelope{EventID: id, SessionID: sid, TenantID: "ten_1", OccurredAt: at(sec), Producer: "test"}
}

func opened(flowName string, steps ...string) *schemas.SessionEvent {
	return &schemas.SessionEvent{Envelope: env("evt_open", 0), Opened: &schemas.SessionOpened{
		Flow: flowName, Steps: steps, Locale: "en", DataRetention: "service",
		CreatedAt: at(0), ExpiresAt: at(1800), Nonce: []byte{1, 2, 3, 4, 5, 6, 7, 8},
		RequestSHA256: ptr("abc123"),
	}}
}

func idCard() *schemas.SessionEvent {
	return opened("id_card", "document_front", "document_back", "selfie")
}

func capture(step, capID string, sec int) *schemas.CaptureSubmitted {
	return &schemas.CaptureSubmitted{Envelope: env("evt_cap_"+capID, sec), CaptureID: capID, Step: step,
		Blobs: []schemas.BlobRef{{Name: "image", URI: "blob://" + capID, SHA256: "00", Size: 1, MediaType: "image/jpeg"}}}
}

func quality(step, capID string, passed bool, sec int, reasons ...string) *schemas.QualityAssessed {
	return &schemas.QualityAssessed{Envelope: env("evt_q_"+capID, sec), CaptureID: capID, Step: step,
		Passed: passed, Blur: 200, Reasons: reasons, GateVersion: "gate-1"}
}

// qualityAt is quality for a capture received at capturedSec.
func qualityAt(step, capID string, passed bool, sec, capturedSec int) *schemas.QualityAssessed {
	q := quality(step, capID, passed, sec)
	c := at(capturedSec)
	q.CapturedAt = &c
	return q
}

func sessionEv(id string, sec int, mutate func(*schemas.SessionEvent)) *schemas.SessionEvent {
	e := &schemas.SessionEvent{Envelope: env(id, sec)}
	mutate(e)
	return e
}

func cancelled(sec int) *schemas.SessionEvent {
	return sessionEv("evt_cancel", sec, func(e *schemas.SessionEvent) { e.Cancelled = &schemas.SessionCancelled{Reason: "user"} })
}

func expired(sec int) *schemas.SessionEvent {
	e := ExpiredEvent(sid, "ten_1", at(sec))
	return &e
}

func erased(sec int) *schemas.SessionEvent {
	return sessionEv("evt_erase", sec, func(e *schemas.SessionEvent) { e.Erased = &schemas.SessionErased{Reason: "user"} })
}

func decision(outcome string, sec int) *schemas.Decision {
	return &schemas.Decision{Envelope: env("evt_dec_"+outcome, sec), DecisionID: "dec_1", Outcome: outcome,
		PolicyVersion: "p1", Flow: "id_card", DecidedAt: at(sec),
		Extracted: &schemas.Extracted{DocumentType: "id_card", FullName: ptr("A"),
			Sources: map[string][]string{"full_name": {"ocr"}}},
		Checks: []schemas.Check{{Name: "data.full_name_consistency", Status: schemas.CheckPass, Source: "decision"}}}
}

func check(name, status string) schemas.Check {
	return schemas.Check{Name: name, Status: status, Source: "test"}
}

// faceCheck is a passing selfie ↔ chip match about the selfie capture captureID.
func faceCheck(captureID string) schemas.Check {
	c := check("face.selfie_chip", "pass")
	c.CaptureID = &captureID
	return c
}

// acceptedIDCard is the event sequence of an id_card session whose three steps are accepted.
func acceptedIDCard() []any {
	return []any{
		idCard(),
		capture("document_front", "cap_f", 1), quality("document_front", "cap_f", true, 2),
		capture("document_back", "cap_b", 3), quality("document_back", "cap_b", true, 4),
		capture("selfie", "cap_s", 5), quality("selfie", "cap_s", true, 6),
	}
}

func foldAll(t *testing.T, events []any) *schemas.SessionState {
	t.Helper()
	var st *schemas.SessionState
	for i, e := range events {
		next, changed := Fold(st, e)
		if !changed {
			t.Fatalf("setup event %d (%T) did not change the state", i, e)
		}
		st = next
	}
	return st
}

func findCheck(st *schemas.SessionState, name string) *schemas.Check {
	for i := range st.Checks {
		if st.Checks[i].Name == name {
			return &st.Checks[i]
		}
	}
	return nil
}

func captureOf(st *schemas.SessionState, step string) *schemas.StepCapture {
	for i := range st.Captures {
		if st.Captures[i].Step == step {
			return &st.Captures[i]
		}
	}
	return nil
}

func TestFold(t *testing.T) {
	tests := []struct {
		name        string
		setup       []any
		event       any
		wantChanged bool
		check       func(t *testing.T, st *schemas.SessionState)
	}{
		{name: "opened creates open state", event: idCard(), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Status != schemas.StatusOpen || st.Version != 1 || st.Flow != "id_card" ||
					len(st.Steps) != 3 || !st.ExpiresAt.Equal(at(1800)) || st.Envelope.EventID != "evt_open" ||
					!st.UpdatedAt.Equal(at(0)) || st.RequestSHA256 == nil || *st.RequestSHA256 != "abc123" {
					t.Fatalf("state = %+v", st)
				}
			}},
		{name: "second opened is ignored", setup: []any{idCard()},
			event: opened("passport", "passport", "selfie")},
		{name: "capture for unknown session ignored", event: capture("document_front", "cap_f", 1)},
		{name: "quality for unknown session ignored", event: quality("document_front", "cap_f", true, 1)},
		{name: "fraud for unknown session ignored", event: &schemas.FraudAssessed{Envelope: env("evt_f", 1), Checks: []schemas.Check{check("fraud.x", "pass")}}},
		{name: "decision for unknown session ignored", event: decision("verified", 1)},
		{name: "erasure of unknown session ignored", event: erased(1)},
		{name: "unsupported event ignored", setup: []any{idCard()}, event: "not an event"},
		{name: "nil event ignored", setup: []any{idCard()}, event: (*schemas.CaptureSubmitted)(nil)},
		{name: "first capture moves to capturing", setup: []any{idCard()},
			event: capture("document_front", "cap_f", 1), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				c := captureOf(st, "document_front")
				if st.Status != schemas.StatusCapturing || c == nil || c.Status != schemas.CaptureSubmittedStatus ||
					c.CaptureID != "cap_f" || !c.SubmittedAt.Equal(at(1)) || st.Version != 2 || !st.UpdatedAt.Equal(at(1)) {
					t.Fatalf("state = %+v", st)
				}
			}},
		{name: "capture for a step not in the flow ignored", setup: []any{idCard()}, event: capture("passport", "cap_p", 1)},
		{name: "optional nfc of passport accepted at once",
			setup: []any{opened("passport", "passport", "selfie")}, event: capture("nfc", "cap_n", 1), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if c := captureOf(st, "nfc"); c == nil || c.Status != schemas.CaptureAccepted {
					t.Fatalf("nfc capture = %+v", c)
				}
			}},
		{name: "captures kept in flow order",
			setup: []any{idCard(), capture("selfie", "cap_s", 1)}, event: capture("document_front", "cap_f", 2), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if len(st.Captures) != 2 || st.Captures[0].Step != "document_front" || st.Captures[1].Step != "selfie" {
					t.Fatalf("captures = %+v", st.Captures)
				}
			}},
		{name: "quality pass accepts and adds check",
			setup: []any{idCard(), capture("document_front", "cap_f", 1)},
			event: quality("document_front", "cap_f", true, 2), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				c := captureOf(st, "document_front")
				ch := findCheck(st, "quality.document_front")
				if c.Status != schemas.CaptureAccepted || c.Quality == nil || st.Status != schemas.StatusCapturing {
					t.Fatalf("capture = %+v status %s", c, st.Status)
				}
				if ch == nil || ch.Status != schemas.CheckPass || ch.ReasonCode != nil || *ch.Score != 200 ||
					ch.Source != "quality" || *ch.CaptureID != "cap_f" {
					t.Fatalf("check = %+v", ch)
				}
			}},
		{name: "quality fail asks for retake with first reason",
			setup: []any{idCard(), capture("document_front", "cap_f", 1)},
			event: quality("document_front", "cap_f", false, 2, "blurry", "glare"), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				ch := findCheck(st, "quality.document_front")
				if captureOf(st, "document_front").Status != schemas.CaptureRetake || ch.Status != schemas.CheckFail || *ch.ReasonCode != "blurry" {
					t.Fatalf("state = %+v", st)
				}
			}},
		{name: "quality for a replaced capture ignored",
			setup: []any{idCard(), capture("document_front", "cap_old", 1), capture("document_front", "cap_new", 2)},
			event: qualityAt("document_front", "cap_old", true, 3, 1)},
		{name: "quality consumed before its capture stands for it",
			setup: []any{idCard()}, event: qualityAt("document_front", "cap_f", true, 3, 2), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				c := captureOf(st, "document_front")
				if st.Status != schemas.StatusCapturing || c == nil || c.CaptureID != "cap_f" || c.Status != schemas.CaptureAccepted || !c.SubmittedAt.Equal(at(2)) {
					t.Fatalf("state = %s, capture = %+v", st.Status, c)
				}
			}},
		{name: "capture consumed after its quality keeps the verdict",
			setup: []any{idCard(), qualityAt("document_front", "cap_f", true, 3, 2)}, event: capture("document_front", "cap_f", 2),
			wantChanged: false},
		{name: "older capture consumed after a newer one's quality ignored",
			setup: []any{idCard(), qualityAt("document_front", "cap_new", true, 5, 4)}, event: capture("document_front", "cap_old", 1)},
		{name: "second quality answer for a capture ignored",
			setup: []any{idCard(), capture("document_front", "cap_f", 1), quality("document_front", "cap_f", false, 2, "blurry")},
			event: quality("document_front", "cap_f", true, 3)},
		{name: "retake then new capture then accept replaces the check",
			setup: []any{idCard(), capture("document_front", "cap_1", 1), quality("document_front", "cap_1", false, 2, "blurry"),
				capture("document_front", "cap_2", 3)},
			event: quality("document_front", "cap_2", true, 4), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				n := 0
				for _, c := range st.Checks {
					if c.Name == "quality.document_front" {
						n++
						if c.Status != schemas.CheckPass || *c.CaptureID != "cap_2" {
							t.Fatalf("check = %+v", c)
						}
					}
				}
				if n != 1 || len(st.Captures) != 1 || st.Captures[0].Status != schemas.CaptureAccepted {
					t.Fatalf("checks %d captures %+v", n, st.Captures)
				}
			}},
		{name: "last required step accepted moves to processing",
			setup: acceptedIDCard()[:6], event: quality("selfie", "cap_s", true, 6), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Status != schemas.StatusProcessing {
					t.Fatalf("status = %s", st.Status)
				}
			}},
		{name: "nfc as last required step moves to processing",
			setup: []any{opened("nfc_only", "nfc", "selfie"), capture("selfie", "cap_s", 1), quality("selfie", "cap_s", true, 2)},
			event: capture("nfc", "cap_n", 3), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Status != schemas.StatusProcessing {
					t.Fatalf("status = %s", st.Status)
				}
			}},
		{name: "capture while processing ignored", setup: acceptedIDCard(), event: capture("selfie", "cap_s2", 7)},
		{name: "document read folds document and checks", setup: acceptedIDCard(),
			event: &schemas.DocumentRead{Envelope: env("evt_doc", 7), CaptureID: "cap_f", Step: "document_front",
				Fields: []schemas.Field{{Name: "full_name", Value: "A"}}, Checks: []schemas.Check{check("document.type", "pass")}},
			wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if len(st.Documents) != 1 || st.Documents[0].Step != "document_front" || findCheck(st, "document.type") == nil {
					t.Fatalf("state = %+v", st)
				}
			}},
		{name: "document of a replaced capture ignored",
			setup: []any{idCard(), capture("document_front", "cap_old", 1), capture("document_front", "cap_new", 2)},
			event: &schemas.DocumentRead{Envelope: env("evt_doc", 3), CaptureID: "cap_old", Step: "document_front"}},
		{name: "latest document per step",
			setup: append(acceptedIDCard(), &schemas.DocumentRead{Envelope: env("evt_doc1", 7), CaptureID: "cap_f", Step: "document_front",
				Fields: []schemas.Field{{Name: "full_name", Value: "A"}}}),
			event: &schemas.DocumentRead{Envelope: env("evt_doc2", 8), CaptureID: "cap_f", Step: "document_front",
				Fields: []schemas.Field{{Name: "full_name", Value: "B"}}},
			wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if len(st.Documents) != 1 || st.Documents[0].Fields[0].Value != "B" {
					t.Fatalf("documents = %+v", st.Documents)
				}
			}},
		{name: "fraud check replaces by name",
			setup: append(acceptedIDCard(), &schemas.FraudAssessed{Envelope: env("evt_f1", 7), Checks: []schemas.Check{check("fraud.blocklist", "pass")}}),
			event: &schemas.FraudAssessed{Envelope: env("evt_f2", 8), Checks: []schemas.Check{check("fraud.blocklist", "fail")}}, wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if c := findCheck(st, "fraud.blocklist"); c.Status != "fail" || len(st.Checks) != 4 {
					t.Fatalf("checks = %+v", st.Checks)
				}
			}},
		{name: "chip, liveness and faces fold payloads",
			setup: append(acceptedIDCard(),
				&schemas.ChipVerified{Envelope: env("evt_chip", 7), Checks: []schemas.Check{check("chip.passive_authentication", "pass")}},
				&schemas.LivenessAssessed{Envelope: env("evt_live", 8), CaptureID: "cap_s", Score: 0.9, Checks: []schemas.Check{check("liveness.passive", "pass")}}),
			event: &schemas.FacesMatched{Envelope: env("evt_faces", 9), Checks: []schemas.Check{check("face.selfie_document", "pass")}}, wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Chip == nil || st.Liveness == nil || st.Faces == nil || len(st.Checks) != 6 || st.Version != 10 {
					t.Fatalf("state = %+v", st)
				}
			}},
		{name: "face match of a replaced selfie ignored",
			setup: acceptedIDCard(),
			event: &schemas.FacesMatched{Envelope: env("evt_faces", 9), Checks: []schemas.Check{faceCheck("cap_other")}}},
		{name: "face match of the current selfie folded",
			setup: acceptedIDCard(), wantChanged: true,
			event: &schemas.FacesMatched{Envelope: env("evt_faces", 9), Checks: []schemas.Check{faceCheck("cap_s")}},
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Faces == nil || st.Faces.Envelope.EventID != "evt_faces" {
					t.Fatalf("faces = %+v", st.Faces)
				}
			}},
		{name: "liveness of a replaced selfie ignored",
			setup: acceptedIDCard(),
			event: &schemas.LivenessAssessed{Envelope: env("evt_live", 8), CaptureID: "cap_other"}},
		{name: "decision verifies", setup: acceptedIDCard(), event: decision("verified", 10), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Status != schemas.StatusVerified || st.Decision == nil || st.Decision.DecisionID != "dec_1" ||
					st.DecidedAt == nil || !st.DecidedAt.Equal(at(10)) || findCheck(st, "data.full_name_consistency") == nil {
					t.Fatalf("state = %+v", st)
				}
			}},
		{name: "decision rejects", setup: acceptedIDCard(), event: decision("rejected", 10), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Status != schemas.StatusRejected {
					t.Fatalf("status = %s", st.Status)
				}
			}},
		{name: "second decision ignored", setup: append(acceptedIDCard(), decision("verified", 10)), event: decision("rejected", 11)},
		{name: "decision with unknown outcome ignored", setup: acceptedIDCard(), event: decision("maybe", 10)},
		{name: "decision after cancel ignored", setup: []any{idCard(), cancelled(1)}, event: decision("verified", 10)},
		{name: "checks after a decision ignored", setup: append(acceptedIDCard(), decision("verified", 10)),
			event: &schemas.FraudAssessed{Envelope: env("evt_f", 11), Checks: []schemas.Check{check("fraud.late", "fail")}}},
		{name: "cancel while capturing", setup: []any{idCard(), capture("selfie", "cap_s", 1)}, event: cancelled(2), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Status != schemas.StatusCancelled {
					t.Fatalf("status = %s", st.Status)
				}
			}},
		{name: "cancel after decision ignored", setup: append(acceptedIDCard(), decision("verified", 10)), event: cancelled(11)},
		{name: "expire from open", setup: []any{idCard()}, event: expired(1800), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Status != schemas.StatusExpired || st.Envelope.Producer != "session" {
					t.Fatalf("state = %+v", st)
				}
			}},
		{name: "expire from capturing", setup: []any{idCard(), capture("selfie", "cap_s", 1)}, event: expired(1800), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st.Status != schemas.StatusExpired {
					t.Fatalf("status = %s", st.Status)
				}
			}},
		{name: "expire while processing ignored", setup: acceptedIDCard(), event: expired(1800)},
		{name: "expire after decision ignored", setup: append(acceptedIDCard(), decision("rejected", 10)), event: expired(1800)},
		{name: "expire after cancel ignored", setup: []any{idCard(), cancelled(1)}, event: expired(1800)},
		{name: "capture after expiry ignored", setup: []any{idCard(), expired(1800)}, event: capture("selfie", "cap_s", 1801)},
		{name: "erasure tombstones", setup: append(acceptedIDCard(), decision("verified", 10)), event: erased(20), wantChanged: true,
			check: func(t *testing.T, st *schemas.SessionState) {
				if st != nil {
					t.Fatalf("state = %+v, want nil", st)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st *schemas.SessionState
			if tt.setup != nil {
				st = foldAll(t, tt.setup)
			}
			before := snapshot(t, st)
			next, changed := Fold(st, tt.event)
			if changed != tt.wantChanged {
				t.Fatalf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if got := snapshot(t, st); !reflect.DeepEqual(got, before) {
				t.Fatal("Fold mutated its input state")
			}
			if !changed {
				if next != st {
					t.Fatal("unchanged fold returned another state")
				}
				return
			}
			if next != nil && st != nil && next.Version != st.Version+1 {
				t.Fatalf("version %d -> %d", st.Version, next.Version)
			}
			tt.check(t, next)
		})
	}
}

// snapshot encodes st with the real codec, to detect mutation of nested fields.
func snapshot(t *testing.T, st *schemas.SessionState) []byte {
	t.Helper()
	if st == nil {
		return nil
	}
	b, err := newCodec(t).Encode(schemas.TopicSessionState, st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fullSequence() []any {
	return append(acceptedIDCard(),
		&schemas.DocumentRead{Envelope: env("evt_doc", 7), CaptureID: "cap_f", Step: "document_front",
			Fields: []schemas.Field{{Name: "full_name", Value: "A"}}, Checks: []schemas.Check{check("document.type", "pass")}},
		&schemas.LivenessAssessed{Envelope: env("evt_live", 8), CaptureID: "cap_s", Checks: []schemas.Check{check("liveness.passive", "pass")}},
		&schemas.FacesMatched{Envelope: env("evt_faces", 9), Checks: []schemas.Check{check("face.selfie_document", "pass")}},
		&schemas.FraudAssessed{Envelope: env("evt_fraud", 10), Checks: []schemas.Check{check("fraud.blocklist", "pass")}},
		decision("verified", 11),
		cancelled(12),
		expired(1800),
	)
}

func TestFoldReplayIsIdempotent(t *testing.T) {
	events := fullSequence()
	var once *schemas.SessionState
	for _, e := range events {
		once, _ = Fold(once, e)
	}
	// Every event delivered twice in a row (at-least-once upstream) gives the same state.
	var twice *schemas.SessionState
	for i, e := range events {
		twice, _ = Fold(twice, e)
		if again, changed := Fold(twice, e); changed || again != twice {
			t.Fatalf("event %d (%T) changed the state when folded again", i, e)
		}
	}
	if !reflect.DeepEqual(once, twice) {
		t.Fatalf("states differ:\n%+v\n%+v", once, twice)
	}
	// Replaying the whole history onto the final state changes nothing.
	for i, e := range events {
		if _, changed := Fold(once, e); changed {
			t.Fatalf("replayed event %d (%T) changed the final state", i, e)
		}
	}
	if once.Status != schemas.StatusVerified || once.Version != 12 {
		t.Fatalf("final status %s version %d", once.Status, once.Version)
	}
}

// TestFoldRetakeDropsResultsOfReplacedCapture retakes the selfie and the document front after
// their results were folded: what was derived from the replaced captures leaves the state
// (so a policy awaiting checks by name waits for the new ones), the rest stays.
func TestFoldRetakeDropsResultsOfReplacedCapture(t *testing.T) {
	about := func(c schemas.Check, captureID string) schemas.Check {
		c.CaptureID = ptr(captureID)
		return c
	}
	// Front and selfie accepted and assessed; the back not captured yet (a session takes
	// captures only until every required step has an accepted one).
	base := []any{
		idCard(),
		capture("document_front", "cap_f", 1), quality("document_front", "cap_f", true, 2),
		capture("selfie", "cap_s", 5), quality("selfie", "cap_s", true, 6),
		&schemas.DocumentRead{Envelope: env("evt_doc", 7), CaptureID: "cap_f", Step: "document_front",
			Checks: []schemas.Check{about(check("document.type.document_front", "pass"), "cap_f")}},
		&schemas.LivenessAssessed{Envelope: env("evt_live", 8), CaptureID: "cap_s", Checks: []schemas.Check{about(check("liveness.passive", "pass"), "cap_s")}},
		&schemas.FacesMatched{Envelope: env("evt_faces", 9), Checks: []schemas.Check{faceCheck("cap_s")}},
	}
	st := foldAll(t, base)
	if st.Status != schemas.StatusCapturing || st.Liveness == nil || st.Faces == nil || len(st.Documents) != 1 {
		t.Fatalf("before the retakes: %+v", st)
	}
	names := func(st *schemas.SessionState) []string {
		var out []string
		for _, c := range st.Checks {
			out = append(out, c.Name)
		}
		slices.Sort(out)
		return out
	}

	selfie := foldAll(t, append(slices.Clone(base), capture("selfie", "cap_s2", 20)))
	if selfie.Liveness != nil || selfie.Faces != nil || len(selfie.Documents) != 1 || selfie.Status != schemas.StatusCapturing {
		t.Errorf("after a selfie retake: liveness %v faces %v documents %d status %s", selfie.Liveness, selfie.Faces, len(selfie.Documents), selfie.Status)
	}
	want := []string{"document.type.document_front", "quality.document_front"}
	if got := names(selfie); !slices.Equal(got, want) {
		t.Errorf("checks after a selfie retake = %v, want %v", got, want)
	}

	// The retake's assessment consumed before its capture replaces the capture just the same.
	front := foldAll(t, append(slices.Clone(base), qualityAt("document_front", "cap_f2", true, 21, 20)))
	if len(front.Documents) != 0 || front.Liveness == nil || front.Faces == nil {
		t.Errorf("after a front retake: documents %+v liveness %v faces %v", front.Documents, front.Liveness, front.Faces)
	}
	want = []string{"face.selfie_chip", "liveness.passive", "quality.document_front", "quality.selfie"}
	if got := names(front); !slices.Equal(got, want) {
		t.Errorf("checks after a front retake = %v, want %v", got, want)
	}
	if c := captureOf(front, "document_front"); c == nil || c.CaptureID != "cap_f2" {
		t.Errorf("front capture = %+v", c)
	}
}
