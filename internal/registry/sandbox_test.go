package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSandboxHTTPErrors(t *testing.T) {
	srv := sandboxServer(t, WithSandboxToken("tok"))
	good, _ := json.Marshal(validQuery())
	bad := validQuery()
	bad.DateOfBirth = "1990-02-30"
	invalid, _ := json.Marshal(bad)
	tests := []struct {
		name     string
		method   string
		path     string
		token    string
		body     []byte
		status   int
		code     string
		noDetail string // a value the problem must not echo
	}{
		{"ok", http.MethodPost, "/v1/identity/check", "tok", good, 200, "", ""},
		{"no token", http.MethodPost, "/v1/identity/check", "", good, 401, codeUnauthorized, ""},
		{"wrong token", http.MethodPost, "/v1/tax/check", "nope", good, 401, codeUnauthorized, ""},
		{"unknown path", http.MethodPost, "/v1/passport/check", "tok", good, 404, codeNotFound, ""},
		{"GET a lookup", http.MethodGet, "/v1/identity/check", "tok", nil, 405, codeMethod, ""},
		{"malformed JSON", http.MethodPost, "/v1/identity/check", "tok", []byte(`{"id_number":`), 400, codeInvalidRequest, ""},
		{"two objects", http.MethodPost, "/v1/identity/check", "tok", append(append([]byte{}, good...), good...), 400, codeInvalidRequest, ""},
		{"invalid query", http.MethodPost, "/v1/social-insurance/check", "tok", invalid, 422, codeInvalidQuery, bad.IDNumber},
		{"too large", http.MethodPost, "/v1/health-insurance/check", "tok", bytes.Repeat([]byte(" "), MaxRequestBytes+1), 413, codeTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, bytes.NewReader(tt.body))
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.code == "" {
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type = %q", ct)
			}
			var p problem
			if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
				t.Fatal(err)
			}
			if p.Code != tt.code || p.Status != tt.status || p.Type != problemTypeBase+tt.code {
				t.Errorf("problem = %+v, want code %s", p, tt.code)
			}
			if tt.noDetail != "" && strings.Contains(p.Detail, tt.noDetail) {
				t.Errorf("problem detail %q echoes personal data", p.Detail)
			}
		})
	}
}

func TestSandboxUnavailablePersonaOverHTTP(t *testing.T) {
	srv := sandboxServer(t)
	body, _ := json.Marshal(personaByKey(t, "unavailable").Query())
	resp, err := http.Post(srv.URL+"/v1/identity/check", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p problem
	_ = json.NewDecoder(resp.Body).Decode(&p)
	if resp.StatusCode != http.StatusServiceUnavailable || p.Code != codeUnavailable {
		t.Fatalf("status %d code %q, want 503 %s", resp.StatusCode, p.Code, codeUnavailable)
	}
}

func TestSandboxResponseShape(t *testing.T) {
	srv := sandboxServer(t)
	body, _ := json.Marshal(personaByKey(t, "name_mismatch").Query())
	resp, err := http.Post(srv.URL+"/v1/identity/check", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"lookup", "outcome", "mismatched_fields", "reference_id", "checked_at"} {
		if _, ok := got[key]; !ok {
			t.Errorf("response lacks %q: %v", key, got)
		}
	}
	if got["outcome"] != "name_mismatch" || got["lookup"] != "identity" {
		t.Errorf("response = %v", got)
	}
	if _, err := time.Parse(time.RFC3339, got["checked_at"].(string)); err != nil {
		t.Errorf("checked_at not RFC 3339: %v", err)
	}
}

func TestSandboxPersonaListAndHealth(t *testing.T) {
	srv := sandboxServer(t)
	resp, err := http.Get(srv.URL + personaPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Personas []personaJSON `json:"personas"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if len(list.Personas) != len(Personas()) || list.Personas[0].IDNumber != PersonaMatchID {
		t.Errorf("personas = %+v", list.Personas)
	}
	h, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	h.Body.Close()
	if h.StatusCode != http.StatusOK {
		t.Errorf("healthz = %d", h.StatusCode)
	}
}

func TestSandboxInProcessErrors(t *testing.T) {
	reg := NewSandbox(WithSlowDelay(time.Minute)).Registry()
	q := validQuery()
	q.IDNumber = "12"
	if _, err := reg.CheckIdentity(context.Background(), q); !errors.Is(err, ErrInvalidQuery) {
		t.Errorf("invalid query: err = %v, want ErrInvalidQuery", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := reg.CheckTax(ctx, personaByKey(t, "slow").Query())
	var re *Error
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &re) || re.Lookup != LookupTax {
		t.Errorf("slow persona past the deadline: err = %v, want *Error wrapping ErrUnavailable", err)
	}
}

func TestSandboxServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sb := NewSandbox(WithSandboxToken("tok"))
	addr, err := sb.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	client, _, _ := newTestClient(t, "http://"+addr, WithBearerToken("tok"))
	if res, err := client.CheckIdentity(context.Background(), validQuery()); err != nil || res.Outcome != IdentityMatch {
		t.Fatalf("CheckIdentity = %+v, %v", res, err)
	}
	if _, err := sb.Serve(ctx, addr); err == nil {
		t.Error("a second Serve on the same address succeeded")
	}
	cancel()
	// Once shut down, the address refuses connections. Shutdown is asynchronous: poll for
	// it (bounded) rather than assert a duration.
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("sandbox still accepting connections after its context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSandboxHandlerWithoutToken(t *testing.T) {
	// Without WithSandboxToken requests need no Authorization header.
	rec := httptest.NewRecorder()
	body, _ := json.Marshal(validQuery())
	NewSandbox().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/tax/check", bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d: %s", rec.Code, rec.Body)
	}
}

// FuzzSandboxHandler feeds arbitrary bodies to every lookup: the sandbox never panics and
// answers only with documented statuses.
func FuzzSandboxHandler(f *testing.F) {
	good, _ := json.Marshal(validQuery())
	f.Add(good, uint8(0))
	f.Add([]byte(`{"id_number":"001090012345","full_name":"LE\u0302","date_of_birth":"1990-03-15"}`), uint8(1))
	f.Add([]byte(`{"id_number":1}`), uint8(2))
	f.Add([]byte(`null`), uint8(3))
	sb := NewSandbox(WithSlowDelay(0))
	lookups := Lookups()
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		l := lookups[int(which)%len(lookups)]
		rec := httptest.NewRecorder()
		sb.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, l.path(), bytes.NewReader(body)))
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusServiceUnavailable:
		default:
			t.Fatalf("status %d", rec.Code)
		}
		if rec.Code == http.StatusOK {
			if _, err := decodeCheckResponse(l, rec.Body.Bytes()); err != nil {
				t.Fatalf("the sandbox's own answer does not decode: %v", err)
			}
		}
	})
}
