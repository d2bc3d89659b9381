package chip

import (
	"bytes"
	"context"
	"errors"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/lds"
	"github.com/idstream/idstream/internal/lds/ldstest"
	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/processors/chip/chiptest"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

const (
	tenantID  = "ten_1"
	sessionID = "ses_1"
	captureID = "cap_1"
)

var (
	sessionNonce = []byte{1, 2, 3, 4, 5, 6, 7, 8}
	otherNonce   = []byte{8, 7, 6, 5, 4, 3, 2, 1}
)

type fixture struct {
	t     *testing.T
	codec *schemas.Codec
	blobs blob.Store
	group stream.Group
	at    time.Time
}

// newFixture builds the group over a real FS blob store, the real codec and the sandbox
// registry, trusting pki's CSCA unless opts say otherwise.
func newFixture(t *testing.T, pki *mrtdtest.PKI, trust *mrtd.Trust, reg registry.Registry, opts ...Option) *fixture {
	t.Helper()
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatalf("NewCodec: %v", err)
	}
	fs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatalf("NewFS: %v", err)
	}
	t.Cleanup(func() { _ = fs.Close() })
	opts = append([]Option{WithFaceDecodeOptions(), WithClock(func() time.Time { return pki.Now })}, opts...)
	return &fixture{t: t, codec: codec, blobs: fs, group: NewGroup(codec, fs, trust, reg, opts...), at: pki.Now.Add(-time.Minute)}
}

func sandbox() registry.Registry { return registry.NewSandbox().Registry() }

func newPKI(t *testing.T, alg mrtdtest.Algorithm) *mrtdtest.PKI {
	t.Helper()
	pki, err := mrtdtest.NewPKI(alg)
	if err != nil {
		t.Fatalf("NewPKI: %v", err)
	}
	return pki
}

// record stores files as the edge does and returns the nfc capture record.
func (f *fixture) record(files map[string][]byte, nonce []byte) *stream.Record {
	f.t.Helper()
	c := schemas.CaptureSubmitted{
		Envelope:  schemas.Envelope{EventID: "evt_c1", SessionID: sessionID, TenantID: tenantID, OccurredAt: f.at, Producer: "edge"},
		CaptureID: captureID, Step: StepNFC, Nonce: nonce, Client: map[string]string{},
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	}) {
		obj, err := f.blobs.Put(context.Background(), tenantID+"/"+sessionID+"/"+captureID+"/"+name, files[name], "application/octet-stream")
		if err != nil {
			f.t.Fatalf("Put %s: %v", name, err)
		}
		c.Blobs = append(c.Blobs, schemas.BlobRef{Name: name, URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType})
	}
	return f.encode(&c)
}

func (f *fixture) encode(c *schemas.CaptureSubmitted) *stream.Record {
	f.t.Helper()
	v, err := f.codec.Encode(schemas.TopicCaptures, c)
	if err != nil {
		f.t.Fatalf("Encode: %v", err)
	}
	return &stream.Record{Topic: schemas.TopicCaptures, Key: []byte(sessionID), Value: v}
}

// run handles rec and returns its one ChipVerified.
func (f *fixture) run(rec *stream.Record) *schemas.ChipVerified {
	f.t.Helper()
	outs, err := f.group.Handler(context.Background(), rec)
	if err != nil {
		f.t.Fatalf("handler: %v", err)
	}
	if len(outs) != 1 || outs[0].Topic != schemas.TopicChip || string(outs[0].Key) != sessionID {
		f.t.Fatalf("outputs = %+v, want one ChipVerified keyed by the session", outs)
	}
	cv := new(schemas.ChipVerified)
	if err := f.codec.Decode(schemas.TopicChip, outs[0].Value, cv); err != nil {
		f.t.Fatalf("Decode: %v", err)
	}
	return cv
}

func checkOf(t *testing.T, cv *schemas.ChipVerified, name string) schemas.Check {
	t.Helper()
	for _, c := range cv.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %s in %v", name, checkNames(cv))
	return schemas.Check{}
}

func checkNames(cv *schemas.ChipVerified) []string {
	var out []string
	for _, c := range cv.Checks {
		out = append(out, c.Name)
	}
	return out
}

