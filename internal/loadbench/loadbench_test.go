package loadbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	ds := ms(50, 10, 40, 20, 30)
	if got := Percentile(ds, 0.5); got != 30 {
		t.Errorf("p50 %v, want 30", got)
	}
	if got := Percentile(ds, 0.99); got != 50 {
		t.Errorf("p99 %v, want 50", got)
	}
	if ds[0] != 50*time.Millisecond {
		t.Errorf("Percentile sorted its input")
	}
	if !math.IsNaN(float64(Percentile(nil, 0.5))) {
		t.Errorf("p50 of nothing is not NaN")
	}
	b, err := json.Marshal(Summary{GateP50: Percentile(nil, 0.5), GateP99: 12.5})
	if err != nil || !strings.Contains(string(b), `"gate_p50_ms":null`) || !strings.Contains(string(b), `"gate_p99_ms":12.5`) {
		t.Errorf("a summary with nothing measured as JSON: %s, %v", b, err)
	}
	if err := WritePlot(filepath.Join(t.TempDir(), "p.png"), []Summary{{GateP50: Percentile(nil, 0.5)}}); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("plot of nothing: %v, want ErrNothingToPlot", err)
	}
}

// TestSummarise: only decided sessions count towards throughput and decision latency; CPU
// is divided by every session driven, the groups' by group, the rest is "other".
func TestSummarise(t *testing.T) {
	l := Level{Mode: Closed, Offered: 2, Flow: "id_card", Wall: 4 * time.Second,
		Sessions: []Session{
			{Gate: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, GateStep: []string{"document_front", "selfie"}, Decision: time.Second, Webhook: 1100 * time.Millisecond, Status: "verified", DataGet: []time.Duration{5 * time.Millisecond}},
			{Gate: []time.Duration{300 * time.Millisecond}, GateStep: []string{"selfie"}, Decision: 3 * time.Second, Webhook: 2900 * time.Millisecond, Status: "rejected", Shed: 2},
			{Gate: []time.Duration{400 * time.Millisecond}, Status: "processing", Err: "not decided"},
			{Status: "verified", Decision: 2 * time.Second},
		},
		CPU: Usage{Process: 8, Groups: map[string]float64{"ocr": 4, "quality": 1}},
	}
	s := Summarise(l)
	if s.Sessions != 4 || s.Decided != 3 || s.Errors != 1 || s.Shed != 2 {
		t.Errorf("sessions %d decided %d errors %d shed %d, want 4 3 1 2", s.Sessions, s.Decided, s.Errors, s.Shed)
	}
	if s.PerSecond != 0.75 {
		t.Errorf("%v sessions/s, want 0.75 (3 decided in 4 s)", s.PerSecond)
	}
	if s.DecisionP50 != 2000 || s.DecisionP99 != 3000 || s.GateP50 != 200 || s.GateP99 != 400 || s.DataGetP99 != 5 ||
		s.WebhookP50 != 1100 || s.WebhookP99 != 2900 { // the sessions without a webhook do not count

		t.Errorf("latencies %+v", s)
	}
	if s.GateByStep["document_front"] != (Spread{100, 100}) || s.GateByStep["selfie"] != (Spread{200, 300}) || len(s.GateByStep) != 2 {
		t.Errorf("gate by step %v, want document_front 100/100, selfie 200/300 (the answer of no step left out)", s.GateByStep)
	}
	if s.CPUPerSession != 2 || s.GroupCPUPerSession["ocr"] != 1 || s.GroupCPUPerSession["quality"] != 0.25 || s.OtherCPUPerSession != 0.75 {
		t.Errorf("CPU per session %v, groups %v, other %v; want 2, ocr 1 quality 0.25, 0.75", s.CPUPerSession, s.GroupCPUPerSession, s.OtherCPUPerSession)
	}
	if got := ComputeLimit(Summary{CPUPerSession: 2.5}, 2); got != 0.8 {
		t.Errorf("compute limit %v, want 0.8", got)
	}
	dir := t.TempDir()
	var out bytes.Buffer
	if err := WriteTable(&out, []Summary{s}, 1.5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"id_card ×2", "0.75", "50 %", "ocr", "quality", "selfie", "200 / 300"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	path := filepath.Join(dir, "latency.png")
	if err := WritePlot(path, []Summary{s, {Mode: Closed, Offered: 4, PerSecond: 1, GateP50: 300, GateP99: 900, DecisionP50: 2500, DecisionP99: 5000}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("plot: %v", err)
	}
}

func TestParseUsage(t *testing.T) {
	text := `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
# HELP idstream_processor_cpu_seconds_total CPU of handler calls.
# TYPE idstream_processor_cpu_seconds_total counter
idstream_processor_cpu_seconds_total{group="ocr"} 7.25
idstream_processor_cpu_seconds_total{group="quality"} 1
# HELP idstream_processor_records_total Records.
# TYPE idstream_processor_records_total counter
idstream_processor_records_total{group="ocr",topic="t"} 9
`
	u, err := ParseUsage(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if u.Process != 12.5 || u.Groups["ocr"] != 7.25 || u.Groups["quality"] != 1 || len(u.Groups) != 2 {
		t.Errorf("usage %+v", u)
	}
	d := u.Sub(Usage{Process: 2.5, Groups: map[string]float64{"ocr": 0.25}})
	if d.Process != 10 || d.Groups["ocr"] != 7 || d.Groups["quality"] != 1 {
		t.Errorf("difference %+v", d)
	}
	if _, err := ParseUsage(strings.NewReader("An error has occurred while serving metrics:\n")); err == nil {
		t.Errorf("an error page parsed as metrics")
	}
}

func TestNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := NearestRank(s, c.q); got != c.want {
			t.Errorf("NearestRank(1..100 ms, %v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := NearestRank(s[:1], 0.99); got != time.Millisecond {
		t.Errorf("one sample: %v", got)
	}
	if got := NearestRank(nil, 0.5); got != 0 {
		t.Errorf("no sample: %v", got)
	}
}
