// Package chiptest builds complete, really signed chip reads for tests and load generation
// (`idstream bench`): the files an SDK posts to the nfc step (EF.SOD, DG1, DG2, DG13, DG14,
// DG15 and the active authentication answer to a session nonce) for a sandbox registry
// persona, signed by an mrtdtest PKI generated at run time. Nothing is committed and nothing
// describes a real person. It is not for production use.
package chiptest

import (
	"crypto"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/lds/ldstest"
	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/internal/mrz"
	"github.com/idstream/idstream/internal/registry"
)

// File names of a chip read, as the nfc step's JSON names them (API.md).
const (
	FileSOD         = "sod"
	FileDG1         = "dg1"
	FileDG2         = "dg2"
	FileDG13        = "dg13"
	FileDG14        = "dg14"
	FileDG15        = "dg15"
	FileAASignature = "aa_signature"
)

type config struct {
	face       []byte
	rsaKey     bool
	noAA       bool
	sodOptions []mrtdtest.SODOption
}

// Option configures NewChip.
type Option func(*config)

// WithFace sets the DG2 face image, JPEG or JPEG2000 (default a small synthetic JPEG).
func WithFace(img []byte) Option { return func(c *config) { c.face = img } }

// WithRSAChipKey gives the chip an RSA-1024 active authentication key (ISO/IEC 9796-2, SHA-1)
// and no DG14, like many passports. The default is an ECDSA P-256 key whose hash (SHA-256)
// DG14's ActiveAuthenticationInfo names.
func WithRSAChipKey() Option { return func(c *config) { c.rsaKey = true } }

// WithoutActiveAuthentication makes a chip without active authentication: no DG14, DG15 or
// aa_signature.
func WithoutActiveAuthentication() Option { return func(c *config) { c.noAA = true } }

// WithSODOptions passes options to PKI.BuildSOD (another signer, hash, BER encoding, ...).
func WithSODOptions(opts ...mrtdtest.SODOption) Option {
	return func(c *config) { c.sodOptions = append(c.sodOptions, opts...) }
}

