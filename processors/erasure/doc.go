// Package erasure carries out the erasure of biometric data that a withdrawal of consent to
// eKYC (purpose ekyc_identity_verification) requires: the face images, face crops and
// chip faces of the tracking id's sessions opened before the withdrawal are deleted from
// the blob store, their references leave the session snapshots, face_index rows are
// marked deleted (by the ClickHouse sink), and the erasure is itself recorded in each
// session's state.
//
// # Design
//
// The consent service produces schemas.BiometricErasureRequested to cmp.erasures.v1,
// keyed by tracking id, beside the withdrawal record. Sessions are keyed by session id, so
// the tracking id's sessions must first meet its requests on one partition. Three groups:
//
//  1. IndexGroup ("erasure-index", stateless, at least once) re-keys every SessionOpened
//     that carries a tracking id from ekyc.sessions.v1 into a TrackingSessionOpened on
//     cmp.tracking-sessions.v1, keyed by tracking id.
//
//  2. Group ("erasure", stateful, exactly once) consumes cmp.tracking-sessions.v1 and
//     cmp.erasures.v1 and keeps, per tracking id, a TrackingErasureState in the compacted
//     table cmp.erasure-state.v1: the sessions (tenant, session id, opened_at) and the
//     erasure requests (tenant, consent id, requested_at). The three topics share the key
//     (tracking id) and must have the same partition count, so a member owns a tracking
//     id's partition of all three. A session is erased for the earliest request of its
//     tenant with requested_at ≥ its opened_at: sessions opened after a withdrawal are not
//     erased. Either record may come first (the index lags the sessions topic), so each
//     side checks the other: a new request orders the erasure of the known sessions it
//     covers, a new session is ordered erased at once when a request already covers it.
//     An order is a SessionEvent with EraseBiometrics on ekyc.sessions.v1, keyed by
//     session id, with the deterministic event id "evt_erase_<session>_<consent>"; each
//     session is ordered erased once (the table records the consent id it was erased for).
//
//  3. The session group folds the order (processors/session): the biometric blob
//     references (selfie blobs and the image its quality assessment names, the nfc
//     capture's dg2, document face crops, the chip's decoded face) leave the snapshot and
//     are queued in SessionState.BiometricErasure.Pending; a session not yet decided is
//     cancelled. A capture or result in flight that names a biometric blob after that is
//     queued as well. Because the session group is the only writer of the state, what it
//     queues is exactly what the snapshot referenced: nothing is missed by a race.
//
//  4. DeleterGroup ("erasure-blobs", stateless, at least once) consumes
//     ekyc.session-state.v1; for a snapshot with pending blobs, or an erasure not yet
//     recorded as done, it deletes the pending blobs from the blob store (deleting an
//     absent blob succeeds) and then produces a SessionEvent with BiometricsErased (the
//     URIs deleted, erased_at) to ekyc.sessions.v1. The session group folds it:
//     the URIs move from Pending to BlobsDeleted and, once nothing is pending, ErasedAt is
//     set. That snapshot is the record of the erasure; the ClickHouse sink marks the
//     session's face_index rows deleted when it sees a snapshot with BiometricErasure.
//
// # Replay
//
// Every step is idempotent, so a crash, a retry or a run of every group again from the
// start of its inputs has no further effect: the index records are a set; the erasure
// group's table dedupes sessions by (tenant, session id) and requests by (tenant, consent
// id) and orders each session once (even with a reset consumer group, since the table is
// restored from its topic); the session fold ignores a second order and a deletion that
// changes nothing; deleting a deleted blob succeeds, and its BiometricsErased (same event
// id for the same pending set) changes nothing.
package erasure
