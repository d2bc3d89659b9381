package lds

import (
	"crypto"
	"encoding/asn1"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/lds/ldstest"
	"github.com/idstream/idstream/internal/mrz"
	"github.com/idstream/idstream/internal/tlv"
)

func TestDataGroupNumber(t *testing.T) {
	want := map[byte]int{0x61: 1, 0x75: 2, 0x63: 3, 0x76: 4, 0x65: 5, 0x6C: 12, 0x6D: 13, 0x6E: 14, 0x6F: 15, 0x70: 16}
	for tag, n := range want {
		if got, ok := DataGroupNumber(tag); !ok || got != n {
			t.Errorf("DataGroupNumber(%X) = %d, %v; want %d", tag, got, ok, n)
		}
	}
	for _, tag := range []byte{0x00, 0x60, 0x62, 0x64, 0x71, 0x77, 0xFF} {
		if n, ok := DataGroupNumber(tag); ok {
			t.Errorf("DataGroupNumber(%X) = %d, true; want false", tag, n)
		}
	}
}

func TestParseDG1(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	td3 := []string{
		"P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
		"L898902C36UTO7408122F1204159ZE184226B<<<<<10",
	}
	td2 := []string{
		"I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<",
		"D231458907UTO7408122F1204159<<<<<<<6",
	}
	for _, c := range []struct {
		name   string
		lines  []string
		format string
		number string
	}{
		{"TD1 CCCD", ldstest.SampleMRZ(), mrz.FormatTD1, "099012345"},
		{"TD2", td2, mrz.FormatTD2, "D23145890"},
		{"TD3", td3, mrz.FormatTD3, "L898902C3"},
	} {
		m, err := ParseDG1(ldstest.DG1(c.lines))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if m.Format != c.format || !m.Valid || m.DocumentNumber != c.number || !slices.Equal(m.Lines, c.lines) {
			t.Errorf("%s: got %+v", c.name, m)
		}
	}
	m, _ := ParseDG1(ldstest.DG1(ldstest.SampleMRZ()))
	if got := m.FieldsAt(now)["id_number"]; got != "001099012345" {
		t.Errorf("CCCD id_number %q", got)
	}

	// A corrupted digit is reported, not an error.
	bad := ldstest.SampleMRZ()
	bad[1] = "9903169" + bad[1][7:]
	if m, err := ParseDG1(ldstest.DG1(bad)); err != nil || m.Valid || m.Checks[mrz.CheckDateOfBirth] {
		t.Errorf("corrupted DG1: %+v, %v", m, err)
	}

	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"not TLV", []byte{0x61, 0x85}},
		{"wrong tag", tlv.Encode(0x62, tlv.Encode(0x5F1F, []byte(td3[0]+td3[1])))},
		{"no MRZ element", tlv.Encode(0x61, tlv.Encode(0x5F20, []byte(td3[0]+td3[1])))},
		{"primitive", tlv.Encode(0x41, nil)},
		{"wrong length", ldstest.DG1([]string{td3[0], td3[1][:40]})},
		{"bad character", ldstest.DG1([]string{td3[0], "L898902C36UTO7408122F1204159ZE184226B<<<<<1-"})},
	} {
		if m, err := ParseDG1(c.b); !errors.Is(err, ErrMalformed) || m != nil {
			t.Errorf("%s: ParseDG1 = %v, %v; want ErrMalformed", c.name, m, err)
		}
	}
}

