package fraud

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/idnumber"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

var hashKey = []byte("test-token-secret")

const (
	tenant = "acme"
	sid    = "ses_aaaaaaaaaaaaaaaaaaaaaaaaaa"
)

// memBlocklist and memSightings are in-test indexes for handler tests without a broker
// (the embedded-broker tests use Blocklist and CaptureIndex).
type memBlocklist map[string]string // tenant|hash → entry id

func (m memBlocklist) WaitReady(context.Context) error { return nil }
func (m memBlocklist) Lookup(t, h string) (string, bool) {
	id, ok := m[t+"|"+h]
	return id, ok
}

type memSightings struct {
	mu sync.Mutex
	m  map[string]Sighting
}

func newMemSightings() *memSightings                    { return &memSightings{m: map[string]Sighting{}} }
func (s *memSightings) WaitReady(context.Context) error { return nil }
func (s *memSightings) First(t, sum string) (Sighting, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[IndexKey(t, sum)]
	return v, ok
}
func (s *memSightings) KeysOfSession(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k, v := range s.m {
		if v.SessionID == id {
			out = append(out, k)
		}
	}
	return out
}

func newCodec(t testing.TB) *schemas.Codec {
	t.Helper()
	c, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type fixture struct {
	t         testing.TB
	codec     *schemas.Codec
	blocklist memBlocklist
	sightings *memSightings
	group     stream.Group
}

func newFixture(t testing.TB, opts ...Option) *fixture {
	t.Helper()
	f := &fixture{t: t, codec: newCodec(t), blocklist: memBlocklist{}, sightings: newMemSightings()}
	g, err := NewGroup(f.codec, hashKey, f.blocklist, f.sightings, opts...)
	if err != nil {
		t.Fatal(err)
	}
	f.group = g
	return f
}

// snapshot returns a processing chip_id_card snapshot whose chip carries the given identity.
func snapshot(sessionID, idNumber, name, dob, sex string) *schemas.SessionState {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	img := func(step, sum string) schemas.StepCapture {
		return schemas.StepCapture{Step: step, CaptureID: "cap_" + step + "_" + sessionID[4:10], Status: schemas.CaptureAccepted,
			Blobs: []schemas.BlobRef{{Name: "image", URI: "fs://x/" + step, SHA256: sum, Size: 10, MediaType: "image/jpeg"}}}
	}
	return &schemas.SessionState{
		Envelope: schemas.Envelope{EventID: "evt_x", SessionID: sessionID, TenantID: tenant, OccurredAt: created.Add(time.Minute), Producer: "session"},
		Version:  7, Status: schemas.StatusProcessing, Flow: "chip_id_card",
		Steps:     []string{"document_front", "document_back", "nfc", "selfie"},
		Nonce:     []byte("12345678"),
		CreatedAt: created, ExpiresAt: created.Add(30 * time.Minute), UpdatedAt: created.Add(time.Minute),
		Captures: []schemas.StepCapture{
			img("document_front", strings.Repeat("a", 63)+sessionID[len(sessionID)-1:]),
			img("document_back", strings.Repeat("b", 63)+sessionID[len(sessionID)-1:]),
			{Step: "nfc", CaptureID: "cap_nfc", Status: schemas.CaptureAccepted},
			img("selfie", strings.Repeat("c", 63)+sessionID[len(sessionID)-1:]),
		},
		Liveness: &schemas.LivenessAssessed{
			Envelope:  schemas.Envelope{EventID: "evt_live_" + sessionID, SessionID: sessionID, TenantID: tenant, OccurredAt: created, Producer: "liveness"},
			CaptureID: "cap_selfie_" + sessionID[4:10], Score: 0.97, Threshold: 0.5, Live: true,
			Signals: map[string]float64{"model": 0.97, "replay": 0, "print": 0.02}, ModelVersion: "fr_liveness.onnx@afa783b7",
		},
		Chip: &schemas.ChipVerified{
			Envelope:  schemas.Envelope{EventID: "evt_chip_cap_nfc", SessionID: sessionID, TenantID: tenant, OccurredAt: created, Producer: "chip"},
			CaptureID: "cap_nfc", DocumentType: "chip_id_card",
			Fields: []schemas.Field{
				{Name: "id_number", Value: idNumber}, {Name: "full_name", Value: name},
				{Name: "date_of_birth", Value: dob}, {Name: "sex", Value: sex},
				{Name: "issue_date", Value: "2021-04-01"}, {Name: "expiry_date", Value: "2035-03-15"},
			},
		},
	}
}

func matchSnapshot(sessionID string) *schemas.SessionState {
	p := persona("match")
	return snapshot(sessionID, p.IDNumber, p.FullName, p.DateOfBirth, p.Sex)
}

func persona(key string) registry.Persona {
	for _, p := range registry.Personas() {
		if p.Key == key {
			return p
		}
	}
	panic("no persona " + key)
}

func (f *fixture) snapshotRecord(st *schemas.SessionState) *stream.Record {
	f.t.Helper()
	b, err := f.codec.Encode(schemas.TopicSessionState, st)
	if err != nil {
		f.t.Fatal(err)
	}
	return &stream.Record{Topic: schemas.TopicSessionState, Key: []byte(st.Envelope.SessionID), Value: b}
}

// run handles a snapshot and returns its FraudAssessed (nil when none).
func (f *fixture) run(st *schemas.SessionState) *schemas.FraudAssessed {
	f.t.Helper()
	outs, err := f.group.Handler(context.Background(), f.snapshotRecord(st))
	if err != nil {
		f.t.Fatalf("handler: %v", err)
	}
	var fa *schemas.FraudAssessed
	for _, o := range outs {
		if o.Topic != schemas.TopicFraud {
			continue
		}
		if fa != nil || string(o.Key) != st.Envelope.SessionID {
			f.t.Fatalf("outputs %+v", outs)
		}
		fa = new(schemas.FraudAssessed)
		if err := f.codec.Decode(schemas.TopicFraud, o.Value, fa); err != nil {
			f.t.Fatal(err)
		}
	}
	return fa
}

func checkOf(t testing.TB, fa *schemas.FraudAssessed, name string) schemas.Check {
	t.Helper()
	if fa == nil {
		t.Fatalf("no FraudAssessed (wanted %s)", name)
	}
	for _, c := range fa.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %s in %+v", name, fa.Checks)
	return schemas.Check{}
}

func reason(c schemas.Check) string {
	if c.ReasonCode == nil {
		return ""
	}
	return *c.ReasonCode
}

func expect(t testing.TB, c schemas.Check, status, reasonCode string) {
	t.Helper()
	if c.Status != status || reason(c) != reasonCode || c.Source != Producer {
		detail := ""
		if c.Detail != nil {
			detail = *c.Detail
		}
		t.Fatalf("%s = %s/%s (%s), want %s/%s", c.Name, c.Status, reason(c), detail, status, reasonCode)
	}
}

func TestGroupDeclaration(t *testing.T) {
	f := newFixture(t)
	if f.group.Name != "fraud" || len(f.group.Inputs) != 2 || f.group.Handler == nil {
		t.Fatalf("group %+v", f.group)
	}
	if _, err := NewGroup(f.codec, nil, f.blocklist, f.sightings); err == nil {
		t.Fatal("empty hash key accepted")
	}
}

func TestSessionChecksOnceWhenProcessingAndReady(t *testing.T) {
	f := newFixture(t, WithRegistry(registry.NewSandbox().Registry()))
	st := matchSnapshot(sid)

	capturing := matchSnapshot(sid)
	capturing.Status = schemas.StatusCapturing
	if fa := f.run(capturing); fa != nil {
		t.Fatalf("assessed a capturing session: %+v", fa)
	}
	noChip := matchSnapshot(sid)
	noChip.Chip = nil
	if fa := f.run(noChip); fa != nil {
		t.Fatalf("assessed before the chip result: %+v", fa)
	}
	noLiveness := matchSnapshot(sid)
	noLiveness.Liveness = nil
	if fa := f.run(noLiveness); fa != nil {
		t.Fatalf("assessed before the selfie's liveness result: %+v", fa)
	}
	oldLiveness := matchSnapshot(sid)
	oldLiveness.Liveness.CaptureID = "cap_selfie_earlier"
	if fa := f.run(oldLiveness); fa != nil {
		t.Fatalf("assessed with the liveness result of an earlier selfie: %+v", fa)
	}

	fa := f.run(st)
	if fa == nil || len(fa.Checks) != len(SessionCheckNames()) || !strings.HasPrefix(fa.Envelope.EventID, EventIDPrefix+sid+"_") ||
		fa.Envelope.Producer != Producer || fa.Envelope.TenantID != tenant {
		t.Fatalf("assessment %+v", fa)
	}
	for i, name := range SessionCheckNames() {
		if fa.Checks[i].Name != name {
			t.Fatalf("check %d is %s, want %s", i, fa.Checks[i].Name, name)
		}
		if name == CheckDuplicateFace || name == CheckBlocklistFace {
			expect(t, fa.Checks[i], schemas.CheckSkipped, ReasonFaceChecksOff) // no WithFaces here
			continue
		}
		expect(t, fa.Checks[i], schemas.CheckPass, "")
	}
	if again := f.run(st); again == nil || again.Envelope.EventID != fa.Envelope.EventID {
		t.Fatalf("event id not deterministic: %+v", again)
	}

	// The snapshot that folded the assessment in: nothing more.
	folded := matchSnapshot(sid)
	folded.Checks = append(folded.Checks, fa.Checks...)
	if again := f.run(folded); again != nil {
		t.Fatalf("assessed twice: %+v", again)
	}
}

func TestBlocklistCheck(t *testing.T) {
	f := newFixture(t)
	st := matchSnapshot(sid)
	expect(t, checkOf(t, f.run(st), CheckBlocklistID), schemas.CheckPass, "")

	h := idnumber.Hash(hashKey, st.Chip.Fields[0].Value)
	f.blocklist["other-tenant|"+h] = "blk_other"
	expect(t, checkOf(t, f.run(st), CheckBlocklistID), schemas.CheckPass, "")
	f.blocklist[tenant+"|"+h] = "blk_1"
	c := checkOf(t, f.run(st), CheckBlocklistID)
	expect(t, c, schemas.CheckFail, ReasonBlocklisted)
	if !strings.Contains(*c.Detail, "blk_1") || strings.Contains(*c.Detail, st.Chip.Fields[0].Value) {
		t.Fatalf("detail %q", *c.Detail)
	}
}

func TestIDStructureCheck(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		id, dob, sex   string
		status, reason string
	}{
		{"001090012345", "1990-03-15", "M", schemas.CheckPass, ""},
		{"001090012345", "1991-03-15", "M", schemas.CheckFail, ReasonIDStructureMismatch},
		{"001090012345", "1990-03-15", "F", schemas.CheckFail, ReasonIDStructureMismatch},
		{"001290012345", "1990-03-15", "M", schemas.CheckFail, ReasonIDStructureMismatch},
		{"003090012345", "1990-03-15", "M", schemas.CheckFail, ReasonInvalidIDNumber},
		{"0010900123", "1990-03-15", "M", schemas.CheckFail, ReasonInvalidIDNumber},
		{"012345678", "1990-03-15", "M", schemas.CheckSkipped, ReasonNotApplicable},
		{"C1234567", "1990-03-15", "M", schemas.CheckSkipped, ReasonNotApplicable},
	} {
		c := checkOf(t, f.run(snapshot(sid, tc.id, "NGUYỄN VĂN AN", tc.dob, tc.sex)), CheckIDStructure)
		t.Run(tc.id+"/"+tc.dob+"/"+tc.sex, func(t *testing.T) { expect(t, c, tc.status, tc.reason) })
	}
}

