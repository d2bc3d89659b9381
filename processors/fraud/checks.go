package fraud

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/idstream/idstream/internal/idnumber"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// blocklistCheck: fail blocklisted when the id number's keyed hash is on the tenant's list.
func (g *group) blocklistCheck(tenantID string, id identity) schemas.Check {
	if id.idNumber == "" {
		return newCheck(CheckBlocklistID, schemas.CheckSkipped, ReasonNoIDNumber, "the session has no id number")
	}
	if entry, ok := g.blocklist.Lookup(tenantID, idnumber.Hash(g.hashKey, id.idNumber)); ok {
		return newCheck(CheckBlocklistID, schemas.CheckFail, ReasonBlocklisted, "blocklist entry "+entry)
	}
	return newCheck(CheckBlocklistID, schemas.CheckPass, "", "")
}

// idStructureCheck compares a 12-digit id number's structure with the date of birth and sex.
// A 9-digit (legacy) number and a number with letters (passport) are not applicable; other
// digit strings, and 12 digits with an unassigned province code, are invalid.
func idStructureCheck(id identity) schemas.Check {
	n := idnumber.Normalize(id.idNumber)
	switch {
	case n == "":
		return newCheck(CheckIDStructure, schemas.CheckSkipped, ReasonNoIDNumber, "the session has no id number")
	case !allDigits(n):
		return newCheck(CheckIDStructure, schemas.CheckSkipped, ReasonNotApplicable, "not a Vietnamese personal id number")
	case len(n) == 9:
		return newCheck(CheckIDStructure, schemas.CheckSkipped, ReasonNotApplicable, "a 9-digit legacy id number has no structure to check")
	}
	info, err := idnumber.Parse(n)
	if err != nil {
		return newCheck(CheckIDStructure, schemas.CheckFail, ReasonInvalidIDNumber, strings.TrimPrefix(err.Error(), idnumber.ErrInvalid.Error()+": "))
	}
	if m := idnumber.Consistent(info, id.dob, id.sex); len(m) > 0 {
		parts := make([]string, len(m))
		for i, x := range m {
			parts[i] = string(x)
		}
		return newCheck(CheckIDStructure, schemas.CheckFail, ReasonIDStructureMismatch,
			"the id number's "+strings.Join(parts, ", ")+" digits disagree with the holder's data")
	}
	return newCheck(CheckIDStructure, schemas.CheckPass, "", "")
}

// datesCheck: issued before expiry, not expired at the session, old enough at the session.
// at is the session's creation; an expiry date is valid through its whole day.
func datesCheck(id identity, at time.Time, minAge int) schemas.Check {
	if id.dob.IsZero() && id.issue.IsZero() && id.expiry.IsZero() {
		return newCheck(CheckDates, schemas.CheckSkipped, ReasonNoDates, "no date of birth, issue or expiry date")
	}
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	switch {
	case !id.issue.IsZero() && !id.expiry.IsZero() && id.issue.After(id.expiry):
		return newCheck(CheckDates, schemas.CheckFail, ReasonIssueAfterExpiry, "the document was issued after its expiry date")
	case !id.expiry.IsZero() && id.expiry.Before(day):
		return newCheck(CheckDates, schemas.CheckFail, ReasonDocumentExpired, "the document expired before the session")
	case !id.dob.IsZero() && id.dob.AddDate(minAge, 0, 0).After(day):
		return newCheck(CheckDates, schemas.CheckFail, ReasonUnderage, fmt.Sprintf("the holder is younger than %d", minAge))
	}
	return newCheck(CheckDates, schemas.CheckPass, "", "")
}

