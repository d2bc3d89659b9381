package main

import (
	"context"
	"image/png"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/evaluation"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/readmodel"
)

// TestEvalSmallCorpus is `idstream eval` on the small built-in corpus: one document of every
// type per split from the independent renderer (internal/docgen), the face corpus and its
// attack renderings, run through the whole pipeline over REST. It asserts that the pipeline
// still reads documents and faces nobody tuned it on — not the accuracy figures themselves,
// which `make eval` measures on a larger corpus: every good capture gets an answer from the
// gate (at once or, past the budget, in the session), sessions are decided, document types
// are recognised, fields are read and bad captures sent back above floors a broken stage
// falls through, no impostor or attack is verified — and that the report, the outcomes and
// both plots are written.
func TestEvalSmallCorpus(t *testing.T) {
	faces := facetest.New(t)
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	if err := buildCorpus(corpus, faces.ModelsDir(), 1, 7, io.Discard, evaluation.HeldOut); err != nil {
		t.Fatal(err)
	}
	c, err := evaluation.Load(corpus)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	o := evalOptions{split: evaluation.HeldOut, modelsDir: faces.ModelsDir(), concurrency: 2, timeout: 2 * time.Minute, budget: 5 * time.Second}
	res, outcomes, err := evaluate(ctx, c, o, io.Discard, log)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report")
	if err := writeReport(out, res, outcomes); err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		res.WriteText(os.Stderr)
	}
	for _, o := range outcomes {
		if o.Err != "" {
			t.Errorf("session %s: %s", o.Session.ID, o.Err)
		}
		if o.Session.Kind != evaluation.Genuine && o.Status == "verified" {
			t.Errorf("%s session %s was verified", o.Session.Kind, o.Session.ID)
		}
		for _, g := range o.Gate {
			if g.Status != "accepted" && g.Status != "retake" && !(g.Status == "pending" && g.Expect != evaluation.ExpectGood) {
				t.Errorf("session %s, step %s: the gate answered %s %s", o.Session.ID, g.Step, g.Status, g.Detail)
			}
		}
	}
	if res.Sessions != len(outcomes) || res.Sessions < 5 {
		t.Fatalf("%d sessions reported of %d", res.Sessions, len(outcomes))
	}
	var types, fields evaluation.Rate
	for _, r := range res.DocumentType {
		types.Hits += r.Hits
		types.Total += r.Total
	}
	for _, byField := range res.Fields {
		for _, r := range byField {
			fields.Hits += r.Hits
			fields.Total += r.Total
		}
	}
	// Floors well under what the pipeline reads today (types 3–5 of 5, fields about half,
	// most bad captures caught): a reader or gate that breaks falls through them; the
	// figures themselves are make eval's.
	if types.Total != 5 || types.Hits < 3 {
		t.Errorf("document types recognised %v, want at least 3 of 5", types)
	}
	if fields.Total < 30 || fields.Value() < 0.35 {
		t.Errorf("fields read exactly %v, want at least 35 %%", fields)
	}
	var bad evaluation.Rate
	for _, r := range res.BadCaught {
		bad.Hits += r.Hits
		bad.Total += r.Total
	}
	if bad.Total == 0 || bad.Value() < 0.75 {
		t.Errorf("bad captures caught %v, want at least 75 %%", bad)
	}
	if decided := res.NotDecided.Total - res.NotDecided.Hits; decided < 1 {
		t.Errorf("sessions not decided %v: none was", res.NotDecided)
	}
	if res.Face.Pairs[0] == 0 || res.Face.Pairs[1] == 0 || res.Report.Liveness.BonaFide == 0 || res.Report.Liveness.Attacks == 0 {
		t.Errorf("face scores: %+v, liveness %+v", res.Face, res.Report.Liveness)
	}
	for _, name := range []string{"report.txt", "report.json", "outcomes.json"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"face-det.png", "liveness.png"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		_, err = png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestResolveLateWaitsForTheGoodCapture: a good capture answered 202 pending is resolved
// from the session's step only once the step shows that capture; while it still shows the
// bad capture sent before it (sent back for retake), the answer stays pending.
func TestResolveLateWaitsForTheGoodCapture(t *testing.T) {
	gate := func() *evaluation.Outcome {
		return &evaluation.Outcome{Gate: []evaluation.GateAnswer{
			{Step: "document_front", CaptureID: "cap_bad", Expect: "glare", Status: "retake", Reasons: []string{"glare"}},
			{Step: "document_front", CaptureID: "cap_good", Expect: evaluation.ExpectGood, Status: "pending"},
		}}
	}
	out := gate()
	resolveLate(out, &readmodel.SessionView{Steps: map[string]readmodel.StepView{"document_front": {Status: "retake", CaptureID: "cap_bad"}}})
	if a := out.Gate[1]; a.Status != "pending" {
		t.Errorf("step still showing the bad capture: good capture resolved %q, want pending", a.Status)
	}
	if goodCapture(out.Gate, "document_front") != "cap_good" {
		t.Errorf("goodCapture = %q, want cap_good", goodCapture(out.Gate, "document_front"))
	}
	out = gate()
	resolveLate(out, &readmodel.SessionView{Steps: map[string]readmodel.StepView{"document_front": {Status: "accepted", CaptureID: "cap_good"}}})
	if a := out.Gate[1]; a.Status != "accepted" || !a.Late {
		t.Errorf("step showing the good capture accepted: %+v, want accepted late", a)
	}
}
