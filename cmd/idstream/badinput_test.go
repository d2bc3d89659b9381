package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

func hashKey(k string) string {
	sum := sha256.Sum256([]byte(k))
	return hex.EncodeToString(sum[:])
}

// testTenants writes a tenants file with tenants "acme" and "globex", and "brief" whose
// sessions expire after ttl seconds.
func testTenants(t *testing.T, dir string, ttl int) string {
	t.Helper()
	yaml := fmt.Sprintf(`tenants:
  - id: acme
    name: Acme Bank
    api_key_hashes: [%s]
    admin_key_hashes: [%s]
    webhook_secrets: [whsec_%s]
    data_retention: service
    allow_private_webhooks: true
  - id: brief
    name: Brief Sessions Ltd
    api_key_hashes: [%s]
    session_ttl_seconds: %d
  - id: globex
    name: Globex Telecom
    api_key_hashes: [%s]
    admin_key_hashes: [%s]
    webhook_secrets: [whsec_%s]
    data_retention: integrator
`, hashKey("sk_acme"), hashKey("ak_acme"), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)), hashKey("sk_brief"), ttl,
		hashKey("sk_globex"), hashKey("ak_globex"), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32)))
	path := filepath.Join(dir, "tenants.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadInput sends every kind of bad request of the issue through the real stack: each
// gets the status and problem code of API.md, as problem+json with a request id, never a 5xx.
func TestBadInput(t *testing.T) {
	tenantsDir := t.TempDir()
	s := testService(t, allGroups, func(c *Config) { c.TenantsFile = testTenants(t, tenantsDir, 1) })
	c, other, brief := newClient(t, s, "sk_acme"), newClient(t, s, "sk_globex"), newClient(t, s, "sk_brief")

	// A decided session (vehicle_registration decides on two sharp documents).
	decided := c.openSession("vehicle_registration")
	decidedID, decidedTok := str(decided["session_id"]), str(decided["sdk_token"])
	for _, side := range []string{"front", "back"} {
		if r := c.upload(decidedID, "document", side, s.documentFor(t, "vehicle_registration", side), decidedTok); r.status >= 300 {
			t.Fatalf("upload %s: %d %s", side, r.status, r.body)
		}
	}
	c.waitStatus(decidedID, "verified", "rejected")

	// An expired session: brief's sessions live 1 s. The session group must expire it by
	// itself, with no event arriving for it.
	expiring := brief.openSession("id_card")
	expiredID := str(expiring["session_id"])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.states.Wait(ctx, expiredID, func(st *schemas.SessionState) bool {
		return st != nil && st.Status == schemas.StatusExpired
	}); err != nil {
		t.Fatalf("session never expired in the state topic: %v", err)
	}

	open := c.openSession("id_card")
	openID, openTok := str(open["session_id"]), str(open["sdk_token"])
	chip := c.openSession("chip_id_card")
	chipID := str(chip["session_id"])
	another := c.openSession("id_card")
	anotherTok := str(another["sdk_token"])

	bigJSON := []byte(`{"flow":"id_card","reference_id":"` + strings.Repeat("x", 70<<10) + `"}`)
	bigImage := append(sharpImage(t, 1), bytes.Repeat([]byte{0}, 10<<20)...)
	img := base64.StdEncoding.EncodeToString(sharpImage(t, 2))

	cases := []struct {
		name   string
		do     func() response
		status int
		code   string
	}{
		{"unknown flow", func() response {
			return c.postJSON("/v1/ekyc/sessions", c.key, map[string]any{"flow": "selfie_only"})
		}, 422, "invalid_flow"},
		{"wrong content type", func() response {
			return c.do("POST", "/v1/ekyc/sessions", c.key, "text/plain", []byte(`{"flow":"id_card"}`))
		}, 415, "unsupported_media_type"},
		{"oversized JSON body", func() response {
			return c.do("POST", "/v1/ekyc/sessions", c.key, "application/json", bigJSON)
		}, 413, "payload_too_large"},
		{"oversized image", func() response {
			return c.upload(openID, "document", "front", bigImage, openTok)
		}, 413, "payload_too_large"},
		{"invalid base64 image", func() response {
			return c.postJSON("/v1/ekyc/sessions/"+openID+"/document", openTok, map[string]any{"side": "front", "image": "%%%not base64"})
		}, 422, "invalid_image"},
		{"invalid base64 chip data", func() response {
			return c.postJSON("/v1/ekyc/sessions/"+chipID+"/nfc", c.key, map[string]any{"sod": "%%%", "dg1": "AAAA"})
		}, 422, "invalid_chip_data"},
		{"not an image", func() response {
			return c.postJSON("/v1/ekyc/sessions/"+openID+"/selfie", openTok, map[string]any{"image": base64.StdEncoding.EncodeToString([]byte("GIF89a not really"))})
		}, 422, "invalid_image"},
		{"step not in flow", func() response {
			return c.postJSON("/v1/ekyc/sessions/"+openID+"/document", openTok, map[string]any{"side": "passport", "image": img})
		}, 422, "step_not_in_flow"},
		{"unknown session", func() response {
			return c.do("GET", "/v1/ekyc/sessions/ses_doesnotexist", c.key, "", nil)
		}, 404, "session_not_found"},
		{"another tenant's session", func() response {
			return other.do("GET", "/v1/ekyc/sessions/"+openID, other.key, "", nil)
		}, 404, "session_not_found"},
		{"another tenant's session step", func() response {
			return other.postJSON("/v1/ekyc/sessions/"+openID+"/document", other.key, map[string]any{"side": "front", "image": img})
		}, 404, "session_not_found"},
		{"expired session", func() response {
			return brief.postJSON("/v1/ekyc/sessions/"+expiredID+"/document", brief.key, map[string]any{"side": "front", "image": img})
		}, 410, "session_expired"},
		{"decided session", func() response {
			return c.postJSON("/v1/ekyc/sessions/"+decidedID+"/document", c.key, map[string]any{"side": "front", "image": img})
		}, 409, "session_closed"},
		{"missing key", func() response {
			return c.do("GET", "/v1/ekyc/sessions/"+openID, "", "", nil)
		}, 401, "unauthorized"},
		{"invalid key", func() response {
			return c.do("GET", "/v1/ekyc/sessions/"+openID, "sk_wrong", "", nil)
		}, 401, "unauthorized"},
		{"sdk token on another session", func() response {
			return c.postJSON("/v1/ekyc/sessions/"+openID+"/document", anotherTok, map[string]any{"side": "front", "image": img})
		}, 404, "session_not_found"},
		{"sdk token opening a session", func() response {
			return c.postJSON("/v1/ekyc/sessions", openTok, map[string]any{"flow": "id_card"})
		}, 401, "unauthorized"},
		{"tenant key on admin", func() response {
			return c.postJSON("/v1/admin/blocklist", c.key, map[string]any{"id_number": "001099012345"})
		}, 403, "forbidden"},
		{"invalid JSON", func() response {
			return c.do("POST", "/v1/ekyc/sessions", c.key, "application/json", []byte(`{"flow":`))
		}, 400, "invalid_json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.do()
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
				t.Errorf("content type %q, want application/problem+json", ct)
			}
			p := r.json(t)
			if p["code"] != tc.code || p["type"] != "https://idstream.dev/problems/"+tc.code || int(p["status"].(float64)) != tc.status {
				t.Errorf("problem = %s, want code %s", r.body, tc.code)
			}
			if r.header.Get("X-Request-Id") == "" || p["request_id"] != r.header.Get("X-Request-Id") {
				t.Errorf("request id: header %q body %v", r.header.Get("X-Request-Id"), p["request_id"])
			}
		})
	}

	// The open session is untouched by all of that and still usable.
	if r := c.do(http.MethodGet, "/v1/ekyc/sessions/"+openID, c.key, "", nil); r.status != 200 || r.json(t)["status"] != "open" {
		t.Fatalf("open session after bad input: %d %s", r.status, r.body)
	}
}
