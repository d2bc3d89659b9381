package decision

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/idstream/idstream/schemas"
)

// Data sources, in increasing priority.
const (
	SourceOCR  = "ocr"
	SourceMRZ  = "mrz"
	SourceChip = "chip"
)

// ReasonDataMismatch is the reason code of a failed data consistency check.
const ReasonDataMismatch = "data_mismatch"

// canonicalFields returns the fields of schemas.Extracted reconciled across sources, in
// the order their checks are reported.
func canonicalFields() []string {
	return []string{
		"id_number", "full_name", "date_of_birth", "sex", "nationality",
		"place_of_origin", "place_of_residence", "issue_date", "expiry_date",
	}
}

func isCanonical(name string) bool { return slices.Contains(canonicalFields(), name) }

// Reconcile extracts the identity data of a snapshot from its three sources: OCR (the fields
// of its documents, in step order), MRZ (the chip's DG1, else the first document MRZ) and
// chip (the chip's fields). For each field the value is taken from the best source that has
// it (reported): the chip first, then the MRZ, whose check digits protect it, then OCR;
// except that names and places come from the printed text before the MRZ (the MRZ
// transliterates without diacritics and truncates), and an MRZ that holds only the last 9
// digits of the 12-digit ID number OCR read (its document number) comes after OCR; a
// passport's document number is not an ID number. Sources lists, in the order ocr, mrz, chip, every source that had it. Values are
// compared after trimming, collapsing spaces and upper-casing (no diacritics folding, except
// against the MRZ, which has none: see agree); dates
// are normalised to YYYY-MM-DD, sex to M|F|X and nationality to its ISO 3166 alpha-3 code
// when it names a country (countryCode: VNM = Việt Nam = VIỆT NAM = Vietnamese). Each field
// seen in two or more sources yields a check "data.<field>_consistency": fail with reason
// data_mismatch when the sources disagree, pass otherwise. OCR fields with other names go to
// Other, but for a passport's number, which is its zone's when the zone's check digits hold
// (or the chip's DG1's): no check of its own. The MRZ fields reported are the chip's DG1 as read, or a document's zone with the
// letters of its name mended from the printed name where they differ only by look-alikes
// (mendName). The returned Extracted has no DocumentType; Reconcile is pure.
func Reconcile(st *schemas.SessionState) (*schemas.Extracted, []schemas.Check) {
	ref := st.CreatedAt
	if ref.IsZero() {
		ref = st.UpdatedAt
	}
	ocr := map[string]string{}
	other := map[string]string{}
	for _, d := range st.Documents {
		for _, f := range d.Fields {
			if strings.TrimSpace(f.Value) == "" {
				continue
			}
			target := ocr
			if !isCanonical(f.Name) {
				target = other
			}
			if _, seen := target[f.Name]; !seen {
				target[f.Name] = f.Value
			}
		}
	}
	var mrzFields map[string]string
	fromChip := st.Chip != nil && st.Chip.MRZ != nil && len(st.Chip.MRZ.Fields) > 0
	mrzValid := fromChip
	if fromChip {
		mrzFields = st.Chip.MRZ.Fields
	} else {
		for _, d := range st.Documents {
			if d.MRZ != nil && len(d.MRZ.Fields) > 0 {
				mrzFields, mrzValid = d.MRZ.Fields, d.MRZ.Valid
				break
			}
		}
	}
	// A passport's number is the zone's when its check digits hold (or the chip's): the page's
	// reading of it is the weaker one (a page read "O6121988" for "C7910086" beside a zone
	// read exactly). A disagreement is no check of its own: the zone's check digit already
	// vouches for its number, and a misread page is no sign of tampering.
	if n := strings.TrimSpace(mrzFields["document_number"]); mrzValid && n != "" && strings.HasPrefix(mrzFields["document_code"], "P") {
		other["passport_number"] = n
	}
	mrz := mrzCanonical(mrzFields)
	chip := map[string]string{}
	if st.Chip != nil {
		for _, f := range st.Chip.Fields {
			if isCanonical(f.Name) && strings.TrimSpace(f.Value) != "" {
				if _, seen := chip[f.Name]; !seen {
					chip[f.Name] = f.Value
				}
			}
		}
	}

	ex := &schemas.Extracted{Sources: map[string][]string{}}
	if len(mrzFields) > 0 {
		ex.MRZ = maps.Clone(mrzFields)
		if printed, ok := ocr["full_name"]; ok && !fromChip { // the chip's DG1 is no reading
			ex.MRZ = mendName(ex.MRZ, printed)
		}
	}
	if len(other) > 0 {
		ex.Other = other
	}
	var checks []schemas.Check
	for _, field := range canonicalFields() {
		var sources, norms []string
		values := map[string]string{}
		for _, src := range []struct {
			name string
			m    map[string]string
		}{{SourceOCR, ocr}, {SourceMRZ, mrz}, {SourceChip, chip}} {
			v, ok := src.m[field]
			if !ok {
				continue
			}
			sources = append(sources, src.name)
			n := normalize(field, v, ref)
			norms = append(norms, n)
			values[src.name] = display(field, v, n)
		}
		if len(sources) == 0 {
			continue
		}
		ex.Sources[field] = sources
		setField(ex, field, reported(field, values))
		if len(sources) < 2 {
			continue
		}
		c := schemas.Check{Name: "data." + field + "_consistency", Status: schemas.CheckPass, Source: Producer}
		for i, n := range norms[1:] {
			if !agree(field, sources[0], norms[0], sources[i+1], n) {
				c.Status = schemas.CheckFail
				code := ReasonDataMismatch
				detail := fmt.Sprintf("The %s read from %s does not agree.", field, strings.Join(sources, ", "))
				c.ReasonCode, c.Detail = &code, &detail
				break
			}
		}
		checks = append(checks, c)
	}
	return ex, checks
}

