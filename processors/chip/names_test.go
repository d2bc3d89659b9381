package chip

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestComposeVietnamese(t *testing.T) {
	tests := []struct{ in, want string }{
		{"NGUYỄN VĂN AN", "NGUYỄN VĂN AN"},                 // already precomposed
		{"Nguye\u0302\u0303n Va\u0306n A", "Nguyễn Văn A"}, // NFD, canonical mark order
		{"Nguye\u0303\u0302n", "Nguyễn"},                   // marks in another order
		{"Tra\u0302\u0300n Thi\u0323 Bi\u0301ch Ngo\u0323c", "Trần Thị Bích Ngọc"},
		{"LE\u0302 VA\u0306N CU\u031BO\u031B\u0300NG", "LÊ VĂN CƯỜNG"},
		{"e\u0323\u0302", "ệ"},             // dot below before circumflex (NFD order)
		{"Ư\u0300", "Ừ"},                   // precomposed base, combining tone
		{"ĐỖ QUANG HUY", "ĐỖ QUANG HUY"},   // Đ has no decomposition
		{"c\u0327a\u0300", "c\u0327à"},     // not a Vietnamese letter: left as is
		{"a\u0300\u0301", "a\u0300\u0301"}, // two tones: left as is
		{"", ""},
	}
	for _, tt := range tests {
		if got := composeVietnamese(tt.in); got != tt.want {
			t.Errorf("composeVietnamese(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestVietnameseTableIsPrecomposed(t *testing.T) {
	for _, row := range vnLetters {
		if utf8.RuneCountInString(row) != 6 {
			t.Errorf("row %q does not hold 6 letters", row)
		}
		for _, r := range row {
			if unicode.Is(unicode.Mn, r) || !unicode.IsLetter(r) {
				t.Errorf("row %q holds %U, not a precomposed letter", row, r)
			}
		}
	}
}
