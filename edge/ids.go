package edge

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"strings"

	"github.com/idstream/idstream/internal/idnumber"
)

// idEncoding is lowercase base32 without padding.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// idBodyLen is the length of the random part of every id ("ses_" + 26 chars).
const idBodyLen = 26

// randomID returns prefix + 26 lowercase base32 characters (130 random bits).
func randomID(prefix string) string {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return prefix + idEncoding.EncodeToString(b)[:idBodyLen]
}

// validID reports whether id is prefix + 26 lowercase base32 characters.
func validID(id, prefix string) bool {
	if !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+idBodyLen {
		return false
	}
	for _, c := range id[len(prefix):] {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// mac returns HMAC-SHA256(TokenSecret, parts joined by "|").
func (s *Server) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, s.cfg.TokenSecret)
	m.Write([]byte(strings.Join(parts, "|")))
	return m.Sum(nil)
}

// idempotentSessionID derives the session id of an Idempotency-Key, so that a retry gets
// the same id without shared storage.
func (s *Server) idempotentSessionID(tenantID, key string) string {
	return "ses_" + idEncoding.EncodeToString(s.mac("idem", tenantID, key))[:idBodyLen]
}

// sessionNonce is the session's 8-byte server nonce: HMAC(TokenSecret, "nonce|"+id)[:8].
func (s *Server) sessionNonce(sessionID string) []byte {
	return s.mac("nonce", sessionID)[:8]
}

// BlocklistHash is the keyed hash an id number is blocklisted under:
// hex(HMAC-SHA256(secret, NormalizeIDNumber(idNumber))).
func BlocklistHash(secret []byte, idNumber string) string {
	return idnumber.Hash(secret, idNumber)
}

// NormalizeIDNumber upper-cases an id number and drops spaces, dashes and dots.
func NormalizeIDNumber(id string) string { return idnumber.Normalize(id) }