// reported returns the value reported for field from the values of each source that had
// it (see Reconcile for the order).
func reported(field string, values map[string]string) string {
	order := []string{SourceChip, SourceMRZ, SourceOCR}
	switch field {
	case "full_name", "place_of_origin", "place_of_residence":
		order = []string{SourceChip, SourceOCR, SourceMRZ}
	case "id_number":
		// A Vietnamese card's MRZ document number is only the last 9 digits of the number.
		m, o := values[SourceMRZ], values[SourceOCR]
		if digits(m, 9) && digits(o, 12) && strings.HasSuffix(o, m) {
			order = []string{SourceChip, SourceOCR, SourceMRZ}
		}
	}
	for _, src := range order {
		if v, ok := values[src]; ok {
			return v
		}
	}
	return ""
}

// mrzCanonical maps MRZ field names to the canonical field names.
func mrzCanonical(f map[string]string) map[string]string {
	out := map[string]string{}
	if len(f) == 0 {
		return out
	}
	first := func(keys ...string) (string, bool) {
		for _, k := range keys {
			if v := strings.TrimSpace(f[k]); v != "" {
				return v, true
			}
		}
		return "", false
	}
	if v, ok := first("id_number"); ok {
		out["id_number"] = v
	} else if v, ok := first("optional_data", "personal_number"); ok && digits(v, 12) {
		out["id_number"] = v // Vietnamese chip ID: the 12-digit number is the optional data
	} else if v, ok := first("document_number"); ok && digits(v, 9) && f["issuing_state"] == "VNM" && strings.HasPrefix(f["document_code"], "I") {
		out["id_number"] = v // a Vietnamese ID card's zone without the 12 digits: their last 9
	}
	if v, ok := first("full_name"); ok {
		out["full_name"] = strings.ReplaceAll(v, "<", " ")
	} else {
		sur, _ := first("surname", "primary_identifier")
		given, _ := first("given_names", "secondary_identifier")
		if name := strings.TrimSpace(strings.ReplaceAll(sur+" "+given, "<", " ")); name != "" {
			out["full_name"] = name
		}
	}
	for field, keys := range map[string][]string{
		"date_of_birth": {"date_of_birth", "birth_date"},
		"sex":           {"sex"},
		"nationality":   {"nationality"},
		"expiry_date":   {"expiry_date", "date_of_expiry", "expiration_date"},
	} {
		if v, ok := first(keys...); ok {
			out[field] = v
		}
	}
	return out
}

