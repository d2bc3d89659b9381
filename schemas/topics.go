package schemas

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"reflect"

	"github.com/hamba/avro/v2"
)

// schemaFiles holds the current schema of every topic.
//
//go:embed *.avsc
var schemaFiles embed.FS

// releasedFiles holds every released version of every schema, named <file>.v<N>.avsc.
//
//go:embed released/*.avsc
var releasedFiles embed.FS

// TopicInfo describes one topic of the contract.
type TopicInfo struct {
	Name      string      // topic name, e.g. ekyc.sessions.v1
	Compacted bool        // true for compacted (table) topics
	Schema    avro.Schema // current value schema
	New       func() any  // returns a pointer to a new zero value of the topic's Go type
	File      string      // name of the embedded .avsc file the schema comes from
	Source    []byte      // text of that .avsc file (what is registered with a registry)
}

// topicSpec is the static part of the topic table.
type topicSpec struct {
	name      string
	file      string
	compacted bool
	new       func() any
}

// topicSpecs lists every topic constant of types.go with its schema file and Go type.
func topicSpecs() []topicSpec {
	return []topicSpec{
		{TopicSessions, "session_event.avsc", false, func() any { return new(SessionEvent) }},
		{TopicCaptures, "capture_submitted.avsc", false, func() any { return new(CaptureSubmitted) }},
		{TopicQuality, "quality_assessed.avsc", false, func() any { return new(QualityAssessed) }},
		{TopicDocuments, "document_read.avsc", false, func() any { return new(DocumentRead) }},
		{TopicChip, "chip_verified.avsc", false, func() any { return new(ChipVerified) }},
		{TopicLiveness, "liveness_assessed.avsc", false, func() any { return new(LivenessAssessed) }},
		{TopicFacematch, "faces_matched.avsc", false, func() any { return new(FacesMatched) }},
		{TopicFraud, "fraud_assessed.avsc", false, func() any { return new(FraudAssessed) }},
		{TopicSessionState, "session_state.avsc", true, func() any { return new(SessionState) }},
		{TopicDecisions, "decision.avsc", true, func() any { return new(Decision) }},
		{TopicWebhookRetry, "webhook_delivery.avsc", false, func() any { return new(WebhookDelivery) }},
		{TopicWebhookDLQ, "webhook_delivery.avsc", false, func() any { return new(WebhookDelivery) }},
		{TopicWebhookAttempts, "webhook_attempt.avsc", false, func() any { return new(WebhookAttempt) }},
		{TopicBlocklist, "blocklist_entry.avsc", true, func() any { return new(BlocklistEntry) }},
		{TopicReviews, "review_event.avsc", false, func() any { return new(ReviewEvent) }},
		{TopicFaceIndex, "face_index_entry.avsc", true, func() any { return new(FaceIndexEntry) }},
		{TopicCaptureIndex, "capture_sighting.avsc", true, func() any { return new(CaptureSighting) }},
		{TopicConsents, "consent_recorded.avsc", false, func() any { return new(ConsentRecorded) }},
		{TopicErasures, "biometric_erasure_requested.avsc", false, func() any { return new(BiometricErasureRequested) }},
		{TopicTrackingSessions, "tracking_session_opened.avsc", false, func() any { return new(TrackingSessionOpened) }},
		{TopicErasureState, "erasure_state.avsc", true, func() any { return new(TrackingErasureState) }},
	}
}

// Topics returns the topic table: every topic of the contract with its current schema, in
// a fixed order. Each call returns a fresh slice. It panics only if an embedded schema does
// not parse, which the package's tests rule out.
func Topics() []TopicInfo {
	topics, err := loadTopics()
	if err != nil {
		panic(fmt.Sprintf("schemas: embedded schemas are invalid: %v", err))
	}
	return topics
}

// ParseSchema parses the text of one self-contained schema without touching any shared
// (global) schema cache.
func ParseSchema(text []byte) (avro.Schema, error) {
	s, err := avro.ParseBytesWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("parse avro schema: %w", err)
	}
	return s, nil
}

// loadTopics parses the embedded schemas into the topic table.
func loadTopics() ([]TopicInfo, error) {
	specs := topicSpecs()
	parsed := make(map[string]avro.Schema, len(specs))
	topics := make([]TopicInfo, 0, len(specs))
	for _, sp := range specs {
		src, err := schemaFiles.ReadFile(sp.file)
		if err != nil {
			return nil, fmt.Errorf("read schema %s: %w", sp.file, err)
		}
		s, ok := parsed[sp.file]
		if !ok {
			if s, err = ParseSchema(src); err != nil {
				return nil, fmt.Errorf("schema %s: %w", sp.file, err)
			}
			parsed[sp.file] = s
		}
		topics = append(topics, TopicInfo{
			Name:      sp.name,
			Compacted: sp.compacted,
			Schema:    s,
			New:       sp.new,
			File:      sp.file,
			Source:    src,
		})
	}
	return topics, nil
}

// releasedSchema is one frozen, released version of a schema file.
type releasedSchema struct {
	File   string // file it is a version of, e.g. session_state.avsc
	Name   string // name of the frozen copy, e.g. session_state.v1.avsc
	Source []byte
}

// loadReleased returns every frozen copy under released/.
func loadReleased() ([]releasedSchema, error) {
	entries, err := fs.ReadDir(releasedFiles, "released")
	if err != nil {
		return nil, fmt.Errorf("list released schemas: %w", err)
	}
	out := make([]releasedSchema, 0, len(entries))
	for _, e := range entries {
		src, err := releasedFiles.ReadFile(path.Join("released", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read released schema %s: %w", e.Name(), err)
		}
		out = append(out, releasedSchema{File: releasedBase(e.Name()), Name: e.Name(), Source: src})
	}
	return out, nil
}

// releasedBase maps "session_state.v1.avsc" to "session_state.avsc".
func releasedBase(name string) string {
	stem := name[:len(name)-len(path.Ext(name))] // session_state.v1
	if ext := path.Ext(stem); ext != "" {
		stem = stem[:len(stem)-len(ext)]
	}
	return stem + ".avsc"
}

// goType returns the struct type a TopicInfo's New produces.
func (t TopicInfo) goType() reflect.Type {
	return reflect.TypeOf(t.New()).Elem()
}
