package docread

// Fields found by their shape when their label was not read (byShape): phrases of the page
// that can only be the field's value.

// phrases returns the page's phrases: the runs of words of a row that are no label, parted
// by labels and by gaps wider than twice the words' height, separators trimmed from their
// ends.
func (ix *layoutIndex) phrases() [][]int {
	var out [][]int
	flush := func(ph []int) {
		for len(ph) > 0 && ix.tokens[ph[0]] == "" {
			ph = ph[1:]
		}
		for len(ph) > 0 && ix.tokens[ph[len(ph)-1]] == "" {
			ph = ph[:len(ph)-1]
		}
		if len(ph) > 0 {
			out = append(out, ph)
		}
	}
	for _, row := range ix.rows {
		var ph []int
		for _, i := range row {
			if ix.label[i] >= 0 {
				flush(ph)
				ph = nil
				continue
			}
			if len(ph) > 0 {
				prev := ix.words[ph[len(ph)-1]].Box
				if ix.words[i].Box.Min.X-prev.Max.X > 2*max(prev.Dy(), ix.words[i].Box.Dy()) {
					flush(ph)
					ph = nil
				}
			}
			ph = append(ph, i)
		}
		flush(ph)
	}
	return out
}

// byProvince finds a province's name (a passport's place of birth): a phrase that names one
// (a whole phrase, so that a name with a province's words in it, "NGUYỄN HÀ NAM", is none),
// spelt as the province is; valid false when none does.
func byProvince(ix *layoutIndex, s FieldSpec) (Field, bool) {
	for _, ph := range ix.phrases() {
		v := value{rows: [][]int{ph}}
		if name, ok := province(v.text(ix.words)); ok {
			return Field{Name: s.Name, Value: name, Raw: v.text(ix.words), Valid: true, Confidence: v.conf(ix.words)}, true
		}
	}
	return Field{}, false
}

// byNationality finds a passport's "VIỆT NAM/VIETNAMESE" as a phrase of its own (not the end
// of the state's name in the header); valid false when there is none.
func byNationality(ix *layoutIndex, s FieldSpec) (Field, bool) {
	for _, ph := range ix.phrases() {
		v := value{rows: [][]int{ph}}
		switch token(v.text(ix.words)) {
		case "VIETNAM", "VIETNAMESE", "VIETNAMVIETNAMESE":
			return Field{Name: s.Name, Value: "VNM", Raw: v.text(ix.words), Valid: true, Confidence: v.conf(ix.words)}, true
		}
	}
	return Field{}, false
}

// byName finds a person's name in capitals: two to six words in capitals, close together, the
// first a surname (a closed class) that no word in capitals runs into ("XÃ HỘI CHỦ NGHĨA" is
// a title's), no document's title (isTitle); the first such run from the top that reads
// valid. The error is only for OCR engine failures.
func (r *Reader) byName(p *Page, ix *layoutIndex, s FieldSpec) (Field, bool, error) {
	capital := func(i int) bool { return ix.label[i] < 0 && ix.tokens[i] != "" && inCapitals(ix.words[i].Text) }
	near := func(i, j int) bool {
		a, b := ix.words[i].Box, ix.words[j].Box
		return b.Min.X-a.Max.X <= 2*max(a.Dy(), b.Dy())
	}
	for _, row := range ix.rows {
		for a, i := range row {
			if !surnameTokens[ix.tokens[i]] || !capital(i) || (a > 0 && capital(row[a-1]) && near(row[a-1], i)) {
				continue
			}
			run := []int{i}
			for _, j := range row[a+1:] {
				if !capital(j) || !near(run[len(run)-1], j) {
					break
				}
				run = append(run, j)
			}
			if len(run) < 2 || len(run) > 6 || isTitle(value{rows: [][]int{run}}.text(ix.words)) {
				continue
			}
			f, err := r.readValue(p, ix, value{rows: [][]int{run}}, s)
			if err != nil || f.Valid {
				return f, f.Valid, err
			}
		}
	}
	return Field{}, false, nil
}
