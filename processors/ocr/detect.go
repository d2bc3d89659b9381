package ocr

import (
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/idstream/idstream/internal/mrz"
)

// Detection is what DetectType concludes about an image: the document type, the side the
// content shows (SideFront, SideBack, SidePassport; "" when the content does not say) and the
// evidence the type rests on (EvidenceMRZ, EvidenceTitle, EvidenceNumber; "" when unknown).
type Detection struct {
	Type     string
	Side     string
	Evidence string
}

// Evidence kinds of a Detection.
const (
	EvidenceMRZ    = "mrz"
	EvidenceTitle  = "title"
	EvidenceNumber = "number"
)

// titleKeyword is a word sequence searched in the folded probe text (upper case, no
// diacritics, no spaces), with the number of OCR edits it tolerates.
type titleKeyword struct {
	word  string
	edits int
}

// Keywords of the titles and first labels, per document type and side.
var (
	kwLegacyFront  = []titleKeyword{{"CHUNGMINHNHANDAN", 2}, {"CHUNGMINH", 0}}
	kwCitizenTitle = []titleKeyword{{"CANCUOCCONGDAN", 2}}
	kwChipSubtitle = []titleKeyword{{"CITIZENIDENTITY", 2}, {"IDENTITYCARD", 1}}
	kwIdentityCard = []titleKeyword{{"CANCUOC", 1}}
	// English subtitles of the labels: the chip cards are bilingual, the 12-digit card
	// without chip prints Vietnamese labels only.
	kwEnglishLabels = []titleKeyword{{"FULLNAME", 1}, {"DATEOFBIRTH", 2}, {"NATIONALITY", 2}, {"PLACEOFORIGIN", 2},
		{"PLACEOFRESIDENCE", 2}, {"DATEOFEXPIRY", 2}, {"PERSONALIDENTIFICATION", 2}, {"DATEMONTHYEAR", 2}}
	kwVehicleFront = []titleKeyword{{"DANGKYXE", 0}, {"VEHICLEREGISTRATION", 2}}
	kwPassportPage = []titleKeyword{{"HOCHIEU", 1}, {"PASSPORT", 1}}
	kwChipBack     = []titleKeyword{{"PERSONALIDENTIFICATION", 2}}
	kwCitizenBack  = []titleKeyword{{"DACDIEMNHANDANG", 2}}
	kwLegacyBack   = []titleKeyword{{"DANTOC", 0}, {"TONGIAO", 1}, {"DAUVETRIENG", 2}}
	kwVehicleBack  = []titleKeyword{{"CHUNGNHANDANGKY", 2}, {"BIENSODANGKY", 2}, {"DANGKYLANDAU", 2}, {"SOKHUNG", 1}}
)

