package robotstxt

import "math/bits"

// grams finds the literals of one and two octets of a matcher that has
// more than manyGrams of them, in place of the automaton: by a bit for
// each, in tables of their octets, and 4 bytes a literal. The automaton
// would take a node and an entry for each, and links for those of two
// octets that end with one of one, several times the 2 or 3 octets that
// such a literal takes in the file. scanGrams reads each octet of the
// path once, and records the literals that end there.
type grams struct {
	ones    [4]uint64   // bit c set when literal c exists
	firsts  [4]uint64   // bit c set when a literal of two octets begins with c
	seconds [][4]uint64 // per bit of firsts, in order: bit d set when literal cd exists
	base    []int32     // per bit of firsts, in order: the bits of seconds before it
	lits    []int32     // the literals of one octet, then of two, in order of their octets
}

// manyGrams is the most literals of one and two octets that a matcher
// leaves to its automaton.
const manyGrams = 64

// newGrams returns the grams of the literals of lits, which are sorted and
// distinct, of at most two octets.
func newGrams(lits []string) *grams {
	g := new(grams)
	ones, twos := 0, 0
	for _, lit := range lits {
		switch len(lit) {
		case 1:
			ones++
		case 2:
			g.firsts[lit[0]>>6] |= 1 << (lit[0] & 63)
			twos++
		}
	}
	firsts := 0
	for _, w := range g.firsts {
		firsts += bits.OnesCount64(w)
	}
	g.seconds = make([][4]uint64, 0, firsts)
	g.base = make([]int32, 0, firsts)
	g.lits = make([]int32, ones+twos)
	one, two := 0, ones // where the next literal of one octet, and of two, goes in g.lits
	for l, lit := range lits {
		switch len(lit) {
		case 1:
			g.ones[lit[0]>>6] |= 1 << (lit[0] & 63)
			g.lits[one] = int32(l)
			one++
		case 2:
			if len(g.seconds) == 0 || lits[g.lits[two-1]][0] != lit[0] { // sorted: a first octet's literals follow one another
				g.seconds = append(g.seconds, [4]uint64{})
				g.base = append(g.base, int32(two))
			}
			s := &g.seconds[len(g.seconds)-1]
			s[lit[1]>>6] |= 1 << (lit[1] & 63)
			g.lits[two] = int32(l)
			two++
		}
	}
	return g
}

// scanGrams records the literals of g that occur in path, as scan does.
func (m *ruleMatcher) scanGrams(st *matchState, path string) {
	g := m.grams
	for i := 0; i < len(path); i++ {
		c := path[i]
		if ok, r := octetRank(&g.ones, c); ok {
			m.markAt(st, g.lits[r], int32(i+1))
		}
		if i == 0 {
			continue
		}
		if ok, r := octetRank(&g.firsts, path[i-1]); ok {
			if ok, s := octetRank(&g.seconds[r], c); ok {
				m.markAt(st, g.lits[g.base[r]+s], int32(i+1))
			}
		}
	}
}
