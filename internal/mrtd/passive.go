package mrtd

import (
	"crypto/subtle"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Reason codes of failed passive-authentication checks. They are stable: they travel in
// ChipVerified events and Data Get checks.
const (
	ReasonDSNotFound            = "ds_not_found"            // no embedded certificate matches the signer identifier
	ReasonUnsupportedAlgorithm  = "unsupported_algorithm"   // signature or hash algorithm not implemented
	ReasonContentTypeMismatch   = "content_type_mismatch"   // content-type attribute is not the LDSSecurityObject
	ReasonMessageDigestMismatch = "message_digest_mismatch" // message-digest attribute does not match the LDSSecurityObject
	ReasonSignatureInvalid      = "signature_invalid"       // the DS signature over the signed attributes does not verify
	ReasonCSCAUntrusted         = "csca_untrusted"          // no trusted CSCA signed the DS certificate
	ReasonDSExpired             = "ds_expired"              // DS certificate expired at verification time
	ReasonDSNotYetValid         = "ds_not_yet_valid"        // DS certificate not valid yet at verification time
	ReasonDSKeyUsage            = "ds_key_usage"            // DS certificate does not allow digital signatures
	ReasonDSCriticalExtension   = "ds_critical_extension"   // DS certificate has a critical extension not understood
	ReasonCSCAExpired           = "csca_expired"            // the CSCA expired at verification time
	ReasonCSCANotYetValid       = "csca_not_yet_valid"      // the CSCA is not valid yet at verification time
	ReasonDGHashMismatch        = "dg_hash_mismatch"        // a data group does not hash to the SOD's value
	ReasonDGNotInSOD            = "dg_not_in_sod"           // a data group supplied is not covered by the SOD
	ReasonNoDataGroups          = "no_data_groups"          // no data group was supplied
)

// Check names used in PassiveResult.Checks, besides DGCheckName(n).
const (
	CheckSignature  = "signature"
	CheckChain      = "chain"
	CheckDataGroups = "data_groups"
)

// DGCheckName is the name of the hash check of data group n: "dg<n>_hash".
func DGCheckName(n int) string { return fmt.Sprintf("dg%d_hash", n) }

// Check is the outcome of one sub-check.
type Check struct {
	Name   string
	Passed bool
	// Reason is one of the Reason* codes when the check failed, "" when it passed.
	Reason string
	// Detail explains the outcome for people; it is not stable.
	Detail string
}

// PassiveResult is the outcome of passive authentication.
type PassiveResult struct {
	// Passed is true only when every check passed.
	Passed bool
	// Checks are, in order: signature, chain, data_groups when none was supplied, then
	// dg<N>_hash for every supplied data group in ascending N.
	Checks []Check
	// DS is the Document Signer certificate, nil when not found.
	DS *x509.Certificate
	// CSCA is the trust anchor that signed the DS certificate, nil when none did.
	CSCA *x509.Certificate
}

// Check returns the check with the given name.
func (r *PassiveResult) Check(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// FailureReasons lists the reason codes of the failed checks, in check order.
func (r *PassiveResult) FailureReasons() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.Passed {
			out = append(out, c.Reason)
		}
	}
	return out
}

// icaoDocumentTypeListExt is the ICAO 9303-12 Document Type List extension, which DS
// certificates may carry; it restricts document types and does not affect the signature.
var icaoDocumentTypeListExt = asn1.ObjectIdentifier{2, 23, 136, 1, 1, 6, 2}

