package chip

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/internal/lds"
	"github.com/idstream/idstream/internal/mrtd"
	"github.com/idstream/idstream/internal/mrz"
	"github.com/idstream/idstream/schemas"
)

// Names of the checks of a ChipVerified, besides DGHashCheckName(n). Every name starts with
// CheckPrefix.
const (
	CheckPrefix = "chip."
	// CheckPassiveAuthentication is the overall passive authentication: pass only when the
	// signature, the chain and every supplied data group's hash pass; its reason is the first
	// failing sub-check's.
	CheckPassiveAuthentication = "chip.passive_authentication"
	// CheckSignature: the Document Signer's signature over the LDSSecurityObject.
	CheckSignature = "chip.signature"
	// CheckChain: the DS certificate chains to a trusted CSCA, both valid at capture time.
	CheckChain = "chip.chain"
	// CheckDataGroups is reported (fail, no_data_groups) only when no data group was supplied.
	CheckDataGroups = "chip.data_groups"
	// CheckActiveAuthentication: the chip's signature over the session nonce (anti-cloning).
	CheckActiveAuthentication = "chip.active_authentication"
	// CheckRegistryIdentity: the national identity registry's answer for the DG13 identity.
	CheckRegistryIdentity = "chip.registry_identity"
	// CheckDG1MRZ: DG1 holds an MRZ whose every check digit is valid.
	CheckDG1MRZ = "chip.dg1_mrz"
	// CheckDG2Face: DG2 holds a face image that could be stored as a JPEG (when DG2 is supplied).
	CheckDG2Face = "chip.dg2_face"
	// CheckDG13Fields: DG13 could be read (when DG13 is supplied).
	CheckDG13Fields = "chip.dg13_fields"
	// CheckFiles is reported (fail, file_unreadable) only when a file of the capture could
	// not be used at all.
	CheckFiles = "chip.files"
)

// DGHashCheckName is the name of the hash check of data group n: "chip.dg<n>_hash".
func DGHashCheckName(n int) string { return CheckPrefix + mrtd.DGCheckName(n) }

// Reason codes of failed, warned or skipped checks, besides the mrtd.Reason* codes of
// passive authentication (dg_hash_mismatch, csca_untrusted, ds_expired, ...), which the
// passive checks carry unchanged. The values are stable.
const (
	ReasonFileUnreadable = "file_unreadable" // a file exceeds the store's limit or does not match its SHA-256
	ReasonSODMissing     = "sod_missing"     // the capture has no EF.SOD
	ReasonSODMalformed   = "sod_malformed"   // EF.SOD does not decode
	ReasonDGUnverified   = "dg_unverified"   // the data group did not match its SOD hash: its content is not read
	ReasonDG1Missing     = "dg1_missing"
	ReasonDG1Malformed   = "dg1_malformed"
	ReasonMRZCheckDigit  = "mrz_check_digit" // a check digit of the DG1 MRZ is wrong
	ReasonDG2Malformed   = "dg2_malformed"
	ReasonDG2Unsupported = "dg2_unsupported"          // an image encoding other than JPEG and JPEG2000
	ReasonDG2TooLarge    = "dg2_too_large"            // beyond the decoder's or the store's limits
	ReasonDG2Undecodable = "dg2_undecodable"          // the JPEG2000 decoder failed on it
	ReasonFaceDecoder    = "face_decoder_unavailable" // warn: opj_decompress is not installed here
	ReasonDG13Malformed  = "dg13_malformed"
	// Active authentication.
	ReasonAANotSupported     = "aa_not_supported"     // skipped: the chip has no DG15 (and the SOD lists none)
	ReasonDG15Missing        = "dg15_missing"         // the SOD lists DG15 but it was not supplied
	ReasonDG15Malformed      = "dg15_malformed"       // DG15 does not hold a usable public key
	ReasonDG15Unverified     = "dg15_unverified"      // DG15 did not match its SOD hash
	ReasonNonceMissing       = "nonce_missing"        // the capture carries no server nonce
	ReasonAASignatureMissing = "aa_signature_missing" // DG15 present but no aa_signature
	ReasonAASignatureInvalid = "aa_signature_invalid" // the signature is not over this session's nonce
	ReasonAAAlgorithmUnknown = "aa_algorithm_unknown" // ECDSA key without a DG14 ActiveAuthenticationInfo hash
	ReasonDG14Malformed      = "dg14_malformed"
	// Registry (the fail reasons are the registry.IdentityOutcome values: name_mismatch,
	// dob_mismatch, sex_mismatch, revoked, deceased, not_found).
	ReasonRegistryUnavailable   = "registry_unavailable"    // warn: down, slow past the timeout, circuit open
	ReasonRegistryError         = "registry_error"          // warn: the registry refused or answered nonsense
	ReasonRegistryNotConfigured = "registry_not_configured" // skipped: no registry
	ReasonNoIdentityData        = "no_identity_data"        // skipped: no verified DG13 to look up
	ReasonRegistryQueryInvalid  = "registry_query_invalid"  // skipped: DG13 lacks a valid id number, name or date of birth
)

