package edge

import (
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

// fakeBacklog is an Admission whose estimates the test sets.
type fakeBacklog struct {
	mu             sync.Mutex
	gate, pipeline time.Duration
	admitted       []int
}

func (f *fakeBacklog) Admitted(steps int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.admitted = append(f.admitted, steps)
}

func (f *fakeBacklog) set(gate, pipeline time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gate, f.pipeline = gate, pipeline
}

func (f *fakeBacklog) GateWait() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gate
}

func (f *fakeBacklog) PipelineWait() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pipeline
}

// TestShedding: beyond the pipeline's limit Session Init answers 429 overloaded with a
// Retry-After and creates nothing; an idempotent replay of a session already open is still
// answered; a capture is shed when the gate could not answer within its budget, before
// anything is stored or produced, while bad input keeps its own error; below the limits all
// goes through again, and the estimates are exported.
func TestShedding(t *testing.T) {
	b := &fakeBacklog{}
	e := newEnv(t, func(c *Config) {
		c.Admission = b
		c.MaxPipelineWait = 5 * time.Second
		c.QualityBudget = 500 * time.Millisecond
	})
	e.quality.replies["document_front"] = &schemas.QualityAssessed{Passed: true, Framing: "ok"}
	s := e.openSession(keyAcme, "id_card")
	replay := e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, map[string]any{"flow": "id_card"}, "Idempotency-Key", "k1")
	if replay.status != http.StatusCreated {
		t.Fatalf("idempotent open: %d %s", replay.status, replay.body)
	}

	if len(b.admitted) != 2 || b.admitted[0] != 3 { // the id_card flow: front, back, selfie
		t.Fatalf("admissions told %v, want two of 3 steps", b.admitted)
	}
	b.set(1200*time.Millisecond, 7300*time.Millisecond)
	produced := len(e.pub.on(schemas.TopicSessions))
	r := e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, map[string]any{"flow": "id_card"})
	expectProblem(t, r, http.StatusTooManyRequests, CodeOverloaded)
	if got := r.header.Get("Retry-After"); got != "3" { // ceil(7.3 s − 5 s)
		t.Errorf("Retry-After %q, want 3", got)
	}
	if n := len(e.pub.on(schemas.TopicSessions)); n != produced || len(b.admitted) != 2 {
		t.Errorf("a shed Session Init produced %d events and told %d admissions", n-produced, len(b.admitted)-2)
	}
	again := e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, map[string]any{"flow": "id_card"}, "Idempotency-Key", "k1")
	if again.status != http.StatusCreated || again.json(t)["session_id"] != replay.json(t)["session_id"] {
		t.Errorf("idempotent replay while shedding: %d %s", again.status, again.body)
	}
	if r := e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, map[string]any{"flow": "no_such_flow"}); r.status != http.StatusUnprocessableEntity {
		t.Errorf("bad flow while shedding: %d, want its own 422", r.status)
	}

	img := base64.StdEncoding.EncodeToString(jpegBytes(t))
	captures := len(e.pub.on(schemas.TopicCaptures))
	r = e.doJSON("POST", "/v1/ekyc/sessions/"+s.SessionID+"/document", s.SDKToken, map[string]any{"side": "front", "image": img})
	expectProblem(t, r, http.StatusTooManyRequests, CodeOverloaded)
	if got := r.header.Get("Retry-After"); got != "2" { // ceil(1.2 s)
		t.Errorf("capture Retry-After %q, want 2", got)
	}
	if n := len(e.pub.on(schemas.TopicCaptures)); n != captures || len(e.blobs.keys("")) != 0 {
		t.Errorf("a shed capture produced %d events and stored %d blobs", n-captures, len(e.blobs.keys("")))
	}
	r = e.doJSON("POST", "/v1/ekyc/sessions/"+s.SessionID+"/document", s.SDKToken, map[string]any{"side": "sideways", "image": img})
	expectProblem(t, r, http.StatusUnprocessableEntity, CodeInvalidRequest)
	metrics := e.metrics()
	for _, want := range []string{`idstream_edge_backlog_seconds{stage="gate"} 1.2`, `idstream_edge_backlog_seconds{stage="pipeline"} 7.3`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	b.set(100*time.Millisecond, 2*time.Second)
	if r := e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, map[string]any{"flow": "id_card"}); r.status != http.StatusCreated {
		t.Errorf("below the limit: %d %s", r.status, r.body)
	}
	r = e.doJSON("POST", "/v1/ekyc/sessions/"+s.SessionID+"/document", s.SDKToken, map[string]any{"side": "front", "image": img})
	if r.status != http.StatusOK {
		t.Errorf("capture below the gate's budget: %d %s", r.status, r.body)
	}
}
