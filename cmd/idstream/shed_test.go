package main

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/idstream/idstream/processors/quality"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// TestEdgeShedsOnBacklog runs the edge's admission control on its real signal, the
// consumer-group lag read from Kafka: the consumer group "quality" is a stuck gate here (it
// takes captures and never finishes them), so its backlog grows. Captures are then shed
// with 429 overloaded and a Retry-After once the gate could not answer within its budget,
// and Session Init once the pipeline's wait passes --max-pipeline-wait; nothing shed is
// stored or produced. When the gate gets through its backlog, both are admitted again.
func TestEdgeShedsOnBacklog(t *testing.T) {
	s := testService(t, []string{"session"}, func(c *Config) {
		c.QualityBudget = 300 * time.Millisecond
		c.MaxPipelineWait = 2 * time.Second
	})
	c := newClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	release := make(chan struct{})
	stuck, err := stream.NewRunner(stream.Group{Name: quality.GroupName, Inputs: []string{schemas.TopicCaptures},
		Handler: func(ctx context.Context, _ *stream.Record) ([]stream.Output, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		}}, s.runtimeOpts("stuck-gate")...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRunner := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- stuck.Run(runCtx) }()
	defer func() {
		close(release)
		stopRunner()
		<-runDone
	}()

	ses := c.openSession("id_card")
	id, token := str(ses["session_id"]), str(ses["sdk_token"])
	photo := sharpImage(t, 1)
	if r := c.upload(id, "document", "front", photo, token); r.status != http.StatusAccepted {
		t.Fatalf("first capture, gate stuck: %d %s, want 202 pending", r.status, r.body)
	}
	taken := 1 // captures the edge took (and produced)
	var shed response
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		shed = c.upload(id, "document", "back", photo, token)
		if shed.status == http.StatusTooManyRequests {
			break
		}
		if shed.status != http.StatusAccepted {
			t.Fatalf("capture: %d %s", shed.status, shed.body)
		}
		taken++
	}
	if shed.status != http.StatusTooManyRequests || str(shed.json(t)["code"]) != "overloaded" {
		t.Fatalf("the stuck gate never shed a capture: %d %s", shed.status, shed.body)
	}
	if ra, err := strconv.Atoi(shed.header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("capture Retry-After %q", shed.header.Get("Retry-After"))
	}
	var init response
	for time.Now().Before(deadline) {
		init = c.postJSON("/v1/ekyc/sessions", c.key, map[string]any{"flow": "id_card"})
		if init.status == http.StatusTooManyRequests {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if init.status != http.StatusTooManyRequests || str(init.json(t)["code"]) != "overloaded" || init.header.Get("Retry-After") == "" {
		t.Fatalf("Session Init never shed while the pipeline waits: %d %s", init.status, init.body)
	}

	for range taken { // the stuck gate gets through what it was given
		select {
		case release <- struct{}{}:
		case <-ctx.Done():
			t.Fatal("the stuck gate never took its captures")
		}
	}
	admitted := func(what string, try func() response, want int) {
		t.Helper()
		until := time.Now().Add(30 * time.Second)
		for time.Now().Before(until) {
			r := try()
			if r.status == want {
				return
			}
			if r.status != http.StatusTooManyRequests {
				t.Fatalf("%s: %d %s", what, r.status, r.body)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s was never admitted again", what)
	}
	admitted("Session Init", func() response {
		return c.postJSON("/v1/ekyc/sessions", c.key, map[string]any{"flow": "id_card"})
	}, http.StatusCreated)
	admitted("a capture", func() response { return c.upload(id, "selfie", "", photo, token) }, http.StatusAccepted)
}
