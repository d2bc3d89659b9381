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

// citizenCardDates draws the issue date of a 12-digit card issued from `from` until `until`
// (clamped to the person's 14th birthday and the reference date) and returns it with the
// card's expiry (see chipExpiry). It prefers dates whose card is still valid on the
// reference date, as a person presenting a card for verification would have one: when no
// date of the window gives a valid card, the window is extended to the reference date, and
// only when that fails too is an expired card issued.
func (g *gen) citizenCardDates(from, until time.Time) (issue, expiry time.Time, ok bool) {
	defer func() { g.doc.NoExpiry = !ok }()
	p := g.p
	lo := later(from, p.BirthDate.AddDate(14, 0, 0))
	for _, hi := range []time.Time{earlier(until, p.Ref), p.Ref} {
		if hi.Before(lo) {
			continue
		}
		for i := 0; i < 40; i++ {
			issue = randDate(g.r, lo, hi)
			expiry, ok = chipExpiry(p.BirthDate, issue)
			if !ok || expiry.After(p.Ref) {
				return issue, expiry, ok
			}
		}
	}
	issue = randDate(g.r, earlier(lo, p.Ref), p.Ref)
	expiry, ok = chipExpiry(p.BirthDate, issue)
	return issue, expiry, ok
}
