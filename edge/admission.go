package edge

import (
	"math"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// Admission tells the edge how far behind the pipeline is, so that it sheds load (429
// overloaded, with Retry-After) instead of letting waits grow without bound. Implementations
// are safe for concurrent use and answer from memory (they are asked on every request).
type Admission interface {
	// GateWait is the estimated wait of a capture submitted now before the quality gate
	// takes it up.
	GateWait() time.Duration
	// PipelineWait is the estimated wait of a session's captures, submitted now, before the
	// pipeline has processed them (the gate, then the slowest of the checks after it).
	PipelineWait() time.Duration
	// Admitted tells that a session was just opened whose flow has the given number of
	// steps: its captures will add to the backlog before any reading of it shows them.
	Admitted(steps int)
}

// DefaultMaxPipelineWait is the pipeline wait beyond which Session Init sheds: the sessions
// already open would be decided late, and each new one makes it later.
const DefaultMaxPipelineWait = 5 * time.Second

// Shedding, the edge's admission control. Two places, one signal each:
//   - Session Init answers 429 overloaded when PipelineWait exceeds MaxPipelineWait: new
//     sessions wait outside, the ones in flight keep their pace. Nothing was created.
//   - A document or selfie capture answers 429 overloaded when GateWait reaches the quality
//     budget: the gate could not answer within it anyway. It is shed after the request is
//     checked (so bad input still gets its own error) and before the image is decoded,
//     stored or produced: the person's app sends the same capture again after Retry-After.
//
// The chip step is not shed (it is light, and the chip is read only once).

// shedSession returns the 429 for Session Init, or nil to go on.
func (s *Server) shedSession() error {
	if s.cfg.Admission == nil || s.cfg.MaxPipelineWait <= 0 {
		return nil
	}
	if w := s.cfg.Admission.PipelineWait(); w > s.cfg.MaxPipelineWait {
		return overloaded("the service is at capacity; open the session again later", w-s.cfg.MaxPipelineWait, 30)
	}
	return nil
}

// shedCapture returns the 429 for a document or selfie capture, or nil to go on.
func (s *Server) shedCapture() error {
	if s.cfg.Admission == nil {
		return nil
	}
	if w := s.cfg.Admission.GateWait(); w >= s.cfg.QualityBudget {
		return overloaded("the quality gate is at capacity; send the capture again later", w, 10)
	}
	return nil
}

// overloaded is the 429 overloaded problem, retry after wait in whole seconds, between 1
// and maxSeconds.
func overloaded(detail string, wait time.Duration, maxSeconds int) error {
	e := problem(fiber.StatusTooManyRequests, CodeOverloaded, detail)
	e.retryAfter = min(max(int(math.Ceil(wait.Seconds())), 1), maxSeconds)
	return e
}

// registerBacklog exposes the admission's estimates as gauges.
func registerBacklog(reg prometheus.Registerer, a Admission) error {
	for stage, f := range map[string]func() time.Duration{"gate": a.GateWait, "pipeline": a.PipelineWait} {
		g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "idstream", Subsystem: "edge", Name: "backlog_seconds",
			Help:        "Estimated wait of work submitted now (gate: before the quality gate takes a capture; pipeline: before a session's captures are processed); the edge sheds on it.",
			ConstLabels: prometheus.Labels{"stage": stage},
		}, func() float64 { return f().Seconds() })
		if err := reg.Register(g); err != nil {
			return err
		}
	}
	return nil
}
