package main

import (
	"flag"
	"fmt"
	"io"
	"slices"

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

// pipeline is the graph of every component this binary runs: the APIs, the processor groups
// (allGroups, same order) and the sinks (allSinks).
func pipeline() topology.Graph {
	return topology.Graph{
		edge.Spec(), consent.Spec(),
		session.Spec(), decision.Spec(), quality.Spec(), ocr.Spec(), chip.Spec(), liveness.Spec(),
		facematch.Spec(), fraud.Spec(), erasure.IndexSpec(), erasure.Spec(), erasure.DeleterSpec(),
		webhook.Spec(), chsink.Spec(),
	}
}

// specOf returns the node of the processor group named name.
func specOf(name string) (topology.Node, bool) {
	g := pipeline()
	i := slices.IndexFunc(g, func(n topology.Node) bool {
		return n.Name == name && (n.Kind == topology.Group || n.Kind == topology.Stateful)
	})
	if i < 0 {
		return topology.Node{}, false
	}
	return g[i], true
}

// checkSpec reports a group declared otherwise than its node in the pipeline: a group whose
// handler consumes other topics than the drawing shows is a bug, caught when it starts.
func checkSpec(name string, inputs, outputs []string, table string) error {
	n, ok := specOf(name)
	switch {
	case !ok:
		return fmt.Errorf("group %s is not in the pipeline's topology", name)
	case !slices.Equal(n.Inputs, inputs) || !slices.Equal(n.Outputs, outputs) || n.Table != table:
		return fmt.Errorf("group %s consumes %v, produces %v, table %q; its topology node says %v, %v, %q",
			name, inputs, outputs, table, n.Inputs, n.Outputs, n.Table)
	}
	return nil
}

// runTopology prints the pipeline's graph as text or as a Mermaid flowchart.
func runTopology(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("topology", flag.ContinueOnError)
	format := fs.String("format", "text", "text or mermaid (the drawing README embeds)")
	if err := parse(fs, args); err != nil {
		return err
	}
	g := pipeline()
	if err := g.Validate(); err != nil {
		return fmt.Errorf("the pipeline's topology: %w", err)
	}
	switch *format {
	case "text":
		_, err := io.WriteString(stdout, g.Text())
		return err
	case "mermaid":
		_, err := io.WriteString(stdout, g.Mermaid())
		return err
	}
	return fmt.Errorf("unknown format %q (text, mermaid)", *format)
}