// digits reports whether s is exactly n ASCII digits.
func digits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// normalize returns the comparison form of a field value.
func normalize(field, v string, ref time.Time) string {
	s := strings.ToUpper(strings.Join(strings.Fields(v), " "))
	switch field {
	case "date_of_birth", "issue_date", "expiry_date":
		if d, ok := normalizeDate(s, field == "date_of_birth", ref); ok {
			return d
		}
	case "sex":
		switch s {
		case "M", "MALE", "NAM":
			return "M"
		case "F", "FEMALE", "NỮ", "NU":
			return "F"
		case "X", "<":
			return "X"
		}
	case "nationality":
		if code, ok := countryCode(s); ok {
			return code
		}
	}
	return s
}

// countryCode returns the ISO 3166-1 alpha-3 code a nationality names: the code itself, or
// the country's or nationality's name in Vietnamese or English, with or without
// diacritics, in any case and spacing ("Việt Nam", "VIET NAM", "Vietnamese" → VNM). The
// table holds Vietnam and the nationalities most often met in Vietnam; any other value is
// compared as written.
func countryCode(v string) (string, bool) {
	key := strings.ReplaceAll(mrzFold(v), " ", "")
	names := countries()
	if code, ok := names[key]; ok {
		return code, true
	}
	for _, code := range names {
		if key == code {
			return code, true
		}
	}
	return "", false
}

// countries maps folded country and nationality names (mrzFold, spaces removed) to alpha-3.
func countries() map[string]string {
	return map[string]string{
		"VIETNAM": "VNM", "VIETNAMESE": "VNM", "VN": "VNM",
		"TRUNGQUOC": "CHN", "CHINA": "CHN", "CHINESE": "CHN",
		"HANQUOC": "KOR", "KOREA": "KOR", "SOUTHKOREA": "KOR", "KOREAN": "KOR",
		"NHATBAN": "JPN", "JAPAN": "JPN", "JAPANESE": "JPN",
		"HOAKY": "USA", "MY": "USA", "UNITEDSTATES": "USA", "AMERICAN": "USA",
		"LAO": "LAO", "LAOS": "LAO", "CAMPUCHIA": "KHM", "CAMBODIA": "KHM", "CAMBODIAN": "KHM",
		"THAILAN": "THA", "THAILAND": "THA", "THAI": "THA",
		"PHAP": "FRA", "FRANCE": "FRA", "FRENCH": "FRA", "DUC": "DEU", "GERMANY": "DEU", "GERMAN": "DEU",
		"ANH": "GBR", "UNITEDKINGDOM": "GBR", "BRITISH": "GBR", "UC": "AUS", "AUSTRALIA": "AUS", "AUSTRALIAN": "AUS",
		"NGA": "RUS", "RUSSIA": "RUS", "RUSSIAN": "RUS",
	}
}

// display returns the value reported for a field: the normalised form for dates and sex,
// the trimmed original otherwise.
func display(field, raw, norm string) string {
	switch field {
	case "date_of_birth", "issue_date", "expiry_date", "sex", "nationality":
		return norm
	}
	return strings.Join(strings.Fields(raw), " ")
}

// normalizeDate parses YYYY-MM-DD, DD/MM/YYYY, DD-MM-YYYY, DD.MM.YYYY, YYYYMMDD and the MRZ's
// YYMMDD. A two-digit year is 20YY, except a birth year that would be after ref's year.
func normalizeDate(s string, birth bool, ref time.Time) (string, bool) {
	for _, layout := range []string{"2006-01-02", "02/01/2006", "02-01-2006", "02.01.2006", "20060102"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02"), true
		}
	}
	if !digits(s, 6) {
		return "", false
	}
	t, err := time.Parse("060102", s)
	if err != nil {
		return "", false
	}
	year := 2000 + t.Year()%100
	if birth && !ref.IsZero() && year > ref.Year() {
		year -= 100
	}
	return time.Date(year, t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Format("2006-01-02"), true
}

