package schemas

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeRegistry implements the subset of the Confluent schema registry API the codec uses:
// POST /subjects/{subject}/versions and GET /schemas/ids/{id}. Ids are global per schema text.
type fakeRegistry struct {
	srv *httptest.Server

	mu       sync.Mutex
	ids      map[string]int   // schema text → id
	texts    map[int]string   // id → schema text
	subjects map[string][]int // subject → ids registered under it
	posts    int              // POST requests served
	gets     map[int]int      // GET requests served per id
}

func newFakeRegistry(t *testing.T) *fakeRegistry {
	t.Helper()
	r := &fakeRegistry{
		ids: make(map[string]int), texts: make(map[int]string),
		subjects: make(map[string][]int), gets: make(map[int]int),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /subjects/{subject}/versions", r.register)
	mux.HandleFunc("GET /schemas/ids/{id}", r.schemaByID)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

func (r *fakeRegistry) URL() string { return r.srv.URL }

func (r *fakeRegistry) register(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Schema     string `json:"schema"`
		SchemaType string `json:"schemaType"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil || body.Schema == "" {
		writeRegistryError(w, http.StatusUnprocessableEntity, 42201, "invalid schema")
		return
	}
	if body.SchemaType != "" && body.SchemaType != "AVRO" {
		writeRegistryError(w, http.StatusUnprocessableEntity, 42201, "unsupported schema type")
		return
	}
	id := r.add(req.PathValue("subject"), body.Schema, true)
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	fmt.Fprintf(w, `{"id":%d}`, id)
}

// add registers text under subject and returns its id.
func (r *fakeRegistry) add(subject, text string, countPost bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if countPost {
		r.posts++
	}
	id, ok := r.ids[text]
	if !ok {
		id = len(r.ids) + 100
		r.ids[text] = id
		r.texts[id] = text
	}
	r.subjects[subject] = append(r.subjects[subject], id)
	return id
}

func (r *fakeRegistry) schemaByID(w http.ResponseWriter, req *http.Request) {
	id, err := strconv.Atoi(req.PathValue("id"))
	r.mu.Lock()
	text, ok := r.texts[id]
	r.gets[id]++
	r.mu.Unlock()
	if err != nil || !ok {
		writeRegistryError(w, http.StatusNotFound, 40403, "Schema not found")
		return
	}
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	_ = json.NewEncoder(w).Encode(map[string]string{"schema": text})
}

func writeRegistryError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": code, "message": msg})
}

func (r *fakeRegistry) counts() (posts int, gets map[int]int, subjects map[string][]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := make(map[int]int, len(r.gets))
	for k, v := range r.gets {
		g[k] = v
	}
	s := make(map[string][]int, len(r.subjects))
	for k, v := range r.subjects {
		s[k] = append([]int(nil), v...)
	}
	return r.posts, g, s
}

func TestRegistryRoundTrip(t *testing.T) {
	reg := newFakeRegistry(t)
	writer := newTestCodec(t, WithRegistry(reg.URL()))
	reader := newTestCodec(t, WithRegistry(reg.URL())) // cold caches: fetches schemas by id

	topics := Topics()
	for round := range 2 {
		for _, ti := range topics {
			want := sample(ti.Name)
			data, err := writer.Encode(ti.Name, want)
			if err != nil {
				t.Fatalf("%s: Encode: %v", ti.Name, err)
			}
			if data[0] != 0x00 {
				t.Fatalf("%s: first byte %#x, want Confluent magic 0x00", ti.Name, data[0])
			}
			id := int(binary.BigEndian.Uint32(data[1:5]))
			_, _, subjects := reg.counts()
			if ids := subjects[ti.Name+"-value"]; len(ids) == 0 || ids[len(ids)-1] != id {
				t.Fatalf("%s: frame names schema id %d, registry has %v under %s-value", ti.Name, id, ids, ti.Name)
			}
			for name, c := range map[string]*Codec{"writer": writer, "reader": reader} {
				got := ti.New()
				if err := c.Decode(ti.Name, data, got); err != nil {
					t.Fatalf("%s: %s Decode (round %d): %v", ti.Name, name, round, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: %s round trip differs", ti.Name, name)
				}
			}
		}
	}

	posts, gets, _ := reg.counts()
	if posts != len(topics) {
		t.Errorf("registry saw %d registrations for %d subjects over 2 rounds, want one per subject", posts, len(topics))
	}
	for id, n := range gets {
		if n != 1 {
			t.Errorf("schema id %d fetched %d times, want once (cached)", id, n)
		}
	}
}

func TestRegistryCodecReadsSingleObject(t *testing.T) {
	reg := newFakeRegistry(t)
	data, err := newTestCodec(t).Encode(TopicDecisions, sample(TopicDecisions))
	if err != nil {
		t.Fatal(err)
	}
	got := new(Decision)
	if err := newTestCodec(t, WithRegistry(reg.URL())).Decode(TopicDecisions, data, got); err != nil {
		t.Fatalf("registry codec decoding single-object data: %v", err)
	}
	if !reflect.DeepEqual(got, sample(TopicDecisions)) {
		t.Fatal("round trip differs")
	}
}

func TestRegistryResolvesOlderWriter(t *testing.T) {
	reg := newFakeRegistry(t)
	id := reg.add(TopicFraud+"-value", olderFraudSchema, false)
	soe := encodeWith(t, olderFraudSchema, sample(TopicFraud))
	frame := binary.BigEndian.AppendUint32([]byte{0x00}, uint32(id))
	frame = append(frame, soe[soeHeaderLen:]...)

	got := new(FraudAssessed)
	if err := newTestCodec(t, WithRegistry(reg.URL())).Decode(TopicFraud, frame, got); err != nil {
		t.Fatalf("Decode of data written with an older registered schema: %v", err)
	}
	if len(got.Checks) != 2 || got.Checks[0].Detail != nil || got.Checks[0].Name != "fraud.injection" {
		t.Fatalf("resolved decode wrong: %+v", got.Checks)
	}
}

func TestRegistryErrors(t *testing.T) {
	reg := newFakeRegistry(t)
	c := newTestCodec(t, WithRegistry(reg.URL()))

	unknownID := []byte{0x00, 0, 0, 0x30, 0x39, 0x02}
	err := c.Decode(TopicFraud, unknownID, new(FraudAssessed))
	if err == nil || !strings.Contains(err.Error(), "12345") {
		t.Fatalf("Decode with an unknown schema id: error %v does not name id 12345", err)
	}

	otherID := reg.add("other-value", `{"type":"record","name":"Other","fields":[{"name":"x","type":"int"}]}`, false)
	frame := binary.BigEndian.AppendUint32([]byte{0x00}, uint32(otherID))
	if err := c.Decode(TopicFraud, append(frame, 2), new(FraudAssessed)); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("Decode of an unrelated writer schema: error = %v, want ErrIncompatible", err)
	}

	down := newFakeRegistry(t)
	downCodec := newTestCodec(t, WithRegistry(down.URL()))
	down.srv.Close()
	if _, err := downCodec.Encode(TopicFraud, sample(TopicFraud)); err == nil {
		t.Fatal("Encode with an unreachable registry: no error")
	}
}
