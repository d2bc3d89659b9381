package chip

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/idstream/idstream/internal/lds"
	"github.com/idstream/idstream/internal/mrz"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// identityQuery builds the registry query from the verified DG13 identity (and the DG1
// document number when the MRZ is valid). Names are composed to NFC, as the registry wants.
func identityQuery(id *lds.VNIdentity, m *mrz.MRZ) registry.Query {
	q := registry.Query{
		IDNumber:    strings.TrimSpace(id.IDNumber),
		FullName:    composeVietnamese(strings.TrimSpace(id.FullName)),
		DateOfBirth: strings.TrimSpace(id.DateOfBirth),
	}
	if id.Sex == registry.SexMale || id.Sex == registry.SexFemale {
		q.Sex = id.Sex
	}
	if m != nil && m.Valid && m.IssuingState == "VNM" {
		q.DocumentNumber = m.DocumentNumber
	}
	return q
}

// registryCheck looks the DG13 identity up in the national identity registry and adds
// chip.registry_identity: pass on match; fail with the outcome as reason for a mismatch,
// revoked, deceased or not found; warn registry_unavailable when the registry cannot answer
// within the timeout; warn registry_error when it refuses or answers nonsense; skipped when
// there is no registry, no verified DG13, or DG13 lacks what a query needs. It returns an
// error only when ctx itself ends.
func (v *verifier) registryCheck(ctx context.Context, id *lds.VNIdentity, m *mrz.MRZ) error {
	switch {
	case v.g.reg == nil:
		v.add(CheckRegistryIdentity, schemas.CheckSkipped, ReasonRegistryNotConfigured, "no national identity registry is configured")
		return nil
	case id == nil:
		v.add(CheckRegistryIdentity, schemas.CheckSkipped, ReasonNoIdentityData, "no verified DG13 identity to look up")
		return nil
	}
	q := identityQuery(id, m)
	if err := q.Validate(); err != nil {
		if q.DocumentNumber != "" { // a document number the registry does not accept is optional
			q.DocumentNumber = ""
			err = q.Validate()
		}
		if err != nil {
			v.add(CheckRegistryIdentity, schemas.CheckSkipped, ReasonRegistryQueryInvalid,
				"DG13 lacks a valid id number, full name or date of birth for the registry")
			return nil
		}
	}
	lctx, cancel := context.WithTimeout(ctx, v.g.registryTimeout)
	var (
		res registry.IdentityResult
		err error
	)
	stream.Blocking(ctx, func() { res, err = v.g.reg.CheckIdentity(lctx, q) }) // the cores go to other work meanwhile
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("registry lookup of capture %s: %w", v.capture.CaptureID, ctx.Err())
		}
		if errors.Is(err, registry.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			v.g.log.Warn("chip: national identity registry unavailable", "session_id", v.capture.Envelope.SessionID,
				"capture_id", v.capture.CaptureID, "err", err)
			v.add(CheckRegistryIdentity, schemas.CheckWarn, ReasonRegistryUnavailable, "the national identity registry did not answer in time")
			return nil
		}
		v.g.log.Error("chip: national identity registry error", "session_id", v.capture.Envelope.SessionID,
			"capture_id", v.capture.CaptureID, "err", err)
		v.add(CheckRegistryIdentity, schemas.CheckWarn, ReasonRegistryError, "the national identity registry could not be queried")
		return nil
	}
	switch {
	case res.Outcome == registry.IdentityMatch:
		v.add(CheckRegistryIdentity, schemas.CheckPass, "", "the national identity registry matches")
	case res.Outcome.Valid():
		detail := fmt.Sprintf("the national identity registry answered %s", res.Outcome)
		if len(res.MismatchedFields) > 0 {
			detail += " (" + strings.Join(res.MismatchedFields, ", ") + " differ)"
		}
		v.add(CheckRegistryIdentity, schemas.CheckFail, string(res.Outcome), detail)
	default:
		v.g.log.Error("chip: national identity registry answered an unknown outcome", "capture_id", v.capture.CaptureID)
		v.add(CheckRegistryIdentity, schemas.CheckWarn, ReasonRegistryError, "the national identity registry answered an unknown outcome")
	}
	return nil
}
