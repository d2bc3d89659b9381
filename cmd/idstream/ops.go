package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idstream/idstream/stream"
)

// brokerSilence is how long a process may go without any broker answering its clients
// before /readyz says so. Every group member heartbeats each second and every consumer
// long-polls at most 5 s, so a process that hears nothing for this long has lost the
// cluster.
const brokerSilence = 15 * time.Second

// startOps serves the process's operations endpoints on --metrics-addr, apart from the
// edge's public port: /metrics (every metric of the process: its groups' records, lag per
// partition, handler latency, retries, dead letters, CPU; the edge's requests and gate
// waits; the webhook sink's attempts; decisions by outcome; Go and process collectors),
// /healthz (the process runs) and /readyz (see readiness). Unauthenticated: bind it to a
// private address that only the scraper reaches.
func (s *Service) startOps(addr string) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		r := s.readiness()
		code := http.StatusOK
		if r.Status != "ready" {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, r)
	})
	var err error
	s.opsAddr, err = s.serveHTTP("ops", addr, mux)
	return err
}

// readinessReport is the body of the ops /readyz.
type readinessReport struct {
	Status         string                        `json:"status"`             // ready or not_ready
	Problems       []string                      `json:"problems,omitempty"` // why not, one line each
	BrokerAnswered *time.Time                    `json:"broker_answered_at"` // when a broker last answered (null: never)
	Groups         map[string]stream.GroupStatus `json:"groups"`             // this process's members: in their groups, and the generation
}

// readiness reports whether the process does its job: a broker answered its clients
// within brokerSilence, every group it runs has a member in its group (joined, and not lost
// or left since; a stateful member with its table restored), and the views it serves from
// (the edge's session states, the consent index) have caught up.
func (s *Service) readiness() readinessReport {
	st := s.health.Status()
	r := readinessReport{Status: "ready", Groups: st.Groups}
	if !s.started.Load() {
		r.Problems = append(r.Problems, "starting")
	}
	if !st.BrokerAnswered.IsZero() {
		at := st.BrokerAnswered.UTC()
		r.BrokerAnswered = &at
	}
	if since := time.Since(st.BrokerAnswered); st.BrokerAnswered.IsZero() || since > brokerSilence {
		r.Problems = append(r.Problems, fmt.Sprintf("kafka: no broker answered for more than %v", brokerSilence))
	}
	names := make([]string, 0, len(st.Groups))
	for g := range st.Groups {
		names = append(names, g)
	}
	slices.Sort(names)
	for _, g := range names {
		switch gs := st.Groups[g]; {
		case !gs.Joined:
			r.Problems = append(r.Problems, "group "+g+": the member has not joined its group")
		case gs.Restoring > 0:
			r.Problems = append(r.Problems, fmt.Sprintf("group %s: restoring the table of %d partitions", g, gs.Restoring))
		}
	}
	if s.started.Load() { // Start has set the views, if any, and writes them no more
		if s.states != nil && !s.states.Ready() {
			r.Problems = append(r.Problems, "session-state view: catching up")
		}
		if s.consents != nil && !s.consents.Ready() {
			r.Problems = append(r.Problems, "consent index: catching up")
		}
	}
	if len(r.Problems) > 0 {
		r.Status = "not_ready"
	}
	return r
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
