package main

import (
	"flag"
	"fmt"
	"io"
)

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
