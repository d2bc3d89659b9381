package ocr

import (
	"slices"
	"strings"

	"github.com/idstream/idstream/internal/docread"
	"github.com/idstream/idstream/internal/mrz"
)

// td3Field is a field a passport's zone (TD3, second line) repeats from the page: where it
// sits in the line and how the page's value is written there.
type td3Field struct {
	name       string // the page's field
	from, to   int    // the field's characters in the zone's second line, check digit excluded
	zoneFormat func(string) (string, bool)
}

// td3Fields are the fields of a passport's zone the page prints too.
var td3Fields = []td3Field{
	{"passport_number", 0, 9, func(v string) (string, bool) { return padded(v, 9) }},
	{"date_of_birth", 13, 19, yymmdd},
	{"expiry_date", 21, 27, yymmdd},
	{"id_number", 28, 42, func(v string) (string, bool) { return padded(v, 14) }},
}

// mendZone mends a passport's zone that fails its check digits with the page's reading of the
// fields both print (passport number, birth and expiry dates, personal number): the fewest of
// the zone's fields are replaced by the page's values that make every check digit of the
// line, as the zone prints them, hold (a field's own digit and the composite digit: two
// independent readings agree with two checks). The zone comes back unchanged when none does,
// or when it is not a passport's.
func mendZone(zone *mrz.MRZ, fields []docread.Field) *mrz.MRZ {
	if zone == nil || zone.Valid || zone.Format != mrz.FormatTD3 || len(zone.Lines) != 2 || len(zone.Lines[1]) != 44 {
		return zone
	}
	type swap struct {
		from, to int
		text     string
	}
	var swaps []swap
	for _, tf := range td3Fields {
		f, ok := field(fields, tf.name)
		if !ok || !f.Valid {
			continue
		}
		text, ok := tf.zoneFormat(f.Value)
		if ok && text != zone.Lines[1][tf.from:tf.to] {
			swaps = append(swaps, swap{tf.from, tf.to, text})
		}
	}
	for k := 1; k <= len(swaps); k++ {
		for set := 1; set < 1<<len(swaps); set++ {
			if bitCount(set) != k {
				continue
			}
			line := []byte(zone.Lines[1])
			for i, s := range swaps {
				if set&(1<<i) != 0 {
					copy(line[s.from:s.to], s.text)
				}
			}
			if m, err := mrz.Parse([]string{zone.Lines[0], string(line)}); err == nil && m.Valid {
				return m
			}
		}
	}
	return zone
}

// uncrossDates swaps a passport page's issue and expiry dates when they were read crossed:
// the issue date read is the expiry its valid zone prints and the expiry read is not (the
// issue label matched with its neighbour's value: an unseen passport of seed 64209 read
// issued 2032-11-01, expiring 2022-11-01). Without a valid zone nothing tells them apart, and
// they stay as read.
func uncrossDates(zone *mrz.MRZ, fields []docread.Field) {
	if zone == nil || !zone.Valid {
		return
	}
	issue := slices.IndexFunc(fields, func(f docread.Field) bool { return f.Name == "issue_date" && f.Valid })
	expiry := slices.IndexFunc(fields, func(f docread.Field) bool { return f.Name == "expiry_date" && f.Valid })
	if issue < 0 || expiry < 0 {
		return
	}
	i, _ := yymmdd(fields[issue].Value)
	e, _ := yymmdd(fields[expiry].Value)
	if i == zone.ExpiryDate && e != zone.ExpiryDate {
		fields[issue].Value, fields[expiry].Value = fields[expiry].Value, fields[issue].Value
	}
}

// bitCount returns the number of bits set in n.
func bitCount(n int) int {
	c := 0
	for ; n > 0; n &= n - 1 {
		c++
	}
	return c
}

// padded writes a code as a zone does: in capitals, filled with '<' to n characters; false
// when it is longer than n or has other than letters and digits.
func padded(v string, n int) (string, bool) {
	v = strings.ToUpper(v)
	if len(v) == 0 || len(v) > n || strings.IndexFunc(v, func(r rune) bool { return (r < 'A' || r > 'Z') && (r < '0' || r > '9') }) >= 0 {
		return "", false
	}
	return v + strings.Repeat("<", n-len(v)), true
}

// yymmdd writes an ISO date (YYYY-MM-DD) as a zone does; false for anything else.
func yymmdd(v string) (string, bool) {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return "", false
	}
	s := v[2:4] + v[5:7] + v[8:10]
	if !isDigits(s, 6) {
		return "", false
	}
	return s, true
}
