package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SecretPrefix starts every Standard Webhooks signing secret: "whsec_" + base64(key).
const SecretPrefix = "whsec_"

// Standard Webhooks header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// ParseSecret returns the HMAC key of a "whsec_<base64>" secret. It returns an error (that
// never contains the secret) when the prefix is missing or the rest is not base64.
func ParseSecret(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, errors.New("webhook secret: missing whsec_ prefix")
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		if key, err = base64.RawStdEncoding.DecodeString(rest); err != nil {
			return nil, errors.New("webhook secret: not base64 after whsec_")
		}
	}
	if len(key) == 0 {
		return nil, errors.New("webhook secret: empty key")
	}
	return key, nil
}

// Signature returns the webhook-signature header value for one message: for every key, in
// order, "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)), separated by
// single spaces (two keys during a secret rotation). It returns an error when keys is empty.
func Signature(keys [][]byte, id string, timestamp int64, body []byte) (string, error) {
	if len(keys) == 0 {
		return "", errors.New("webhook signature: no signing key")
	}
	ts := strconv.FormatInt(timestamp, 10)
	sigs := make([]string, 0, len(keys))
	for _, k := range keys {
		mac := hmac.New(sha256.New, k)
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// signingKeys parses every secret of a tenant. It fails when there is none or one is bad.
func signingKeys(secrets []string) ([][]byte, error) {
	if len(secrets) == 0 {
		return nil, errors.New("tenant has no webhook secret")
	}
	keys := make([][]byte, 0, len(secrets))
	for i, s := range secrets {
		k, err := ParseSecret(s)
		if err != nil {
			return nil, fmt.Errorf("webhook_secrets[%d]: %w", i, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}
