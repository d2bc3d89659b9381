package docgen

import "time"

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func iso(t time.Time) string { return t.Format(time.DateOnly) }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// citizenCardDates draws the issue date of a 12-digit card first issued from `from` until
// `until` (both clamped to the person's 14th birthday and the reference date) and returns it
// with the card's expiry (see chipExpiry). It prefers dates whose card is still valid on the
// reference date, as a person presenting a card for verification would have; when no such
// date exists in the window, the latest date of the window is used.
func (g *gen) citizenCardDates(from, until time.Time) (issue, expiry time.Time, ok bool) {
	p := g.p
	lo := later(from, p.BirthDate.AddDate(14, 0, 0))
	hi := earlier(until, p.Ref)
	if hi.Before(lo) {
		hi = p.Ref
		lo = earlier(lo, hi)
	}
	for i := 0; i < 30; i++ {
		issue = randDate(g.r, lo, hi)
		expiry, ok = chipExpiry(p.BirthDate, issue)
		if !ok || expiry.After(p.Ref) {
			return issue, expiry, ok
		}
	}
	issue = hi
	expiry, ok = chipExpiry(p.BirthDate, issue)
	return issue, expiry, ok
}
