package consent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestAuthOnEveryEndpoint(t *testing.T) {
	rp := newCluster(t).replica(t)
	body := []byte(`{"tracking_id":"trk_1","decisions":[{"purpose_id":"marketing","status":"granted"}],"notice_version":"1"}`)
	for _, ep := range []struct{ method, path string }{
		{"GET", "/v1/config"}, {"GET", "/v1/consents?tracking_id=trk_1"}, {"POST", "/v1/consents"},
	} {
		for name, key := range map[string]string{"no key": "", "wrong key": "ck_wrong", "API key of the edge": keyAcmeAPI} {
			t.Run(ep.method+" "+ep.path+" "+name, func(t *testing.T) {
				expectProblem(t, rp.do(ep.method, ep.path, key, "application/json", body), 401, "unauthorized")
			})
		}
	}
	// Nothing was recorded by the refused POSTs.
	if n := rp.index.Len(); n != 0 {
		t.Errorf("index holds %d records after refused writes", n)
	}
}

func TestGetConfig(t *testing.T) {
	rp := newCluster(t).replica(t)
	r := rp.do("GET", "/v1/config", keyAcme, "", nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.header.Get("X-Request-Id") == "" {
		t.Fatalf("config: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	m := r.json(t)
	if m["version"] != "2026-11-01" || m["default_language"] != "vi" || fmt.Sprint(m["languages"]) != "[vi en]" {
		t.Errorf("config head: %v", m)
	}
	ctrl := m["controller"].(map[string]any)
	if ctrl["name"] == "" || ctrl["contact"] == "" {
		t.Errorf("controller: %v", ctrl)
	}
	notice := m["notice"].(map[string]any)
	text := notice["text"].(map[string]any)
	if notice["version"] != "1" || !strings.HasPrefix(notice["url"].(string), "https://") ||
		!strings.Contains(text["vi"].(string), "Nghị định 13/2023/NĐ-CP") || !strings.Contains(text["en"].(string), "Decree 13/2023/ND-CP") {
		t.Errorf("notice: %v", notice)
	}
	purposes := m["purposes"].([]any)
	ekyc := purposes[0].(map[string]any)
	if ekyc["id"] != PurposeEKYC || ekyc["required"] != true || ekyc["legal_basis"] != "consent" ||
		fmt.Sprint(ekyc["data_categories"]) != "[id_document face_image biometric_template]" || ekyc["retention_days"] != float64(30) ||
		ekyc["name"].(map[string]any)["en"] == "" || ekyc["description"].(map[string]any)["vi"] == "" {
		t.Errorf("ekyc purpose: %v", ekyc)
	}
	if len(purposes) < 2 || purposes[1].(map[string]any)["required"] != false {
		t.Errorf("want an optional purpose: %v", purposes)
	}
}

func TestGetConsentsQuery(t *testing.T) {
	rp := newCluster(t).replica(t)
	expectProblem(t, rp.do("GET", "/v1/consents", keyAcme, "", nil), 400, CodeTrackingIDRequired)
	expectProblem(t, rp.do("GET", "/v1/consents?tracking_id=", keyAcme, "", nil), 400, CodeTrackingIDRequired)
	expectProblem(t, rp.get(keyAcme, strings.Repeat("x", MaxTrackingIDBytes+1)), 400, "invalid_request")
	r := rp.get(keyAcme, "trk_unknown")
	if r.status != 200 || string(r.body) != `{"tracking_id":"trk_unknown","purposes":{},"records":[]}` {
		t.Errorf("unknown tracking id: %d %s", r.status, r.body)
	}
}

func TestPostRefusals(t *testing.T) {
	rp := newCluster(t).replica(t)
	valid := `{"tracking_id":"trk_r","decisions":[{"purpose_id":"marketing","status":"granted"}],"notice_version":"1"}`
	cases := []struct {
		name, contentType, body string
		status                  int
		code                    string
	}{
		{"invalid JSON", "application/json", `{"tracking_id":`, 400, "invalid_json"},
		{"two JSON values", "application/json", valid + valid, 400, "invalid_json"},
		{"wrong type", "application/json", `{"tracking_id":42}`, 400, "invalid_request"},
		{"wrong content type", "text/plain", valid, 415, "unsupported_media_type"},
		{"no content type", "", valid, 415, "unsupported_media_type"},
		{"oversized body", "application/json", `{"tracking_id":"` + strings.Repeat("a", DefaultMaxBodyBytes) + `"}`, 413, "payload_too_large"},
		{"missing tracking_id", "application/json", `{"decisions":[{"purpose_id":"marketing","status":"granted"}],"notice_version":"1"}`, 400, "invalid_request"},
		{"tracking_id with a newline", "application/json", `{"tracking_id":"a\nb","decisions":[{"purpose_id":"marketing","status":"granted"}],"notice_version":"1"}`, 400, "invalid_request"},
		{"no decisions", "application/json", `{"tracking_id":"trk_r","decisions":[],"notice_version":"1"}`, 400, "invalid_request"},
		{"missing notice_version", "application/json", `{"tracking_id":"trk_r","decisions":[{"purpose_id":"marketing","status":"granted"}]}`, 400, "invalid_request"},
		{"unknown purpose", "application/json", `{"tracking_id":"trk_r","decisions":[{"purpose_id":"marketing","status":"granted"},{"purpose_id":"marketing_sms","status":"granted"}],"notice_version":"1"}`, 422, CodeInvalidPurpose},
		{"unknown notice version", "application/json", `{"tracking_id":"trk_r","decisions":[{"purpose_id":"marketing","status":"granted"}],"notice_version":"7"}`, 422, CodeInvalidNoticeVersion},
		{"unknown status", "application/json", `{"tracking_id":"trk_r","decisions":[{"purpose_id":"marketing","status":"maybe"}],"notice_version":"1"}`, 400, "invalid_request"},
		{"purpose twice", "application/json", `{"tracking_id":"trk_r","decisions":[{"purpose_id":"marketing","status":"granted"},{"purpose_id":"marketing","status":"denied"}],"notice_version":"1"}`, 400, "invalid_request"},
		{"bad ip", "application/json", `{"tracking_id":"trk_r","decisions":[{"purpose_id":"marketing","status":"granted"}],"notice_version":"1","ip":"not-an-ip"}`, 400, "invalid_request"},
		{"oversized user agent", "application/json", `{"tracking_id":"trk_r","decisions":[{"purpose_id":"marketing","status":"granted"}],"notice_version":"1","user_agent":"` + strings.Repeat("u", MaxUserAgentBytes+1) + `"}`, 400, "invalid_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectProblem(t, rp.do("POST", "/v1/consents", keyAcme, c.contentType, []byte(c.body)), c.status, c.code)
		})
	}
	// A refused request records nothing, not even its valid decisions.
	if a := decodeConsents(t, rp.get(keyAcme, "trk_r"), 200); len(a.Records) != 0 {
		t.Errorf("refused requests recorded %d records", len(a.Records))
	}
}

func TestReadYourWrites(t *testing.T) {
	rp := newCluster(t).replica(t)
	w := decodeConsents(t, rp.post(keyAcme, grant("trk_ryw", PurposeEKYC, "marketing")), 201)
	if w.TrackingID != "trk_ryw" || len(w.Records) != 2 || w.Records[0].PurposeID != PurposeEKYC || w.Records[1].PurposeID != "marketing" {
		t.Fatalf("written: %+v", w)
	}
	for _, rec := range w.Records {
		if !strings.HasPrefix(rec.ConsentID, "con_") || len(rec.ConsentID) != 30 || rec.Status != StatusGranted || rec.NoticeVersion != "1" ||
			rec.Channel != "sdk_android" || rec.IP != "203.0.113.24" || rec.UserAgent != "ExampleBank/5.2 (Android 15)" || len(rec.ProofSHA256) != 64 {
			t.Errorf("record: %+v", rec)
		}
	}
	// At once, on the same replica.
	// (Records of one POST share recorded_at; among equal times the order is by consent id.)
	g := decodeConsents(t, rp.get(keyAcme, "trk_ryw"), 200)
	if len(g.Records) != 2 || w.Records[0] != g.Records[0] && w.Records[0] != g.Records[1] || w.Records[1] != g.Records[0] && w.Records[1] != g.Records[1] {
		t.Fatalf("GET after POST: %+v, wrote %+v", g.Records, w.Records)
	}
	if p := g.Purposes[PurposeEKYC]; p.Status != StatusGranted || p.NoticeVersion != "1" || p.UpdatedAt != w.Records[0].RecordedAt {
		t.Errorf("purpose state: %+v", g.Purposes)
	}
	// Append-only: a withdrawal is a new record and becomes the current status.
	wd := decodeConsents(t, rp.post(keyAcme, decide("trk_ryw", StatusWithdrawn, "marketing")), 201)
	g = decodeConsents(t, rp.get(keyAcme, "trk_ryw"), 200)
	if len(g.Records) != 3 || g.Records[2].ConsentID != wd.Records[0].ConsentID ||
		g.Purposes["marketing"].Status != StatusWithdrawn || g.Purposes[PurposeEKYC].Status != StatusGranted {
		t.Errorf("after withdrawal: %+v", g)
	}
}

func TestTenantIsolation(t *testing.T) {
	rp := newCluster(t).replica(t)
	decodeConsents(t, rp.post(keyAcme, grant("trk_shared", PurposeEKYC)), 201)
	if b := decodeConsents(t, rp.get(keyBeta, "trk_shared"), 200); len(b.Records) != 0 || len(b.Purposes) != 0 {
		t.Fatalf("beta sees acme's records: %+v", b)
	}
	decodeConsents(t, rp.post(keyBeta, decide("trk_shared", StatusDenied, "marketing")), 201)
	a := decodeConsents(t, rp.get(keyAcme, "trk_shared"), 200)
	b := decodeConsents(t, rp.get(keyBeta, "trk_shared"), 200)
	if len(a.Records) != 1 || a.Records[0].PurposeID != PurposeEKYC || len(b.Records) != 1 || b.Records[0].PurposeID != "marketing" {
		t.Errorf("acme %+v, beta %+v", a.Records, b.Records)
	}
	// The same holds on a replica that rebuilt its index from the topic.
	other := rp.replicaOf(t)
	if b := decodeConsents(t, other.get(keyBeta, "trk_shared"), 200); len(b.Records) != 1 || b.Records[0].PurposeID != "marketing" {
		t.Errorf("rebuilt beta: %+v", b.Records)
	}
}

// TestProofRecomputable recomputes proof_sha256 from a GET answer with the canonical form
// written in Proof's doc comment, without calling Proof.
func TestProofRecomputable(t *testing.T) {
	rp := newCluster(t).replica(t)
	req := grant("trk_proof", PurposeEKYC)
	req["ip"] = "2001:db8::1"
	req["user_agent"] = "Mozilla/5.0 (X11; Linux x86_64) — tiếng Việt"
	decodeConsents(t, rp.post(keyAcme, req), 201)
	req = grant("trk_proof", "marketing")
	delete(req, "channel")
	delete(req, "ip")
	delete(req, "user_agent")
	decodeConsents(t, rp.post(keyAcme, req), 201)
	g := decodeConsents(t, rp.get(keyAcme, "trk_proof"), 200)
	if len(g.Records) != 2 {
		t.Fatalf("records: %+v", g.Records)
	}
	for _, r := range g.Records {
		canonical := strings.Join([]string{"idstream-consent-v1", "trk_proof", r.ConsentID, r.PurposeID, r.Status,
			r.NoticeVersion, r.RecordedAt, r.Channel, r.IP, r.UserAgent}, "\n") + "\n"
		sum := sha256.Sum256([]byte(canonical))
		if got := hex.EncodeToString(sum[:]); got != r.ProofSHA256 {
			t.Errorf("proof of %s: recomputed %s, stored %s", r.ConsentID, got, r.ProofSHA256)
		}
	}
	// An altered record no longer matches.
	r := g.Records[0]
	altered := strings.Join([]string{"idstream-consent-v1", "trk_proof", r.ConsentID, r.PurposeID, StatusDenied,
		r.NoticeVersion, r.RecordedAt, r.Channel, r.IP, r.UserAgent}, "\n") + "\n"
	if sum := sha256.Sum256([]byte(altered)); hex.EncodeToString(sum[:]) == r.ProofSHA256 {
		t.Error("an altered status keeps the proof")
	}
}

func TestChecker(t *testing.T) {
	rp := newCluster(t).replica(t)
	ctx := context.Background()
	check := func(tenantID string, want bool) {
		t.Helper()
		got, err := NewChecker(rp.index, WithGrantWait(0)).Granted(ctx, tenantID, "trk_gate", PurposeEKYC)
		if err != nil || got != want {
			t.Fatalf("Granted(%s) = %v, %v; want %v", tenantID, got, err, want)
		}
	}
	check("acme", false)
	decodeConsents(t, rp.post(keyAcme, decide("trk_gate", StatusDenied, PurposeEKYC)), 201)
	check("acme", false)
	decodeConsents(t, rp.post(keyAcme, grant("trk_gate", PurposeEKYC)), 201)
	check("acme", true)
	check("beta", false) // another tenant's tracking id
	decodeConsents(t, rp.post(keyAcme, decide("trk_gate", StatusWithdrawn, PurposeEKYC)), 201)
	check("acme", false)

	if _, err := NewChecker(NewIndex()).Granted(ctx, "acme", "trk_gate", PurposeEKYC); err == nil {
		t.Error("a checker over an index that is not ready answered")
	}
}

// TestCheckerWaitsForAGrant: a grant that reaches the index while Granted waits is seen
// (the consent API's 201 comes before the edge's index has it); with no grant coming the
// answer is false once the wait ends.
func TestCheckerWaitsForAGrant(t *testing.T) {
	rp := newCluster(t).replica(t)
	ctx := context.Background()
	go func() {
		time.Sleep(200 * time.Millisecond)
		decodeConsents(t, rp.post(keyAcme, grant("trk_late", PurposeEKYC)), 201)
	}()
	if ok, err := NewChecker(rp.index).Granted(ctx, "acme", "trk_late", PurposeEKYC); !ok || err != nil {
		t.Fatalf("a grant arriving during the wait: %v %v", ok, err)
	}
	if ok, err := NewChecker(rp.index, WithGrantWait(100*time.Millisecond)).Granted(ctx, "acme", "trk_never", PurposeEKYC); ok || err != nil {
		t.Fatalf("no grant: %v %v", ok, err)
	}
}

// TestReplicaRebuildsFromTopic: a replica started after the writes holds the same records,
// in the same order, with the same proofs, and answers the checker alike.
func TestReplicaRebuildsFromTopic(t *testing.T) {
	first := newCluster(t).replica(t)
	for i := range 20 {
		decodeConsents(t, first.post(keyAcme, grant(fmt.Sprintf("trk_%d", i%5), PurposeEKYC)), 201)
		decodeConsents(t, first.post(keyAcme, decide(fmt.Sprintf("trk_%d", i%5), StatusWithdrawn, "marketing")), 201)
	}
	decodeConsents(t, first.post(keyAcme, decide("trk_0", StatusWithdrawn, PurposeEKYC)), 201)
	second := first.replicaOf(t)
	if second.index.Len() != 41 {
		t.Fatalf("rebuilt index holds %d records, want 41", second.index.Len())
	}
	for i := range 5 {
		id := fmt.Sprintf("trk_%d", i)
		a, b := first.get(keyAcme, id), second.get(keyAcme, id)
		if a.status != 200 || string(a.body) != string(b.body) {
			t.Errorf("%s differs:\nfirst  %s\nsecond %s", id, a.body, b.body)
		}
	}
	if ok, err := NewChecker(second.index, WithGrantWait(0)).Granted(context.Background(), "acme", "trk_0", PurposeEKYC); ok || err != nil {
		t.Errorf("withdrawn trk_0 granted on the rebuilt replica: %v %v", ok, err)
	}
	if ok, err := NewChecker(second.index).Granted(context.Background(), "acme", "trk_1", PurposeEKYC); !ok || err != nil {
		t.Errorf("granted trk_1 not granted on the rebuilt replica: %v %v", ok, err)
	}
}

func TestOperationalEndpoints(t *testing.T) {
	ready := true
	rp := newCluster(t).replica(t, func(c *Config) { c.Ready = func() bool { return ready } })
	if r := rp.do("GET", "/healthz", "", "", nil); r.status != 200 || r.header.Get("X-Request-Id") == "" {
		t.Errorf("healthz %d", r.status)
	}
	if r := rp.do("GET", "/readyz", "", "", nil); r.status != 200 {
		t.Errorf("readyz %d", r.status)
	}
	ready = false
	expectProblem(t, rp.do("GET", "/readyz", "", "", nil), 503, "not_ready")
	expectProblem(t, rp.do("GET", "/v1/nope", keyAcme, "", nil), 404, "not_found")
	expectProblem(t, rp.do("DELETE", "/v1/consents", keyAcme, "", nil), 405, "method_not_allowed")
}

func TestIndexDedupesByConsentID(t *testing.T) {
	ix := NewIndex()
	r := Record{ConsentID: "con_a", PurposeID: PurposeEKYC, Status: StatusGranted}
	if !ix.Apply("acme", "trk", r) || ix.Apply("acme", "trk", r) || ix.Len() != 1 {
		t.Fatalf("dedupe: len %d", ix.Len())
	}
	if !ix.Apply("beta", "trk", r) || len(ix.Records("acme", "trk")) != 1 {
		t.Error("tenants share records")
	}
}

func TestRequiresBiometricErasure(t *testing.T) {
	for _, c := range []struct {
		purpose, status string
		want            bool
	}{
		{PurposeEKYC, StatusWithdrawn, true},
		{PurposeEKYC, StatusDenied, false},
		{PurposeEKYC, StatusGranted, false},
		{"marketing", StatusWithdrawn, false},
	} {
		ev := toEvent("acme", "trk", Record{ConsentID: "con_x", PurposeID: c.purpose, Status: c.status})
		if got := RequiresBiometricErasure(&ev); got != c.want {
			t.Errorf("%s %s: %v", c.purpose, c.status, got)
		}
	}
}
