package stream

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Metrics holds the runtime's Prometheus collectors. Create one per registry with
// NewMetrics and share it between every runner, view and producer of the process (pass it
// with WithMetrics). A nil *Metrics records nothing. Safe for concurrent use.
type Metrics struct {
	records      *prometheus.CounterVec
	errors       *prometheus.CounterVec
	dlq          *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	lag          *prometheus.GaugeVec
	transactions *prometheus.CounterVec
	produced     *prometheus.CounterVec
	cpu          *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them with reg (nil: not registered).
// It panics if they are already registered with reg, like prometheus.MustRegister.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idstream_processor_records_total", Help: "Records handled by a group.",
		}, []string{"group", "topic"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idstream_processor_handler_errors_total", Help: "Handler calls that returned an error (each try counts).",
		}, []string{"group", "topic"}),
		dlq: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idstream_processor_dlq_records_total", Help: "Records sent to a dead-letter topic.",
		}, []string{"group", "topic"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "idstream_processor_handler_seconds", Help: "Handler latency per try.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"group", "topic"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "idstream_consumer_lag", Help: "High watermark minus next offset to consume.",
		}, []string{"group", "topic", "partition"}),
		transactions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idstream_processor_transactions_total", Help: "Transactions of stateful groups by result (committed, aborted).",
		}, []string{"group", "result"}),
		produced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idstream_producer_records_total", Help: "Records produced and acknowledged, per topic.",
		}, []string{"topic"}),
		cpu: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idstream_processor_cpu_seconds_total",
			Help: "CPU time (user and system) of a group's handler calls, measured on the handler's OS thread (Linux).",
		}, []string{"group"}),
	}
	if reg != nil {
		reg.MustRegister(m.records, m.errors, m.dlq, m.latency, m.lag, m.transactions, m.produced, m.cpu)
	}
	return m
}

func (m *Metrics) usedCPU(group string, seconds float64) {
	if m != nil {
		m.cpu.WithLabelValues(group).Add(seconds)
	}
}

func (m *Metrics) handled(group, topic string, d time.Duration, err error) {
	if m == nil {
		return
	}
	m.latency.WithLabelValues(group, topic).Observe(d.Seconds())
	if err != nil {
		m.errors.WithLabelValues(group, topic).Inc()
		return
	}
}

func (m *Metrics) recordDone(group, topic string) {
	if m != nil {
		m.records.WithLabelValues(group, topic).Inc()
	}
}

func (m *Metrics) deadLettered(group, topic string) {
	if m != nil {
		m.dlq.WithLabelValues(group, topic).Inc()
	}
}

func (m *Metrics) transaction(group string, committed bool) {
	if m == nil {
		return
	}
	result := "aborted"
	if committed {
		result = "committed"
	}
	m.transactions.WithLabelValues(group, result).Inc()
}

// observeLag sets the lag gauge of every partition in fetches.
func (m *Metrics) observeLag(group string, fetches kgo.Fetches) {
	if m == nil {
		return
	}
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		next := p.Records[len(p.Records)-1].Offset + 1
		lag := p.HighWatermark - next
		if lag < 0 {
			lag = 0
		}
		m.lag.WithLabelValues(group, p.Topic, strconv.Itoa(int(p.Partition))).Set(float64(lag))
	})
}

// forgetLag drops the lag gauges of group's partitions in parts (revoked or lost).
func (m *Metrics) forgetLag(group string, parts map[string][]int32) {
	if m == nil {
		return
	}
	for topic, ps := range parts {
		for _, p := range ps {
			m.lag.DeleteLabelValues(group, topic, strconv.Itoa(int(p)))
		}
	}
}

func (m *Metrics) countProduced(recs []*kgo.Record) {
	if m == nil {
		return
	}
	for _, r := range recs {
		m.produced.WithLabelValues(r.Topic).Inc()
	}
}

func (m *Metrics) countProducedOne(topic string) {
	if m != nil {
		m.produced.WithLabelValues(topic).Inc()
	}
}
