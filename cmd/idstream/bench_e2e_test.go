package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/evaluation"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/internal/loadbench"
)

// TestBenchCommand is `idstream bench` against a running service: two levels of two id_card
// sessions each, from a corpus of the independent renderer. It asserts what the figures are
// made of, not the figures: every session decided without error, the gate, the decision and
// the webhook (the webhook sink runs; the bench receives) timed, the CPU read from the
// service's metrics and divided among the groups that did the work, a compute limit from the
// first level, the JSON and the plot written.
func TestBenchCommand(t *testing.T) {
	s := testService(t, allGroups, func(c *Config) { c.Sinks = []string{"webhook"} })
	key := newClient(t, s).key
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	faces := facetest.New(t)
	if err := buildCorpus(corpus, faces.ModelsDir(), 1, 11, io.Discard, evaluation.HeldOut); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	args := []string{"--url", "http://" + s.edgeAddr, "--api-key", key, "--corpus", corpus, "--flow", "id_card",
		"--sessions", "2", "--concurrency", "1,2", "--cores", "2", "--out", out}
	if err := runBench(ctx, args, &stdout, io.Discard); err != nil {
		t.Fatalf("bench: %v\n%s", err, stdout.String())
	}
	if testing.Verbose() {
		t.Log("\n" + stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Limit  *float64            `json:"compute_limit_per_s"`
		Levels []loadbench.Summary `json:"levels"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Levels) != 2 {
		t.Fatalf("%d levels, want 2", len(rep.Levels))
	}
	for _, l := range rep.Levels {
		if l.Sessions != 2 || l.Decided != 2 || l.Errors != 0 {
			t.Errorf("level ×%g: %d sessions, %d decided, %d errors; want 2, 2, 0", l.Offered, l.Sessions, l.Decided, l.Errors)
		}
		if !(l.GateP50 > 0) || !(l.DecisionP99 > 0) || !(l.WebhookP99 > 0) || !(l.PerSecond > 0) {
			t.Errorf("level ×%g: gate p50 %v ms, decision p99 %v ms, webhook p99 %v ms, %v sessions/s; want all measured",
				l.Offered, l.GateP50, l.DecisionP99, l.WebhookP99, l.PerSecond)
		}
		for _, g := range []string{"quality", "ocr", "liveness", "facematch"} {
			if runtime.GOOS != "linux" {
				break // a group's CPU is measured on Linux only
			}
			if !(l.GroupCPUPerSession[g] > 0) {
				t.Errorf("level ×%g: group %s used %v CPU-s per session, want some", l.Offered, g, l.GroupCPUPerSession[g])
			}
		}
		var groups float64
		for _, v := range l.GroupCPUPerSession {
			groups += v
		}
		if groups > l.CPUPerSession {
			t.Errorf("level ×%g: the groups used %.2f CPU-s per session, more than the process's %.2f", l.Offered, groups, l.CPUPerSession)
		}
	}
	if rep.Limit == nil || !(*rep.Limit > 0) {
		t.Errorf("compute limit %v, want one from the first level", rep.Limit)
	}
	f, err := os.Open(filepath.Join(out, "latency.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("latency.png: %v", err)
	}
}
