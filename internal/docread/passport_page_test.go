package docread

import (
	"image"
	"testing"
)

// passportPage is a passport's data page as read when its small bilingual labels came out
// as noise: the values stand, in their columns, with no label to find them by.
func passportPage(name ...string) *Page {
	ws := wordsInRow(400, 40, "CỘNG", "HÒA", "XÃ", "HỘI", "CHỦ", "NGHĨA", "VIỆT", "NAM")
	ws = append(ws, wordsInRow(400, 100, "lÀO", "và", "tiên", "EEuil")...)
	ws = append(ws, wordsInRow(400, 130, name...)...)
	ws = append(ws, wordsInRow(400, 180, "VIỆT", "NAM/", "VIETNAMESE")...)
	ws = append(ws, wordsInRow(400, 230, "11/02/1994")...)
	ws = append(ws, wordsInRow(800, 230, "BÌNH", "ĐINH")...)
	ws = append(ws, wordsInRow(400, 280, "31/10/2020")...)
	ws = append(ws, wordsInRow(800, 280, "Có", "giá", "trị", "đến/", "Date", "of", "expiry")...)
	ws = append(ws, wordsInRow(800, 310, "31/10/2030")...)
	return &Page{Width: 1250, Height: 880, Words: ws}
}

// TestPassportFieldsWithoutTheirLabels: with the labels of the name, nationality, place of
// birth and issue date unread, the page's structure still gives them: the issue date is the
// date between the birth and expiry dates, the nationality the phrase "VIỆT NAM/VIETNAMESE"
// (not the state's name in the header), the place of birth the phrase that names a province,
// spelt as the province is.
func TestPassportFieldsWithoutTheirLabels(t *testing.T) {
	specs := []FieldSpec{
		{Name: "nationality", Kind: KindNationality},
		{Name: "date_of_birth", Kind: KindDate},
		{Name: "place_of_birth", Kind: KindProvince},
		{Name: "issue_date", Kind: KindDate},
		{Name: "expiry_date", Kind: KindDate},
	}
	fields, err := testReader(t).Fields(passportPage("LÃ", "DIỆU", "LAN"), specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"nationality": "VNM", "date_of_birth": "1994-02-11", "place_of_birth": "BÌNH ĐỊNH", "issue_date": "2020-10-31", "expiry_date": "2030-10-31"}
	for _, f := range fields {
		if !f.Valid || f.Value != want[f.Name] {
			t.Errorf("%s = %q (valid %v, raw %q), want %q", f.Name, f.Value, f.Valid, f.Raw, want[f.Name])
		}
	}
}