func reason(c schemas.Check) string {
	if c.ReasonCode == nil {
		return ""
	}
	return *c.ReasonCode
}

// expect asserts a check's status and reason code.
func expect(t *testing.T, cv *schemas.ChipVerified, name, status, reasonCode string) {
	t.Helper()
	c := checkOf(t, cv, name)
	if c.Status != status || reason(c) != reasonCode {
		t.Errorf("%s = %s/%q, want %s/%q (detail %v)", name, c.Status, reason(c), status, reasonCode, deref(c.Detail))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func fieldValue(cv *schemas.ChipVerified, name string) string {
	for _, f := range cv.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

func TestValidChipReadPassesEveryCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		alg  mrtdtest.Algorithm
		opts []chiptest.Option
	}{
		{"ECDSA PKI, ECDSA chip key", mrtdtest.ECDSAP256, nil},
		{"RSA PKI, RSA chip key", mrtdtest.RSA2048, []chiptest.Option{chiptest.WithRSAChipKey()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pki := newPKI(t, tc.alg)
			f := newFixture(t, pki, pki.Trust(), sandbox())
			persona := chiptest.Persona(t, "match")
			cv := f.run(f.record(chiptest.NewChip(t, pki, persona, sessionNonce, tc.opts...), sessionNonce))

			for _, c := range cv.Checks {
				if c.Status != schemas.CheckPass {
					t.Errorf("%s = %s/%q (%s)", c.Name, c.Status, reason(c), deref(c.Detail))
				}
				if !strings.HasPrefix(c.Name, CheckPrefix) || c.Source != Producer || c.CaptureID == nil || *c.CaptureID != captureID {
					t.Errorf("check %+v: wrong name, source or capture id", c)
				}
			}
			want := []string{CheckPassiveAuthentication, CheckSignature, CheckChain, "chip.dg1_hash", "chip.dg2_hash", "chip.dg13_hash",
				"chip.dg15_hash", CheckDG1MRZ, CheckDG2Face, CheckDG13Fields, CheckActiveAuthentication, CheckRegistryIdentity}
			for _, name := range want {
				checkOf(t, cv, name)
			}
			if cv.Envelope.EventID != "evt_chip_"+captureID || !cv.Envelope.OccurredAt.Equal(f.at) || cv.Envelope.Producer != "chip" ||
				cv.Envelope.SessionID != sessionID || cv.Envelope.TenantID != tenantID || cv.CaptureID != captureID {
				t.Errorf("envelope = %+v, capture %s", cv.Envelope, cv.CaptureID)
			}
			if cv.DocumentType != DocumentChipIDCard {
				t.Errorf("document type = %s", cv.DocumentType)
			}
			if fieldValue(cv, "id_number") != persona.IDNumber || fieldValue(cv, "full_name") != persona.FullName ||
				fieldValue(cv, "date_of_birth") != persona.DateOfBirth || fieldValue(cv, "sex") != persona.Sex {
				t.Errorf("fields = %+v", cv.Fields)
			}
			if cv.MRZ == nil || !cv.MRZ.Valid || cv.MRZ.Format != "TD1" || cv.MRZ.Fields["id_number"] != persona.IDNumber ||
				cv.MRZ.Fields["date_of_birth"] != persona.DateOfBirth || cv.MRZ.Fields["document_number"] != persona.IDNumber[3:] {
				t.Errorf("MRZ = %+v", cv.MRZ)
			}
			assertJPEGFace(t, f, cv)
		})
	}
}

func assertJPEGFace(t *testing.T, f *fixture, cv *schemas.ChipVerified) {
	t.Helper()
	if cv.FaceImage == nil || cv.FaceImage.MediaType != "image/jpeg" || cv.FaceImage.Name != FaceBlobRefName ||
		!strings.HasSuffix(cv.FaceImage.URI, tenantID+"/"+sessionID+"/"+captureID+"/chip_face.jpg") {
		t.Fatalf("face = %+v", cv.FaceImage)
	}
	img, err := f.blobs.Get(context.Background(), cv.FaceImage.URI)
	if err != nil {
		t.Fatalf("face blob: %v", err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(img)); err != nil || int64(len(img)) != cv.FaceImage.Size {
		t.Fatalf("face blob is not the JPEG referenced: %v", err)
	}
}

func TestTamperedDG13FailsItsHashAndPassiveAuthentication(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	f := newFixture(t, pki, pki.Trust(), sandbox())
	files := chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), sessionNonce)
	dg13 := bytes.Clone(files[chiptest.FileDG13])
	dg13[len(dg13)-1] ^= 0x01 // one byte of the last entry's value
	files[chiptest.FileDG13] = dg13
	cv := f.run(f.record(files, sessionNonce))

	expect(t, cv, "chip.dg13_hash", schemas.CheckFail, mrtd.ReasonDGHashMismatch)
	expect(t, cv, CheckPassiveAuthentication, schemas.CheckFail, mrtd.ReasonDGHashMismatch)
	expect(t, cv, CheckSignature, schemas.CheckPass, "")
	expect(t, cv, "chip.dg1_hash", schemas.CheckPass, "")
	expect(t, cv, CheckDG13Fields, schemas.CheckSkipped, ReasonDGUnverified)
	expect(t, cv, CheckRegistryIdentity, schemas.CheckSkipped, ReasonNoIdentityData)
	expect(t, cv, CheckActiveAuthentication, schemas.CheckPass, "")
	if len(cv.Fields) != 0 {
		t.Errorf("fields of a tampered DG13 reported: %+v", cv.Fields)
	}
}