// Document types reported in ChipVerified.DocumentType.
const (
	DocumentChipIDCard = "chip_id_card" // IDVNM TD1 with DG13
	DocumentPassport   = "passport"     // TD3
	DocumentIDCard     = "id_card"      // another TD1 or TD2 identity document
	DocumentUnknown    = "unknown"      // no verified, readable DG1
)

// FaceBlobRefName is the BlobRef.Name of ChipVerified.FaceImage.
const FaceBlobRefName = "chip_face"

// maxDetail bounds a check's detail (it may quote certificate subjects from the SOD).
const maxDetail = 300

// verifier verifies one chip read.
type verifier struct {
	g       *group
	capture *schemas.CaptureSubmitted
	at      time.Time // certificates are checked and MRZ dates resolved at this time
	files   chipFiles
	faceKey string

	checks   []schemas.Check
	sod      *mrtd.SOD
	verified map[int]bool // data groups whose hash matched the SOD
}

// run performs every check, in report order: files, passive authentication and its
// sub-checks, DG1, DG2, DG13, active authentication, registry.
//
// The content of a data group (MRZ, fields, face) is read only when its hash matched the
// SOD; otherwise its content check is skipped with reason dg_unverified and nothing of it
// is reported. Passive authentication as a whole may still fail (signature, chain), which
// the decision policy treats as a rejection.
func (v *verifier) run(ctx context.Context) (*schemas.ChipVerified, error) {
	out := &schemas.ChipVerified{DocumentType: DocumentUnknown, Fields: []schemas.Field{}}
	if len(v.files.unreadable) > 0 {
		slices.Sort(v.files.unreadable)
		v.add(CheckFiles, schemas.CheckFail, ReasonFileUnreadable,
			"unusable chip files: "+strings.Join(v.files.unreadable, ", "))
	}
	v.passive()
	m := v.dg1()
	if m != nil {
		out.MRZ = &schemas.MRZ{Format: m.Format, Lines: slices.Clone(m.Lines), Valid: m.Valid, Fields: m.FieldsAt(v.at)}
	}
	face, err := v.dg2(ctx)
	if err != nil {
		return nil, err
	}
	out.FaceImage = face
	id := v.dg13()
	if id != nil {
		for _, f := range id.Fields() {
			out.Fields = append(out.Fields, field(f.Name, f.Value))
		}
		for _, n := range slices.Sorted(maps.Keys(id.Other)) {
			out.Fields = append(out.Fields, field(fmt.Sprintf("dg13_entry_%d", n), id.Other[n]))
		}
	}
	out.DocumentType = documentType(m, id != nil)
	v.active()
	if err := v.registryCheck(ctx, id, m); err != nil {
		return nil, err
	}
	out.Checks = v.checks
	return out, nil
}

// add appends a check.
func (v *verifier) add(name, status, reason, detail string) {
	c := schemas.Check{Name: name, Status: status}
	if reason != "" {
		c.ReasonCode = &reason
	}
	if detail != "" {
		detail = truncate(detail, maxDetail)
		c.Detail = &detail
	}
	v.checks = append(v.checks, c)
}

