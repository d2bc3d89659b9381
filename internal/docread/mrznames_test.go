package docread

import (
	"strings"
	"testing"

	"github.com/idstream/idstream/internal/mrz"
)

// TestZoneNameSyllables: a word of a Vietnamese zone's name line that is no syllable is the
// one name word a look-alike letter away ("TTEN" → TIEN, "NGHTA" → NGHIA, "IE" → LE), or two
// ("DTFU" → DIEU), or that with a glyph read twice ("IEFE" → LE, the line kept at its
// length); syllables stay (an extra glyph that makes one, "THIT", too, and "IA", which LA
// and TA are as near), names in the lexicon or not, and so do another state's zones.
func TestZoneNameSyllables(t *testing.T) {
	pad := func(s string, n int) string { return s + strings.Repeat("<", n-len(s)) }
	td3 := func(name string) []string {
		return []string{pad("P<VNM"+name, 44), "B0979916<6VNM6304054M3606160040063617248<<92"}
	}
	td1 := func(state, name string) []string {
		return []string{"ID" + state + "2069715619031206971561<<<", "0607133M3107139VNM<<<<<<<<<<<9", pad(name, 30)}
	}
	for _, c := range []struct {
		lines []string
		want  string // the name line after the fix
	}{
		{td3("VO<<TTEN<NGHTA"), pad("P<VNMVO<<TIEN<NGHIA", 44)},
		{td3("VO<<TIEN<TIEN"), pad("P<VNMVO<<TIEN<TIEN", 44)},
		{td3("VO<<XUYEN<TIEN"), pad("P<VNMVO<<XUYEN<TIEN", 44)},
		{td1("VNM", "IE<<HUU<TOAN"), pad("LE<<HUU<TOAN", 30)},
		{td1("VNM", "IEFE<<HUU<TOAN"), pad("LE<<HUU<TOAN", 30)},
		{td1("VNM", "IA<<DTFU<LAN"), pad("IA<<DIEU<LAN", 30)},
		{td1("VNM", "LA<<THIT<PHUONG"), pad("LA<<THIT<PHUONG", 30)},
		{td1("FRA", "IE<<HUU<TOAN"), pad("IE<<HUU<TOAN", 30)},
	} {
		m, err := mrz.Parse(c.lines)
		if err != nil {
			t.Fatalf("%q: %v", c.lines, err)
		}
		fixed := fixZoneNames(m)
		line := fixed.Lines[0]
		if fixed.Format == mrz.FormatTD1 {
			line = fixed.Lines[2]
		}
		if line != c.want || fixed.Valid != m.Valid {
			t.Errorf("%q: name line %q (valid %v), want %q (valid %v)", c.lines, line, fixed.Valid, c.want, m.Valid)
		}
	}
}
