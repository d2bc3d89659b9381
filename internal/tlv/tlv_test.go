package tlv

import (
	"bytes"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParse(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		tag         uint32
		constructed bool
		value       string
		rest        string
	}{
		{"short primitive", "04 02 AABB CC", 0x04, false, "AABB", "CC"},
		{"two-byte tag", "5F1F 03 414243", 0x5F1F, false, "414243", ""},
		{"three-byte tag", "7F8101 01 00", 0x7F8101, true, "00", ""},
		{"application constructed", "61 03 020105", 0x61, true, "020105", ""},
		{"long length 81", "04 81 03 010203", 0x04, false, "010203", ""},
		{"non-minimal long length", "04 82 0002 0102 FF", 0x04, false, "0102", "FF"},
		{"indefinite", "30 80 020101 0400 0000 05", 0x30, true, "020101 0400", "05"},
		{"nested indefinite", "30 80 A0 80 020101 0000 0000", 0x30, true, "A0 80 020101 0000", ""},
		{"empty", "05 00", 0x05, false, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := unhex(t, tc.in)
			got, rest, err := Parse(in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Tag != tc.tag || got.Constructed != tc.constructed {
				t.Errorf("tag %X constructed %v, want %X %v", got.Tag, got.Constructed, tc.tag, tc.constructed)
			}
			if !bytes.Equal(got.Value, unhex(t, tc.value)) {
				t.Errorf("value %X, want %s", got.Value, tc.value)
			}
			if !bytes.Equal(rest, unhex(t, tc.rest)) {
				t.Errorf("rest %X, want %s", rest, tc.rest)
			}
			if len(got.Raw)+len(rest) != len(in) || !bytes.Equal(got.Raw, in[:len(got.Raw)]) {
				t.Errorf("raw %X is not the prefix of the input before rest", got.Raw)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"no length", "04"},
		{"truncated value", "04 03 0102"},
		{"truncated long length", "04 82 01"},
		{"length beyond input", "04 84 7FFFFFFF 00"},
		{"five length bytes", "04 85 0000000001 00"},
		{"reserved length", "04 FF"},
		{"truncated multi-byte tag", "5F"},
		{"tag too long", "5F 81 82 83 84 01 00"},
		{"indefinite primitive", "04 80 01 0000"},
		{"indefinite without end", "30 80 020101"},
		{"stray end of contents", "00 00"},
		{"bad child in indefinite", "30 80 04 05 00 0000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse(unhex(t, tc.in))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestParseDepthLimit(t *testing.T) {
	deep := func(n int) []byte {
		var b []byte
		for i := 0; i < n; i++ {
			b = append(b, 0x30, 0x80)
		}
		b = append(b, 0x05, 0x00)
		for i := 0; i < n; i++ {
			b = append(b, 0, 0)
		}
		return b
	}
	if _, _, err := Parse(deep(MaxDepth)); err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
	if _, _, err := Parse(deep(MaxDepth + 2)); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("depth %d: err = %v, want ErrTooDeep", MaxDepth+2, err)
	}
}

func TestChildrenAndFind(t *testing.T) {
	// DG-like structure: 61 { 5F1F "P<" , 7F61 { 02 01 01 } }
	in := unhex(t, "61 0C 5F1F 02 503C 7F61 04 02 01 01 00")
	// 0x7F61 value is 4 bytes: 02 01 01 00 -> children INTEGER 1 and ... trailing 00 is not a TLV
	top, _, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := top.Children()
	if err != nil {
		t.Fatal(err)
	}
	mrz, ok := Find(kids, 0x5F1F)
	if !ok || string(mrz.Value) != "P<" {
		t.Fatalf("Find 5F1F = %v %q", ok, mrz.Value)
	}
	bio, ok := Find(kids, 0x7F61)
	if !ok {
		t.Fatal("7F61 not found")
	}
	if _, err := bio.Children(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("children of 7F61 with trailing byte: err = %v, want ErrMalformed", err)
	}
	if _, ok := Find(kids, 0x5F2E); ok {
		t.Fatal("found a tag that is not there")
	}
	if _, err := mrz.Children(); err == nil {
		t.Fatal("primitive element returned children")
	}
}

func TestToDER(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"already DER", "30 06 020101 040100", "30 06 020101 040100"},
		{"indefinite sequence", "30 80 020101 0000", "30 03 020101"},
		{"non-minimal length", "30 81 05 02 82 0001 05", "30 03 020105"},
		{"nested indefinite context", "A0 80 30 80 0500 0000 0000", "A0 04 30 02 0500"},
		{"constructed octet string", "24 80 04 02 0102 04 01 03 0000", "04 03 010203"},
		{"nested constructed octet string", "24 09 24 03 04 01 01 04 02 0203", "04 03 010203"},
		{"constructed bit string", "23 80 03 02 00 FF 03 02 04 F0 0000", "03 03 04 FF F0"},
		{"constructed printable string", "33 06 13 01 41 13 01 42", "13 02 4142"},
		{"sequence of two", "0500 30 80 0000", "0500 3000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ToDER(unhex(t, tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, tc.want); !bytes.Equal(got, want) {
				t.Fatalf("got %X, want %X", got, want)
			}
		})
	}
}

func TestToDERRejects(t *testing.T) {
	tests := []struct{ name, in string }{
		{"bit string unused bits before last", "23 08 03 02 04 F0 03 02 00 FF"},
		{"bit string empty segment", "23 02 03 00"},
		{"wrong segment tag", "24 03 02 01 01"},
		{"not TLV inside constructed", "30 02 04 05"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ToDER(unhex(t, tc.in)); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

// TestToDERMakesAsn1Parse checks the purpose of ToDER: a BER structure encoding/asn1 rejects
// parses after normalisation, with the same values.
func TestToDERMakesAsn1Parse(t *testing.T) {
	type inner struct {
		N     int
		Bytes []byte
	}
	der, err := asn1.Marshal(inner{N: 300, Bytes: []byte("hello world")})
	if err != nil {
		t.Fatal(err)
	}
	// Re-encode as BER: indefinite outer length, octet string split in two segments.
	ber := []byte{0x30, 0x80}
	ber = append(ber, der[2:6]...) // INTEGER 300: 02 02 01 2C
	ber = append(ber, 0x24, 0x80, 0x04, 0x05)
	ber = append(ber, "hello"...)
	ber = append(ber, 0x04, 0x06)
	ber = append(ber, " world"...)
	ber = append(ber, 0, 0, 0, 0)
	var v inner
	if _, err := asn1.Unmarshal(ber, &v); err == nil {
		t.Fatal("encoding/asn1 accepted BER; the test does not exercise ToDER")
	}
	norm, err := ToDER(ber)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(norm, der) {
		t.Fatalf("ToDER = %X, want %X", norm, der)
	}
	if _, err := asn1.Unmarshal(norm, &v); err != nil || v.N != 300 || string(v.Bytes) != "hello world" {
		t.Fatalf("after ToDER: %+v, %v", v, err)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 255, 256, 65535, 65536} {
		for _, tag := range []uint32{0x04, 0x5F1F, 0x7F8101, 0xDF818101} {
			enc := Encode(tag, make([]byte, n))
			got, rest, err := Parse(enc)
			if err != nil || len(rest) != 0 || got.Tag != tag || len(got.Value) != n {
				t.Fatalf("tag %X len %d: %+v rest %d err %v", tag, n, got.Tag, len(rest), err)
			}
		}
	}
}