func TestParseDG13(t *testing.T) {
	v, err := ParseDG13(ldstest.DG13(ldstest.SampleDG13Fields()))
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{"id_number", "001099012345"}, {"full_name", "Nguyễn Văn A"}, {"date_of_birth", "1999-03-15"},
		{"sex", "M"}, {"nationality", "Việt Nam"}, {"ethnicity", "Kinh"}, {"religion", "Không"},
		{"place_of_origin", "Phường Mẫu, Quận Thử, Hà Nội"},
		{"place_of_residence", "Số 1 Đường Giả Định, Phường Mẫu, Quận Thử, Hà Nội"},
		{"identifying_marks", "Nốt ruồi C:2cm trên sau đuôi mắt trái"},
		{"issue_date", "2021-07-01"}, {"expiry_date", "2039-03-15"},
		{"father_name", "Nguyễn Văn B"}, {"mother_name", "Trần Thị C"},
	}
	if got := v.Fields(); !slices.Equal(got, want) {
		t.Errorf("Fields:\n got %v\nwant %v", got, want)
	}
	if v.Skipped != 0 || len(v.Other) != 0 {
		t.Errorf("Skipped %d, Other %v", v.Skipped, v.Other)
	}

	// The chip's MRZ and DG13 of the sample holder agree on the fields both carry.
	mf := mustDG1(t, ldstest.DG1(ldstest.SampleMRZ())).FieldsAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, f := range v.Fields() {
		if mv, ok := mf[f.Name]; ok && f.Name != "full_name" && f.Name != "nationality" && mv != f.Value {
			t.Errorf("%s: MRZ %q, DG13 %q", f.Name, mv, f.Value)
		}
	}
}

func mustDG1(t *testing.T, b []byte) *mrz.MRZ {
	t.Helper()
	m, err := ParseDG1(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestParseDG13Tolerant feeds the encodings readers have seen or might see: wrappers, other
// string types, flat parents, unknown ids, and broken entries that must be skipped.
func TestParseDG13Tolerant(t *testing.T) {
	seq := func(parts ...[]byte) []byte { return tlv.Encode(0x30, slices.Concat(parts...)) }
	utf8s := func(s string) []byte { return tlv.Encode(0x0C, []byte(s)) }
	bmp := func(s string) []byte {
		var b []byte
		for _, r := range s {
			b = append(b, byte(r>>8), byte(r))
		}
		return tlv.Encode(0x1E, b)
	}
	entries := slices.Concat(
		seq(ldstest.Integer(1), tlv.Encode(0x13, []byte("001099012345"))),                                 // PrintableString
		seq(ldstest.Integer(2), bmp("Lê Thị D")),                                                          // BMPString
		seq(ldstest.Integer(3), tlv.Encode(0x04, []byte("01-02-2003"))),                                   // OCTET STRING
		seq(ldstest.Integer(4), utf8s("Nu\u031b\u0303")),                                                  // decomposed Nữ
		seq(ldstest.Integer(5), tlv.Encode(0x2C, slices.Concat(utf8s("Vi\xe1\xbb"), utf8s("\x87t Nam")))), // BER constructed string, split inside a character
		seq(ldstest.Integer(12), utf8s("Không thời hạn")),                                                 // no expiry: kept as text
		seq(ldstest.Integer(13), utf8s("Lê Văn E"), utf8s("Phạm Thị G")),                                  // flat parents
		seq(ldstest.Integer(14), utf8s("123456789")),                                                      // unknown id
		seq(ldstest.Integer(6), []byte{0x0C, 0x02, 0xC3, 0x28}),                                           // invalid UTF-8: skipped
		seq(ldstest.Integer(7), tlv.Encode(0x02, []byte{0x05})),                                           // no text: skipped
		seq(tlv.Encode(0x02, []byte{0xFF}), utf8s("x")),                                                   // negative id: skipped
		seq(ldstest.Integer(8), tlv.Encode(0x30, []byte{0x0C, 0x05, 'a'})),                                // broken nesting: skipped
		seq(ldstest.Integer(1), utf8s("999999999999")),                                                    // duplicate: first wins
	)
	// Entries inside a SET inside a SEQUENCE, beside a version number.
	dg := tlv.Encode(0x6D, slices.Concat(ldstest.Integer(0), seq(tlv.Encode(0x31, entries))))
	v, err := ParseDG13(dg)
	if err != nil {
		t.Fatal(err)
	}
	want := VNIdentity{
		IDNumber: "001099012345", FullName: "Lê Thị D", DateOfBirth: "2003-02-01", Sex: "F",
		Nationality: "Việt Nam", ExpiryDate: "Không thời hạn", FatherName: "Lê Văn E", MotherName: "Phạm Thị G",
		Other: map[int]string{14: "123456789"}, Skipped: 4,
	}
	if v.IDNumber != want.IDNumber || v.FullName != want.FullName || v.DateOfBirth != want.DateOfBirth ||
		v.Sex != want.Sex || v.Nationality != want.Nationality || v.ExpiryDate != want.ExpiryDate ||
		v.FatherName != want.FatherName || v.MotherName != want.MotherName || v.Skipped != want.Skipped ||
		len(v.Other) != 1 || v.Other[14] != "123456789" || v.Ethnicity != "" || v.Religion != "" {
		t.Errorf("got  %+v\nwant %+v", *v, want)
	}

	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"wrong tag", tlv.Encode(0x6E, entries)},
		{"truncated", dg[:len(dg)-3]},
		{"broken first level", tlv.Encode(0x6D, []byte{0x30, 0x09, 0x02})},
	} {
		if v, err := ParseDG13(c.b); !errors.Is(err, ErrMalformed) || v != nil {
			t.Errorf("%s: ParseDG13 = %v, %v; want ErrMalformed", c.name, v, err)
		}
	}
}