func TestActiveAuthenticationOverAnotherNonceFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []chiptest.Option
	}{{"ECDSA chip", nil}, {"RSA chip", []chiptest.Option{chiptest.WithRSAChipKey()}}} {
		t.Run(tc.name, func(t *testing.T) {
			pki := newPKI(t, mrtdtest.ECDSAP256)
			f := newFixture(t, pki, pki.Trust(), sandbox())
			// Signed for another session's nonce, posted to this one.
			files := chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), otherNonce, tc.opts...)
			cv := f.run(f.record(files, sessionNonce))
			expect(t, cv, CheckActiveAuthentication, schemas.CheckFail, ReasonAASignatureInvalid)
			expect(t, cv, CheckPassiveAuthentication, schemas.CheckPass, "")
		})
	}
}

func TestActiveAuthenticationCases(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	persona := chiptest.Persona(t, "match")
	f := newFixture(t, pki, pki.Trust(), sandbox())

	t.Run("no DG15 is skipped", func(t *testing.T) {
		cv := f.run(f.record(chiptest.NewChip(t, pki, persona, sessionNonce, chiptest.WithoutActiveAuthentication()), sessionNonce))
		expect(t, cv, CheckActiveAuthentication, schemas.CheckSkipped, ReasonAANotSupported)
		expect(t, cv, CheckPassiveAuthentication, schemas.CheckPass, "")
	})
	t.Run("missing signature fails", func(t *testing.T) {
		files := chiptest.NewChip(t, pki, persona, sessionNonce)
		delete(files, chiptest.FileAASignature)
		cv := f.run(f.record(files, sessionNonce))
		expect(t, cv, CheckActiveAuthentication, schemas.CheckFail, ReasonAASignatureMissing)
	})
	t.Run("DG15 withheld while the SOD lists it fails", func(t *testing.T) {
		files := chiptest.NewChip(t, pki, persona, sessionNonce)
		delete(files, chiptest.FileDG15)
		cv := f.run(f.record(files, sessionNonce))
		expect(t, cv, CheckActiveAuthentication, schemas.CheckFail, ReasonDG15Missing)
	})
	t.Run("DG15 of another chip fails", func(t *testing.T) {
		files := chiptest.NewChip(t, pki, persona, sessionNonce)
		other := chiptest.NewChip(t, pki, persona, sessionNonce)
		files[chiptest.FileDG15], files[chiptest.FileAASignature] = other[chiptest.FileDG15], other[chiptest.FileAASignature]
		cv := f.run(f.record(files, sessionNonce))
		expect(t, cv, "chip.dg15_hash", schemas.CheckFail, mrtd.ReasonDGHashMismatch)
		expect(t, cv, CheckActiveAuthentication, schemas.CheckFail, ReasonDG15Unverified)
	})
	t.Run("capture without nonce fails", func(t *testing.T) {
		cv := f.run(f.record(chiptest.NewChip(t, pki, persona, sessionNonce), nil))
		expect(t, cv, CheckActiveAuthentication, schemas.CheckFail, ReasonNonceMissing)
	})
}