// TestPlaceOfBirthIsAWholePhrase: a name with a province's words in it is no place of
// birth, and with no phrase naming a province the field stays unread.
func TestPlaceOfBirthIsAWholePhrase(t *testing.T) {
	p := &Page{Width: 1250, Height: 880, Words: wordsInRow(400, 130, "NGUYỄN", "HÀ", "NAM")}
	fields, err := testReader(t).Fields(p, []FieldSpec{{Name: "place_of_birth", Kind: KindProvince}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fields[0].Valid {
		t.Fatalf("place of birth %q read from a name", fields[0].Value)
	}
}

// TestPrintedNameByTheZone: the name as printed is found by the zone's letters, with its
// diacritics, spaced as the zone spaces it when the page ran its words together; a page
// without the zone's letters gives none.
func TestPrintedNameByTheZone(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  string
		ok    bool
	}{
		{[]string{"LÃ", "DIỆU", "LAN"}, "LÃ DIỆU LAN", true},
		{[]string{"LÃDIỆULAN"}, "LÃ DIỆU LAN", true},
		{[]string{"LÃ", "DIỆU"}, "", false},
	} {
		f, ok := PrintedName(passportPage(tc.words...), "LA DIEU LAN")
		if ok != tc.ok || f.Value != tc.want || f.Name != "full_name" {
			t.Errorf("%q: %q %v, want %q %v", tc.words, f.Value, ok, tc.want, tc.ok)
		}
	}
	// A name whose letters are the zone's only with a separator between two of its words
	// ("LÃ. DIỆU") is still the name: separators are no letters.
	ws := []Word{{Text: "LÃ.", Box: image.Rect(400, 130, 436, 146), Conf: 0.9}, {Text: "DIỆU", Box: image.Rect(444, 130, 492, 146), Conf: 0.9}, {Text: "LAN", Box: image.Rect(500, 130, 536, 146), Conf: 0.9}}
	if f, ok := PrintedName(&Page{Width: 1250, Height: 880, Words: ws}, "LA DIEU LAN"); !ok || f.Value != "LÃ DIỆU LAN" {
		t.Errorf("with a separator: %q %v", f.Value, ok)
	}
}

// TestClosedClassValues: an ethnicity or a religion is one of a closed list: the entry the
// value read begins with, spelt as listed in the case read, is the value, whatever was read
// after it (a legacy card's back reads the fingerprint boxes' ridges into the line).
func TestClosedClassValues(t *testing.T) {
	for _, tc := range []struct{ field, read, want string }{
		{"ethnicity", `c; Kinh 17/25/77 272/7 /////72/// CC "SE =7`, "Kinh"},
		{"ethnicity", "Kinh NI ——_— ==w TRagám", "Kinh"},
		{"ethnicity", "KINH", "KINH"},
		{"ethnicity", "Ê-đê", "Ê đê"}, // spaced as listed, cased as read
		{"religion", "Khô ng TS) RI RIÊNG V DỊ HÌNH trên", "Không"},
		{"religion", "Kh ông", "Không"},
		{"religion", "Phật giáo Hòa Hảo", "Phật giáo Hòa Hảo"},
		{"religion", "Tin Lảnh", "Tin Lành"},
		{"religion", "Đạo Mẫu", "Đạo Mẫu"}, // not listed: as read
	} {
		if got, _ := fromLexicon(tc.read, lexicons[tc.field]); got != tc.want {
			t.Errorf("%s %q → %q, want %q", tc.field, tc.read, got, tc.want)
		}
	}
}

// TestNameWithoutMarks: marks read beside a name's words are no words of it, and a name has
// two words at least.
func TestNameWithoutMarks(t *testing.T) {
	for read, want := range map[string]string{
		"ĐINH THU THẢO ˆ":   "ĐINH THU THẢO",
		"NGUYỄN HỒNG ' VÂN": "NGUYỄN HỒNG VÂN",
	} {
		if got, ok := normalizeField(KindUpperText, read); !ok || got != want {
			t.Errorf("%q → %q %v, want %q", read, got, ok, want)
		}
	}
	// A lone short word is no name; names run together are one still.
	for read, want := range map[string]bool{"'<Z'": false, "NGUYỄN": false, "NGUYỄNVĂNAN": true} {
		if _, ok := normalizeField(KindUpperText, read); ok != want {
			t.Errorf("%q valid %v, want %v", read, ok, want)
		}
	}
}

// TestModelSpacedAsPrinted: a model's characters come from the code engine, its spaces from
// the page's reading when the two have as many characters.
func TestModelSpacedAsPrinted(t *testing.T) {
	for _, tc := range []struct{ code, page, want string }{
		{"AIRBLADE", "AIR BLADE", "AIR BLADE"},
		{"FADIL", "EADIL", "FADIL"},
		{"SHMODE", "SH MODE", "SH MODE"},
		{"CX-5", "CX-5", "CX-5"},
		{"WAVEALPHA", "WAVE ALPH", "WAVEALPHA"}, // a character short on the page: as the code engine read it
	} {
		if got := spacedAs(tc.code, tc.page); got != tc.want {
			t.Errorf("spacedAs(%q, %q) = %q, want %q", tc.code, tc.page, got, tc.want)
		}
	}
}

// TestNameWithoutItsLabel: a card's name whose label was not read is the run of words in
// capitals that begins with a surname, not the state's title (which has "CHỦ" in it), a
// document's title ("HỘ CHIẾU", HỒ's letters) nor a word in capitals after a label read as
// noise.
func TestNameWithoutItsLabel(t *testing.T) {
	ws := wordsInRow(440, 55, "CỘNG", "HÒA", "XÃ", "HỘI", "CHỦ", "NGHĨA", "VIỆT", "NAM")
	ws = append(ws, wordsInRow(380, 145, "GIẤY", "CHỨNG", "MINH", "NHÂN", "DÂN")...)
	ws = append(ws, wordsInRow(40, 200, "HỘ", "CHIẾU")...)
	ws = append(ws, wordsInRow(349, 290, "Hmc", "TRẦN", "THỊ", "MAI", "gà)")...)
	fields, err := testReader(t).Fields(&Page{Width: 1200, Height: 756, Words: ws}, []FieldSpec{{Name: "full_name", Kind: KindUpperText}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := fields[0]; !f.Valid || f.Value != "TRẦN THỊ MAI" {
		t.Fatalf("full name %q (valid %v), want TRẦN THỊ MAI", f.Value, f.Valid)
	}
}

// TestColourWithoutMarks: marks read at a colour's ends are no part of it.
func TestColourWithoutMarks(t *testing.T) {
	ws := wordsInRow(40, 100, "Màu", "sơn:", "'Trắng")
	fields, err := testReader(t).Fields(&Page{Width: 1200, Height: 756, Words: ws}, []FieldSpec{{Name: "color", Kind: KindText}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := fields[0]; f.Value != "Trắng" {
		t.Fatalf("colour %q, want Trắng", f.Value)
	}
}

// TestChassisNumberWithoutVINLetters: a chassis number (a VIN) holds no I, O or Q: read so,
// they are the digits they look like.
func TestChassisNumberWithoutVINLetters(t *testing.T) {
	ws := wordsInRow(40, 100, "Số", "khung:", "RLUEO12K6Y36I210")
	fields, err := testReader(t).Fields(&Page{Width: 1200, Height: 756, Words: ws, doc: image.NewGray(image.Rect(0, 0, 1200, 756))}, []FieldSpec{{Name: "chassis_number", Kind: KindCode}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := fields[0]; f.Value != "RLUE012K6Y361210" {
		t.Fatalf("chassis number %q (raw %q), want RLUE012K6Y361210", f.Value, f.Raw)
	}
}

// TestPlaceReadWhole: a place read whole goes on from the same place read short of its last
// line, even with a letter or two read differently; another place does not.
func TestPlaceReadWhole(t *testing.T) {
	short := "Thôn Hạ, X. Cao Xá, H. Lâm Thao,"
	for longer, want := range map[string]bool{
		"Thôn Hạ, X. Cao Xá, H. Lâm Thao, Phú Thọ": true,
		"Thôn Ha, X. Cao Xa, H. Lâm Thao, Phú Thọ": true,
		"Tổ 5, X. Uy Nỗ, H. Đông Anh, Hà Nội":      false,
		"Thôn Hạ, X. Cao Xá, H. Lâm Thao,":         false, // no longer
	} {
		if got := Continues(longer, short); got != want {
			t.Errorf("Continues(%q, %q) = %v, want %v", longer, short, got, want)
		}
	}
}

// TestCutShort: a place ending on a comma or on a name that is no province, and marks
// ending on a distance or a direction, lost their last line; whole ones (a place of birth
// named by its province alone), another field or an unread place did not.
func TestCutShort(t *testing.T) {
	for _, tc := range []struct {
		f    Field
		want bool
	}{
		{Field{Name: "place_of_residence", Value: "Thôn Hạ, X. Cao Xá, H. Lâm Thao,", Valid: true}, true},
		{Field{Name: "address", Value: "Tổ 5, Xã Uy Nỗ,", Valid: true}, true},
		{Field{Name: "place_of_residence", Value: "Thôn Hạ, X. Cao Xá, H. Lâm Thao, Phú Thọ", Valid: true}, false},
		{Field{Name: "place_of_residence", Value: "355/3 Phố Huế, Phước Hội, Đất", Valid: true}, true},
		{Field{Name: "place_of_residence", Value: "Số 5 ngõ 99 Võ Thị Sáu, Dư Hàng, Lê", Valid: true}, true},
		{Field{Name: "place_of_residence", Value: "355/3 Phố Huế, Phước Hội, Đất Đỏ, Bà Rịa – Vũng Tàu", Valid: true}, false},
		{Field{Name: "place_of_birth", Value: "Nghệ An", Valid: true}, false},
		{Field{Name: "identifying_marks", Value: "Sẹo chấm C 1cm,", Valid: true}, true},
		{Field{Name: "identifying_marks", Value: "Nốt ruồi C 1cm dưới", Valid: true}, true},
		{Field{Name: "identifying_marks", Value: "Nốt ruồi C 1cm dưới trước cánh mũi trái", Valid: true}, false},
		{Field{Name: "identifying_marks", Value: "Sẹo chấm ở cằm", Valid: true}, false},
		{Field{Name: "full_name", Value: "LÊ VĂN C", Valid: true}, false},
		{Field{Name: "place_of_origin", Value: "", Valid: false}, false},
	} {
		if got := CutShort(tc.f); got != tc.want {
			t.Errorf("CutShort(%s %q) = %v, want %v", tc.f.Name, tc.f.Value, got, tc.want)
		}
	}
}