// registryChecks runs the three record lookups concurrently, each bounded by the registry
// timeout. It returns an error only when ctx itself ends.
func (g *group) registryChecks(ctx context.Context, sessionID string, id identity) ([]schemas.Check, error) {
	lookups := []struct {
		name string
		fn   func(context.Context, registry.Query) (registry.RecordResult, error)
	}{
		{CheckRegistryTax, nil}, {CheckRegistryHealthInsurance, nil}, {CheckRegistrySocialInsurance, nil},
	}
	out := make([]schemas.Check, len(lookups))
	if g.reg == nil {
		for i, l := range lookups {
			out[i] = newCheck(l.name, schemas.CheckSkipped, ReasonRegistryNotConfigured, "no registry is configured")
		}
		return out, nil
	}
	lookups[0].fn, lookups[1].fn, lookups[2].fn = g.reg.CheckTax, g.reg.CheckHealthInsurance, g.reg.CheckSocialInsurance
	q := registry.Query{IDNumber: idnumber.Normalize(id.idNumber), FullName: id.fullName, Sex: id.sex}
	if !id.dob.IsZero() {
		q.DateOfBirth = id.dob.Format(time.DateOnly)
	}
	if err := q.Validate(); err != nil {
		for i, l := range lookups {
			out[i] = newCheck(l.name, schemas.CheckSkipped, ReasonIdentityIncomplete,
				"the session lacks a valid id number, full name or date of birth for the registry")
		}
		return out, nil
	}
	var wg sync.WaitGroup
	for i, l := range lookups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lctx, cancel := context.WithTimeout(ctx, g.registryTimeout)
			defer cancel()
			res, err := l.fn(lctx, q)
			out[i] = g.recordCheck(l.name, sessionID, res, err)
		}()
	}
	stream.Blocking(ctx, wg.Wait) // the lookups wait on the registry: the cores go to other work
	if ctx.Err() != nil {
		return nil, fmt.Errorf("registry lookups of session %s: %w", sessionID, ctx.Err())
	}
	return out, nil
}

// recordCheck maps a record lookup's answer to a check (see WithRecordStatus).
func (g *group) recordCheck(name, sessionID string, res registry.RecordResult, err error) schemas.Check {
	if err != nil {
		if errors.Is(err, registry.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			g.log.Warn("fraud: registry unavailable", "session_id", sessionID, "check", name, "err", err)
			return newCheck(name, schemas.CheckWarn, ReasonRegistryUnavailable, "the registry did not answer in time")
		}
		g.log.Error("fraud: registry error", "session_id", sessionID, "check", name, "err", err)
		return newCheck(name, schemas.CheckWarn, ReasonRegistryError, "the registry could not be queried")
	}
	status, ok := g.recordStatus[res.Outcome]
	if !ok {
		return newCheck(name, schemas.CheckWarn, ReasonRegistryError, "the registry answered an unknown outcome")
	}
	reason := ""
	switch res.Outcome {
	case registry.RecordMismatch:
		reason = ReasonRecordMismatch
	case registry.RecordNotFound:
		reason = ReasonRecordNotFound
	case registry.RecordInactive:
		reason = ReasonRecordInactive
	}
	detail := "the registry answered " + string(res.Outcome)
	if len(res.MismatchedFields) > 0 {
		fields := append([]string(nil), res.MismatchedFields...)
		sort.Strings(fields)
		detail += " (" + strings.Join(fields, ", ") + " differ)"
	}
	if status == schemas.CheckPass {
		reason = ""
	}
	return newCheck(name, status, reason, detail)
}

// replayCheck fails when an image of the session was first seen in another session of the
// tenant (the capture index), byte for byte, or, for the near-duplicate steps, as a
// near-identical image (perceptual hash, nearReplays).
func (g *group) replayCheck(ctx context.Context, st *schemas.SessionState) schemas.Check {
	var hits []string
	for _, c := range st.Captures {
		if c.Step == stepNFC {
			continue
		}
		for _, b := range c.Blobs {
			if b.SHA256 == "" {
				continue
			}
			s, ok := g.sightings.First(st.Envelope.TenantID, strings.ToLower(b.SHA256))
			if ok && s.SessionID != st.Envelope.SessionID {
				hits = append(hits, fmt.Sprintf("%s %s first seen in session %s", c.Step, b.Name, s.SessionID))
			}
		}
	}
	hits = append(hits, g.nearReplays(ctx, st)...)
	if len(hits) > 0 {
		return newCheck(CheckReplayedCapture, schemas.CheckFail, ReasonReplayedCapture, strings.Join(hits, "; "))
	}
	return newCheck(CheckReplayedCapture, schemas.CheckPass, "", "")
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
