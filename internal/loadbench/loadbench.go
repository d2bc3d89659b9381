// Package loadbench is what `idstream bench` measures and reports: whole verification
// sessions driven at a load level (a number of sessions in flight, or an arrival rate),
// their latencies and outcomes, and the CPU the service spent meanwhile (the process's and
// each processor group's, read from its Prometheus metrics before and after the level),
// summarised per level as a table, JSON and a plot of latency against throughput.
package loadbench

import (
	"encoding/json"
	"math"
	"slices"
	"time"
)

// Modes of a Level.
const (
	Closed = "concurrency" // Offered sessions in flight at all times (closed loop)
	Open   = "rate"        // a session started every 1/Offered seconds (open loop)
)

// Session is one verification session the bench drove.
type Session struct {
	Gate     []time.Duration // each capture's upload → the gate's answer
	GateStep []string        // the step of each Gate answer ("document_front", "selfie", …)
	Decision time.Duration   // the last capture's answer → Data Get first shows the decision; 0 when undecided
	Webhook  time.Duration   // the last capture's answer → the session-completed webhook received; 0 when none was
	DataGet  []time.Duration // every Data Get the bench made while waiting
	Status   string          // the session's last status ("verified", "rejected", …)
	Shed     int             // requests answered 429 (and sent again after Retry-After)
	Err      string          // what went wrong, if anything did
}

// Level is the sessions of one load level and what the service spent on them.
type Level struct {
	Mode     string
	Offered  float64 // sessions in flight (Closed) or sessions per second (Open)
	Flow     string
	Wall     time.Duration // first session's start → last session's end
	Sessions []Session
	CPU      Usage // spent during the level
}

// Summary is a Level's figures. Latencies are in milliseconds, CPU in seconds.
type Summary struct {
	Mode               string             `json:"mode"`
	Offered            float64            `json:"offered"`
	Flow               string             `json:"flow"`
	Sessions           int                `json:"sessions"`
	Decided            int                `json:"decided"`
	Errors             int                `json:"errors"`
	Shed               int                `json:"shed_429"`
	PerSecond          float64            `json:"sessions_per_s"`
	GateP50            Millis             `json:"gate_p50_ms"`
	GateP99            Millis             `json:"gate_p99_ms"`
	GateByStep         map[string]Spread  `json:"gate_by_step"` // the same, of each step's captures
	DecisionP50        Millis             `json:"decision_p50_ms"`
	DecisionP99        Millis             `json:"decision_p99_ms"`
	WebhookP50         Millis             `json:"webhook_p50_ms"` // last capture → webhook received; null without a receiver
	WebhookP99         Millis             `json:"webhook_p99_ms"`
	DataGetP99         Millis             `json:"data_get_p99_ms"`
	CPUPerSession      float64            `json:"cpu_s_per_session"`
	GroupCPUPerSession map[string]float64 `json:"group_cpu_s_per_session"`
	OtherCPUPerSession float64            `json:"other_cpu_s_per_session"` // the edge, the runtime, the broker when embedded
}

// Spread is a latency's median and 99th percentile.
type Spread struct {
	P50 Millis `json:"p50_ms"`
	P99 Millis `json:"p99_ms"`
}

// Millis is a latency in milliseconds; NaN when nothing was measured, which JSON writes as
// null.
type Millis float64

// MarshalJSON writes m, or null for NaN.
func (m Millis) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(m)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(m))
}

// Summarise computes l's figures. A session is decided when it ends verified or rejected;
// sessions per second count decided sessions over the level's wall time.
func Summarise(l Level) Summary {
	s := Summary{Mode: l.Mode, Offered: l.Offered, Flow: l.Flow, Sessions: len(l.Sessions)}
	var gate, decision, hook, get []time.Duration
	byStep := map[string][]time.Duration{}
	for _, ses := range l.Sessions {
		gate = append(gate, ses.Gate...)
		for i, step := range ses.GateStep {
			if i < len(ses.Gate) {
				byStep[step] = append(byStep[step], ses.Gate[i])
			}
		}
		get = append(get, ses.DataGet...)
		s.Shed += ses.Shed
		if ses.Err != "" {
			s.Errors++
		}
		if ses.Status == "verified" || ses.Status == "rejected" {
			s.Decided++
			decision = append(decision, ses.Decision)
		}
		if ses.Webhook > 0 {
			hook = append(hook, ses.Webhook)
		}
	}
	if l.Wall > 0 {
		s.PerSecond = float64(s.Decided) / l.Wall.Seconds()
	}
	s.GateP50, s.GateP99 = Percentile(gate, 0.50), Percentile(gate, 0.99)
	if len(byStep) > 0 {
		s.GateByStep = map[string]Spread{}
		for step, d := range byStep {
			s.GateByStep[step] = Spread{Percentile(d, 0.50), Percentile(d, 0.99)}
		}
	}
	s.DecisionP50, s.DecisionP99 = Percentile(decision, 0.50), Percentile(decision, 0.99)
	s.WebhookP50, s.WebhookP99 = Percentile(hook, 0.50), Percentile(hook, 0.99)
	s.DataGetP99 = Percentile(get, 0.99)
	if n := float64(len(l.Sessions)); n > 0 {
		s.CPUPerSession = l.CPU.Process / n
		s.GroupCPUPerSession = map[string]float64{}
		var groups float64
		for g, v := range l.CPU.Groups {
			s.GroupCPUPerSession[g] = v / n
			groups += v
		}
		s.OtherCPUPerSession = max(0, l.CPU.Process-groups) / n
	}
	return s
}

// Percentile returns the q-quantile (nearest rank) of ds in milliseconds; NaN when ds is
// empty. ds is not modified.
func Percentile(ds []time.Duration, q float64) Millis {
	if len(ds) == 0 {
		return Millis(math.NaN())
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return Millis(float64(NearestRank(sorted, q).Microseconds()) / 1000)
}

// NearestRank returns the q-quantile (0..1) of sorted by the nearest-rank method, 0 when
// sorted is empty: the one percentile of the project's benchmarks (internal/benchmetrics)
// and of the load bench.
func NearestRank(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// ComputeLimit is the throughput the service's CPU allows: cores divided by the CPU one
// session takes when it runs alone (s, a level of one session in flight), in sessions per
// second; NaN when s measured no CPU.
func ComputeLimit(s Summary, cores int) float64 {
	if s.CPUPerSession <= 0 {
		return math.NaN()
	}
	return float64(cores) / s.CPUPerSession
}