// NewChip is Build failing t on any error.
func NewChip(t testing.TB, pki *mrtdtest.PKI, persona registry.Persona, nonce []byte, opts ...Option) map[string][]byte {
	t.Helper()
	files, err := Build(pki, persona, nonce, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Build returns the files of a chip read for persona (the sandbox registry persona whose
// card it is), signed by pki's DS, with aa_signature the chip's answer to nonce. Keys are
// file names (File*), values the raw bytes as read from the chip; RequestJSON turns them
// into the nfc step's body. The card was issued a year before pki.Now and expires ten years
// after it. Safe for concurrent use (each chip gets a key of its own).
func Build(pki *mrtdtest.PKI, persona registry.Persona, nonce []byte, opts ...Option) (map[string][]byte, error) {
	cfg := config{face: ldstest.JPEG(48, 64)}
	for _, o := range opts {
		o(&cfg)
	}
	issued, expiry := pki.Now.AddDate(-1, 0, 0), pki.Now.AddDate(10, 0, 0)
	lines, err := MRZLines(persona, expiry)
	if err != nil {
		return nil, err
	}
	dgs := map[int][]byte{
		1:  ldstest.DG1(lines),
		2:  ldstest.DG2(cfg.face),
		13: ldstest.DG13(DG13Fields(persona, issued, expiry)),
	}
	var key *mrtdtest.ChipKey
	if !cfg.noAA {
		if cfg.rsaKey {
			key, err = mrtdtest.NewRSAChipKey(1024, crypto.SHA1)
		} else {
			key, err = mrtdtest.NewECDSAChipKey(elliptic.P256(), crypto.SHA256)
			dgs[14] = ldstest.DG14(mrtd.ECDSASignatureOID(crypto.SHA256))
		}
		if err != nil {
			return nil, fmt.Errorf("chiptest: chip key: %w", err)
		}
		if dgs[15], err = key.DG15(); err != nil {
			return nil, fmt.Errorf("chiptest: DG15: %w", err)
		}
	}
	sod, err := pki.BuildSOD(dgs, cfg.sodOptions...)
	if err != nil {
		return nil, fmt.Errorf("chiptest: SOD: %w", err)
	}
	files := map[string][]byte{FileSOD: sod, FileDG1: dgs[1], FileDG2: dgs[2], FileDG13: dgs[13]}
	if dgs[14] != nil {
		files[FileDG14] = dgs[14]
	}
	if key != nil {
		files[FileDG15] = dgs[15]
		if files[FileAASignature], err = key.SignNonce(nonce); err != nil {
			return nil, fmt.Errorf("chiptest: active authentication: %w", err)
		}
	}
	return files, nil
}

// RequestJSON returns the nfc step's JSON body for files: each file base64 (standard
// encoding) under its name.
func RequestJSON(files map[string][]byte) []byte {
	body := make(map[string]string, len(files))
	for name, data := range files {
		body[name] = base64.StdEncoding.EncodeToString(data)
	}
	b, _ := json.Marshal(body) // a map of strings always marshals
	return b
}

// Persona returns the sandbox persona with the given key ("match", "name_mismatch", ...),
// failing t when there is none.
func Persona(t testing.TB, key string) registry.Persona {
	t.Helper()
	p, ok := PersonaByKey(key)
	if !ok {
		t.Fatalf("chiptest: no sandbox persona %q", key)
	}
	return p
}

// PersonaByKey returns the sandbox persona with the given key, false when there is none.
func PersonaByKey(key string) (registry.Persona, bool) {
	for _, p := range registry.Personas() {
		if p.Key == key {
			return p, true
		}
	}
	return registry.Persona{}, false
}

// DG13Fields returns the DG13 entries of persona's chip ID card: ID number, full name, date
// of birth (dd/mm/yyyy), sex (Nam/Nữ), nationality, and issue and expiry dates.
func DG13Fields(persona registry.Persona, issued, expiry time.Time) map[int]string {
	sex := "Nam"
	if persona.Sex == registry.SexFemale {
		sex = "Nữ"
	}
	return map[int]string{
		1:  persona.IDNumber,
		2:  persona.FullName,
		3:  vnDate(persona.DateOfBirth),
		4:  sex,
		5:  "Việt Nam",
		6:  "Kinh",
		11: issued.Format("02/01/2006"),
		12: expiry.Format("02/01/2006"),
	}
}

// vnDate turns YYYY-MM-DD into dd/mm/yyyy.
func vnDate(iso string) string {
	d, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return d.Format("02/01/2006")
}

// MRZ is MRZLines failing t on an error.
func MRZ(t testing.TB, persona registry.Persona, expiry time.Time) []string {
	t.Helper()
	lines, err := MRZLines(persona, expiry)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// MRZLines returns the TD1 MRZ of persona's Vietnamese chip ID card expiring at expiry:
// document number the last nine digits of the ID number, optional data the ID number, every
// check digit right, the name transliterated without diacritics. It returns an error for a
// persona without a 12-digit ID number, a one-letter sex or a date of birth.
func MRZLines(persona registry.Persona, expiry time.Time) ([]string, error) {
	id := persona.IDNumber
	if len(id) != 12 {
		return nil, fmt.Errorf("chiptest: persona %q has no 12-digit ID number", persona.Key)
	}
	if len(persona.Sex) != 1 {
		return nil, fmt.Errorf("chiptest: persona %q has no one-letter sex", persona.Key)
	}
	dob, err := time.Parse(time.DateOnly, persona.DateOfBirth)
	if err != nil {
		return nil, fmt.Errorf("chiptest: persona %q date of birth: %w", persona.Key, err)
	}
	var cdErr error
	cd := func(s string) string {
		d, err := mrz.CheckDigit(s)
		if err != nil {
			cdErr = fmt.Errorf("chiptest: check digit: %w", err)
			return "0" // a digit in its place: the lines keep their shape until the error is returned
		}
		return string(d)
	}
	docNumber := id[3:]
	l1 := "IDVNM" + docNumber + cd(docNumber) + id + "<<<"
	birth, exp := dob.Format("060102"), expiry.Format("060102")
	l2 := birth + cd(birth) + persona.Sex + exp + cd(exp) + "VNM" + strings.Repeat("<", 11)
	l2 += cd(l1[5:30] + l2[0:7] + l2[8:15] + l2[18:29])
	if cdErr != nil {
		return nil, cdErr
	}
	words := strings.Fields(strings.ToUpper(transliterate(persona.FullName)))
	name := ""
	if len(words) > 0 {
		name = words[0] + "<<" + strings.Join(words[1:], "<")
	}
	l3 := (name + strings.Repeat("<", 30))[:30]
	return []string{l1, l2, l3}, nil
}

// vnASCII maps the Vietnamese letters to the ASCII letter an MRZ writes for them.
var vnASCII = func() map[rune]rune {
	m := map[rune]rune{'đ': 'd', 'Đ': 'D'}
	for ascii, letters := range map[rune]string{
		'a': "àáảãạăằắẳẵặâầấẩẫậ", 'e': "èéẻẽẹêềếểễệ", 'i': "ìíỉĩị",
		'o': "òóỏõọôồốổỗộơờớởỡợ", 'u': "ùúủũụưừứửữự", 'y': "ỳýỷỹỵ",
		'A': "ÀÁẢÃẠĂẰẮẲẴẶÂẦẤẨẪẬ", 'E': "ÈÉẺẼẸÊỀẾỂỄỆ", 'I': "ÌÍỈĨỊ",
		'O': "ÒÓỎÕỌÔỒỐỔỖỘƠỜỚỞỠỢ", 'U': "ÙÚỦŨỤƯỪỨỬỮỰ", 'Y': "ỲÝỶỸỴ",
	} {
		for _, r := range letters {
			m[r] = ascii
		}
	}
	return m
}()

// transliterate writes precomposed Vietnamese text in ASCII letters.
func transliterate(s string) string {
	return strings.Map(func(r rune) rune {
		if a, ok := vnASCII[r]; ok {
			return a
		}
		return r
	}, s)
}
