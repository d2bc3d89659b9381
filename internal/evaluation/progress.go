package evaluation

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Number is a figure that may be undefined (NaN: nothing to count, or too few trials to
// resolve it); it is written to JSON as null then.
type Number float64

// MarshalJSON writes the number, or null when it is NaN or infinite.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(f, 'g', -1, 64)), nil
}

// UnmarshalJSON reads a number, null as NaN.
func (n *Number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Number(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*n = Number(f)
	return err
}

// Progress draws a progress bar on one terminal line: "[#####.....] 12/40 sessions 0:42".
// It is safe for concurrent use.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	what  string
	total int
	n     int
	start time.Time
}

// NewProgress starts a bar of total steps on w.
func NewProgress(w io.Writer, what string, total int) *Progress {
	p := &Progress{w: w, what: what, total: total, start: time.Now()}
	p.draw()
	return p
}

// Step counts one step done and redraws.
func (p *Progress) Step() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.draw()
}

// Done ends the bar's line.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w)
}

func (p *Progress) draw() {
	const width = 30
	filled := width
	if p.total > 0 {
		filled = width * p.n / p.total
	}
	el := time.Since(p.start).Round(time.Second)
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.n, p.total, p.what, el)
}
