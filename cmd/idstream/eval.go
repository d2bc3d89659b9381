package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"gopkg.in/yaml.v3"

	"github.com/idstream/idstream/internal/docgen"
	"github.com/idstream/idstream/internal/evaluation"
	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/face/facecorpus"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/internal/tenant"
)

// evalOptions are the flags of `idstream eval`.
type evalOptions struct {
	corpus      string
	split       string
	out         string
	modelsDir   string
	concurrency int
	timeout     time.Duration
	build       int
	seed        uint64
	budget      time.Duration
}

// runEval is `idstream eval`: it runs a labelled corpus (internal/evaluation's format)
// through the real pipeline — every group, the edge and an embedded broker in this process,
// in a temporary data directory — as integrators and their users would: one verification
// session per corpus session over the REST API, each in a tenant of its own so that one
// session's fraud signals (a replayed selfie, a duplicate face) never touch another's. A
// document's fields are scored on what the pipeline read, reconciled as the decision does,
// whether or not the session was decided. It prints the figures of one split (default heldout) and writes report.txt, report.json,
// outcomes.json, face-det.png and liveness.png under --out. Face match and liveness curves
// are scored with the face engine the facematch and liveness groups run, over every pair of
// the split's photos. With --build N it first writes a corpus of N documents per type and
// split (internal/docgen's independent renderer, the face corpus of models/faces) into
// --corpus.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	var o evalOptions
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.StringVar(&o.corpus, "corpus", "", "corpus directory (corpus.json and its images)")
	fs.StringVar(&o.split, "split", evaluation.HeldOut, "split to report: heldout or calibration")
	fs.StringVar(&o.out, "out", "eval-report", "directory for report.txt, report.json, outcomes.json and the plots")
	fs.StringVar(&o.modelsDir, "models-dir", envOr("models-dir", "models"), "face models and OCR-B data (make deps fetches them)")
	fs.IntVar(&o.concurrency, "concurrency", 2, "sessions in flight at once")
	fs.DurationVar(&o.timeout, "session-timeout", 3*time.Minute, "how long one session may take to be decided")
	fs.IntVar(&o.build, "build", 0, "first build a corpus of N documents per type and split into --corpus")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of --build")
	fs.DurationVar(&o.budget, "quality-budget", 1500*time.Millisecond, "how long a step waits for the gate (the service's default)")
	if err := parse(fs, args); err != nil {
		return err
	}
	// The pipeline's own logs would bury the progress bar: warnings and errors only.
	log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if o.corpus == "" {
		return fmt.Errorf("%w: --corpus is required", errUsage)
	}
	if o.split != evaluation.HeldOut && o.split != evaluation.Calibration {
		return fmt.Errorf("--split %q: want %s or %s", o.split, evaluation.HeldOut, evaluation.Calibration)
	}
	if o.build > 0 {
		if err := buildCorpus(o.corpus, o.modelsDir, o.build, o.seed, stderr); err != nil {
			return err
		}
	}
	c, err := evaluation.Load(o.corpus)
	if err != nil {
		return err
	}
	rep, outcomes, err := evaluate(ctx, c, o, stderr, log)
	if err != nil {
		return err
	}
	if err := writeReport(o.out, rep, outcomes); err != nil {
		return err
	}
	if err := rep.Report.WriteText(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwritten to %s: report.txt, report.json, outcomes.json, face-det.png, liveness.png\n", o.out)
	return nil
}

// evalResult is the report with the score lists its plots are drawn from.
type evalResult struct {
	evaluation.Report
	Targets        []evaluation.Target       `json:"targets"`
	FaceScores     evaluation.FaceScores     `json:"face_scores"`
	LivenessScores evaluation.LivenessScores `json:"liveness_scores"`
}

