package schemas

import (
	"fmt"
	"time"
)

// ms returns a UTC time at millisecond precision, as timestamp-millis round-trips it.
func ms(sec int64) time.Time {
	return time.UnixMilli(sec*1000 + 123).UTC()
}

func ptr[T any](v T) *T { return &v }

func sampleEnvelope(producer string) Envelope {
	return Envelope{
		EventID:    "evt_" + producer,
		SessionID:  "ses_01",
		TenantID:   "ten_01",
		OccurredAt: ms(1_790_000_000),
		Producer:   producer,
	}
}

func sampleBlob(name string) BlobRef {
	return BlobRef{Name: name, URI: "fs://blobs/" + name, SHA256: "ab12", Size: 4096, MediaType: "image/jpeg"}
}

func sampleCheck(name, source string) Check {
	return Check{
		Name: name, Status: CheckPass, Score: ptr(0.97), Threshold: ptr(0.5),
		ReasonCode: ptr("none"), ModelVersion: ptr("m1"), Source: source,
		CaptureID: ptr("cap_1"), Detail: ptr("ok"),
	}
}

func sampleMRZ() *MRZ {
	return &MRZ{
		Format: "TD1",
		Lines:  []string{"IDVNM0990123456001099012345<<<", "9901018M3001017VNM<<<<<<<<<<<4", "NGUYEN<<VAN<A<<<<<<<<<<<<<<<<<"},
		Valid:  true,
		Fields: map[string]string{"document_number": "099012345", "nationality": "VNM"},
	}
}

func sampleFields() []Field {
	return []Field{{Name: "id_number", Value: "001099012345", Confidence: ptr(0.99)}, {Name: "full_name", Value: "NGUYEN VAN A"}}
}

func sampleExtracted() *Extracted {
	return &Extracted{
		DocumentType: "chip_id_card", IDNumber: ptr("001099012345"), FullName: ptr("Nguyễn Văn A"),
		DateOfBirth: ptr("1999-01-01"), Sex: ptr("M"), Nationality: ptr("VNM"),
		PlaceOfOrigin: ptr("Hà Nội"), PlaceOfResidence: ptr("Hồ Chí Minh"), IssueDate: ptr("2021-01-01"),
		ExpiryDate: ptr("2039-01-01"), MRZ: map[string]string{"document_number": "099012345"},
		Other:   map[string]string{"plate": "30A-12345"},
		Sources: map[string][]string{"id_number": {"ocr", "mrz", "chip"}, "full_name": {"chip"}},
	}
}

func sampleQuality() *QualityAssessed {
	return &QualityAssessed{
		Envelope: sampleEnvelope("quality"), CaptureID: "cap_1", Step: "document_front", Passed: false,
		Blur: 212.5, Glare: 0.004, Brightness: 128.25, Framing: "not_framed",
		Reasons: []string{"glare", "not_framed"}, Width: 1920, Height: 1080,
		Image: sampleBlob("image"), GateVersion: "g1",
	}
}

func sampleDocument() *DocumentRead {
	return &DocumentRead{
		Envelope: sampleEnvelope("ocr"), CaptureID: "cap_1", Step: "document_front",
		DocumentType: "chip_id_card", Side: "front", Fields: sampleFields(), MRZ: sampleMRZ(),
		FaceCrop: ptr(sampleBlob("face")), Checks: []Check{sampleCheck("document.mrz_check_digits", "ocr")},
		ModelVersion: "ocr1",
	}
}

func sampleChip() *ChipVerified {
	return &ChipVerified{
		Envelope: sampleEnvelope("chip"), CaptureID: "cap_2", DocumentType: "chip_id_card",
		MRZ: sampleMRZ(), Fields: sampleFields(), FaceImage: ptr(sampleBlob("dg2")),
		Checks: []Check{sampleCheck("chip.passive_authentication", "chip"), sampleCheck("chip.active_authentication", "chip")},
	}
}

