package schemas

import (
	"reflect"
	"testing"
)

// TestHandlesMatchTheTopicTable: every topic of the table has a typed handle whose type is
// the table's Go type for it, so a processor declared with handles decodes what the codec
// encodes.
func TestHandlesMatchTheTopicTable(t *testing.T) {
	handles := map[string]reflect.Type{}
	add := func(name string, v any) { handles[name] = reflect.TypeOf(v).Elem() }
	add(Sessions.Name(), Sessions.New())
	add(Captures.Name(), Captures.New())
	add(Quality.Name(), Quality.New())
	add(Documents.Name(), Documents.New())
	add(Chip.Name(), Chip.New())
	add(Liveness.Name(), Liveness.New())
	add(Facematch.Name(), Facematch.New())
	add(Fraud.Name(), Fraud.New())
	add(SessionStates.Name(), SessionStates.New())
	add(Decisions.Name(), Decisions.New())
	add(WebhookRetries.Name(), WebhookRetries.New())
	add(WebhookDLQ.Name(), WebhookDLQ.New())
	add(WebhookAttempts.Name(), WebhookAttempts.New())
	add(Blocklist.Name(), Blocklist.New())
	add(Reviews.Name(), Reviews.New())
	add(Consents.Name(), Consents.New())
	add(Erasures.Name(), Erasures.New())
	add(TrackingSessions.Name(), TrackingSessions.New())
	add(ErasureStates.Name(), ErasureStates.New())
	add(FaceIndex.Name(), FaceIndex.New())
	add(CaptureIndex.Name(), CaptureIndex.New())
	topics := Topics()
	if len(handles) != len(topics) {
		t.Errorf("%d handles for %d topics", len(handles), len(topics))
	}
	for _, ti := range topics {
		got, ok := handles[ti.Name]
		if !ok {
			t.Errorf("topic %s has no handle", ti.Name)
			continue
		}
		if want := ti.goType(); got != want {
			t.Errorf("handle of %s is of %v, the topic table's type is %v", ti.Name, got, want)
		}
	}
}