// evaluate runs the split's sessions through a pipeline it starts and stops, and scores the
// split's faces.
func evaluate(ctx context.Context, c *evaluation.Corpus, o evalOptions, progress io.Writer, log *slog.Logger) (evalResult, []evaluation.Outcome, error) {
	var sessions []evaluation.Session
	for _, s := range c.Sessions {
		if s.Split == o.split {
			sessions = append(sessions, s)
		}
	}
	engine, err := face.Load(face.DefaultModels(o.modelsDir))
	if err != nil {
		return evalResult{}, nil, fmt.Errorf("face models in %s: %w (make deps fetches them)", o.modelsDir, err)
	}
	faces, live, err := scoreFaces(engine, c, o.split)
	engine.Close()
	if err != nil {
		return evalResult{}, nil, err
	}
	baseline, err := readBaseline(c, o.split)
	if err != nil {
		return evalResult{}, nil, err
	}

	dir, err := os.MkdirTemp("", "idstream-eval-")
	if err != nil {
		return evalResult{}, nil, err
	}
	defer os.RemoveAll(dir)
	keys, tenantsFile, err := evalTenants(dir, len(sessions))
	if err != nil {
		return evalResult{}, nil, err
	}
	cfg := Config{
		DataDir: filepath.Join(dir, "data"), EdgeAddr: "127.0.0.1:0", ConsentAddr: "127.0.0.1:0",
		KafkaAddr: "127.0.0.1:0", RegistryAddr: "127.0.0.1:0", Partitions: 3, QualityBudget: o.budget,
		Groups: allGroups, ModelsDir: o.modelsDir, TenantsFile: tenantsFile, InstanceID: "eval",
	}
	svc, err := Start(ctx, cfg, serviceOptions{withEdge: true, kgoOpts: []kgo.Opt{kgo.FetchMaxWait(250 * time.Millisecond)}}, log)
	if err != nil {
		return evalResult{}, nil, fmt.Errorf("start the pipeline: %w", err)
	}
	defer svc.Close()
	for !svc.states.Ready() {
		select {
		case <-ctx.Done():
			return evalResult{}, nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}

	outcomes := make([]evaluation.Outcome, len(sessions))
	bar := evaluation.NewProgress(progress, "sessions", len(sessions))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, o.concurrency) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &evalClient{base: "http://" + svc.edgeAddr, http: &http.Client{Timeout: 30 * time.Second}, corpus: c, states: svc.states}
			for {
				i := int(next.Add(1)) - 1
				if i >= len(sessions) || ctx.Err() != nil {
					return
				}
				outcomes[i] = cl.run(ctx, sessions[i], keys[i], o.timeout)
				bar.Step()
			}
		}()
	}
	wg.Wait()
	bar.Done()
	if err := ctx.Err(); err != nil {
		return evalResult{}, nil, err
	}
	rep := evaluation.Summarize(c, o.split, outcomes, baseline, faces, live)
	return evalResult{Report: rep, Targets: rep.Targets(), FaceScores: faces, LivenessScores: live}, outcomes, nil
}

// readBaseline reads every document of split with the Baseline reader (plain Tesseract and
// label anchoring), its sides in step order, a field's first reading kept.
func readBaseline(c *evaluation.Corpus, split string) (map[string]map[string]string, error) {
	b, err := evaluation.NewBaseline("")
	if err != nil {
		return nil, err
	}
	defer b.Close()
	out := map[string]map[string]string{}
	for _, d := range c.Documents {
		if d.Split != split {
			continue
		}
		fields := map[string]string{}
		for _, step := range slices.Sorted(maps.Keys(d.Images)) {
			img, err := c.Read(d.Images[step])
			if err != nil {
				return nil, err
			}
			got, err := b.Read(img)
			if err != nil {
				return nil, fmt.Errorf("baseline, document %s: %w", d.ID, err)
			}
			for k, v := range got {
				if _, ok := fields[k]; !ok {
					fields[k] = v
				}
			}
		}
		out[d.ID] = fields
	}
	return out, nil
}

// evalTenants writes a tenants file with n tenants, one API key each, and returns the keys.
func evalTenants(dir string, n int) ([]string, string, error) {
	keys := make([]string, n)
	var file struct {
		Tenants []map[string]any `yaml:"tenants"`
	}
	for i := range n {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, "", err
		}
		keys[i] = "sk_eval_" + hex.EncodeToString(b)
		file.Tenants = append(file.Tenants, map[string]any{
			"id": fmt.Sprintf("eval-%04d", i), "name": fmt.Sprintf("eval session %d", i),
			"api_key_hashes": []string{tenant.HashKey(keys[i])},
		})
	}
	b, err := yaml.Marshal(file)
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, "tenants.yaml")
	return keys, path, os.WriteFile(path, b, 0o600)
}

// flowFor is the flow a document is verified in: an ID card of any kind in id_card (front,
// back, selfie: the chip is not read here), a passport in passport, a vehicle registration in
// vehicle_registration.
func flowFor(docType string) string {
	switch docType {
	case "passport":
		return "passport"
	case "vehicle_registration":
		return "vehicle_registration"
	}
	return "id_card"
}