func TestUntrustedCSCAFailsTheChain(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	other := newPKI(t, mrtdtest.ECDSAP256)
	persona := chiptest.Persona(t, "match")
	for _, tc := range []struct {
		name  string
		trust *mrtd.Trust
		opts  []chiptest.Option
	}{
		{"another country's CSCA", other.Trust(), nil},
		{"no CSCA configured (nil trust)", nil, nil},
		{"rogue DS under a look-alike CSCA", pki.Trust(), []chiptest.Option{chiptest.WithSODOptions(mrtdtest.WithSigner(pki.RogueDS))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, pki, tc.trust, sandbox())
			cv := f.run(f.record(chiptest.NewChip(t, pki, persona, sessionNonce, tc.opts...), sessionNonce))
			expect(t, cv, CheckChain, schemas.CheckFail, mrtd.ReasonCSCAUntrusted)
			expect(t, cv, CheckPassiveAuthentication, schemas.CheckFail, mrtd.ReasonCSCAUntrusted)
			expect(t, cv, CheckSignature, schemas.CheckPass, "")
		})
	}
	t.Run("expired DS", func(t *testing.T) {
		f := newFixture(t, pki, pki.Trust(), sandbox())
		files := chiptest.NewChip(t, pki, persona, sessionNonce, chiptest.WithSODOptions(mrtdtest.WithSigner(pki.ExpiredDS)))
		cv := f.run(f.record(files, sessionNonce))
		expect(t, cv, CheckChain, schemas.CheckFail, mrtd.ReasonDSExpired)
	})
}

func TestRegistryOutcomes(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	tests := []struct {
		persona, status, reason string
	}{
		{"match", schemas.CheckPass, ""},
		{"name_mismatch", schemas.CheckFail, "name_mismatch"},
		{"dob_mismatch", schemas.CheckFail, "dob_mismatch"},
		{"revoked", schemas.CheckFail, "revoked"},
		{"deceased", schemas.CheckFail, "deceased"},
		{"not_found", schemas.CheckFail, "not_found"},
		{"unavailable", schemas.CheckWarn, ReasonRegistryUnavailable},
		{"slow", schemas.CheckWarn, ReasonRegistryUnavailable}, // past the registry timeout
	}
	f := newFixture(t, pki, pki.Trust(), sandbox(), WithRegistryTimeout(100*time.Millisecond))
	for _, tt := range tests {
		t.Run(tt.persona, func(t *testing.T) {
			cv := f.run(f.record(chiptest.NewChip(t, pki, chiptest.Persona(t, tt.persona), sessionNonce), sessionNonce))
			expect(t, cv, CheckRegistryIdentity, tt.status, tt.reason)
			expect(t, cv, CheckPassiveAuthentication, schemas.CheckPass, "")
		})
	}
	t.Run("no registry configured", func(t *testing.T) {
		f := newFixture(t, pki, pki.Trust(), nil)
		cv := f.run(f.record(chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), sessionNonce), sessionNonce))
		expect(t, cv, CheckRegistryIdentity, schemas.CheckSkipped, ReasonRegistryNotConfigured)
	})
	t.Run("registry refusing the request warns", func(t *testing.T) {
		f := newFixture(t, pki, pki.Trust(), refusingRegistry{sandbox()})
		cv := f.run(f.record(chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), sessionNonce), sessionNonce))
		expect(t, cv, CheckRegistryIdentity, schemas.CheckWarn, ReasonRegistryError)
	})
}

// refusingRegistry answers every identity lookup with ErrRejected (a configuration problem).
type refusingRegistry struct{ registry.Registry }

func (refusingRegistry) CheckIdentity(context.Context, registry.Query) (registry.IdentityResult, error) {
	return registry.IdentityResult{}, &registry.Error{Lookup: registry.LookupIdentity, StatusCode: 403, Err: registry.ErrRejected}
}

