// Package registry checks a person against the national identity database and the tax,
// health-insurance and social-insurance registries, through one interface (Registry).
//
// Two implementations ship: Client, an HTTP client of the JSON API described in API.md
// (timeouts, retries with backoff and jitter, a circuit breaker, optional mTLS), and Sandbox,
// a deterministic development registry that serves the same API (and an in-process Registry)
// with documented personas (README.md).
//
// Every lookup answers with an outcome from a fixed set of stable codes that a decision policy
// can switch on. A lookup that gets no answer returns an error; errors.Is(err, ErrUnavailable)
// tells the caller that the registry could not be reached in time (down, overloaded, slow,
// circuit open), which callers report as a warn/skipped check rather than failing the subject.
//
// Nothing in this package logs or returns personal data (ID numbers, names, dates of birth)
// in errors or log lines.
package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Registry looks a person up in the national registries. Implementations are safe for
// concurrent use. Every method validates q first (an invalid query returns an error wrapping
// ErrInvalidQuery and reaches no registry). A nil error comes with a result whose Outcome is
// one of the documented codes; "not found" is an outcome, not an error.
type Registry interface {
	// CheckIdentity compares q with the national identity database.
	CheckIdentity(ctx context.Context, q Query) (IdentityResult, error)
	// CheckTax looks up the person's tax record.
	CheckTax(ctx context.Context, q Query) (RecordResult, error)
	// CheckHealthInsurance looks up the person's health-insurance record.
	CheckHealthInsurance(ctx context.Context, q Query) (RecordResult, error)
	// CheckSocialInsurance looks up the person's social-insurance record.
	CheckSocialInsurance(ctx context.Context, q Query) (RecordResult, error)
}

// Lookup names one of the four registry lookups.
type Lookup string

// The lookups, as they appear in errors, logs and the API paths.
const (
	LookupIdentity        Lookup = "identity"
	LookupTax             Lookup = "tax"
	LookupHealthInsurance Lookup = "health_insurance"
	LookupSocialInsurance Lookup = "social_insurance"
)

// Lookups lists every lookup in a stable order.
func Lookups() []Lookup {
	return []Lookup{LookupIdentity, LookupTax, LookupHealthInsurance, LookupSocialInsurance}
}

// path is the API path of the lookup (API.md).
func (l Lookup) path() string {
	switch l {
	case LookupIdentity:
		return "/v1/identity/check"
	case LookupTax:
		return "/v1/tax/check"
	case LookupHealthInsurance:
		return "/v1/health-insurance/check"
	case LookupSocialInsurance:
		return "/v1/social-insurance/check"
	}
	return ""
}

// Sex values of a Query.
const (
	SexMale   = "M"
	SexFemale = "F"
)

// Field names reported in MismatchedFields (the JSON names of Query).
const (
	FieldFullName    = "full_name"
	FieldDateOfBirth = "date_of_birth"
	FieldSex         = "sex"
)

// MaxNameRunes is the longest full name a Query may carry.
const MaxNameRunes = 200

// Query identifies the person to look up, with the data read from their document.
type Query struct {
	// IDNumber is the 12-digit personal identification number (or a legacy 9-digit one).
	IDNumber string `json:"id_number"`
	// FullName is compared after NormalizeName; it must be in precomposed (NFC) form, as
	// Vietnamese diacritics are significant.
	FullName string `json:"full_name"`
	// DateOfBirth is YYYY-MM-DD.
	DateOfBirth string `json:"date_of_birth"`
	// Sex is SexMale, SexFemale or empty (not compared).
	Sex string `json:"sex,omitempty"`
	// DocumentNumber is the optional chip document number (for a 12-digit chip ID card, the
	// last 9 digits of the ID number); identity lookups forward it, record lookups do not.
	DocumentNumber string `json:"document_number,omitempty"`
}

