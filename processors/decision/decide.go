package decision

import (
	"fmt"
	"slices"

	"github.com/idstream/idstream/schemas"
)

// Producer is the producer name in the envelopes of decisions.
const Producer = schemas.ProducerDecision

// ID returns the deterministic decision id of a session: "dec_" + the first 24 hex digits of
// SHA-256(sessionID). The decision's event id is "evt_" + the same digits.
func ID(sessionID string) string { return "dec_" + schemas.SessionDigest(sessionID) }

// OutcomeReview is the outcome Decide gives a session that a review rule sends to a person:
// the decision group opens a review (schemas.ReviewEvent) instead of emitting a decision.
// It never appears on the decisions topic.
const OutcomeReview = "review"

// Decide decides a session from its snapshot under policy p. It returns false when the
// session cannot be decided yet: st is nil, its status is neither processing nor a review a
// reviewer decided, or a pattern of the flow's Await list matches none of its checks. A
// flow the policy does not name awaits "quality.<step>" for every required image step of
// the snapshot.
//
// The outcome is rejected when any hard check (one no Soft pattern and no review rule
// matches) has status fail, with one reason per such check (code = its reason code, or its
// name when it has none); soft failures are reported with status warn. Otherwise it is
// OutcomeReview when a review rule (the flow's or the tenant's) matches a check, with one
// reason per such check (code = the rule's reason), and verified when none does, except
// that a session whose reviewer asked for a retake goes back to review (reason
// retake_received) rather than being verified. A session in review whose reviewer decided gets the reviewer's outcome, decided_by reviewer, with the
// reviewer's reason code as its reason when rejected. The decision lists every check of the
// snapshot plus the data consistency checks of the reconciliation (see Reconcile). Decide is
// pure and deterministic: the same snapshot and policy give the same decision, whose time is
// the snapshot's updated_at and whose ids derive from the session id.
func Decide(p Policy, st *schemas.SessionState) (*schemas.Decision, bool) {
	if st == nil {
		return nil, false
	}
	reviewed := st.Status == schemas.StatusReview && st.Review != nil && st.Review.Decided != nil
	if st.Status != schemas.StatusProcessing && !reviewed {
		return nil, false
	}
	fp, ok := p.Flows[st.Flow]
	if !ok {
		fp = FlowPolicy{Await: qualityAwaits(st.Steps)}
	}
	review := append(slices.Clone(fp.Review), p.Tenants[st.Envelope.TenantID].Review...)
	for _, pat := range fp.Await {
		if !slices.ContainsFunc(st.Checks, func(c schemas.Check) bool { return matchAny([]string{pat}, c.Name) }) && !reviewed {
			return nil, false
		}
	}
	extracted, dataChecks := Reconcile(st)
	extracted.DocumentType = reportedDocumentType(st, fp)
	dataChecks = append(dataChecks, documentTypeChecks(st, fp.DocumentTypes)...)

	checks := slices.Clone(st.Checks)
	for _, dc := range dataChecks {
		if i := slices.IndexFunc(checks, func(c schemas.Check) bool { return c.Name == dc.Name }); i >= 0 {
			checks[i] = dc
		} else {
			checks = append(checks, dc)
		}
	}
	var reasons, toReview []schemas.Reason
	for i, c := range checks {
		if j := slices.IndexFunc(review, func(r ReviewRule) bool { return r.matches(c) }); j >= 0 {
			toReview = append(toReview, schemas.Reason{Code: review[j].reason(), Message: reviewMessage(c)})
			continue
		}
		if c.Status != schemas.CheckFail {
			continue
		}
		if matchAny(fp.Soft, c.Name) {
			checks[i].Status = schemas.CheckWarn
			continue
		}
		reasons = append(reasons, reasonFor(c))
	}
	outcome, decidedBy, version, decidedAt := schemas.StatusVerified, schemas.DecidedByPolicy, p.Version, st.UpdatedAt
	var reviewer *string
	switch {
	case reviewed && (len(reasons) == 0 || st.Review.Decided.Outcome == schemas.StatusRejected):
		// A hard failure that arrived while the case was open still rejects (below): a
		// reviewer's verified does not cover what the reviewer did not see.
		d := st.Review.Decided
		outcome, decidedBy, version, decidedAt = d.Outcome, schemas.DecidedByReviewer, st.Review.PolicyVersion, d.DecidedAt
		reviewer = &d.ReviewerID
		reasons = nil
		if outcome == schemas.StatusRejected {
			reasons = []schemas.Reason{{Code: d.ReasonCode, Message: "A reviewer rejected the session (" + d.ReasonCode + ")."}}
		}
	case len(reasons) > 0:
		outcome = schemas.StatusRejected
	case len(toReview) > 0:
		outcome, reasons = OutcomeReview, toReview
	case st.Review != nil && st.Review.Retake != nil:
		// A reviewer asked for this step again: the case goes back to a person whatever
		// the rules say now (a hard failure still rejects, above).
		rt := st.Review.Retake
		outcome = OutcomeReview
		reasons = []schemas.Reason{{Code: "retake_received", Message: "The person took " + rt.Step + " again, as a reviewer asked (" + rt.ReasonCode + ")."}}
	}
	id := ID(st.Envelope.SessionID)
	return &schemas.Decision{
		Envelope: schemas.Envelope{
			EventID:    schemas.DecisionEventID(id),
			SessionID:  st.Envelope.SessionID,
			TenantID:   st.Envelope.TenantID,
			OccurredAt: decidedAt,
			Producer:   Producer,
		},
		DecisionID:    id,
		Outcome:       outcome,
		PolicyVersion: version,
		Flow:          st.Flow,
		ReferenceID:   st.ReferenceID,
		Reasons:       reasons,
		Checks:        checks,
		Extracted:     extracted,
		DecidedAt:     decidedAt,
		DecidedBy:     decidedBy,
		ReviewerID:    reviewer,
	}, true
}