func TestMalformedChipDataYieldsFailingChecksNotErrors(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	persona := chiptest.Persona(t, "match")
	f := newFixture(t, pki, pki.Trust(), sandbox())

	t.Run("malformed SOD", func(t *testing.T) {
		files := chiptest.NewChip(t, pki, persona, sessionNonce)
		files[chiptest.FileSOD] = []byte("\x77\x05not a SOD")
		cv := f.run(f.record(files, sessionNonce))
		for _, name := range []string{CheckPassiveAuthentication, CheckSignature, CheckChain} {
			expect(t, cv, name, schemas.CheckFail, ReasonSODMalformed)
		}
		expect(t, cv, "chip.dg1_hash", schemas.CheckSkipped, ReasonSODMalformed)
		expect(t, cv, CheckDG1MRZ, schemas.CheckSkipped, ReasonDGUnverified)
		expect(t, cv, CheckActiveAuthentication, schemas.CheckFail, ReasonDG15Unverified)
		if cv.MRZ != nil || len(cv.Fields) != 0 || cv.FaceImage != nil || cv.DocumentType != DocumentUnknown {
			t.Errorf("unverified data reported: %+v", cv)
		}
	})
	t.Run("wrong content type", func(t *testing.T) {
		files := chiptest.NewChip(t, pki, persona, sessionNonce, chiptest.WithSODOptions(mrtdtest.WithContentType(mrtd.OIDCSCAMasterList)))
		cv := f.run(f.record(files, sessionNonce))
		expect(t, cv, CheckPassiveAuthentication, schemas.CheckFail, mrtd.ReasonContentTypeMismatch)
	})
	t.Run("DG not covered by the SOD", func(t *testing.T) {
		files := chiptest.NewChip(t, pki, persona, sessionNonce, chiptest.WithSODOptions(mrtdtest.WithoutDGHash(13)))
		cv := f.run(f.record(files, sessionNonce))
		expect(t, cv, "chip.dg13_hash", schemas.CheckFail, mrtd.ReasonDGNotInSOD)
		expect(t, cv, CheckPassiveAuthentication, schemas.CheckFail, mrtd.ReasonDGNotInSOD)
	})
	t.Run("signed but malformed DG13 and DG2", func(t *testing.T) {
		files := chiptest.NewChip(t, pki, persona, sessionNonce)
		dgs := map[int][]byte{1: files[chiptest.FileDG1], 2: []byte("\x75\x03abc"), 13: []byte("\x6d\x05\x30\x03\x02")}
		sod, err := pki.BuildSOD(dgs)
		if err != nil {
			t.Fatal(err)
		}
		cv := f.run(f.record(map[string][]byte{"sod": sod, "dg1": dgs[1], "dg2": dgs[2], "dg13": dgs[13]}, sessionNonce))
		expect(t, cv, CheckPassiveAuthentication, schemas.CheckPass, "")
		expect(t, cv, CheckDG13Fields, schemas.CheckFail, ReasonDG13Malformed)
		expect(t, cv, CheckDG2Face, schemas.CheckFail, ReasonDG2Malformed)
		expect(t, cv, CheckActiveAuthentication, schemas.CheckSkipped, ReasonAANotSupported)
		expect(t, cv, CheckRegistryIdentity, schemas.CheckSkipped, ReasonNoIdentityData)
		if cv.DocumentType != DocumentIDCard { // a VNM TD1 without readable DG13
			t.Errorf("document type = %s", cv.DocumentType)
		}
	})
	t.Run("no SOD", func(t *testing.T) {
		files := chiptest.NewChip(t, pki, persona, sessionNonce)
		delete(files, chiptest.FileSOD)
		cv := f.run(f.record(files, sessionNonce))
		expect(t, cv, CheckPassiveAuthentication, schemas.CheckFail, ReasonSODMissing)
	})
	t.Run("file not matching its recorded SHA-256", func(t *testing.T) {
		files := chiptest.NewChip(t, pki, persona, sessionNonce)
		rec := f.record(files, sessionNonce)
		if _, err := f.blobs.Put(context.Background(), tenantID+"/"+sessionID+"/"+captureID+"/dg2", []byte("other"), ""); err != nil {
			t.Fatal(err)
		}
		cv := f.run(rec)
		expect(t, cv, CheckFiles, schemas.CheckFail, ReasonFileUnreadable)
		expect(t, cv, CheckPassiveAuthentication, schemas.CheckPass, "") // DG2 was left out
	})
}