func sampleLiveness() *LivenessAssessed {
	return &LivenessAssessed{
		Envelope: sampleEnvelope("liveness"), CaptureID: "cap_3", Score: 0.91, Threshold: 0.5,
		Live: true, AttackType: ptr("print"), Signals: map[string]float64{"moire": 0.1, "depth": 0.8},
		ModelVersion: "l1", Checks: []Check{sampleCheck("face.liveness", "liveness")},
	}
}

func sampleFaces() *FacesMatched {
	return &FacesMatched{
		Envelope: sampleEnvelope("facematch"),
		Pairs: []FacePair{
			{Pair: "selfie_document", Similarity: 0.88, Threshold: 0.6, Matched: true},
			{Pair: "selfie_chip", Similarity: 0.12, Threshold: 0.6, Matched: false},
		},
		ModelVersion: "f1", Checks: []Check{sampleCheck("face.selfie_document", "facematch")},
	}
}

func sampleSessionState() *SessionState {
	return &SessionState{
		Envelope: sampleEnvelope("session"), Version: 42, Status: StatusVerified, Flow: "chip_id_card",
		Steps:       []string{"document_front", "document_back", "nfc", "selfie"},
		ReferenceID: ptr("ref-1"), TrackingID: ptr("trk-1"), WebhookURL: ptr("https://example.test/hook"),
		Locale: "vi", DataRetention: "service", Nonce: []byte{1, 2, 3, 4, 5, 6, 7, 8},
		CreatedAt: ms(1_790_000_000), ExpiresAt: ms(1_790_001_800), UpdatedAt: ms(1_790_000_100),
		DecidedAt: ptr(ms(1_790_000_200)),
		Captures: []StepCapture{{
			Step: "document_front", CaptureID: "cap_1", Status: CaptureAccepted,
			Blobs: []BlobRef{sampleBlob("image"), sampleBlob("video")}, Quality: sampleQuality(),
			SubmittedAt: ms(1_790_000_010), UpdatedAt: ms(1_790_000_011),
		}, {
			Step: "nfc", CaptureID: "cap_2", Status: CaptureSubmittedStatus, Blobs: []BlobRef{sampleBlob("sod")},
			SubmittedAt: ms(1_790_000_020), UpdatedAt: ms(1_790_000_021),
		}},
		Checks:    []Check{sampleCheck("quality.document_front", "quality"), {Name: "fraud.blocklist", Status: CheckSkipped, Source: "fraud"}},
		Documents: []DocumentRead{*sampleDocument()},
		Chip:      sampleChip(), Liveness: sampleLiveness(), Faces: sampleFaces(),
		Decision: &DecisionResult{
			DecisionID: "dec_1", Outcome: StatusVerified, PolicyVersion: "p1",
			Reasons: []Reason{{Code: "ok", Message: "all checks passed"}}, Extracted: sampleExtracted(),
			DecidedAt: ms(1_790_000_200), DecidedBy: DecidedByReviewer, ReviewerID: ptr("rev_ana"),
		},
		RequestSHA256: ptr("9f86d081"),
		BiometricErasure: &BiometricErasure{
			TrackingID: "trk-1", ConsentID: "con_w", RequestedAt: ms(1_790_000_600),
			Pending: []BlobRef{sampleBlob("dg2")}, BlobsDeleted: []string{"fs://blobs/image"}, ErasedAt: ptr(ms(1_790_000_601)),
		},
		EarlyEvents: []EarlyEvent{{Topic: TopicCaptures, Value: []byte{0xc3, 0x01, 0x02}}},
		Review: &ReviewState{
			OpenedAt: ms(1_790_000_150), PolicyVersion: "p1", Reasons: []Reason{{Code: "liveness_grey_band", Message: "liveness.passive"}},
			ClaimedBy: ptr("rev_ana"), ClaimExpiresAt: ptr(ms(1_790_001_050)),
			Decided: &ReviewDecision{ReviewerID: "rev_ana", Outcome: StatusVerified, ReasonCode: "live_person", Note: ptr("checked"), DecidedAt: ms(1_790_000_190)},
			Actions: []ReviewAction{{Kind: "opened", At: ms(1_790_000_150)}, {Kind: "claimed", ReviewerID: ptr("rev_ana"), At: ms(1_790_000_160), Detail: ptr("until 1790001050")}},
			Retake: &ReviewRetake{
				Step: "selfie", ReviewerID: "rev_ana", ReasonCode: "face_hidden", Note: ptr("hat"),
				RequestedAt: ms(1_790_000_170), EventID: "evt_retake",
			},
			Retakes: 1,
		},
	}
}

