package ocr

import (
	"testing"

	"github.com/idstream/idstream/internal/ocr"
)

// TestPlaceCutShort: a place ending on a comma lost its last line; a whole place, another
// field or an unread place did not.
func TestPlaceCutShort(t *testing.T) {
	for _, tc := range []struct {
		f    ocr.Field
		want bool
	}{
		{ocr.Field{Name: "place_of_residence", Value: "Thôn Hạ, X. Cao Xá, H. Lâm Thao,", Valid: true}, true},
		{ocr.Field{Name: "address", Value: "Tổ 5, Xã Uy Nỗ,", Valid: true}, true},
		{ocr.Field{Name: "place_of_residence", Value: "Thôn Hạ, X. Cao Xá, H. Lâm Thao, Phú Thọ", Valid: true}, false},
		{ocr.Field{Name: "identifying_marks", Value: "Sẹo chấm C 1cm,", Valid: true}, false},
		{ocr.Field{Name: "place_of_origin", Value: "", Valid: false}, false},
	} {
		if got := cutShort(tc.f); got != tc.want {
			t.Errorf("cutShort(%s %q) = %v, want %v", tc.f.Name, tc.f.Value, got, tc.want)
		}
	}
}