func TestPassportTD3(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	f := newFixture(t, pki, pki.Trust(), sandbox())
	// ICAO Doc 9303 Part 4 specimen passport MRZ.
	td3 := []string{
		"P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
		"L898902C36UTO7408122F1204159ZE184226B<<<<<10",
	}
	dg1 := ldstest.DG1(td3)
	sod, err := pki.BuildSOD(map[int][]byte{1: dg1})
	if err != nil {
		t.Fatal(err)
	}
	cv := f.run(f.record(map[string][]byte{"sod": sod, "dg1": dg1}, sessionNonce))
	expect(t, cv, CheckDG1MRZ, schemas.CheckPass, "")
	expect(t, cv, CheckRegistryIdentity, schemas.CheckSkipped, ReasonNoIdentityData)
	expect(t, cv, CheckActiveAuthentication, schemas.CheckSkipped, ReasonAANotSupported)
	if cv.DocumentType != DocumentPassport || cv.MRZ == nil || cv.MRZ.Fields["surname"] != "ERIKSSON" {
		t.Errorf("document = %s, MRZ %+v", cv.DocumentType, cv.MRZ)
	}
}

func TestJPEG2000FaceIsStoredAsJPEG(t *testing.T) {
	j2k := jpeg2000(t, 40, 52)
	pki := newPKI(t, mrtdtest.ECDSAP256)
	f := newFixture(t, pki, pki.Trust(), sandbox(), WithFaceDecodeOptions())
	cv := f.run(f.record(chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), sessionNonce, chiptest.WithFace(j2k)), sessionNonce))
	expect(t, cv, CheckDG2Face, schemas.CheckPass, "")
	assertJPEGFace(t, f, cv)

	t.Run("decoder missing warns", func(t *testing.T) {
		f := newFixture(t, pki, pki.Trust(), sandbox(), WithFaceDecodeOptions(lds.WithDecoder(filepath.Join(t.TempDir(), "none"))))
		cv := f.run(f.record(chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), sessionNonce, chiptest.WithFace(j2k)), sessionNonce))
		expect(t, cv, CheckDG2Face, schemas.CheckWarn, ReasonFaceDecoder)
		if cv.FaceImage != nil {
			t.Errorf("face = %+v", cv.FaceImage)
		}
	})
}

// jpeg2000 compresses a w×h gray gradient with opj_compress, skipping the test when
// openjpeg's tools are not installed.
func jpeg2000(t *testing.T, w, h int) []byte {
	t.Helper()
	bin, err := exec.LookPath("opj_compress")
	if err != nil {
		t.Skip("opj_compress not found: install the Debian package libopenjp2-tools (make deps)")
	}
	if _, err := exec.LookPath("opj_decompress"); err != nil {
		t.Skip("opj_decompress not found: install the Debian package libopenjp2-tools (make deps)")
	}
	dir := t.TempDir()
	var pgm bytes.Buffer
	pgm.WriteString("P5\n")
	pgm.WriteString(strconv.Itoa(w) + " " + strconv.Itoa(h) + "\n255\n")
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			pgm.WriteByte(byte((x*5 + y*3) % 256))
		}
	}
	in, out := filepath.Join(dir, "face.pgm"), filepath.Join(dir, "face.jp2")
	if err := os.WriteFile(in, pgm.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(bin, "-i", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("opj_compress: %v: %s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRecordsWithoutWork(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	f := newFixture(t, pki, pki.Trust(), sandbox())
	ctx := context.Background()

	selfie := f.encode(&schemas.CaptureSubmitted{
		Envelope:  schemas.Envelope{EventID: "e", SessionID: sessionID, TenantID: tenantID, OccurredAt: f.at},
		CaptureID: "cap_s", Step: "selfie", Client: map[string]string{},
	})
	for name, rec := range map[string]*stream.Record{
		"selfie capture": selfie,
		"tombstone":      {Topic: schemas.TopicCaptures, Key: []byte(sessionID)},
	} {
		if outs, err := f.group.Handler(ctx, rec); err != nil || len(outs) != 0 {
			t.Errorf("%s: outputs %v, err %v", name, outs, err)
		}
	}

	rec := f.record(chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), sessionNonce), sessionNonce)
	if err := f.blobs.DeletePrefix(ctx, tenantID+"/"+sessionID+"/"); err != nil {
		t.Fatal(err)
	}
	if outs, err := f.group.Handler(ctx, rec); err != nil || len(outs) != 0 {
		t.Errorf("erased session: outputs %v, err %v", outs, err)
	}

	if _, err := f.group.Handler(ctx, &stream.Record{Topic: schemas.TopicQuality, Value: rec.Value}); err == nil {
		t.Error("record of another topic: no error")
	}
	if _, err := f.group.Handler(ctx, &stream.Record{Topic: schemas.TopicCaptures, Value: []byte("junk")}); err == nil {
		t.Error("undecodable record: no error")
	}
}