// passive runs passive authentication and records which data groups verified.
func (v *verifier) passive() {
	v.verified = map[int]bool{}
	dgNumbers := slices.Sorted(maps.Keys(v.files.dgs))
	var reason, detail string
	switch {
	case !v.files.hasSOD && slices.Contains(v.files.unreadable, BlobSOD):
		reason, detail = ReasonFileUnreadable, "EF.SOD could not be read"
	case !v.files.hasSOD:
		reason, detail = ReasonSODMissing, "no EF.SOD was supplied"
	default:
		sod, err := mrtd.ParseSOD(v.files.sod)
		switch {
		case err == nil:
			v.sod = sod
		case errors.Is(err, mrtd.ErrWrongContentType):
			reason, detail = mrtd.ReasonContentTypeMismatch, "EF.SOD does not carry an LDSSecurityObject"
		case errors.Is(err, mrtd.ErrUnsupportedAlgorithm):
			reason, detail = mrtd.ReasonUnsupportedAlgorithm, "EF.SOD uses an unsupported hash algorithm"
		default:
			reason, detail = ReasonSODMalformed, "EF.SOD does not decode"
		}
	}
	if v.sod == nil {
		v.add(CheckPassiveAuthentication, schemas.CheckFail, reason, detail)
		v.add(CheckSignature, schemas.CheckFail, reason, detail)
		v.add(CheckChain, schemas.CheckFail, reason, detail)
		for _, n := range dgNumbers {
			v.add(DGHashCheckName(n), schemas.CheckSkipped, reason, "no usable EF.SOD to check against")
		}
		return
	}
	res := mrtd.VerifyPassive(v.sod, v.files.dgs, v.g.trust, v.at)
	if res.Passed {
		v.add(CheckPassiveAuthentication, schemas.CheckPass, "", "signature, chain and every data group hash verified")
	} else {
		first := mrtd.Check{}
		for _, c := range res.Checks {
			if !c.Passed {
				first = c
				break
			}
		}
		v.add(CheckPassiveAuthentication, schemas.CheckFail, first.Reason,
			fmt.Sprintf("%s failed: %s", first.Name, strings.Join(dedupe(res.FailureReasons()), ", ")))
	}
	for _, c := range res.Checks {
		status := schemas.CheckPass
		if !c.Passed {
			status = schemas.CheckFail
		}
		v.add(CheckPrefix+c.Name, status, c.Reason, c.Detail)
	}
	for _, n := range dgNumbers {
		if c, ok := res.Check(mrtd.DGCheckName(n)); ok && c.Passed {
			v.verified[n] = true
		}
	}
}

// readable reports whether data group n may be read, adding the skipped content check
// named name when it was supplied but did not verify.
func (v *verifier) readable(n int, name string) bool {
	if v.verified[n] {
		return true
	}
	v.add(name, schemas.CheckSkipped, ReasonDGUnverified, fmt.Sprintf("DG%d did not match the SOD; its content is not read", n))
	return false
}

// dg1 checks and parses DG1.
func (v *verifier) dg1() *mrz.MRZ {
	if _, ok := v.files.dgs[1]; !ok {
		v.add(CheckDG1MRZ, schemas.CheckFail, ReasonDG1Missing, "no DG1 was supplied")
		return nil
	}
	if !v.readable(1, CheckDG1MRZ) {
		return nil
	}
	m, err := lds.ParseDG1(v.files.dgs[1])
	if err != nil {
		v.add(CheckDG1MRZ, schemas.CheckFail, ReasonDG1Malformed, "DG1 does not hold a TD1, TD2 or TD3 MRZ")
		return nil
	}
	if !m.Valid {
		var bad []string
		for _, name := range slices.Sorted(maps.Keys(m.Checks)) {
			if !m.Checks[name] {
				bad = append(bad, name)
			}
		}
		v.add(CheckDG1MRZ, schemas.CheckFail, ReasonMRZCheckDigit, "wrong MRZ check digits: "+strings.Join(bad, ", "))
	} else {
		v.add(CheckDG1MRZ, schemas.CheckPass, "", m.Format+" MRZ, every check digit valid")
	}
	return m
}

