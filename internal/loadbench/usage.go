package loadbench

import (
	"fmt"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Usage is CPU time in seconds: a process's, and each processor group's share of it.
type Usage struct {
	Process float64            `json:"process_cpu_s"`
	Groups  map[string]float64 `json:"groups_cpu_s"`
}

// Metric names Usage is read from.
const (
	processCPU = "process_cpu_seconds_total"
	groupCPU   = "idstream_processor_cpu_seconds_total"
)

// ParseUsage reads a Usage from a Prometheus text exposition (a /metrics body).
func ParseUsage(r io.Reader) (Usage, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Usage{}, fmt.Errorf("metrics: %w", err)
	}
	u := Usage{Groups: map[string]float64{}}
	if f := families[processCPU]; f != nil {
		for _, m := range f.GetMetric() {
			u.Process += value(m)
		}
	}
	if f := families[groupCPU]; f != nil {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "group" {
					u.Groups[l.GetValue()] += value(m)
				}
			}
		}
	}
	return u, nil
}

func value(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetUntyped().GetValue()
}

// Add returns u + v (several processes' usage together).
func (u Usage) Add(v Usage) Usage {
	out := Usage{Process: u.Process + v.Process, Groups: map[string]float64{}}
	for g, x := range u.Groups {
		out.Groups[g] += x
	}
	for g, x := range v.Groups {
		out.Groups[g] += x
	}
	return out
}

// Sub returns u − v (what was spent between two readings).
func (u Usage) Sub(v Usage) Usage {
	out := Usage{Process: u.Process - v.Process, Groups: map[string]float64{}}
	for g, x := range u.Groups {
		out.Groups[g] = x - v.Groups[g]
	}
	return out
}