func TestParseDG14(t *testing.T) {
	caInfo, _ := asn1.Marshal(struct {
		Protocol asn1.ObjectIdentifier
		Version  int
	}{asn1.ObjectIdentifier{0, 4, 0, 127, 0, 7, 2, 2, 3, 2, 2}, 1})
	pace, _ := asn1.Marshal(struct {
		Protocol asn1.ObjectIdentifier
		Version  int
	}{asn1.ObjectIdentifier{0, 4, 0, 127, 0, 7, 2, 2, 4, 2, 2}, 2})
	for _, c := range []struct {
		alg  asn1.ObjectIdentifier
		hash crypto.Hash
	}{
		{asn1.ObjectIdentifier{0, 4, 0, 127, 0, 7, 1, 1, 4, 1, 3}, crypto.SHA256},
		{asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 3}, crypto.SHA384},
		{asn1.ObjectIdentifier{1, 2, 3}, 0},
	} {
		si, err := ParseDG14(ldstest.DG14(c.alg, caInfo, pace))
		if err != nil {
			t.Fatal(err)
		}
		aa := si.ActiveAuthentication
		if aa == nil || aa.Version != 1 || aa.SignatureAlgorithm != c.alg.String() || aa.Hash != c.hash {
			t.Errorf("%v: AA %+v", c.alg, aa)
		}
		if len(si.ChipAuthentication) != 1 || si.ChipAuthentication[0].Protocol != "0.4.0.127.0.7.2.2.3.2.2" ||
			!slices.Equal(si.ChipAuthentication[0].Raw, caInfo) {
			t.Errorf("chip authentication %+v", si.ChipAuthentication)
		}
		if len(si.Other) != 1 || si.Other[0].Protocol != "0.4.0.127.0.7.2.2.4.2.2" {
			t.Errorf("other %+v", si.Other)
		}
	}
	noAA := tlv.Encode(0x6E, tlv.Encode(0x31, caInfo))
	if si, err := ParseDG14(noAA); err != nil || si.ActiveAuthentication != nil {
		t.Errorf("DG14 without AA: %+v, %v", si, err)
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"wrong tag", tlv.Encode(0x6D, tlv.Encode(0x31, caInfo))},
		{"no set", tlv.Encode(0x6E, caInfo)},
		{"not a sequence", tlv.Encode(0x6E, tlv.Encode(0x31, tlv.Encode(0x04, []byte{1})))},
		{"no oid", tlv.Encode(0x6E, tlv.Encode(0x31, tlv.Encode(0x30, slices.Concat(ldstest.Integer(1), ldstest.Integer(1)))))},
		{"bad oid", tlv.Encode(0x6E, tlv.Encode(0x31, tlv.Encode(0x30, slices.Concat(tlv.Encode(0x06, []byte{0x80}), ldstest.Integer(1)))))},
		{"AA without algorithm", tlv.Encode(0x6E, tlv.Encode(0x31, tlv.Encode(0x30, slices.Concat(
			tlv.Encode(0x06, []byte{0x67, 0x81, 0x08, 0x01, 0x01, 0x05}), ldstest.Integer(1)))))},
	} {
		if si, err := ParseDG14(c.b); !errors.Is(err, ErrMalformed) || si != nil {
			t.Errorf("%s: ParseDG14 = %v, %v; want ErrMalformed", c.name, si, err)
		}
	}
}
