package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idstream/idstream/consent"
	"github.com/idstream/idstream/edge"
	"github.com/idstream/idstream/processors/chip"
	"github.com/idstream/idstream/processors/decision"
	"github.com/idstream/idstream/processors/erasure"
	"github.com/idstream/idstream/processors/facematch"
	"github.com/idstream/idstream/processors/fraud"
	"github.com/idstream/idstream/processors/liveness"
	"github.com/idstream/idstream/processors/ocr"
	"github.com/idstream/idstream/processors/quality"
	"github.com/idstream/idstream/processors/session"
	"github.com/idstream/idstream/processors/topology"
	chsink "github.com/idstream/idstream/sinks/clickhouse"
	"github.com/idstream/idstream/sinks/webhook"
)

// component is one part of the pipeline this binary can run: its node in the topology and
// how it starts. A group's start declares it, checks the declaration against the node and
// runs it (groups.go); an API's or a sink's start builds and runs it (apis.go, sinks.go).
type component struct {
	name  string // as --groups, `idstream process` and `idstream sink` call it
	node  topology.Node
	start func(s *Service, n topology.Node) error
}

// catalog is every component this binary can run, in the order of the drawing: the APIs,
// the processor groups (in start order), the sinks.
func catalog() []component {
	return []component{
		{"edge", edge.Spec(), (*Service).startEdge},
		{"consent", consent.Spec(), (*Service).startConsent},
		{"session", session.Spec(), stateful((*Service).sessionGroup)},
		{"decision", decision.Spec(), stateful((*Service).decisionGroup)},
		{"quality", quality.Spec(), stateless((*Service).qualityGroup)},
		{"ocr", ocr.Spec(), stateless((*Service).ocrGroup)},
		{"chip", chip.Spec(), stateless((*Service).chipGroup)},
		{"liveness", liveness.Spec(), stateless((*Service).livenessGroup)},
		{"facematch", facematch.Spec(), stateless((*Service).facematchGroup)},
		{"fraud", fraud.Spec(), stateless((*Service).fraudGroup)},
		{erasure.IndexGroupName, erasure.IndexSpec(), stateless((*Service).erasureIndexGroup)},
		{erasure.GroupName, erasure.Spec(), stateful((*Service).erasureGroup)},
		{erasure.DeleterGroupName, erasure.DeleterSpec(), stateless((*Service).erasureDeleterGroup)},
		{"webhook", webhook.Spec(), (*Service).startWebhookSink},
		{"clickhouse", chsink.Spec(), (*Service).startClickHouseSink},
	}
}

// pipeline is the graph of every component of the catalog.
func pipeline() topology.Graph {
	var g topology.Graph
	for _, c := range catalog() {
		g = append(g, c.node)
	}
	return g
}

// namesOf lists the names of the catalog's components of the given kinds.
func namesOf(kinds ...topology.Kind) []string {
	var out []string
	for _, c := range catalog() {
		if slices.Contains(kinds, c.node.Kind) {
			out = append(out, c.name)
		}
	}
	return out
}

// background lists the groups whose handler calls share the process's stream.Background
// (niced threads, one turn per core): reading documents and chips, face work and fraud
// checks yield the cores to the quality gate, whose answer a person holds their phone for, and
// to the edge, and still use every core those leave idle. The session and decision groups
// stay at the process's priority: they are short, and on the way to the decision. It matters
// where groups share a machine's cores without limits of their own (one process, as `idstream
// dev`, or one host); separate deployments get their share from their CPU requests.
var background = []string{ocr.GroupName, chip.GroupName, liveness.GroupName, facematch.GroupName, fraud.GroupName}

// backgroundNice is the nice value of the background groups' calls: at 10 a thread gets
// about a tenth of a core another thread at 0 wants (Linux CFS weights 110 against 1024).
const backgroundNice = 10

var (
	allGroups = namesOf(topology.Group, topology.Stateful) // every processor group, in start order
	allSinks  = namesOf(topology.Sink)                     // every sink
)

// selected lists the components a service of cfg runs, in start order: the groups of
// cfg.Groups and the sinks of cfg.Sinks in catalog order, then the APIs opts asks for
// (they start last, once what they feed runs). It returns an error naming an unknown
// group or sink.
func selected(cfg Config, opts serviceOptions) ([]component, error) {
	if err := known("group", cfg.Groups, allGroups); err != nil {
		return nil, err
	}
	if err := known("sink", cfg.Sinks, allSinks); err != nil {
		return nil, err
	}
	var run, apis []component
	for _, c := range catalog() {
		switch {
		case c.node.Kind == topology.API:
			if (c.name == "edge" && opts.withEdge) || (c.name == "consent" && opts.withConsent) {
				apis = append(apis, c)
			}
		case c.node.Kind == topology.Sink && slices.Contains(cfg.Sinks, c.name),
			c.node.Kind != topology.Sink && slices.Contains(cfg.Groups, c.name):
			run = append(run, c)
		}
	}
	slices.Reverse(apis) // consent before the edge, which checks consents
	return append(run, apis...), nil
}

// known returns an error naming the first of names that is not among all.
func known(kind string, names, all []string) error {
	for _, n := range names {
		if !slices.Contains(all, n) {
			return fmt.Errorf("unknown %s %q (known: %s)", kind, n, strings.Join(all, ", "))
		}
	}
	return nil
}

// checkSpec reports a group declared otherwise than its node: a group whose handler
// consumes other topics than the drawing shows is a bug, caught when it starts.
func checkSpec(n topology.Node, inputs, outputs []string, table string) error {
	if !slices.Equal(n.Inputs, inputs) || !slices.Equal(n.Outputs, outputs) || n.Table != table {
		return fmt.Errorf("group %s consumes %v, produces %v, table %q; its topology node says %v, %v, %q",
			n.Name, inputs, outputs, table, n.Inputs, n.Outputs, n.Table)
	}
	return nil
}