func TestBlobStoreFailureIsRetried(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	f := newFixture(t, pki, pki.Trust(), sandbox())
	rec := f.record(chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), sessionNonce), sessionNonce)
	broken := NewGroup(f.codec, failingStore{f.blobs}, pki.Trust(), sandbox())
	if _, err := broken.Handler(context.Background(), rec); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v, want the store's error", err)
	}
}

type failingStore struct{ blob.Store }

func (failingStore) Get(context.Context, string) ([]byte, error) {
	return nil, errors.New("disk on fire")
}

func TestReplayIsDeterministic(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	f := newFixture(t, pki, pki.Trust(), sandbox())
	rec := f.record(chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), sessionNonce), sessionNonce)
	a, err := f.group.Handler(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.group.Handler(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("outputs: %d and %d", len(a), len(b))
	}
	// Compare decoded events: Avro maps (the MRZ fields) encode in map iteration order.
	var ea, eb schemas.ChipVerified
	if err := f.codec.Decode(schemas.TopicChip, a[0].Value, &ea); err != nil {
		t.Fatal(err)
	}
	if err := f.codec.Decode(schemas.TopicChip, b[0].Value, &eb); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ea, eb) || !bytes.Equal(a[0].Key, b[0].Key) {
		t.Fatalf("a replay produced another event:\n%+v\n%+v", ea, eb)
	}
}

// erasingStore erases the session (as DELETE does) right after the face is stored.
type erasingStore struct{ blob.Store }

func (s erasingStore) Put(ctx context.Context, key string, data []byte, mediaType string) (blob.Object, error) {
	obj, err := s.Store.Put(ctx, key, data, mediaType)
	if err == nil && strings.HasSuffix(key, "/"+FaceBlobName) {
		err = s.Store.DeletePrefix(ctx, tenantID+"/"+sessionID+"/")
		if err == nil {
			// The erasure ran before the face landed: put it back, as a racing write would.
			obj, err = s.Store.Put(ctx, key, data, mediaType)
		}
	}
	return obj, err
}

func TestErasureWhileVerifyingLeavesNoFace(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	f := newFixture(t, pki, pki.Trust(), sandbox())
	rec := f.record(chiptest.NewChip(t, pki, chiptest.Persona(t, "match"), sessionNonce), sessionNonce)
	g := NewGroup(f.codec, erasingStore{f.blobs}, pki.Trust(), sandbox())
	outs, err := g.Handler(context.Background(), rec)
	if err != nil || len(outs) != 0 {
		t.Fatalf("outputs %v, err %v; want nothing for an erased session", outs, err)
	}
	uri := blob.SchemeFS + tenantID + "/" + sessionID + "/" + captureID + "/" + FaceBlobName
	if _, err := f.blobs.Get(context.Background(), uri); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("face of an erased session left behind: %v", err)
	}
}

func TestDecomposedDG13NameIsComposedForTheRegistry(t *testing.T) {
	pki := newPKI(t, mrtdtest.ECDSAP256)
	f := newFixture(t, pki, pki.Trust(), sandbox())
	persona := chiptest.Persona(t, "match")
	want := persona.FullName
	persona.FullName = "NGUYE\u0302\u0303N VA\u0306N AN" // the same name, decomposed (NFD)
	cv := f.run(f.record(chiptest.NewChip(t, pki, persona, sessionNonce), sessionNonce))
	expect(t, cv, CheckRegistryIdentity, schemas.CheckPass, "")
	if got := fieldValue(cv, "full_name"); got != want {
		t.Errorf("full_name = %q, want the precomposed %q", got, want)
	}
}
