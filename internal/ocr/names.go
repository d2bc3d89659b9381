package ocr

import "strings"

// surnames are the family names most Vietnamese carry, as printed (upper case, with their
// diacritics): a closed class, unlike given names. Folds two of them share (LA and LÃ, ĐOÀN
// and DOÃN) are left out of surnameByFold.
var surnames = []string{
	"NGUYỄN", "TRẦN", "LÊ", "PHẠM", "HOÀNG", "HUỲNH", "PHAN", "VŨ", "VÕ", "ĐẶNG", "BÙI", "ĐỖ",
	"HỒ", "NGÔ", "DƯƠNG", "LÝ", "ĐÀO", "ĐOÀN", "DOÃN", "ĐINH", "TRƯƠNG", "LƯƠNG", "TRỊNH",
	"MAI", "CAO", "LÂM", "TÔ", "TẠ", "HÀ", "CHU", "QUÁCH", "KIỀU", "LA", "LÃ", "LƯU", "TÔN",
	"THÁI", "PHÙNG", "VƯƠNG", "TĂNG", "LỤC", "TIÊU", "DIỆP", "CÙ", "KHỔNG", "MẠC", "TRIỆU",
	"THÂN", "VI", "ÂU", "NÔNG", "LỮ", "LỘC", "ÔNG", "GIANG", "HÀN", "KHÚC", "NINH", "PHÓ",
	"QUAN", "TỐNG", "ĐÀM", "ĐỒNG", "KHƯƠNG", "LẠI", "NGHIÊM", "HỨA", "HẦU",
}

// surnameByFold maps a surname's letters without diacritics to the surname, for the folds
// only one surname has.
var surnameByFold = func() map[string]string {
	m, n := map[string]string{}, map[string]int{}
	for _, s := range surnames {
		m[token(s)] = s
		n[token(s)]++
	}
	for f, k := range n {
		if k > 1 {
			delete(m, f)
		}
	}
	return m
}()

// fixSurname gives a full name's first word, its surname, its diacritics as the surname is
// written when OCR read them wrong ("NGUYÊN" for NGUYỄN, "TRẤN" for TRẦN, "MẠI" for MAI): a
// first word that is no surname but has the letters of exactly one. Any other name is
// returned as read.
func fixSurname(name string) string {
	words := strings.Fields(name)
	if len(words) < 2 {
		return name
	}
	for _, s := range surnames {
		if words[0] == s {
			return name
		}
	}
	if s, ok := surnameByFold[token(words[0])]; ok {
		words[0] = s
		return strings.Join(words, " ")
	}
	return name
}