// VerifyPassive performs ICAO 9303 passive authentication of the data groups dgs (number →
// the file exactly as read from the chip) against sod, with trust anchors trust, checking
// certificate validity at time at. It never returns nil and does not stop at the first
// failure: every check is reported (see PassiveResult.Checks). Expired or not-yet-valid
// certificates, unknown algorithms and untrusted CSCAs are reported as failed checks, never
// accepted. A nil trust trusts nothing. Safe for concurrent use.
func VerifyPassive(sod *SOD, dgs map[int][]byte, trust *Trust, at time.Time) *PassiveResult {
	res := &PassiveResult{}
	if sod == nil {
		res.Checks = []Check{{Name: CheckSignature, Reason: ReasonDSNotFound, Detail: "no SOD"}}
		return res
	}
	res.DS = sod.SignerCertificate()
	res.Checks = append(res.Checks, checkSignature(sod, res.DS))
	chain, csca := checkChain(res.DS, trust, at)
	res.CSCA = csca
	res.Checks = append(res.Checks, chain)
	if len(dgs) == 0 {
		res.Checks = append(res.Checks, Check{Name: CheckDataGroups, Reason: ReasonNoDataGroups, Detail: "no data group supplied"})
	}
	numbers := make([]int, 0, len(dgs))
	for n := range dgs {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	for _, n := range numbers {
		res.Checks = append(res.Checks, checkDataGroup(sod, n, dgs[n]))
	}
	res.Passed = true
	for _, c := range res.Checks {
		res.Passed = res.Passed && c.Passed
	}
	return res
}

func checkSignature(sod *SOD, ds *x509.Certificate) Check {
	c := Check{Name: CheckSignature}
	if ds == nil {
		c.Reason, c.Detail = ReasonDSNotFound, "no embedded certificate matches the signer identifier"
		return c
	}
	err := verifySigner(&sod.Signer, ds, OIDLDSSecurityObject, sod.Content)
	switch {
	case err == nil:
		c.Passed, c.Detail = true, fmt.Sprintf("signed by %q", ds.Subject.String())
	case errors.Is(err, errContentTypeMismatch):
		c.Reason, c.Detail = ReasonContentTypeMismatch, err.Error()
	case errors.Is(err, errMessageDigestMismatch):
		c.Reason, c.Detail = ReasonMessageDigestMismatch, err.Error()
	case errors.Is(err, ErrUnsupportedAlgorithm):
		c.Reason, c.Detail = ReasonUnsupportedAlgorithm, err.Error()
	default:
		c.Reason, c.Detail = ReasonSignatureInvalid, err.Error()
	}
	return c
}

func checkChain(ds *x509.Certificate, trust *Trust, at time.Time) (Check, *x509.Certificate) {
	c := Check{Name: CheckChain}
	if ds == nil {
		c.Reason, c.Detail = ReasonDSNotFound, "no DS certificate to chain"
		return c, nil
	}
	issuers := trust.issuersOf(ds)
	if len(issuers) == 0 {
		c.Reason = ReasonCSCAUntrusted
		c.Detail = fmt.Sprintf("no trusted CSCA signed the DS certificate (issuer %q)", ds.Issuer.String())
		return c, nil
	}
	// Prefer an anchor valid at `at` (a renewed CSCA may share key and subject).
	csca := issuers[0]
	for _, ca := range issuers {
		if validAt(ca, at) {
			csca = ca
			break
		}
	}
	var unhandled []string
	for _, oid := range ds.UnhandledCriticalExtensions {
		if !oid.Equal(icaoDocumentTypeListExt) {
			unhandled = append(unhandled, oid.String())
		}
	}
	switch {
	case at.Before(ds.NotBefore):
		c.Reason, c.Detail = ReasonDSNotYetValid, fmt.Sprintf("DS certificate valid from %s", ds.NotBefore.UTC().Format(time.RFC3339))
	case at.After(ds.NotAfter):
		c.Reason, c.Detail = ReasonDSExpired, fmt.Sprintf("DS certificate expired %s", ds.NotAfter.UTC().Format(time.RFC3339))
	case ds.KeyUsage != 0 && ds.KeyUsage&x509.KeyUsageDigitalSignature == 0:
		c.Reason, c.Detail = ReasonDSKeyUsage, "DS certificate key usage lacks digitalSignature"
	case len(unhandled) > 0:
		c.Reason, c.Detail = ReasonDSCriticalExtension, fmt.Sprintf("DS certificate has unhandled critical extensions %v", unhandled)
	case at.Before(csca.NotBefore):
		c.Reason, c.Detail = ReasonCSCANotYetValid, fmt.Sprintf("CSCA %q valid from %s", csca.Subject.String(), csca.NotBefore.UTC().Format(time.RFC3339))
	case at.After(csca.NotAfter):
		c.Reason, c.Detail = ReasonCSCAExpired, fmt.Sprintf("CSCA %q expired %s", csca.Subject.String(), csca.NotAfter.UTC().Format(time.RFC3339))
	default:
		c.Passed, c.Detail = true, fmt.Sprintf("DS %q signed by CSCA %q", ds.Subject.String(), csca.Subject.String())
	}
	return c, csca
}

func validAt(c *x509.Certificate, at time.Time) bool {
	return !at.Before(c.NotBefore) && !at.After(c.NotAfter)
}

func checkDataGroup(sod *SOD, n int, data []byte) Check {
	c := Check{Name: DGCheckName(n)}
	want, ok := sod.DataGroupHashes[n]
	if !ok {
		c.Reason, c.Detail = ReasonDGNotInSOD, fmt.Sprintf("data group %d is not covered by the SOD", n)
		return c
	}
	h := sod.HashAlgorithm.New()
	h.Write(data)
	if subtle.ConstantTimeCompare(h.Sum(nil), want) != 1 {
		c.Reason, c.Detail = ReasonDGHashMismatch, fmt.Sprintf("data group %d does not match its %v hash in the SOD", n, sod.HashAlgorithm)
		return c
	}
	c.Passed, c.Detail = true, fmt.Sprintf("%v matches", sod.HashAlgorithm)
	return c
}
