package evaluation

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/otiai10/gosseract/v2"
	"golang.org/x/text/unicode/norm"
)

// Baseline is the reader anyone could write in an afternoon, which idstream must beat on
// every field: plain Tesseract 5 with Debian's Vietnamese model on the whole picture (no
// document location, no rectification, automatic page segmentation), then simple label
// anchoring on the text lines — the value is what follows a field's label on its line, or
// the next line when the label ends its line; dates, numbers and sex are pulled out with
// regular expressions. It is safe for concurrent use (one Tesseract client, locked).
type Baseline struct {
	mu     sync.Mutex
	client *gosseract.Client
}

// NewBaseline starts the Tesseract client with the "vie" model of tessdataDir ("" for
// Tesseract's default).
func NewBaseline(tessdataDir string) (*Baseline, error) {
	c := gosseract.NewClient()
	if tessdataDir != "" {
		if err := c.SetTessdataPrefix(tessdataDir); err != nil {
			c.Close()
			return nil, fmt.Errorf("evaluation: baseline: %w", err)
		}
	}
	if err := c.SetLanguage("vie"); err != nil {
		c.Close()
		return nil, fmt.Errorf("evaluation: baseline: %w", err)
	}
	return &Baseline{client: c}, nil
}

// Close stops the client.
func (b *Baseline) Close() error { return b.client.Close() }

// Read returns the fields the baseline finds in one encoded picture.
func (b *Baseline) Read(image []byte) (map[string]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.client.SetImageFromBytes(image); err != nil {
		return nil, fmt.Errorf("evaluation: baseline: %w", err)
	}
	text, err := b.client.Text()
	if err != nil {
		return nil, fmt.Errorf("evaluation: baseline: %w", err)
	}
	return baselineFields(text), nil
}

// baselineLabels returns the printed labels of each field, folded (upper case, no
// diacritics).
func baselineLabels() []struct {
	field  string
	labels []string
} {
	return []struct {
		field  string
		labels []string
	}{
		{"id_number", []string{"SO DINH DANH", "SO / NO", "SO/NO", "SO:", "PERSONAL NO", "SO CMND"}},
		{"full_name", []string{"HO VA TEN", "HO, CHU DEM VA TEN", "HO TEN", "FULL NAME", "NAME"}},
		{"date_of_birth", []string{"NGAY SINH", "NGAY, THANG, NAM SINH", "SINH NGAY", "DATE OF BIRTH"}},
		{"sex", []string{"GIOI TINH", "SEX"}},
		{"nationality", []string{"QUOC TICH", "NATIONALITY"}},
		{"place_of_origin", []string{"QUE QUAN", "NGUYEN QUAN", "PLACE OF ORIGIN"}},
		{"place_of_birth", []string{"NOI SINH", "PLACE OF BIRTH"}},
		{"place_of_residence", []string{"NOI THUONG TRU", "NOI CU TRU", "NOI DKHK THUONG TRU", "PLACE OF RESIDENCE"}},
		{"expiry_date", []string{"CO GIA TRI DEN", "DATE OF EXPIRY", "NGAY HET HAN"}},
		{"issue_date", []string{"NGAY, THANG, NAM", "NGAY CAP", "DATE OF ISSUE", "DATE, MONTH, YEAR"}},
		{"passport_number", []string{"SO HO CHIEU", "PASSPORT NO"}},
	}
}

var (
	baselineDate  = regexp.MustCompile(`(\d{1,2})\s*[/.-]\s*(\d{1,2})\s*[/.-]\s*(\d{4})`)
	baselineID12  = regexp.MustCompile(`\d{12}`)
	baselineID9   = regexp.MustCompile(`\d{9}`)
	baselinePassp = regexp.MustCompile(`[A-Z]\d{7}`)
)

// baselineFields anchors values on labels in text.
func baselineFields(text string) map[string]string {
	var lines []string
	for _, l := range strings.Split(norm.NFC.String(text), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	out := map[string]string{}
	for _, f := range baselineLabels() {
		for i, l := range lines {
			folded := baselineFold(l)
			at := -1
			var label string
			for _, lb := range f.labels {
				if j := strings.Index(folded, lb); j >= 0 {
					at, label = j, lb
					break
				}
			}
			if at < 0 {
				continue
			}
			// The value: the rest of the line after the label (and its English subtitle
			// and colon), else the next line.
			rest := runeSuffix(l, folded, at+len(label))
			if k := strings.Index(rest, ":"); k >= 0 {
				rest = rest[k+1:]
			}
			rest = strings.Trim(rest, " :/.-")
			if rest == "" && i+1 < len(lines) {
				rest = lines[i+1]
			}
			if v, ok := baselineValue(f.field, rest); ok {
				out[f.field] = v
				break
			}
		}
	}
	return out
}

// baselineValue normalises a raw value as the public contract writes the field.
func baselineValue(field, raw string) (string, bool) {
	switch field {
	case "id_number":
		if m := baselineID12.FindString(raw); m != "" {
			return m, true
		}
		m := baselineID9.FindString(raw)
		return m, m != ""
	case "passport_number":
		m := baselinePassp.FindString(strings.ToUpper(raw))
		return m, m != ""
	case "date_of_birth", "expiry_date", "issue_date":
		m := baselineDate.FindStringSubmatch(raw)
		if m == nil {
			return "", false
		}
		return fmt.Sprintf("%s-%02s-%02s", m[3], m[2], m[1]), true
	case "sex":
		switch f := baselineFold(raw); {
		case strings.HasPrefix(f, "NAM"), strings.HasPrefix(f, "M"):
			return "M", true
		case strings.HasPrefix(f, "NU"), strings.HasPrefix(f, "F"):
			return "F", true
		}
		return "", false
	case "nationality":
		if strings.Contains(strings.ReplaceAll(baselineFold(raw), " ", ""), "VIETNAM") {
			return "VNM", true
		}
		return strings.TrimSpace(raw), raw != ""
	case "full_name":
		return strings.ToUpper(strings.Join(strings.Fields(raw), " ")), raw != ""
	}
	return strings.Join(strings.Fields(raw), " "), raw != ""
}

// baselineFold upper-cases s and removes its diacritics (Đ → D). It repeats internal/docread's
// folding on purpose: the baseline shares no code with the reader it is compared with.
func baselineFold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToUpper(s)) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'Đ':
			b.WriteRune('D')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// runeSuffix returns the part of line after the first n bytes of its folded form (folding
// keeps one rune per rune of an NFC line, so rune counts line up).
func runeSuffix(line, folded string, n int) string {
	count := len([]rune(folded[:n]))
	r := []rune(line)
	if count > len(r) {
		return ""
	}
	return string(r[count:])
}
