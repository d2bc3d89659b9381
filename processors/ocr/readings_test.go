package ocr

import (
	"image"
	"log/slog"
	"testing"

	"github.com/idstream/idstream/internal/docread"
)

// TestBackWithoutMarksLabelReadsOn: a card's back whose page pass lost the rows at its top
// (the label of the identifying marks among them: doc00439 of the evaluation corpus of seed
// 60606) but read the issue date, the one field a back requires, is read on: the marks come
// from the next reading, which has their label.
func TestBackWithoutMarksLabelReadsOn(t *testing.T) {
	reader, err := docread.New(docread.Config{MRZModelDir: "../../models", PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reader.Close() })
	blank := image.NewGray(image.Rect(0, 0, cardWidth, cardHeight))
	for i := range blank.Pix {
		blank.Pix[i] = 235
	}
	empty, err := reader.ReadPage(blank, cardWidth, cardHeight)
	if err != nil {
		t.Fatal(err)
	}
	row := func(x, y int, texts ...string) []docread.Word {
		var ws []docread.Word
		for _, s := range texts {
			w := 12 * len([]rune(s))
			ws = append(ws, docread.Word{Text: s, Box: image.Rect(x, y, x+w, y+18), Conf: 0.95})
			x += w + 8
		}
		return ws
	}
	pageOf := func(ws ...[]docread.Word) *docread.Page {
		p := *empty
		p.Words = nil
		for _, w := range ws {
			p.Words = append(p.Words, w...)
		}
		return &p
	}
	date := row(62, 160, "Ngày,", "tháng,", "năm/", "Date,", "month,", "year:", "20/07/2025")
	rs := &readings{reader: reader}
	rs.pages = [numReadings]*docread.Page{
		pageOf(date),
		pageOf(row(60, 75, "Đặc", "điểm", "nhân", "dạng/", "Personal", "identification:", "Sẹo", "chấm", "C", "3cm", "trên", "trước"),
			row(56, 111, "cánh", "mũi", "phải"), date),
	}
	g := &group{reader: reader, log: slog.New(slog.DiscardHandler)}
	r, err := g.readPage(rs, readingAsRead, Detection{Type: TypeChipIDCard, Side: SideBack}, SideBack)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"issue_date": "2025-07-20", "identifying_marks": "Sẹo chấm C 3cm trên trước cánh mũi phải"}
	for _, f := range r.fields {
		if w, ok := want[f.Name]; ok && (f.Value != w || !f.Valid) {
			t.Errorf("%s %q (valid %v), want %q", f.Name, f.Value, f.Valid, w)
		}
	}
}
