// Package topology is the pipeline's graph as code: every component (processor group, sink,
// REST API) declared by the topics it consumes, reads whole as a view, keeps its table in and
// produces, and what it talks to outside Kafka. Each component's package exports its Node
// (a Spec function); cmd/idstream lists them, checks the groups it starts against them and
// prints the graph (`idstream topology`), as text or as the Mermaid drawing README embeds.
package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kind is what runs a component.
type Kind string

// Kinds of components.
const (
	Group    Kind = "group"          // stateless processor group, at least once
	Stateful Kind = "stateful group" // exactly once, with a table restored from a compacted topic
	Sink     Kind = "sink"           // writes outside Kafka (ClickHouse, webhook receivers)
	API      Kind = "api"            // a REST server that produces records
)

// Node is one component of the pipeline.
type Node struct {
	Name    string
	Kind    Kind
	Inputs  []string // topics consumed record by record
	Lookups []string // topics read whole into an in-memory view, looked up by key
	Table   string   // the compacted topic a stateful group keeps its state in (also an output)
	Outputs []string // topics produced to
	From    []string // who outside the pipeline sends to it ("integrators")
	To      []string // what outside the pipeline it writes to ("ClickHouse")
}

// Graph is the pipeline: its components, in the order they are listed.
type Graph []Node

// Validate returns an error naming every problem: a component without a name or kind, two
// of one name, a table that is not among the outputs, a component that reads or writes
// nothing, and a topic consumed or looked up that no component produces (topics fed from
// outside Kafka do not exist: every record enters through a component).
func (g Graph) Validate() error {
	var errs []error
	seen := map[string]bool{}
	produced := map[string]bool{}
	for _, n := range g {
		for _, t := range n.Outputs {
			produced[t] = true
		}
	}
	for _, n := range g {
		switch {
		case n.Name == "" || n.Kind == "":
			errs = append(errs, fmt.Errorf("component %q: no name or kind", n.Name))
		case seen[n.Name]:
			errs = append(errs, fmt.Errorf("component %q: listed twice", n.Name))
		}
		seen[n.Name] = true
		if n.Table != "" && !slices.Contains(n.Outputs, n.Table) {
			errs = append(errs, fmt.Errorf("component %q: table %s is not among its outputs", n.Name, n.Table))
		}
		if len(n.Inputs)+len(n.Lookups)+len(n.From) == 0 || len(n.Outputs)+len(n.To) == 0 {
			errs = append(errs, fmt.Errorf("component %q: reads or writes nothing", n.Name))
		}
		for _, t := range slices.Concat(n.Inputs, n.Lookups) {
			if !produced[t] {
				errs = append(errs, fmt.Errorf("component %q: reads %s, which no component produces", n.Name, t))
			}
		}
	}
	return errors.Join(errs...)
}

// Topics returns every topic of the graph, in the order the components first name them.
func (g Graph) Topics() []string {
	var out []string
	for _, n := range g {
		for _, t := range slices.Concat(n.Inputs, n.Lookups, n.Outputs) {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Text returns the graph as text: each component with its topics, then each topic with the
// components that produce it and those that read it.
func (g Graph) Text() string {
	var b strings.Builder
	line := func(label string, items []string) {
		if len(items) > 0 {
			fmt.Fprintf(&b, "  %-9s %s\n", label, strings.Join(items, ", "))
		}
	}
	for _, n := range g {
		fmt.Fprintf(&b, "%s (%s)\n", n.Name, n.Kind)
		line("from", n.From)
		line("consumes", n.Inputs)
		line("looks up", n.Lookups)
		if n.Table != "" {
			line("table", []string{n.Table})
		}
		line("produces", n.Outputs)
		line("to", n.To)
	}
	b.WriteString("\ntopics (producers → readers; every consumed topic also has a <topic>.dlq)\n")
	for _, t := range g.Topics() {
		var from, to []string
		for _, n := range g {
			if slices.Contains(n.Outputs, t) {
				from = append(from, n.Name)
			}
			if slices.Contains(n.Inputs, t) {
				to = append(to, n.Name)
			}
			if slices.Contains(n.Lookups, t) {
				to = append(to, n.Name+" (view)")
			}
			if n.Table == t {
				to = append(to, n.Name+" (table)")
			}
		}
		fmt.Fprintf(&b, "  %s: %s → %s\n", t, strings.Join(from, ", "), strings.Join(to, ", "))
	}
	return b.String()
}

// Mermaid returns the graph as a Mermaid flowchart: components as boxes (a stateful group's
// with double sides), topics as rounded nodes, records flowing along solid arrows, views
// read along dotted ones, and the world outside Kafka as hexagons.
func (g Graph) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	ids := map[string]string{}
	id := func(prefix, name string) string {
		key := prefix + name
		if v, ok := ids[key]; ok {
			return v
		}
		v := fmt.Sprintf("%s%d", prefix, len(ids))
		ids[key] = v
		return v
	}
	var outside []string
	for _, n := range g {
		for _, x := range slices.Concat(n.From, n.To) {
			if !slices.Contains(outside, x) {
				outside = append(outside, x)
			}
		}
	}
	for _, x := range outside {
		fmt.Fprintf(&b, "  %s{{%q}}\n", id("x", x), x)
	}
	for _, t := range g.Topics() {
		fmt.Fprintf(&b, "  %s([%q])\n", id("t", t), t)
	}
	for _, n := range g {
		shape := "[%q]"
		if n.Kind == Stateful {
			shape = "[[%q]]"
		}
		fmt.Fprintf(&b, "  %s"+shape+"\n", id("c", n.Name), n.Name)
	}
	for _, n := range g {
		c := id("c", n.Name)
		for _, x := range n.From {
			fmt.Fprintf(&b, "  %s --> %s\n", id("x", x), c)
		}
		for _, t := range n.Inputs {
			fmt.Fprintf(&b, "  %s --> %s\n", id("t", t), c)
		}
		for _, t := range n.Lookups {
			fmt.Fprintf(&b, "  %s -.-> %s\n", id("t", t), c)
		}
		for _, t := range n.Outputs {
			fmt.Fprintf(&b, "  %s --> %s\n", c, id("t", t))
		}
		for _, x := range n.To {
			fmt.Fprintf(&b, "  %s --> %s\n", c, id("x", x))
		}
	}
	return b.String()
}