// reviewMessage names the check that sent a session to review, with its status and score
// (no personal data: names, statuses and scores only).
func reviewMessage(c schemas.Check) string {
	msg := fmt.Sprintf("Check %s is %s", c.Name, c.Status)
	if c.Score != nil {
		msg += fmt.Sprintf(" (score %.3f", *c.Score)
		if c.Threshold != nil {
			msg += fmt.Sprintf(", threshold %.3f", *c.Threshold)
		}
		msg += ")"
	}
	return msg + "."
}

// reasonFor explains a failed hard check without personal data: the check's own detail
// (which by contract holds no PII) or a generic sentence naming the check.
func reasonFor(c schemas.Check) schemas.Reason {
	r := schemas.Reason{Code: c.Name, Message: fmt.Sprintf("Check %s failed.", c.Name)}
	if c.ReasonCode != nil && *c.ReasonCode != "" {
		r.Code = *c.ReasonCode
	}
	if c.Detail != nil && *c.Detail != "" {
		r.Message = *c.Detail
	}
	return r
}

// reportedDocumentType is extracted.document_type: the type the evidence recognised — the
// chip's (its DG1 is signed), else the first document read in step order whose type the
// flow accepts — and only without one the flow's DocumentType (or its name). So an id_card
// session on a 9-digit card reports legacy_id_card, and an nfc_only session on a chip ID
// card chip_id_card.
func reportedDocumentType(st *schemas.SessionState, fp FlowPolicy) string {
	known := func(t string) bool { return t != "" && t != "unknown" }
	if st.Chip != nil && known(st.Chip.DocumentType) {
		return st.Chip.DocumentType
	}
	for _, d := range st.Documents {
		if known(d.DocumentType) && (len(fp.DocumentTypes) == 0 || slices.Contains(fp.DocumentTypes, d.DocumentType)) {
			return d.DocumentType
		}
	}
	if fp.DocumentType != "" {
		return fp.DocumentType
	}
	return st.Flow
}

// DocumentTypeCheckPrefix prefixes the decision's check of the document type the OCR
// recognised on a document step ("document.type_expected.<step>"): pass when the flow accepts
// the type (FlowPolicy.DocumentTypes; no list accepts any), fail document_type_mismatch when
// it does not (a passport sent in a chip ID card flow), skipped document_type_unknown when
// the OCR recognised no type (its own document.type check reports that).
const DocumentTypeCheckPrefix = "document.type_expected."

// Reasons of the document-type check.
const (
	ReasonDocumentTypeMismatch = "document_type_mismatch"
	ReasonDocumentTypeUnknown  = "document_type_unknown"
)

// documentTypeChecks judges the recognised type of every document read of st against
// accepted.
func documentTypeChecks(st *schemas.SessionState, accepted []string) []schemas.Check {
	var out []schemas.Check
	for _, d := range st.Documents {
		captureID := d.CaptureID
		c := schemas.Check{Name: DocumentTypeCheckPrefix + d.Step, Status: schemas.CheckPass, Source: Producer, CaptureID: &captureID}
		switch {
		case d.DocumentType == "" || d.DocumentType == "unknown":
			reason := ReasonDocumentTypeUnknown
			c.Status, c.ReasonCode = schemas.CheckSkipped, &reason
		case len(accepted) > 0 && !slices.Contains(accepted, d.DocumentType):
			reason := ReasonDocumentTypeMismatch
			detail := fmt.Sprintf("The %s shows a document of type %s; the flow takes %v.", d.Step, d.DocumentType, accepted)
			c.Status, c.ReasonCode, c.Detail = schemas.CheckFail, &reason, &detail
		}
		out = append(out, c)
	}
	return out
}
