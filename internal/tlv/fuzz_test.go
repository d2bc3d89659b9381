package tlv

import (
	"bytes"
	"testing"
)

// FuzzTLV checks that Parse, Children and ToDER never panic, that Raw and rest partition the
// input, and that ToDER output is itself DER (a fixed point) when it succeeds.
func FuzzTLV(f *testing.F) {
	for _, s := range [][]byte{
		{0x30, 0x80, 0x02, 0x01, 0x01, 0x00, 0x00},
		{0x61, 0x05, 0x5F, 0x1F, 0x02, 0x50, 0x3C},
		{0x24, 0x80, 0x04, 0x01, 0x01, 0x04, 0x01, 0x02, 0x00, 0x00},
		{0x23, 0x80, 0x03, 0x02, 0x00, 0xFF, 0x03, 0x02, 0x04, 0xF0, 0x00, 0x00},
		{0x77, 0x82, 0x00, 0x03, 0x30, 0x01, 0x05},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tv, rest, err := Parse(b)
		if err == nil {
			if len(tv.Raw)+len(rest) != len(b) {
				t.Fatalf("raw %d + rest %d != input %d", len(tv.Raw), len(rest), len(b))
			}
			if tv.Constructed {
				_, _ = tv.Children()
			}
		}
		der, err := ToDER(b)
		if err != nil {
			return
		}
		again, err := ToDER(der)
		if err != nil {
			t.Fatalf("ToDER output does not parse: %v", err)
		}
		if !bytes.Equal(again, der) {
			t.Fatalf("ToDER is not idempotent: %X -> %X", der, again)
		}
	})
}
