package consent

import "github.com/idstream/idstream/schemas"

// RequiresBiometricErasure reports whether ev obliges the service to erase the biometric
// data (face images, face crops, face templates and face_index rows) of ev's tracking id in
// ev's tenant: it is a withdrawal of PurposeEKYC (Decree 13/2023/ND-CP art. 12: withdrawal
// stops processing and leads to deletion). This is the trigger contract for the consumer
// of cmp.consents.v1 that performs the erasure; see README.md for the remaining work.
func RequiresBiometricErasure(ev *schemas.ConsentRecorded) bool {
	return ev.PurposeID == PurposeEKYC && ev.Status == StatusWithdrawn
}