func setField(ex *schemas.Extracted, field, v string) {
	p := &v
	switch field {
	case "id_number":
		ex.IDNumber = p
	case "full_name":
		ex.FullName = p
	case "date_of_birth":
		ex.DateOfBirth = p
	case "sex":
		ex.Sex = p
	case "nationality":
		ex.Nationality = p
	case "place_of_origin":
		ex.PlaceOfOrigin = p
	case "place_of_residence":
		ex.PlaceOfResidence = p
	case "issue_date":
		ex.IssueDate = p
	case "expiry_date":
		ex.ExpiryDate = p
	}
}

// agree reports whether two normalised values of a field from sources a and b agree. The MRZ
// alphabet has no diacritics and a bounded length, so a value compared with an MRZ value is
// folded to that alphabet first (NGUYỄN VĂN A = NGUYEN<VAN<A), and an MRZ value that fills
// its field may be a truncation of the other; an MRZ document number of 9 digits agrees with
// the 12-digit ID number it ends; a name agrees with the MRZ's up to letters an OCR-B reader
// confuses and up to two glyphs read twice (lookAlikeDistance ≤ 2), since the name line
// carries no check digit.
// Other sources must agree exactly.
func agree(field, a, va, b, vb string) bool {
	if a != SourceMRZ && b != SourceMRZ {
		return va == vb
	}
	fa, fb := mrzFold(va), mrzFold(vb)
	if fa == fb {
		return true
	}
	m, o := fa, fb
	if b == SourceMRZ {
		m, o = fb, fa
	}
	switch field {
	case "id_number":
		// A Vietnamese card's MRZ document number is the last 9 digits of its 12-digit number.
		return digits(m, 9) && digits(o, 12) && strings.HasSuffix(o, m)
	case "full_name":
		// The MRZ's name line has no check digit: letters OCR confuses with others (LE read
		// as IF, a stray thin I, up to two glyphs read twice) must not reject an honest card;
		// another letter must.
		if len(m) >= mrzTruncatedLen && len(o) > len(m) {
			o = o[:len(m)]
		}
		return lookAlikeDistance(m, o) <= 2
	}
	return len(m) >= mrzTruncatedLen && strings.HasPrefix(o, m)
}

// lookAlike returns the letter an OCR-B reader's look-alike group of c stands for: I for I L
// 1 T (T for the serifed I of monospace faces that are not OCR-B), E for E F, O for O Q D 0,
// B for B 8, S for S 5, Z for Z 2, G for G 6, K for K X, V for V Y (a 2024 card's zone read
// TRINH<<YAN for VAN); c itself otherwise.
func lookAlike(c byte) byte {
	switch c {
	case 'Y':
		return 'V'
	case 'L', '1', 'T':
		return 'I'
	case 'F':
		return 'E'
	case 'Q', 'D', '0':
		return 'O'
	case '8':
		return 'B'
	case '5':
		return 'S'
	case '2':
		return 'Z'
	case '6':
		return 'G'
	case 'X':
		return 'K'
	}
	return c
}