// scoreFaces scores every pair of the split's bona fide photos (genuine: one identity;
// impostor: two) with the embedding of their largest faces, as the facematch group does,
// and every bona fide photo and attack rendering with the liveness the liveness group uses.
// A liveness score is the model's P(live), or 0 when a replay or print signal rejects the
// face whatever the model says or the picture holds several faces (the group's
// multiple_faces), so that "score ≥ threshold" is the group's verdict.
func scoreFaces(engine *face.Engine, c *evaluation.Corpus, split string) (evaluation.FaceScores, evaluation.LivenessScores, error) {
	cfg := engine.Config()
	fs := evaluation.FaceScores{Threshold: cfg.MatchThreshold}
	ls := evaluation.LivenessScores{Threshold: cfg.LivenessThreshold, Attacks: map[string][]float64{}}
	type embedded struct {
		identity string
		vec      []float32
	}
	var bona []embedded
	for _, f := range c.Faces {
		if f.Split != split {
			continue
		}
		data, err := c.Read(f.Image)
		if err != nil {
			return fs, ls, err
		}
		img, _, err := imagecheck.Decode(data, imagecheck.DefaultLimits())
		if err != nil {
			return fs, ls, fmt.Errorf("face %s: %w", f.ID, err)
		}
		found, err := engine.Detect(img)
		if err != nil {
			return fs, ls, fmt.Errorf("face %s: %w", f.ID, err)
		}
		if len(found) == 0 {
			// No face found: a bona fide photo fails both as a match and as live; an attack
			// is stopped.
			if f.Attack == "" {
				ls.BonaFide = append(ls.BonaFide, 0)
				bona = append(bona, embedded{identity: f.Identity})
			} else {
				ls.Attacks[f.Attack] = append(ls.Attacks[f.Attack], 0)
			}
			continue
		}
		largest := face.Largest(found)
		l, err := engine.Liveness(img, largest)
		if err != nil {
			return fs, ls, fmt.Errorf("face %s: %w", f.ID, err)
		}
		score := l.Score
		if (!l.Live && l.Score >= l.Threshold) || len(found) > 1 {
			score = 0 // a signal, or a second face, fails it whatever the model says
		}
		if f.Attack != "" {
			ls.Attacks[f.Attack] = append(ls.Attacks[f.Attack], score)
			continue
		}
		ls.BonaFide = append(ls.BonaFide, score)
		vec, err := engine.Embed(img, largest)
		if err != nil {
			return fs, ls, fmt.Errorf("face %s: %w", f.ID, err)
		}
		bona = append(bona, embedded{identity: f.Identity, vec: vec})
	}
	for i := range bona {
		for j := i + 1; j < len(bona); j++ {
			s := -1.0 // a photo without a face matches nothing
			if bona[i].vec != nil && bona[j].vec != nil {
				s = face.Cosine(bona[i].vec, bona[j].vec)
			}
			if bona[i].identity == bona[j].identity {
				fs.Genuine = append(fs.Genuine, s)
			} else {
				fs.Impostor = append(fs.Impostor, s)
			}
		}
	}
	return fs, ls, nil
}

// writeReport writes the report, the outcomes and the plots into dir.
func writeReport(dir string, r evalResult, outcomes []evaluation.Outcome) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var txt bytes.Buffer
	if err := r.WriteText(&txt); err != nil {
		return err
	}
	files := map[string]any{"report.json": r, "outcomes.json": outcomes}
	for name, v := range files {
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return errors.Join(
		os.WriteFile(filepath.Join(dir, "report.txt"), txt.Bytes(), 0o644),
		evaluation.WriteDET(filepath.Join(dir, "face-det.png"), r.FaceScores),
		evaluation.WriteScoreHistogram(filepath.Join(dir, "liveness.png"), r.LivenessScores),
	)
}

// buildCorpus writes an evaluation corpus of n documents per type and split into dir: the
// documents from internal/docgen (templates, fonts and backgrounds disjoint between the
// splits), the faces from the face corpus under modelsDir/faces (real photographs split by
// identity; a person grouped only by likeness, not confirmed, is left out so that no pair of
// theirs is counted as genuine or impostor) and its attack renderings. splits limits it to
// some halves (default both).
func buildCorpus(dir, modelsDir string, n int, seed uint64, progress io.Writer, splits ...string) error {
	rd, err := docgen.NewRenderer(docgen.DefaultFontDir)
	if err != nil {
		return fmt.Errorf("document renderer: %w (make deps installs the fonts)", err)
	}
	fc, err := facecorpus.Load(filepath.Join(modelsDir, "faces"))
	if err != nil {
		return fmt.Errorf("face corpus: %w (make deps fetches it)", err)
	}
	var photos []evaluation.FacePhoto
	for _, p := range fc.Photos {
		if !p.IdentityConfirmed {
			continue
		}
		photos = append(photos, evaluation.FacePhoto{
			ID: p.ID, Identity: p.Identity, Split: p.Split, Source: p.Source.String(), Licence: p.Licence,
			Image: p.Image, FaceBox: p.FaceBox(),
		})
	}
	kinds := make([]string, len(facecorpus.Attacks))
	for i, k := range facecorpus.Attacks {
		kinds[i] = string(k)
	}
	attack := func(img image.Image, box image.Rectangle, kind string, seed uint64) (image.Image, error) {
		return facecorpus.Render(facecorpus.Attack(kind), img, facecorpus.Geometry{Box: box}, seed)
	}
	fmt.Fprintf(progress, "building the corpus in %s: %d documents per type and split, %d photos\n", dir, n, len(photos))
	c, err := evaluation.Build(evaluation.BuildOptions{
		Dir: dir, PerType: n, Seed: seed, Reference: time.Now().UTC(), Renderer: rd,
		Faces: photos, Attack: attack, AttackKinds: kinds, Splits: splits,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "corpus: %d documents, %d captures, %d faces, %d sessions\n", len(c.Documents), len(c.Captures), len(c.Faces), len(c.Sessions))
	return nil
}