// dg2 decodes the DG2 face to JPEG and stores it; nil when there is none to report.
func (v *verifier) dg2(ctx context.Context) (*schemas.BlobRef, error) {
	if _, ok := v.files.dgs[2]; !ok || !v.readable(2, CheckDG2Face) {
		return nil, nil
	}
	face, err := lds.ParseDG2(v.files.dgs[2])
	if err != nil {
		reason := ReasonDG2Malformed
		if errors.Is(err, lds.ErrUnsupported) {
			reason = ReasonDG2Unsupported
		}
		v.add(CheckDG2Face, schemas.CheckFail, reason, "DG2 does not hold a usable face image")
		return nil, nil
	}
	jpg, err := lds.DecodeFaceJPEG(ctx, face, v.g.decodeOpts...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("decode face of capture %s: %w", v.capture.CaptureID, ctx.Err())
		}
		status, reason := schemas.CheckFail, ReasonDG2Undecodable
		switch {
		case errors.Is(err, lds.ErrDecoderMissing):
			status, reason = schemas.CheckWarn, ReasonFaceDecoder
			v.g.log.Warn("chip: JPEG2000 face decoder missing", "capture_id", v.capture.CaptureID, "err", err)
		case errors.Is(err, lds.ErrTooLarge):
			reason = ReasonDG2TooLarge
		case errors.Is(err, lds.ErrUnsupported):
			reason = ReasonDG2Unsupported
		case errors.Is(err, lds.ErrMalformed):
			reason = ReasonDG2Malformed
		}
		v.add(CheckDG2Face, status, reason, "the DG2 face image could not be turned into a JPEG")
		return nil, nil
	}
	obj, err := v.g.blobs.Put(ctx, v.faceKey, jpg, "image/jpeg")
	switch {
	case errors.Is(err, blob.ErrTooLarge):
		v.add(CheckDG2Face, schemas.CheckFail, ReasonDG2TooLarge, "the face image exceeds the blob store's limit")
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("store face of capture %s: %w", v.capture.CaptureID, err)
	}
	// The session may have been erased while we worked: then remove the face we just wrote
	// rather than leave personal data behind, and report nothing.
	if gone, err := v.erased(ctx); err != nil || gone {
		if gone {
			if err := v.g.blobs.Delete(ctx, obj.URI); err != nil {
				return nil, fmt.Errorf("remove face of erased capture %s: %w", v.capture.CaptureID, err)
			}
			return nil, errErased
		}
		return nil, err
	}
	v.add(CheckDG2Face, schemas.CheckPass, "", fmt.Sprintf("%s face stored as JPEG", face.MediaType))
	return &schemas.BlobRef{Name: FaceBlobRefName, URI: obj.URI, SHA256: obj.SHA256, Size: obj.Size, MediaType: obj.MediaType}, nil
}

// errErased reports that the capture's files disappeared while it was verified.
var errErased = errors.New("chip: capture erased")

// erased reports whether the capture's DG2 file is gone (the session was erased).
func (v *verifier) erased(ctx context.Context) (bool, error) {
	for _, ref := range v.capture.Blobs {
		if ref.Name != "dg2" {
			continue
		}
		_, err := v.g.blobs.Get(ctx, ref.URI)
		switch {
		case errors.Is(err, blob.ErrNotFound):
			return true, nil
		case err != nil && !errors.Is(err, blob.ErrTooLarge) && !errors.Is(err, blob.ErrInvalidKey):
			return false, fmt.Errorf("recheck files of capture %s: %w", v.capture.CaptureID, err)
		}
		return false, nil
	}
	return false, nil
}