// mendName returns the MRZ fields m with the letters of its name taken from the printed
// name where the two differ only by look-alikes (QUACH read OUACH, MAI read MAT): the name
// line carries no check digit, and the printed name, folded to the MRZ's alphabet, is what
// it transliterates. Every word of the MRZ's name (surname, then given names) must pair
// with the printed name's word at its place, of its length, letter by letter of one
// look-alike group; else, or when the name is truncated, m is returned as read.
func mendName(m map[string]string, printed string) map[string]string {
	sur, given := strings.Fields(m["surname"]), strings.Fields(m["given_names"])
	words := strings.Fields(mrzFold(printed))
	if len(sur) == 0 || len(sur)+len(given) != len(words) {
		return m
	}
	read := append(slices.Clone(sur), given...)
	changed := false
	for i, w := range read {
		p := words[i]
		if len(p) != len(w) {
			return m
		}
		for j := range len(w) {
			if w[j] != p[j] && lookAlike(w[j]) != lookAlike(p[j]) {
				return m
			}
		}
		changed = changed || w != p
	}
	if !changed {
		return m
	}
	out := maps.Clone(m)
	out["surname"] = strings.Join(words[:len(sur)], " ")
	out["given_names"] = strings.Join(words[len(sur):], " ")
	if _, ok := m["full_name"]; ok {
		out["full_name"] = strings.Join(words, " ")
	}
	return out
}

// lookAlikeDistance compares two MRZ-folded strings as an OCR-B reader's errors would
// differ: the letters it confuses are made one first (lookAlike), then an edit distance
// counts a glyph inserted or lost beside a look-alike of itself (ILINH read for LINH, UYEFN
// for UYEN) and a U of b read in a as its two stems (IIIONG for LUONG) as 1, and any other
// insertion, deletion or substitution as 3. So each glyph read
// twice scores 1, while a letter more or less (LAN against AN, MAI against MA) or another
// letter scores 3: at most two glyphs read twice (IEFE for LE, a 2024 card's zone) is still
// the same name, a different letter never.
func lookAlikeDistance(a, b string) int {
	fold := func(s string) []byte {
		out := []byte(s)
		for i, c := range out {
			out[i] = lookAlike(c)
		}
		return out
	}
	x, y := fold(a), fold(b)
	// indel is the cost of inserting or deleting s[i]: half a letter for a glyph read twice
	// (beside a look-alike of itself: a stray thin I by an I, "UYEFN" for UYEN, "TFF" for
	// LE), a whole letter otherwise.
	indel := func(s []byte, i int) int {
		if (i > 0 && s[i-1] == s[i]) || (i+1 < len(s) && s[i+1] == s[i]) {
			return 1
		}
		return 3
	}
	// before is the row two glyphs back, for a U of b read as two stems, "II" in a (1).
	before := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := 1; j <= len(y); j++ {
		prev[j] = prev[j-1] + indel(y, j-1)
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = prev[0] + indel(x, i-1)
		for j := 1; j <= len(y); j++ {
			sub := 3
			if x[i-1] == y[j-1] {
				sub = 0
			}
			cur[j] = min(prev[j]+indel(x, i-1), cur[j-1]+indel(y, j-1), prev[j-1]+sub)
			if i >= 2 && x[i-2] == 'I' && x[i-1] == 'I' && y[j-1] == 'U' {
				cur[j] = min(cur[j], before[j-1]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(y)]
}

// mrzTruncatedLen is the length from which an MRZ name may have been cut to fit its field.
const mrzTruncatedLen = 26

// baseLetter maps an upper-case letter with Vietnamese diacritics to its base letter.
func baseLetter(r rune) rune {
	for _, g := range [...]struct {
		base    rune
		letters string
	}{
		{'A', "ÀÁẢÃẠĂẰẮẲẴẶÂẦẤẨẪẬ"}, {'E', "ÈÉẺẼẸÊỀẾỂỄỆ"}, {'I', "ÌÍỈĨỊ"},
		{'O', "ÒÓỎÕỌÔỒỐỔỖỘƠỜỚỞỠỢ"}, {'U', "ÙÚỦŨỤƯỪỨỬỮỰ"}, {'Y', "ỲÝỶỸỴ"}, {'D', "Đ"},
	} {
		if strings.ContainsRune(g.letters, r) {
			return g.base
		}
	}
	return r
}

// mrzFold writes an upper-cased value in the MRZ alphabet: base letters and digits, every
// other character a single space.
func mrzFold(v string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToUpper(v) {
		if r > 0x7f {
			r = baseLetter(r)
		}
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			space = false
			continue
		}
		if !space && b.Len() > 0 {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}
