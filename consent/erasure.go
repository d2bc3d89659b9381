package consent

import "github.com/idstream/idstream/schemas"

// RequiresBiometricErasure reports whether ev obliges the service to erase the biometric
// data (face images, face crops, face templates and face_index rows) of ev's tracking id in
// ev's tenant: it is a withdrawal of PurposeEKYC (Decree 13/2023/ND-CP art. 12: withdrawal
// stops processing and leads to deletion). For such a record POST /v1/consents also
// produces ErasureRequest(ev) to cmp.erasures.v1, in the same acknowledged Produce call;
// processors/erasure carries it out.
func RequiresBiometricErasure(ev *schemas.ConsentRecorded) bool {
	return ev.PurposeID == PurposeEKYC && ev.Status == StatusWithdrawn
}

// ErasureEventIDPrefix prefixes the consent id of a withdrawal to form the event id of its
// erasure request.
const ErasureEventIDPrefix = "evt_erasure_"

// ErasureRequest returns the BiometricErasureRequested of the withdrawal ev (for which
// RequiresBiometricErasure holds): same tenant and tracking id, event id
// ErasureEventIDPrefix + consent id (deterministic, so a consumer deduplicates on it),
// requested_at = the withdrawal's recorded_at, the categories of
// schemas.BiometricCategories. It is keyed by tracking id on schemas.TopicErasures.
func ErasureRequest(ev *schemas.ConsentRecorded) schemas.BiometricErasureRequested {
	return schemas.BiometricErasureRequested{
		Envelope: schemas.Envelope{
			EventID: ErasureEventIDPrefix + ev.ConsentID, TenantID: ev.Envelope.TenantID,
			OccurredAt: ev.RecordedAt, Producer: Producer,
		},
		TrackingID: ev.TrackingID, ConsentID: ev.ConsentID,
		Categories: schemas.BiometricCategories(), RequestedAt: ev.RecordedAt,
	}
}
