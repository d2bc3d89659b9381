package evaluation

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// detFloor is where rates of zero are drawn on the DET curve's log axes.
const detFloor = 1e-4

// WriteDET draws the face match detection error trade-off curve (FNMR against FMR, both on
// log axes, zeros drawn at 1e-4) with the configured threshold's operating point marked, as
// a PNG at path.
func WriteDET(path string, s FaceScores) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Face match DET (%d genuine, %d impostor pairs)", len(s.Genuine), len(s.Impostor))
	p.X.Label.Text = "false match rate (FMR)"
	p.Y.Label.Text = "false non-match rate (FNMR)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = detFloor, 1, detFloor, 1
	var pts plotter.XYs
	for _, d := range DET(s.Genuine, s.Impostor) {
		if math.IsNaN(d.FalseAccept) || math.IsNaN(d.FalseReject) {
			continue
		}
		pts = append(pts, plotter.XY{X: max(d.FalseAccept, detFloor), Y: max(d.FalseReject, detFloor)})
	}
	if len(pts) > 0 {
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = color.RGBA{R: 30, G: 90, B: 200, A: 255}
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add("DET", line)
	}
	fnmr, fmr := ErrorRates(s.Genuine, s.Impostor, s.Threshold)
	if !math.IsNaN(fnmr) && !math.IsNaN(fmr) {
		op, err := plotter.NewScatter(plotter.XYs{{X: max(fmr, detFloor), Y: max(fnmr, detFloor)}})
		if err != nil {
			return err
		}
		op.Color = color.RGBA{R: 200, A: 255}
		op.Radius = vg.Points(4)
		p.Add(op)
		p.Legend.Add(fmt.Sprintf("threshold %.2f", s.Threshold), op)
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return p.Save(6*vg.Inch, 5*vg.Inch, path)
}

// WriteScoreHistogram draws the liveness score histograms of bona fide photos and of each
// attack kind, with the threshold as a vertical line, as a PNG at path.
func WriteScoreHistogram(path string, s LivenessScores) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Liveness scores (%d bona fide, %d attacks)", len(s.BonaFide), len(s.AllAttacks()))
	p.X.Label.Text = "liveness score (higher is live)"
	p.Y.Label.Text = "captures"
	p.X.Min, p.X.Max = 0, 1
	palette := []color.RGBA{{R: 200, G: 40, B: 40, A: 255}, {R: 230, G: 140, B: 0, A: 255}, {R: 140, G: 60, B: 180, A: 255}, {R: 90, G: 90, B: 90, A: 255}}
	series := []struct {
		name   string
		values []float64
		c      color.RGBA
	}{{"bona fide", s.BonaFide, color.RGBA{R: 30, G: 140, B: 60, A: 255}}}
	for i, k := range slices.Sorted(maps.Keys(s.Attacks)) {
		series = append(series, struct {
			name   string
			values []float64
			c      color.RGBA
		}{"attack: " + k, s.Attacks[k], palette[i%len(palette)]})
	}
	for _, sr := range series {
		if len(sr.values) == 0 {
			continue
		}
		vals := make(plotter.Values, len(sr.values))
		for i, v := range sr.values {
			vals[i] = min(max(v, 0), 1)
		}
		h, err := plotter.NewHist(vals, 20)
		if err != nil {
			return err
		}
		h.FillColor = nil // outlines: overlapping series stay readable
		h.LineStyle.Color = sr.c
		h.LineStyle.Width = vg.Points(2)
		p.Add(h)
		p.Legend.Add(sr.name, h)
	}
	t, err := plotter.NewLine(plotter.XYs{{X: s.Threshold, Y: 0}, {X: s.Threshold, Y: float64(max(len(s.BonaFide), len(s.AllAttacks())))}})
	if err != nil {
		return err
	}
	t.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(t)
	p.Legend.Add(fmt.Sprintf("threshold %.2f", s.Threshold), t)
	p.Legend.Top = true
	p.Legend.Left = true
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
