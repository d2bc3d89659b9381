package docread

import (
	"image"
	"os"
	"testing"

	"github.com/idstream/idstream/internal/cardrender"
)

// labelledPerSide is the number of cards rendered per side and variant for the
// label-anchored reading.
const labelledPerSide = 4

// labelledFloor is the floor of the exact-match rate of label-anchored reading over these
// sides, per variant. Measured: see the log lines "labelled fields" (misses are mostly
// "Sẹo" read "Seo" on backs). The floor sits below so that a regression fails.
const labelledFloor = 0.93

// TestReadLabelledOnRenders reads every identity-card side the project renders by its
// printed labels (no fixed boxes) and asserts the exact-match rate per variant.
func TestReadLabelledOnRenders(t *testing.T) {
	ocr, rend := testReader(t), testRenderer(t)
	sides := append([]renderedSide{
		{"chip front", ChipIDFront(), func(s uint64) (image.Image, cardrender.Truth) { return rend.ChipIDFront(cardrender.SyntheticPerson(s)) }},
		{"chip back", ChipIDBack(), func(s uint64) (image.Image, cardrender.Truth) { return rend.ChipIDBack(cardrender.SyntheticPerson(s)) }},
	}, withoutChipSides(rend)...)
	for _, v := range variants() {
		matched, total := 0, 0
		for _, side := range sides {
			miss := map[string]int{}
			for i := uint64(0); i < labelledPerSide; i++ {
				seed := 7000 + i
				img, truth := side.render(seed)
				pic := v.picture(t, img, seed)
				page, err := ocr.ReadPage(pic, side.layout.Width, side.layout.Height)
				if err != nil {
					t.Fatal(err)
				}
				if os.Getenv("OCR_DEBUG") != "" && (os.Getenv("OCR_DEBUG") == side.name) {
					t.Logf("%s %s page:\n%s", v.name, side.name, analyse(page.Words).dump())
				}
				fields, err := ocr.Fields(page, Specs(side.layout), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range fields {
					want := truth.Fields[f.Name]
					total++
					if f.Value == want {
						matched++
						continue
					}
					miss[f.Name]++
					t.Logf("%s %s seed %d %s: got %q (raw %q), want %q", v.name, side.name, seed, f.Name, f.Value, f.Raw, want)
				}
			}
			t.Logf("%s %s: misses %v", v.name, side.name, miss)
		}
		rate := float64(matched) / float64(total)
		t.Logf("labelled fields, %s: %d/%d (%.1f %%)", v.name, matched, total, 100*rate)
		if rate < labelledFloor {
			t.Errorf("%s: label-anchored exact-match rate %.3f below the floor %.2f", v.name, rate, labelledFloor)
		}
	}
}

// TestPlateAsPrinted: a plate read from the page keeps its form (a motorbike's space between
// series and number, no stray marks at its ends), and only a plate's shape is taken for one.
func TestPlateAsPrinted(t *testing.T) {
	for read, want := range map[string]string{
		"86-D5 768.49":   "86-D5 768.49",
		"18-E9 328. 74.": "18-E9 328.74",
		"18-E9328.74":    "18-E9 328.74",
		"_ 51F-147.17 |": "51F-147.17",
		"30A-1234":       "30A-1234",
	} {
		got := plateText(read)
		if got != want || !plateLike(got) {
			t.Errorf("plateText(%q) = %q (plate-like %v), want %q", read, got, plateLike(got), want)
		}
	}
	for _, read := range []string{"186-D5768.49", "8-D5 768.49", "86-55 768.49", "86-D5 76.4", "Biển số"} {
		if p := plateText(read); plateLike(p) {
			t.Errorf("plateLike(%q) = true, want false", p)
		}
	}
}

// TestPlateSeriesFromTheCodeEngine: a plate takes its letters from the code engine's reading
// when that has the same characters in the same places (the page's text model reads a serif
// F as E), and its digits and spacing from the page's; a code reading of another length, or
// with a digit where the page has a letter, leaves the page's reading as it is.
func TestPlateSeriesFromTheCodeEngine(t *testing.T) {
	for _, c := range []struct{ page, code, want string }{
		{"24-E3 775.25", "24-F3775.25", "24-F3 775.25"},
		{"51F-147.17", "51E-147.17", "51E-147.17"},
		{"24-E3 775.25", "24-E3775.26", "24-E3 775.25"},
		{"24-E3 775.25", "24-F3775.2", "24-E3 775.25"},
		{"24-E3 775.25", "24-83775.25", "24-E3 775.25"},
	} {
		if got := seriesFrom(c.page, c.code); got != c.want {
			t.Errorf("seriesFrom(%q, %q) = %q, want %q", c.page, c.code, got, c.want)
		}
	}
}

// TestRowsFollowAskewLines: on a page rectified a little askew (lines rising 1.8° across
// it), each of Tesseract's text lines stays one row, its right end not joining the row
// above; marks read at a steep slope do not tilt the rows.
func TestRowsFollowAskewLines(t *testing.T) {
	var ws []Word
	line := func(n, y0 int) []int {
		var idx []int
		for k := range 8 {
			x := 20 + 110*k
			y := y0 - int(0.03*float64(x))
			idx = append(idx, len(ws))
			ws = append(ws, Word{Text: "Huyện", Box: image.Rect(x, y, x+90, y+22), Conf: 0.95, Block: 1, Par: 1, Line: n})
		}
		return idx
	}
	want := [][]int{line(1, 50), line(2, 80), line(3, 110)}
	all := make([]int, len(ws))
	for i := range all {
		all[i] = i
	}
	got := rows(ws, all)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(got), len(want), got)
	}
	for r := range want {
		if len(got[r]) != len(want[r]) || got[r][0] != want[r][0] || got[r][len(got[r])-1] != want[r][len(want[r])-1] {
			t.Errorf("row %d holds words %v, want %v", r, got[r], want[r])
		}
	}
	// Two lines of marks at a steep slope beside them: the median is still the print's.
	if s := skew(ws, all); s > -0.025 || s < -0.035 {
		t.Errorf("skew %.3f, want about -0.03", s)
	}
	for n, y := range []int{300, 400} {
		for k := range 3 {
			x := 100 + 100*k
			ws = append(ws, Word{Text: "ww", Box: image.Rect(x, y+20*k, x+60, y+20*k+22), Conf: 0.9, Block: 2, Par: 1, Line: n + 1})
		}
	}
	all = all[:0]
	for i := range ws {
		all = append(all, i)
	}
	if s := skew(ws, all); s > -0.025 || s < -0.035 {
		t.Errorf("with marks: skew %.3f, want about -0.03", s)
	}
}