// dg13 parses DG13; nil when it is absent, unverified or unreadable.
func (v *verifier) dg13() *lds.VNIdentity {
	if _, ok := v.files.dgs[13]; !ok || !v.readable(13, CheckDG13Fields) {
		return nil
	}
	id, err := lds.ParseDG13(v.files.dgs[13])
	if err != nil {
		v.add(CheckDG13Fields, schemas.CheckFail, ReasonDG13Malformed, "DG13 does not decode")
		return nil
	}
	detail := fmt.Sprintf("%d fields read", len(id.Fields()))
	if id.Skipped > 0 {
		detail += fmt.Sprintf(", %d unreadable entries left out", id.Skipped)
	}
	v.add(CheckDG13Fields, schemas.CheckPass, "", detail)
	return id
}

// active verifies active authentication over the capture's nonce. It is expected when DG15
// was supplied or the SOD lists DG15 (a withheld DG15 fails); otherwise skipped.
func (v *verifier) active() {
	dg15, supplied := v.files.dgs[15]
	listed := v.sod != nil && v.sod.DataGroupHashes[15] != nil
	fail := func(reason, detail string) {
		v.add(CheckActiveAuthentication, schemas.CheckFail, reason, detail)
	}
	switch {
	case !supplied && !listed:
		v.add(CheckActiveAuthentication, schemas.CheckSkipped, ReasonAANotSupported, "the chip has no DG15")
		return
	case !supplied:
		fail(ReasonDG15Missing, "the SOD lists DG15 but it was not supplied")
		return
	case !v.verified[15]:
		fail(ReasonDG15Unverified, "DG15 did not match the SOD: its key is not the chip's")
		return
	case len(v.capture.Nonce) == 0:
		fail(ReasonNonceMissing, "the capture carries no session nonce")
		return
	case len(v.files.aaSignature) == 0:
		fail(ReasonAASignatureMissing, "the chip's DG15 requires an aa_signature")
		return
	}
	pub, err := mrtd.ParseDG15(dg15)
	if err != nil {
		reason := ReasonDG15Malformed
		if errors.Is(err, mrtd.ErrUnsupportedAlgorithm) {
			reason = mrtd.ReasonUnsupportedAlgorithm
		}
		fail(reason, "DG15 does not hold a usable public key")
		return
	}
	var hash crypto.Hash
	if dg14, ok := v.files.dgs[14]; ok && v.verified[14] {
		infos, err := lds.ParseDG14(dg14)
		if err != nil {
			fail(ReasonDG14Malformed, "DG14 does not decode")
			return
		}
		if infos.ActiveAuthentication != nil {
			hash = infos.ActiveAuthentication.Hash
		}
	}
	err = mrtd.VerifyActive(pub, v.capture.Nonce, v.files.aaSignature, hash)
	switch {
	case err == nil:
		v.add(CheckActiveAuthentication, schemas.CheckPass, "", "the chip signed this session's nonce")
	case errors.Is(err, mrtd.ErrActiveAuthFailed):
		fail(ReasonAASignatureInvalid, "the signature does not verify over this session's nonce")
	case hash == 0:
		fail(ReasonAAAlgorithmUnknown, "no verified DG14 names the active authentication hash")
	default:
		fail(mrtd.ReasonUnsupportedAlgorithm, "unsupported active authentication algorithm")
	}
}

// documentType derives the document type from a verified MRZ.
func documentType(m *mrz.MRZ, hasDG13 bool) string {
	switch {
	case m == nil:
		return DocumentUnknown
	case m.Format == mrz.FormatTD3:
		return DocumentPassport
	case m.Format == mrz.FormatTD1 && m.IssuingState == "VNM" && strings.HasPrefix(m.DocumentCode, "I") && hasDG13:
		return DocumentChipIDCard
	case m.Format == mrz.FormatTD1 || m.Format == mrz.FormatTD2:
		return DocumentIDCard
	}
	return DocumentUnknown
}

// field is a chip field, its Vietnamese letters precomposed (NFC); chip data is read, not
// recognised, so its confidence is 1.
func field(name, value string) schemas.Field {
	one := 1.0
	return schemas.Field{Name: name, Value: composeVietnamese(value), Confidence: &one}
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// truncate cuts s to at most n runes, on valid UTF-8.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
