package topology

import (
	"strings"
	"testing"
)

// TestValidate: a graph whose every read topic is produced, every table written and every
// component named once is valid; each kind of mistake is named.
func TestValidate(t *testing.T) {
	good := Graph{
		{Name: "api", Kind: API, From: []string{"people"}, Outputs: []string{"in"}},
		{Name: "fold", Kind: Stateful, Inputs: []string{"in"}, Table: "state", Outputs: []string{"state"}},
		{Name: "sink", Kind: Sink, Inputs: []string{"state"}, Lookups: []string{"in"}, To: []string{"db"}},
	}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid graph: %v", err)
	}
	for _, c := range []struct {
		name string
		bad  Graph
		want string
	}{
		{"unproduced input", append(good[:2:2], Node{Name: "sink", Kind: Sink, Inputs: []string{"nowhere"}, To: []string{"db"}}), "reads nowhere, which no component produces"},
		{"table not written", Graph{good[0], {Name: "fold", Kind: Stateful, Inputs: []string{"in"}, Table: "state", Outputs: []string{"other"}}}, "table state is not among its outputs"},
		{"twice", Graph{good[0], good[0]}, "listed twice"},
		{"writes nothing", Graph{good[0], {Name: "idle", Kind: Group, Inputs: []string{"in"}}}, "reads or writes nothing"},
	} {
		err := c.bad.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestDrawings: the text lists each topic's producers and readers (views and tables marked),
// and the Mermaid drawing has one node per component, topic and outside party, and one arrow
// per relation, dotted for views.
func TestDrawings(t *testing.T) {
	g := Graph{
		{Name: "api", Kind: API, From: []string{"people"}, Outputs: []string{"in"}},
		{Name: "fold", Kind: Stateful, Inputs: []string{"in"}, Table: "state", Outputs: []string{"state"}},
		{Name: "sink", Kind: Sink, Inputs: []string{"state"}, Lookups: []string{"in"}, To: []string{"db"}},
	}
	text := g.Text()
	for _, want := range []string{"fold (stateful group)\n  consumes  in\n  table     state\n  produces  state\n", "  in: api → fold, sink (view)\n", "  state: fold → fold (table), sink\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	m := g.Mermaid()
	for _, want := range []string{"flowchart LR\n", `x0{{"people"}}`, `t2(["in"])`, `c5[["fold"]]`, `c4["api"]`, "x0 --> c4", "c4 --> t2", "t2 --> c5", "t2 -.-> c6", "c6 --> x1"} {
		if !strings.Contains(m, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, m)
		}
	}
	if n := strings.Count(m, "-->") + strings.Count(m, "-.->"); n != 7 {
		t.Errorf("%d arrows, want 7:\n%s", n, m)
	}
}
