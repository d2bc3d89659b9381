package loadbench

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WriteTable prints one row per level: throughput (and its share of limit, the compute
// limit, when known), the latencies and each group's CPU per session.
func WriteTable(w io.Writer, sums []Summary, limit float64) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\tsessions\tdecided\terrors\t429s\tsessions/s\tof limit\tgate p50 ms\tgate p99 ms\tdecision p50 ms\tdecision p99 ms\twebhook p50 ms\twebhook p99 ms\tData Get p99 ms\tCPU-s/session\t")
	for _, s := range sums {
		share := "—"
		if !math.IsNaN(limit) && limit > 0 {
			share = fmt.Sprintf("%.0f %%", 100*s.PerSecond/limit)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t\n", load(s), s.Sessions, s.Decided, s.Errors, s.Shed,
			s.PerSecond, share, ms(s.GateP50), ms(s.GateP99), ms(s.DecisionP50), ms(s.DecisionP99), ms(s.WebhookP50), ms(s.WebhookP99), ms(s.DataGetP99), s.CPUPerSession)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !math.IsNaN(limit) {
		fmt.Fprintf(w, "\ncompute limit: %.2f sessions/s (the cores over the CPU of a session run alone, the first level)\n", limit)
	}
	if err := writeGateByStep(w, sums); err != nil {
		return err
	}
	names := namesOf(sums, func(s Summary) map[string]float64 { return s.GroupCPUPerSession })
	if len(names) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nCPU-s per session by group (other: the edge, the runtime, the broker when embedded):")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "load\t%s\tother\t\n", strings.Join(names, "\t"))
	for _, s := range sums {
		row := []string{load(s)}
		for _, g := range names {
			row = append(row, fmt.Sprintf("%.3f", s.GroupCPUPerSession[g]))
		}
		row = append(row, fmt.Sprintf("%.3f", s.OtherCPUPerSession))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

func load(s Summary) string {
	if s.Mode == Open {
		return fmt.Sprintf("%s %.2f/s", s.Flow, s.Offered)
	}
	return fmt.Sprintf("%s ×%.0f", s.Flow, s.Offered)
}

func ms(v Millis) string {
	if math.IsNaN(float64(v)) {
		return "—"
	}
	return fmt.Sprintf("%.0f", float64(v))
}

// ErrNothingToPlot is WritePlot's error when no level measured a latency.
var ErrNothingToPlot = errors.New("loadbench: no latency measured, nothing to plot")

// WritePlot draws the gate's and the decision's p50 and p99 latencies against the
// throughput each level achieved, as a PNG at path (log latency axis); ErrNothingToPlot when
// there is none.
func WritePlot(path string, sums []Summary) error {
	p := plot.New()
	p.Title.Text = "idstream: latency against throughput"
	p.X.Label.Text = "decided sessions per second"
	p.Y.Label.Text = "latency (ms)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	series := []struct {
		name  string
		value func(Summary) Millis
		col   color.RGBA
		dash  bool
	}{
		{"gate p50", func(s Summary) Millis { return s.GateP50 }, color.RGBA{R: 30, G: 90, B: 200, A: 255}, true},
		{"gate p99", func(s Summary) Millis { return s.GateP99 }, color.RGBA{R: 30, G: 90, B: 200, A: 255}, false},
		{"decision p50", func(s Summary) Millis { return s.DecisionP50 }, color.RGBA{R: 200, G: 60, B: 30, A: 255}, true},
		{"decision p99", func(s Summary) Millis { return s.DecisionP99 }, color.RGBA{R: 200, G: 60, B: 30, A: 255}, false},
	}
	top := 0.0
	for _, ser := range series {
		var pts plotter.XYs
		for _, s := range sums {
			if v := float64(ser.value(s)); !math.IsNaN(v) && v > 0 {
				pts = append(pts, plotter.XY{X: s.PerSecond, Y: v})
				top = max(top, v)
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, points.Color = ser.col, ser.col
		line.Width = vg.Points(1.5)
		if ser.dash {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(ser.name, line, points)
	}
	if top == 0 {
		return ErrNothingToPlot
	}
	p.Add(plotter.NewGrid())
	p.Y.Max = top * 5 // room for the legend above the lines
	p.Legend.Top, p.Legend.Left = true, true
	return p.Save(7*vg.Inch, 5*vg.Inch, path)
}

// writeGateByStep prints the gate's answer p50 / p99 of each step's captures, one row per
// level; nothing when no answer names its step.
func writeGateByStep(w io.Writer, sums []Summary) error {
	names := namesOf(sums, func(s Summary) map[string]Spread { return s.GateByStep })
	if len(names) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\ngate answer p50 / p99 ms by step:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "load\t%s\t\n", strings.Join(names, "\t"))
	for _, s := range sums {
		row := []string{load(s)}
		for _, step := range names {
			sp, ok := s.GateByStep[step]
			if !ok {
				row = append(row, "—")
				continue
			}
			row = append(row, ms(sp.P50)+" / "+ms(sp.P99))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

// namesOf returns the keys of the map of every summary (field picks it), sorted: the
// columns of a table with a row per level.
func namesOf[V any](sums []Summary, field func(Summary) map[string]V) []string {
	seen := map[string]bool{}
	for _, s := range sums {
		for k := range field(s) {
			seen[k] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