func TestDatesCheck(t *testing.T) {
	f := newFixture(t)
	adult := newFixture(t, WithMinAge(18))
	with := func(dob, issue, expiry string) *schemas.SessionState {
		st := snapshot(sid, "001090012345", "NGUYỄN VĂN AN", dob, "M")
		st.Chip.Fields[4].Value, st.Chip.Fields[5].Value = issue, expiry
		return st
	}
	for _, tc := range []struct {
		name           string
		f              *fixture
		st             *schemas.SessionState
		status, reason string
	}{
		{"valid", f, with("1990-03-15", "2021-04-01", "2035-03-15"), schemas.CheckPass, ""},
		{"expires on the session day", f, with("1990-03-15", "2021-04-01", "2026-11-22"), schemas.CheckPass, ""},
		{"expired", f, with("1990-03-15", "2011-04-01", "2026-11-21"), schemas.CheckFail, ReasonDocumentExpired},
		{"issued after expiry", f, with("1990-03-15", "2036-04-01", "2035-03-15"), schemas.CheckFail, ReasonIssueAfterExpiry},
		{"14 today", f, with("2012-11-22", "2026-11-22", "2037-11-22"), schemas.CheckPass, ""},
		{"13", f, with("2012-11-23", "2026-11-01", "2037-11-23"), schemas.CheckFail, ReasonUnderage},
		{"16 under 18", adult, with("2010-01-01", "2024-04-01", "2035-01-01"), schemas.CheckFail, ReasonUnderage},
		{"dd/mm/yyyy", f, with("15/03/1990", "01/04/2021", "15/03/2035"), schemas.CheckPass, ""},
		{"no dates", f, with("", "", ""), schemas.CheckSkipped, ReasonNoDates},
	} {
		t.Run(tc.name, func(t *testing.T) { expect(t, checkOf(t, tc.f.run(tc.st), CheckDates), tc.status, tc.reason) })
	}
}

