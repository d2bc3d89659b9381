package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/internal/chaos"
	"github.com/idstream/idstream/internal/evaluation"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/schemas"
)

// TestChaos is a short, bounded `idstream chaos`: the production shape as separate
// processes (this test binary run as idstream), sessions of every flow, a SIGKILL every 4–8
// s, a broker restart, a ClickHouse and a receiver outage; every invariant must hold. Then a
// decision is written a second time to ekyc.decisions.v1, as a decision group that emitted
// twice would, and the check must say so: the harness fails loudly.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("starts about twenty processes")
	}
	dir := t.TempDir()
	models := facetest.New(t).ModelsDir()
	corpus := filepath.Join(dir, "corpus")
	if err := buildCorpus(corpus, models, 1, 5, io.Discard, evaluation.HeldOut); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := chaosOptions{
		dir: filepath.Join(dir, "run"), corpus: corpus, modelsDir: models, shape: "split",
		duration: 40 * time.Second, settle: 3 * time.Minute,
		killMin: 4 * time.Second, killMax: 8 * time.Second,
		concurrency: 2, replicas: 1, brokerRestarts: 1,
		clickhouseOutage: 8 * time.Second, receiverOutage: 5 * time.Second,
		flows: []string{"id_card", "chip_id_card", "passport", "vehicle_registration"},
		seed:  3, bin: exe, env: []string{"IDSTREAM_TEST_AS_BINARY=1"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var out bytes.Buffer
	h, err := startChaos(ctx, o, &out, io.Discard)
	if h != nil {
		defer h.close()
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	rep, err := h.run(ctx)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("\n%s", out.String())
	if !rep.OK() {
		t.Fatalf("an invariant broke under chaos (logs in %s)", filepath.Join(o.dir, "logs"))
	}
	kills := strings.Count(out.String(), "SIGKILL")
	if len(rep.Decisions) < 4 || kills < 4 {
		t.Fatalf("%d sessions decided and %d kills: the run proves nothing", len(rep.Decisions), kills)
	}
	for _, inv := range rep.Invariants {
		if inv.Checked == 0 && !strings.Contains(inv.Name, "erased") {
			t.Errorf("%q checked nothing", inv.Name)
		}
	}

	// A decision emitted twice, of a completed session that was not erased (the check
	// leaves erased sessions out).
	var victim string
	for _, s := range h.snapshot() {
		if _, ok := rep.Decisions[s.ID]; ok && s.Completed && !s.Erased {
			victim = s.ID
			break
		}
	}
	dec := rep.Decisions[victim]
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	value, err := codec.Encode(schemas.TopicDecisions, &dec)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(h.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: schemas.TopicDecisions, Key: []byte(victim), Value: value}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	src := h.sources()
	src.Deliveries = h.receiver.Deliveries()
	broken, err := chaos.Check(ctx, h.snapshot(), src)
	if err != nil {
		t.Fatal(err)
	}
	if broken.OK() || broken.Invariants[0].OK() {
		t.Fatal("a session with two decisions on the topic passed the check")
	}
	var printed bytes.Buffer
	broken.Print(&printed, 5)
	if !strings.Contains(printed.String(), "BROKEN") || !strings.Contains(printed.String(), victim+" ("+rep.Decisions[victim].Flow+"): 2 decisions") {
		t.Fatalf("the report does not name the duplicate:\n%s", printed.String())
	}
}