// sample returns a fully populated value of the topic's Go type, as a pointer.
func sample(topic string) any {
	switch topic {
	case TopicSessions:
		return &SessionEvent{
			Envelope: sampleEnvelope("edge"),
			Opened: &SessionOpened{
				Flow: "chip_id_card", Steps: []string{"document_front", "nfc", "selfie"},
				ReferenceID: ptr("ref-1"), TrackingID: ptr("trk-1"), WebhookURL: ptr("https://example.test/hook"),
				Locale: "en", DataRetention: "integrator", CreatedAt: ms(1_790_000_000), ExpiresAt: ms(1_790_001_800),
				Nonce: []byte{8, 7, 6, 5, 4, 3, 2, 1}, RequestSHA256: ptr("9f86d081"),
			},
			Cancelled: &SessionCancelled{Reason: "user_cancelled"},
			Expired:   &SessionExpired{ExpiresAt: ms(1_790_001_800)},
			Erased:    &SessionErased{Reason: "integrator_request"},
			EraseBiometrics: &EraseBiometrics{
				TrackingID: "trk-1", ConsentID: "con_w", Categories: BiometricCategories(), RequestedAt: ms(1_790_000_600),
			},
			BiometricsErased: &BiometricsErased{
				ConsentID: "con_w", BlobsDeleted: []string{"fs://ten_01/ses_01/cap_3/image"}, ErasedAt: ms(1_790_000_601),
			},
		}
	case TopicCaptures:
		return &CaptureSubmitted{
			Envelope: sampleEnvelope("edge"), CaptureID: "cap_1", Step: "document_front",
			Blobs: []BlobRef{sampleBlob("image"), sampleBlob("video")}, Nonce: []byte{9, 9, 9},
			Client: map[string]string{"sdk": "ios-1.2", "integrity": "ok"},
		}
	case TopicQuality:
		return sampleQuality()
	case TopicDocuments:
		return sampleDocument()
	case TopicChip:
		return sampleChip()
	case TopicLiveness:
		return sampleLiveness()
	case TopicFacematch:
		return sampleFaces()
	case TopicFraud:
		return &FraudAssessed{Envelope: sampleEnvelope("fraud"), Checks: []Check{sampleCheck("fraud.injection", "fraud"), sampleCheck("fraud.duplicate_face", "fraud")}}
	case TopicSessionState:
		return sampleSessionState()
	case TopicDecisions:
		return &Decision{
			Envelope: sampleEnvelope("decision"), DecisionID: "dec_1", Outcome: StatusRejected, PolicyVersion: "p1",
			Flow: "passport", ReferenceID: ptr("ref-1"), Reasons: []Reason{{Code: "face_mismatch", Message: "faces differ"}},
			Checks: []Check{sampleCheck("face.selfie_document", "facematch")}, Extracted: sampleExtracted(),
			DecidedAt: ms(1_790_000_200), DecidedBy: DecidedByPolicy,
		}
	case TopicWebhookRetry, TopicWebhookDLQ:
		return &WebhookDelivery{
			Envelope: sampleEnvelope("webhook"), WebhookID: "wh_1", DecisionEventID: "evt_decision",
			URL: "https://example.test/hook", Attempt: 3, NotBefore: ms(1_790_000_300), LastStatus: ptr(503),
			LastError: ptr("service unavailable"), Body: []byte(`{"session_id":"ses_01"}`),
		}
	case TopicWebhookAttempts:
		return &WebhookAttempt{
			Envelope: sampleEnvelope("webhook"), WebhookID: "msg_dec_1", DecisionEventID: "evt_decision",
			URL: "https://example.test/hook", Attempt: 2, StatusCode: ptr(503), Error: ptr("status 503"),
			DurationMS: 125, Outcome: WebhookRetry, AttemptedAt: ms(1_790_000_300), NextAttemptAt: ptr(ms(1_790_000_360)),
		}
	case TopicReviews:
		return &ReviewEvent{
			Envelope: sampleEnvelope("edge"),
			Opened:   &ReviewOpened{PolicyVersion: "p1", Reasons: []Reason{{Code: "liveness_grey_band", Message: "liveness.passive"}}},
			Claimed:  &ReviewClaimed{ReviewerID: "rev_ana", Until: ms(1_790_001_050)},
			Released: &ReviewReleased{ReviewerID: "rev_ana"},
			Decided:  &ReviewDecided{ReviewerID: "rev_ana", Outcome: StatusRejected, ReasonCode: "mask_seen", Note: ptr("a mask")},
			Retake:   &ReviewRetakeRequested{ReviewerID: "rev_ana", Step: "selfie", ReasonCode: "face_hidden", Note: ptr("hat"), ExpiresAt: ms(1_790_086_400)},
			Viewed:   &ReviewViewed{ReviewerID: "rev_ana", What: "image:selfie"},
		}
	case TopicBlocklist:
		return &BlocklistEntry{
			Envelope: sampleEnvelope("edge"), EntryID: "blk_1", Kind: "face", ValueHash: ptr("hmac:abcd"),
			Embedding: []float32{0.25, -0.5, 0.125, 1}, SourceSessionID: ptr("ses_00"), Reason: ptr("fraud_ring"),
			CreatedAt: ms(1_790_000_400), Deleted: true,
		}
	case TopicFaceIndex:
		return &FaceIndexEntry{
			Envelope: sampleEnvelope("fraud"), IDNumberHash: "hmac:abcd", Embedding: []float32{0.5, -0.5, 0.5, 0.5},
			ModelVersion: "fr_feature.onnx@87aacdfe", CaptureID: "cap_01", Outcome: "verified",
		}
	case TopicCaptureIndex:
		return &CaptureSighting{Envelope: sampleEnvelope("fraud"), CaptureID: "cap_01", Step: "selfie", PHash: ptr("c3a5f00d12345678")}
	case TopicConsents:
		return &ConsentRecorded{
			Envelope: sampleEnvelope("consent"), ConsentID: "con_1", TrackingID: "trk-1", PurposeID: "ekyc",
			Status: "granted", NoticeVersion: "n3", Channel: "web", IP: "192.0.2.1", UserAgent: "test-agent",
			RecordedAt: ms(1_790_000_500), ProofSHA256: "cd34",
		}
	case TopicErasures:
		return &BiometricErasureRequested{
			Envelope:   Envelope{EventID: "era_con_w", TenantID: "ten_01", OccurredAt: ms(1_790_000_600), Producer: "consent"},
			TrackingID: "trk-1", ConsentID: "con_w", Categories: BiometricCategories(), RequestedAt: ms(1_790_000_600),
		}
	case TopicTrackingSessions:
		return &TrackingSessionOpened{Envelope: sampleEnvelope("erasure-index"), TrackingID: "trk-1", OpenedAt: ms(1_790_000_000)}
	case TopicErasureState:
		return &TrackingErasureState{
			Envelope: sampleEnvelope("erasure"), TrackingID: "trk-1",
			Sessions: []TrackedSession{
				{TenantID: "ten_01", SessionID: "ses_01", OpenedAt: ms(1_790_000_000), ErasureConsentID: ptr("con_w")},
				{TenantID: "ten_01", SessionID: "ses_02", OpenedAt: ms(1_790_000_700)},
			},
			Erasures: []TrackedErasure{{TenantID: "ten_01", ConsentID: "con_w", Categories: BiometricCategories(), RequestedAt: ms(1_790_000_600)}},
		}
	}
	panic(fmt.Sprintf("no sample for topic %q", topic))
}