// Validate reports whether q is well-formed. The returned error wraps ErrInvalidQuery and
// names the offending fields, never their values.
func (q Query) Validate() error {
	var problems []string
	if !allDigits(q.IDNumber) || (len(q.IDNumber) != 12 && len(q.IDNumber) != 9) {
		problems = append(problems, "id_number must be 12 (or 9) digits")
	}
	switch {
	case !utf8.ValidString(q.FullName):
		problems = append(problems, "full_name must be valid UTF-8")
	case NormalizeName(q.FullName) == "":
		problems = append(problems, "full_name is required")
	case utf8.RuneCountInString(q.FullName) > MaxNameRunes:
		problems = append(problems, fmt.Sprintf("full_name must be at most %d characters", MaxNameRunes))
	default:
		for _, r := range q.FullName {
			if unicode.Is(unicode.Mn, r) {
				problems = append(problems, "full_name must be in precomposed (NFC) form")
				break
			}
			if unicode.IsControl(r) && !unicode.IsSpace(r) {
				problems = append(problems, "full_name must not contain control characters")
				break
			}
		}
	}
	if _, err := parseDate(q.DateOfBirth); err != nil {
		problems = append(problems, "date_of_birth must be a valid YYYY-MM-DD date")
	}
	if q.Sex != "" && q.Sex != SexMale && q.Sex != SexFemale {
		problems = append(problems, `sex must be "M", "F" or empty`)
	}
	if q.DocumentNumber != "" && !validDocumentNumber(q.DocumentNumber) {
		problems = append(problems, "document_number must be 6 to 20 characters A-Z or 0-9")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidQuery, strings.Join(problems, "; "))
	}
	return nil
}

// NormalizeName is the form in which names are compared: Unicode upper case with runs of
// white space collapsed to one space and trimmed. It keeps diacritics ("Lê" and "Le" differ).
func NormalizeName(s string) string {
	return strings.Join(strings.Fields(strings.ToUpper(s)), " ")
}

func parseDate(s string) (time.Time, error) {
	if len(s) != len("2006-01-02") {
		return time.Time{}, errors.New("not YYYY-MM-DD")
	}
	return time.Parse(time.DateOnly, s)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func validDocumentNumber(s string) bool {
	if len(s) < 6 || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// IdentityOutcome is the answer of the national identity database. The values are stable.
type IdentityOutcome string

// Identity outcomes, in the order of precedence the sandbox applies (a record that is both
// revoked and mismatched answers revoked).
const (
	// IdentityNotFound: no person holds this ID number.
	IdentityNotFound IdentityOutcome = "not_found"
	// IdentityDeceased: the holder of this ID number is recorded as deceased.
	IdentityDeceased IdentityOutcome = "deceased"
	// IdentityRevoked: the ID number (card) has been revoked.
	IdentityRevoked IdentityOutcome = "revoked"
	// IdentityNameMismatch: the full name differs from the registry's.
	IdentityNameMismatch IdentityOutcome = "name_mismatch"
	// IdentityDOBMismatch: the name matches, the date of birth differs.
	IdentityDOBMismatch IdentityOutcome = "dob_mismatch"
	// IdentitySexMismatch: name and date of birth match, the sex differs.
	IdentitySexMismatch IdentityOutcome = "sex_mismatch"
	// IdentityMatch: every field given matches an active record.
	IdentityMatch IdentityOutcome = "match"
)

// Valid reports whether o is one of the documented identity outcomes.
func (o IdentityOutcome) Valid() bool {
	switch o {
	case IdentityMatch, IdentityNameMismatch, IdentityDOBMismatch, IdentitySexMismatch,
		IdentityRevoked, IdentityDeceased, IdentityNotFound:
		return true
	}
	return false
}

// RecordOutcome is the answer of a tax, health-insurance or social-insurance lookup. The
// values are stable.
type RecordOutcome string

// Record outcomes, in the sandbox's order of precedence.
const (
	// RecordNotFound: no record for this ID number.
	RecordNotFound RecordOutcome = "not_found"
	// RecordMismatch: a record exists but its name or date of birth differs from the query.
	RecordMismatch RecordOutcome = "mismatch"
	// RecordInactive: a matching record exists but is not active (closed, expired, lapsed).
	RecordInactive RecordOutcome = "inactive"
	// RecordFound: an active record matching the query.
	RecordFound RecordOutcome = "found"
)

// Valid reports whether o is one of the documented record outcomes.
func (o RecordOutcome) Valid() bool {
	switch o {
	case RecordFound, RecordNotFound, RecordMismatch, RecordInactive:
		return true
	}
	return false
}

// IdentityResult is the national identity database's answer.
type IdentityResult struct {
	Outcome IdentityOutcome
	// MismatchedFields lists the fields (FieldFullName, FieldDateOfBirth, FieldSex) that
	// differ from the registry's record; empty when none differ or there is no record.
	MismatchedFields []string
	// ReferenceID is the registry's reference for this check (for audit).
	ReferenceID string
	// CheckedAt is when the registry answered.
	CheckedAt time.Time
}

// RecordResult is the answer of a tax, health-insurance or social-insurance lookup.
type RecordResult struct {
	Lookup  Lookup
	Outcome RecordOutcome
	// MismatchedFields lists the fields (FieldFullName, FieldDateOfBirth) that differ from
	// the record; empty when none differ or there is no record.
	MismatchedFields []string
	ReferenceID      string
	CheckedAt        time.Time
}
