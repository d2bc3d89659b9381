package chiptest

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/lds"
	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/internal/mrz"
	"github.com/idstream/idstream/internal/registry"
)

func TestMRZOfEveryPersonaIsValid(t *testing.T) {
	expiry := time.Date(2036, 5, 17, 0, 0, 0, 0, time.UTC)
	for _, p := range registry.Personas() {
		m, err := mrz.Parse(MRZ(t, p, expiry))
		if err != nil {
			t.Fatalf("%s: %v", p.Key, err)
		}
		f := m.FieldsAt(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		if !m.Valid || f["id_number"] != p.IDNumber || f["date_of_birth"] != p.DateOfBirth || f["sex"] != p.Sex ||
			f["expiry_date"] != "2036-05-17" {
			t.Errorf("%s: MRZ %+v fields %v", p.Key, m, f)
		}
	}
	if got := MRZ(t, Persona(t, "name_mismatch"), expiry)[2]; got != "LE<<VAN<CUONG<<<<<<<<<<<<<<<<<" {
		t.Errorf("name line = %q", got)
	}
}

func TestNewChipVerifies(t *testing.T) {
	pki, err := mrtdtest.NewPKI(mrtdtest.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	nonce := []byte("12345678")
	files := NewChip(t, pki, Persona(t, "match"), nonce)
	sod, err := mrtd.ParseSOD(files[FileSOD])
	if err != nil {
		t.Fatal(err)
	}
	dgs := map[int][]byte{1: files[FileDG1], 2: files[FileDG2], 13: files[FileDG13], 14: files[FileDG14], 15: files[FileDG15]}
	if res := mrtd.VerifyPassive(sod, dgs, pki.Trust(), pki.Now); !res.Passed {
		t.Fatalf("passive authentication: %+v", res.Checks)
	}
	id, err := lds.ParseDG13(files[FileDG13])
	if err != nil || id.FullName != "NGUYỄN VĂN AN" || id.DateOfBirth != "1990-03-15" || id.Sex != "M" {
		t.Fatalf("DG13 = %+v, %v", id, err)
	}
	pub, err := mrtd.ParseDG15(files[FileDG15])
	if err != nil {
		t.Fatal(err)
	}
	infos, err := lds.ParseDG14(files[FileDG14])
	if err != nil {
		t.Fatal(err)
	}
	if err := mrtd.VerifyActive(pub, nonce, files[FileAASignature], infos.ActiveAuthentication.Hash); err != nil {
		t.Fatalf("active authentication: %v", err)
	}

	var body map[string]string
	if err := json.Unmarshal(RequestJSON(files), &body); err != nil {
		t.Fatal(err)
	}
	if got, _ := base64.StdEncoding.DecodeString(body["sod"]); string(got) != string(files[FileSOD]) || len(body) != len(files) {
		t.Fatalf("request body has %d files", len(body))
	}
}