// DetectType tells the document types apart from the evidence of one image: zone is the
// machine readable zone read from it (nil when none), title the text read on it (the whole
// page, docread.Page.Text; a title band also works). It decides, strongest evidence first:
//
//  1. The MRZ: a TD3 with document code P is a passport page; a Vietnamese TD1 is the back
//     of a chip card (chip_id_card: the 2021 card or the identity card of 2024; the 12-digit
//     personal number heads its optional data); another TD1 or a TD2 is the back of an ID
//     card (id_card). Only the chip cards among the Vietnamese cards carry a zone; the
//     12-digit card without chip and the 9-digit card have none.
//  2. The title, matched after folding (upper case, diacritics removed, spaces dropped) with
//     a few OCR edits tolerated:
//     - vehicle registration: "ĐĂNG KÝ XE" or "VEHICLE REGISTRATION" (tried first, as its
//     "GIẤY CHỨNG NHẬN" is a few edits from "GIẤY CHỨNG MINH");
//     - front of the 9-digit card (legacy_id_card): "CHỨNG MINH NHÂN DÂN";
//     - front of a 12-digit card: "CĂN CƯỚC CÔNG DÂN"; with the chip card's English subtitle
//     "Citizen Identity Card", or with two of the chip card's English label subtitles ("Full
//     name", "Date of birth", "Nationality", "Place of origin", ...), it is chip_id_card;
//     without them (Vietnamese labels only) the card of 2016–2020 without chip (id_card);
//     - front of the identity card of 2024: "CĂN CƯỚC" without "CÔNG DÂN" (chip_id_card);
//     - passport page: "HỘ CHIẾU" or "PASSPORT";
//     - back of the chip card: its bilingual label "Personal identification";
//     - back of the 9-digit card: "DÂN TỘC", "TÔN GIÁO" or "DẤU VẾT RIÊNG";
//     - back of a 12-digit card without those: "Đặc điểm nhận dạng" (id_card);
//     - back of the vehicle registration: "CHỨNG NHẬN ĐĂNG KÝ", "Biển số đăng ký", "Đăng ký
//     lần đầu" or "Số khung" (the issues differ in which fields the back prints) without the
//     front's "ĐĂNG KÝ XE".
//
// Otherwise the type is unknown. The third kind of evidence, the length of the ID number
// (9 or 12 digits), needs a layout read and is the caller's fallback (see the group's
// readFront). DetectType is pure.
func DetectType(zone *mrz.MRZ, title string) Detection {
	if zone != nil {
		if t := typeOfZone(zone); t != TypeUnknown {
			side := SideBack
			if t == TypePassport {
				side = SidePassport
			}
			return Detection{Type: t, Side: side, Evidence: EvidenceMRZ}
		}
	}
	text := foldTitle(title)
	has := func(kws []titleKeyword) bool {
		for _, k := range kws {
			if containsApprox(text, k.word, k.edits) {
				return true
			}
		}
		return false
	}
	count := func(kws []titleKeyword) int {
		n := 0
		for _, k := range kws {
			if containsApprox(text, k.word, k.edits) {
				n++
			}
		}
		return n
	}
	title2 := func(t, side string) Detection { return Detection{Type: t, Side: side, Evidence: EvidenceTitle} }
	switch {
	case has(kwVehicleFront): // first: "GIẤY CHỨNG NHẬN" is close to "GIẤY CHỨNG MINH"
		return title2(TypeVehicleRegistration, SideFront)
	case has(kwLegacyFront):
		return title2(TypeLegacyIDCard, SideFront)
	case has(kwChipSubtitle) && !has(kwPassportPage):
		return title2(TypeChipIDCard, SideFront)
	case has(kwCitizenTitle) && count(kwEnglishLabels) >= 2:
		return title2(TypeChipIDCard, SideFront)
	case has(kwCitizenTitle):
		return title2(TypeIDCard, SideFront)
	case has(kwIdentityCard) && !has(kwPassportPage): // the 2024 identity card, "CĂN CƯỚC"
		return title2(TypeChipIDCard, SideFront)
	case has(kwPassportPage):
		return title2(TypePassport, SidePassport)
	case has(kwChipBack):
		return title2(TypeChipIDCard, SideBack)
	case has(kwLegacyBack):
		return title2(TypeLegacyIDCard, SideBack)
	case has(kwCitizenBack):
		return title2(TypeIDCard, SideBack)
	case has(kwVehicleBack):
		return title2(TypeVehicleRegistration, SideBack)
	}
	return Detection{Type: TypeUnknown}
}

// foldTitle returns s upper-cased, without diacritics (Đ as D) and without anything but
// letters and digits.
func foldTitle(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToUpper(s)) {
		switch {
		case r == 'Đ' || r == 'Ð':
			b.WriteByte('D')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// containsApprox reports whether pattern occurs in text with at most k edits (insertions,
// deletions, substitutions), by Sellers' approximate substring matching. Both are ASCII.
func containsApprox(text, pattern string, k int) bool {
	m := len(pattern)
	if m == 0 {
		return true
	}
	col := make([]int, m+1) // col[i]: edits of pattern[:i] ending at the current text position
	for i := range col {
		col[i] = i
	}
	if col[m] <= k {
		return true
	}
	for j := 0; j < len(text); j++ {
		diag := col[0] // col[0] stays 0: a match may start anywhere
		for i := 1; i <= m; i++ {
			cost := 1
			if pattern[i-1] == text[j] {
				cost = 0
			}
			next := min(col[i]+1, col[i-1]+1, diag+cost)
			diag, col[i] = col[i], next
		}
		if col[m] <= k {
			return true
		}
	}
	return false
}
