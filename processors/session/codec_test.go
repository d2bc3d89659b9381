package session

import (
	"testing"

	"github.com/idstream/idstream/schemas"
)

func newCodec(t *testing.T) *schemas.Codec {
	t.Helper()
	c, err := schemas.NewCodec()
	if err != nil {
		t.Fatalf("schemas.NewCodec: %v", err)
	}
	return c
}
