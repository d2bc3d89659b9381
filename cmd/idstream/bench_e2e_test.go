package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/evaluation"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/internal/imagecheck"
	"github.com/idstream/idstream/internal/loadbench"
	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/processors/chip"
	"github.com/idstream/idstream/schemas"
)

// TestBenchCommand is `idstream bench` against a running service: two levels of two id_card
// sessions each, from a corpus of the independent renderer. It asserts what the figures are
// made of, not the figures: every session decided without error, the gate, the decision and
// the webhook (the webhook sink runs; the bench receives) timed, the CPU read from the
// service's metrics and divided among the groups that did the work, a compute limit from the
// first level, the JSON and the plot written.
func TestBenchCommand(t *testing.T) {
	s := testService(t, allGroups, func(c *Config) { c.Sinks = []string{"webhook"} })
	dir := t.TempDir()
	levels, limit, table := runBenchOn(t, s, dir, "--flow", "id_card", "--sessions", "2", "--warmup", "1", "--concurrency", "1,2", "--cores", "2")
	if testing.Verbose() {
		t.Log("\n" + table)
	}
	if len(levels) != 2 {
		t.Fatalf("%d levels, want 2", len(levels))
	}
	for _, l := range levels {
		if l.Sessions != 2 || l.Decided != 2 || l.Errors != 0 {
			t.Errorf("level ×%g: %d sessions, %d decided, %d errors; want 2, 2, 0", l.Offered, l.Sessions, l.Decided, l.Errors)
		}
		if !(l.GateP50 > 0) || !(l.DecisionP99 > 0) || !(l.WebhookP99 > 0) || !(l.PerSecond > 0) {
			t.Errorf("level ×%g: gate p50 %v ms, decision p99 %v ms, webhook p99 %v ms, %v sessions/s; want all measured",
				l.Offered, l.GateP50, l.DecisionP99, l.WebhookP99, l.PerSecond)
		}
		for _, step := range []string{"document_front", "document_back", "selfie"} {
			if sp, ok := l.GateByStep[step]; !ok || !(sp.P99 > 0) {
				t.Errorf("level ×%g: gate answers of %s %v, want timed", l.Offered, step, sp)
			}
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
	if limit == nil || !(*limit > 0) {
		t.Errorf("compute limit %v, want one from the first level", limit)
	}
	f, err := os.Open(filepath.Join(dir, "report", "latency.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("latency.png: %v", err)
	}
}

// TestBenchChipFlow is `idstream bench --flow chip_id_card` against a service that trusts a
// development PKI made by `idstream chip-pki` (made once: a second run keeps it): the session
// is decided, its nfc step sent with a chip whose passive and active authentication pass (the
// service checked them against the PKI's CSCA and the session's nonce), and the chip group's
// CPU counted.
func TestBenchChipFlow(t *testing.T) {
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "chip-pki")
	for range 2 {
		if err := runChipPKI([]string{pkiDir}, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	s := testService(t, allGroups, func(c *Config) { c.CSCADir = filepath.Join(pkiDir, mrtdtest.SignerCSCADir) })
	levels, _, _ := runBenchOn(t, s, dir, "--flow", "chip_id_card", "--chip-pki", pkiDir, "--sessions", "1", "--warmup", "0",
		"--concurrency", "1", "--webhook-addr", "")
	if len(levels) != 1 || levels[0].Decided != 1 || levels[0].Errors != 0 {
		t.Fatalf("levels %+v: want one session decided without error", levels)
	}
	if runtime.GOOS == "linux" && !(levels[0].GroupCPUPerSession["chip"] > 0) {
		t.Errorf("the chip group used %v CPU-s per session, want some", levels[0].GroupCPUPerSession["chip"])
	}
	var checked int
	s.states.Range(func(st *schemas.SessionState) bool {
		for _, c := range st.Checks {
			if c.Name == chip.CheckPassiveAuthentication || c.Name == chip.CheckActiveAuthentication {
				checked++
				if c.Status != schemas.CheckPass {
					t.Errorf("%s: %s (%v)", c.Name, c.Status, c.ReasonCode)
				}
			}
		}
		return true
	})
	if checked != 2 {
		t.Errorf("%d chip authentication checks in the service's sessions, want passive and active", checked)
	}
}

// runBenchOn runs `idstream bench` with args against s, on a corpus of one document per type
// (the independent renderer, held-out half) built under dir, and returns bench.json's
// levels and the table printed.
func runBenchOn(t *testing.T, s *testEnv, dir string, args ...string) ([]loadbench.Summary, *float64, string) {
	t.Helper()
	corpus := filepath.Join(dir, "corpus")
	if err := buildCorpus(corpus, facetest.New(t).ModelsDir(), 1, 11, io.Discard, evaluation.HeldOut); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	args = append([]string{"--url", "http://" + s.edgeAddr, "--metrics", "http://" + s.opsAddr + "/metrics", "--api-key", newClient(t, s).key, "--corpus", corpus, "--out", out}, args...)
	if err := runBench(ctx, args, &stdout, io.Discard); err != nil {
		t.Fatalf("bench: %v\n%s", err, stdout.String())
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
	return rep.Levels, rep.Limit, stdout.String()
}

// TestUniqueJPEG: an upload numbered by the bench is other bytes than the corpus's and than
// another upload of the same picture, and decodes to the same image; a PNG is left as it is.
func TestUniqueJPEG(t *testing.T) {
	var buf bytes.Buffer
	src := image.NewGray(image.Rect(0, 0, 16, 8))
	src.SetGray(3, 2, color.Gray{Y: 200})
	if err := jpeg.Encode(&buf, src, nil); err != nil {
		t.Fatal(err)
	}
	a, b := uniqueJPEG(buf.Bytes(), 1), uniqueJPEG(buf.Bytes(), 2)
	if bytes.Equal(a, buf.Bytes()) || bytes.Equal(a, b) {
		t.Fatal("numbered uploads are the same bytes")
	}
	want, _, err := imagecheck.Decode(buf.Bytes(), imagecheck.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := imagecheck.Decode(a, imagecheck.Limits{})
	if err != nil {
		t.Fatalf("a numbered upload does not decode: %v", err)
	}
	if !bytes.Equal(got.(*image.Gray).Pix, want.(*image.Gray).Pix) {
		t.Fatal("a numbered upload decodes to another image")
	}
	png := []byte("\x89PNG\r\n\x1a\n")
	if !bytes.Equal(uniqueJPEG(png, 3), png) {
		t.Fatal("a PNG was changed")
	}
}

// TestChipPKIKeepsWhatIsThere: idstream chip-pki makes nothing over a directory that holds a
// trust anchor without a signer (a real CSCA directory given by mistake): it refuses, and the
// certificate there is left as it was.
func TestChipPKIKeepsWhatIsThere(t *testing.T) {
	dir := t.TempDir()
	anchor := filepath.Join(dir, mrtdtest.SignerCSCADir, "csca.pem")
	if err := os.MkdirAll(filepath.Dir(anchor), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(anchor, []byte("a real CSCA"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runChipPKI([]string{dir}, io.Discard); err == nil {
		t.Fatal("a PKI was made over a trust anchor")
	}
	if b, err := os.ReadFile(anchor); err != nil || string(b) != "a real CSCA" {
		t.Fatalf("the trust anchor was changed: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, mrtdtest.SignerFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a signer was written beside it: %v", err)
	}
}