// Each sandbox persona gives its documented record outcomes, in process and over HTTP.
func TestRegistryPersonas(t *testing.T) {
	sb := registry.NewSandbox(registry.WithSlowDelay(2 * time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := sb.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	client, err := registry.NewClient("http://"+addr, registry.WithTimeout(time.Second), registry.WithMaxAttempts(2),
		registry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	want := func(o registry.RecordOutcome) (string, string) {
		switch o {
		case registry.RecordFound:
			return schemas.CheckPass, ""
		case registry.RecordMismatch:
			return schemas.CheckFail, ReasonRecordMismatch
		case registry.RecordNotFound:
			return schemas.CheckWarn, ReasonRecordNotFound
		case registry.RecordInactive:
			return schemas.CheckWarn, ReasonRecordInactive
		}
		return schemas.CheckWarn, ReasonRegistryUnavailable // unavailable, slow past the timeout
	}
	for name, reg := range map[string]registry.Registry{"in-process": sb.Registry(), "http": client} {
		f := newFixture(t, WithRegistry(reg), WithRegistryTimeout(300*time.Millisecond))
		for i, p := range registry.Personas() {
			t.Run(name+"/"+p.Key, func(t *testing.T) {
				st := snapshot("ses_"+strings.Repeat("p", 25)+string(rune('a'+i)), p.IDNumber, p.FullName, p.DateOfBirth, p.Sex)
				fa := f.run(st)
				for check, outcome := range map[string]registry.RecordOutcome{
					CheckRegistryTax: p.Tax, CheckRegistryHealthInsurance: p.HealthInsurance, CheckRegistrySocialInsurance: p.SocialInsurance,
				} {
					if p.Behavior == registry.BehaviorSlow {
						outcome = "" // past the 300 ms timeout
					}
					status, code := want(outcome)
					expect(t, checkOf(t, fa, check), status, code)
				}
				// Every persona is structurally consistent.
				expect(t, checkOf(t, fa, CheckIDStructure), schemas.CheckPass, "")
			})
		}
	}
}

func TestRegistryNotConfiguredAndIncomplete(t *testing.T) {
	f := newFixture(t)
	expect(t, checkOf(t, f.run(matchSnapshot(sid)), CheckRegistryTax), schemas.CheckSkipped, ReasonRegistryNotConfigured)
	g := newFixture(t, WithRegistry(registry.NewSandbox().Registry()))
	expect(t, checkOf(t, g.run(snapshot(sid, "001090012345", "", "1990-03-15", "M")), CheckRegistryTax),
		schemas.CheckSkipped, ReasonIdentityIncomplete)
}

func TestReplayedCaptureCheck(t *testing.T) {
	f := newFixture(t)
	st := matchSnapshot(sid)
	expect(t, checkOf(t, f.run(st), CheckReplayedCapture), schemas.CheckPass, "")
	// Its own sighting is not a replay.
	f.sightings.m[IndexKey(tenant, st.Captures[3].Blobs[0].SHA256)] = Sighting{SessionID: sid}
	expect(t, checkOf(t, f.run(st), CheckReplayedCapture), schemas.CheckPass, "")
	// Another tenant's sighting of the same bytes is not either.
	f.sightings.m[IndexKey("other", st.Captures[0].Blobs[0].SHA256)] = Sighting{SessionID: "ses_other"}
	expect(t, checkOf(t, f.run(st), CheckReplayedCapture), schemas.CheckPass, "")
	f.sightings.m[IndexKey(tenant, st.Captures[3].Blobs[0].SHA256)] = Sighting{SessionID: "ses_earlier"}
	c := checkOf(t, f.run(st), CheckReplayedCapture)
	expect(t, c, schemas.CheckFail, ReasonReplayedCapture)
	if !strings.Contains(*c.Detail, "selfie image first seen in session ses_earlier") {
		t.Fatalf("detail %q", *c.Detail)
	}
}

func TestErasureForgetsSightings(t *testing.T) {
	f := newFixture(t)
	f.sightings.m[IndexKey(tenant, "ab")] = Sighting{SessionID: sid}
	f.sightings.m[IndexKey(tenant, "cd")] = Sighting{SessionID: "ses_other"}
	outs, err := f.group.Handler(context.Background(), &stream.Record{Topic: schemas.TopicSessionState, Key: []byte(sid)})
	if err != nil || len(outs) != 1 || outs[0].Topic != schemas.TopicCaptureIndex || string(outs[0].Key) != IndexKey(tenant, "ab") || outs[0].Value != nil {
		t.Fatalf("outs %+v err %v", outs, err)
	}
}

func TestBadRecords(t *testing.T) {
	f := newFixture(t)
	good := f.snapshotRecord(matchSnapshot(sid))
	for name, rec := range map[string]*stream.Record{
		"other topic":  {Topic: schemas.TopicQuality, Key: []byte(sid), Value: good.Value},
		"undecodable":  {Topic: schemas.TopicSessionState, Key: []byte(sid), Value: []byte("garbage")},
		"key mismatch": {Topic: schemas.TopicSessionState, Key: []byte("ses_other"), Value: good.Value},
		"bad capture":  {Topic: schemas.TopicCaptures, Key: []byte(sid), Value: []byte("garbage")},
	} {
		if outs, err := f.group.Handler(context.Background(), rec); err == nil || outs != nil {
			t.Errorf("%s: outs %+v err %v", name, outs, err)
		}
	}
}

// --- injection signals (captures) ---

type captureOpt func(*schemas.CaptureSubmitted)

func (f *fixture) capture(sessionID, step, sum string, client map[string]string, opts ...captureOpt) *schemas.CaptureSubmitted {
	c := &schemas.CaptureSubmitted{
		Envelope:  schemas.Envelope{EventID: "evt_cap_" + step, SessionID: sessionID, TenantID: tenant, OccurredAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Producer: "edge"},
		CaptureID: "cap_" + step + "_" + sessionID[4:10], Step: step, Nonce: []byte("12345678"), Client: client,
		Blobs: []schemas.BlobRef{{Name: "image", URI: "fs://none", SHA256: sum, Size: 1, MediaType: "image/jpeg"}},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// handleCapture runs a capture; it returns the injection check and the index outputs.
func (f *fixture) handleCapture(c *schemas.CaptureSubmitted) (schemas.Check, []stream.Output) {
	f.t.Helper()
	v, err := f.codec.Encode(schemas.TopicCaptures, c)
	if err != nil {
		f.t.Fatal(err)
	}
	outs, err := f.group.Handler(context.Background(), &stream.Record{Topic: schemas.TopicCaptures, Key: []byte(c.Envelope.SessionID), Value: v})
	if err != nil {
		f.t.Fatalf("capture: %v", err)
	}
	var idx []stream.Output
	var check *schemas.Check
	for _, o := range outs {
		switch o.Topic {
		case schemas.TopicCaptureIndex:
			idx = append(idx, o)
		case schemas.TopicFraud:
			var fa schemas.FraudAssessed
			if err := f.codec.Decode(schemas.TopicFraud, o.Value, &fa); err != nil || len(fa.Checks) != 1 {
				f.t.Fatalf("fraud output: %+v %v", fa, err)
			}
			if strings.HasPrefix(fa.Checks[0].Name, InjectionCheckPrefix) { // a document step also gets its tamper check
				check = &fa.Checks[0]
			}
		}
	}
	if check == nil {
		f.t.Fatalf("no injection check in %+v", outs)
	}
	return *check, idx
}

func TestInjectionSignals(t *testing.T) {
	f := newFixture(t)
	nonce := base64.StdEncoding.EncodeToString([]byte("12345678"))
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name           string
		client         map[string]string
		status, reason string
		detail         string
	}{
		{"no signals", map[string]string{}, schemas.CheckPass, "", ""},
		{"clean echo", map[string]string{"nonce": nonce, "timestamp": at.Add(3 * time.Second).Format(time.RFC3339), "emulator": "false"}, schemas.CheckPass, "", ""},
		{"unix ms timestamp", map[string]string{"timestamp": "1795341600000"}, schemas.CheckPass, "", ""},
		{"virtual camera", map[string]string{"virtual_camera": "true"}, schemas.CheckFail, ReasonInjectionSuspected, "virtual_camera"},
		{"rooted emulator", map[string]string{"Rooted": "1", "emulator": "yes"}, schemas.CheckFail, ReasonInjectionSuspected, "emulator, rooted"},
		{"hooking", map[string]string{"hooking": "detected"}, schemas.CheckFail, ReasonInjectionSuspected, "hooking"},
		{"nonce of another session", map[string]string{"nonce": base64.StdEncoding.EncodeToString([]byte("87654321"))}, schemas.CheckFail, ReasonInjectionSuspected, "nonce_mismatch"},
		{"stale timestamp", map[string]string{"timestamp": at.Add(-time.Hour).Format(time.RFC3339)}, schemas.CheckFail, ReasonInjectionSuspected, "timestamp_skew"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := f.handleCapture(f.capture(sid, "selfie", strings.Repeat("e", 64), tc.client))
			if c.Name != "fraud.injection_signals.selfie" || c.CaptureID == nil || *c.CaptureID != "cap_selfie_aaaaaa" {
				t.Fatalf("check %+v", c)
			}
			expect(t, c, tc.status, tc.reason)
			if tc.detail != "" && !strings.HasSuffix(*c.Detail, tc.detail) {
				t.Fatalf("detail %q, want the signals %q", *c.Detail, tc.detail)
			}
		})
	}
	strict := newFixture(t, WithRequireNonceEcho(true))
	c, _ := strict.handleCapture(strict.capture(sid, "selfie", strings.Repeat("e", 64), nil))
	expect(t, c, schemas.CheckFail, ReasonInjectionSuspected)
}

func TestNotFromCamera(t *testing.T) {
	store, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, WithBlobs(store))
	put := func(name string, data []byte) schemas.BlobRef {
		obj, err := store.Put(context.Background(), "acme/"+sid+"/"+name, data, "image/jpeg")
		if err != nil {
			t.Fatal(err)
		}
		return schemas.BlobRef{Name: "image", URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}
	}
	img := image.NewGray(image.Rect(0, 0, 16, 16))
	var plain, pngData bytes.Buffer
	_ = jpeg.Encode(&plain, img, nil)
	_ = png.Encode(&pngData, img)
	edited := exifJPEG(t, "Adobe Photoshop 25.1", plain.Bytes())
	for _, tc := range []struct {
		name           string
		ref            schemas.BlobRef
		client         map[string]string
		status, reason string
	}{
		{"plain jpeg from an upload path", put("a.jpg", plain.Bytes()), nil, schemas.CheckPass, ""},
		{"camera jpeg with exif", put("b.jpg", exifJPEG(t, "", plain.Bytes())), map[string]string{"source": "camera"}, schemas.CheckPass, ""},
		{"camera claimed without exif", put("c.jpg", plain.Bytes()), map[string]string{"source": "camera"}, schemas.CheckWarn, ReasonNotFromCamera},
		{"edited", put("d.jpg", edited), nil, schemas.CheckWarn, ReasonNotFromCamera},
		{"png", put("e.png", pngData.Bytes()), nil, schemas.CheckWarn, ReasonNotFromCamera},
		{"png and virtual camera", put("f.png", pngData.Bytes()), map[string]string{"virtual_camera": "true"}, schemas.CheckFail, ReasonInjectionSuspected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := f.handleCapture(f.capture(sid, "document_front", tc.ref.SHA256, tc.client, func(c *schemas.CaptureSubmitted) {
				c.Blobs = []schemas.BlobRef{tc.ref}
			}))
			expect(t, c, tc.status, tc.reason)
		})
	}
}

// exifJPEG prepends an EXIF APP1 with Make/Model (and Software when given) to a JPEG.
func exifJPEG(t testing.TB, software string, jpg []byte) []byte {
	t.Helper()
	type tag struct {
		id  uint16
		val string
	}
	tags := []tag{{0x010F, "samsung"}, {0x0110, "SM-A536E"}}
	if software != "" {
		tags = append(tags, tag{0x0131, software})
	}
	le := func(b []byte, v uint32, n int) []byte {
		for i := 0; i < n; i++ {
			b = append(b, byte(v>>(8*i)))
		}
		return b
	}
	tiff := []byte("II")
	tiff = le(tiff, 42, 2)
	tiff = le(tiff, 8, 4)
	tiff = le(tiff, uint32(len(tags)), 2)
	dataOff := 8 + 2 + 12*len(tags) + 4
	var data []byte
	for _, tg := range tags {
		v := tg.val + "\x00"
		tiff = le(tiff, uint32(tg.id), 2)
		tiff = le(tiff, 2, 2)
		tiff = le(tiff, uint32(len(v)), 4)
		tiff = le(tiff, uint32(dataOff+len(data)), 4)
		data = append(data, v...)
	}
	tiff = le(tiff, 0, 4)
	tiff = append(tiff, data...)
	seg := append([]byte("Exif\x00\x00"), tiff...)
	out := []byte{0xFF, 0xD8, 0xFF, 0xE1, byte((len(seg) + 2) >> 8), byte(len(seg) + 2)}
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

func TestCaptureIndexFirstSightingWins(t *testing.T) {
	f := newFixture(t)
	sum := strings.Repeat("f", 64)
	_, idx := f.handleCapture(f.capture(sid, "selfie", sum, nil))
	if len(idx) != 1 || string(idx[0].Key) != IndexKey(tenant, sum) {
		t.Fatalf("index outputs %+v", idx)
	}
	if s, ok := (&CaptureIndex{codec: f.codec}).decodeEntry(idx[0].Value); !ok || s.SessionID != sid || s.Step != "selfie" || s.PHash != "" {
		t.Fatalf("index entry %+v (%v), want the selfie's sighting in its session, Avro", s, ok)
	}
	f.sightings.m[IndexKey(tenant, sum)] = Sighting{SessionID: sid}
	// The same session again (a retry) rewrites its own sighting; another session does not.
	if _, idx := f.handleCapture(f.capture(sid, "selfie", sum, nil)); len(idx) != 1 {
		t.Fatalf("retry: %+v", idx)
	}
	if _, idx := f.handleCapture(f.capture("ses_bbbbbbbbbbbbbbbbbbbbbbbbbb", "selfie", sum, nil)); len(idx) != 0 {
		t.Fatalf("second session overwrote the first sighting: %+v", idx)
	}
}

func TestBlocklistApply(t *testing.T) {
	codec := newCodec(t)
	b := newBlocklist(codec)
	put := func(e schemas.BlocklistEntry) {
		e.Embedding = []float32{}
		v, err := codec.Encode(schemas.TopicBlocklist, &e)
		if err != nil {
			t.Fatal(err)
		}
		b.Apply(e.EntryID, v)
	}
	h := idnumber.Hash(hashKey, "001090012345")
	entry := schemas.BlocklistEntry{Envelope: schemas.Envelope{TenantID: tenant}, EntryID: "blk_1", Kind: "id_number", ValueHash: &h}
	put(entry)
	put(schemas.BlocklistEntry{Envelope: schemas.Envelope{TenantID: tenant}, EntryID: "blk_face", Kind: "face", SourceSessionID: ptr(sid)})
	if id, ok := b.Lookup(tenant, h); !ok || id != "blk_1" || b.Len() != 2 {
		t.Fatalf("lookup %q %v len %d", id, ok, b.Len())
	}
	if fs := b.FaceEntries(tenant); len(fs) != 1 || fs[0].EntryID != "blk_face" || fs[0].SourceSessionID != sid {
		t.Fatalf("face entries %+v", fs)
	}
	if fs := b.FaceEntries("other"); len(fs) != 0 {
		t.Fatal("a face entry blocks another tenant")
	}
	if _, ok := b.Lookup("other", h); ok {
		t.Fatal("an entry blocks another tenant")
	}
	put(schemas.BlocklistEntry{Envelope: schemas.Envelope{TenantID: "intruder"}, EntryID: "blk_1", Deleted: true})
	if _, ok := b.Lookup(tenant, h); !ok {
		t.Fatal("another tenant's deletion was honoured")
	}
	put(schemas.BlocklistEntry{Envelope: schemas.Envelope{TenantID: tenant}, EntryID: "blk_1", Deleted: true})
	if _, ok := b.Lookup(tenant, h); ok || b.Len() != 1 {
		t.Fatal("deletion not honoured")
	}
	put(entry)
	b.Apply("blk_1", nil) // compaction tombstone
	if _, ok := b.Lookup(tenant, h); ok {
		t.Fatal("tombstone not honoured")
	}
}

// A 9-digit card prints no expiry date: it was valid 15 years from issue, and no 9-digit card
// is valid after 31 December 2024 (Law on Identification 2023).
func TestDatesCheckLegacyIDCard(t *testing.T) {
	card := func(docType, issue string) *schemas.SessionState {
		return &schemas.SessionState{
			CreatedAt: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
			Documents: []schemas.DocumentRead{{Step: "document_front", DocumentType: docType, Fields: []schemas.Field{
				{Name: "id_number", Value: "012345678"}, {Name: "date_of_birth", Value: "1980-05-01"}}},
				{Step: "document_back", DocumentType: docType, Fields: []schemas.Field{{Name: "issue_date", Value: issue}}}},
		}
	}
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, docType, issue string
		expiry               string // "" when none is known
		status, reason       string
	}{
		{"issued 2005: expired 2020", documentTypeLegacyID, "2005-01-10", "2020-01-10", schemas.CheckFail, ReasonDocumentExpired},
		{"issued 2015: ended with 2024", documentTypeLegacyID, "2015-06-01", "2024-12-31", schemas.CheckFail, ReasonDocumentExpired},
		{"issue unread", documentTypeLegacyID, "", "2024-12-31", schemas.CheckFail, ReasonDocumentExpired},
		{"12-digit card without a read expiry", "id_card", "2019-06-01", "", schemas.CheckPass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := extractIdentity(card(tc.docType, tc.issue))
			got := ""
			if !id.expiry.IsZero() {
				got = id.expiry.Format(time.DateOnly)
			}
			if got != tc.expiry {
				t.Errorf("expiry %q, want %q", got, tc.expiry)
			}
			expect(t, datesCheck(id, at, DefaultMinAge), tc.status, tc.reason)
		})
	}
}
