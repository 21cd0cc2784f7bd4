package robotstxt

import "strings"

// litSet is the distinct literals of a matcher, its patterns' pieces and
// tails, numbered in sorted order. A literal of at most maxShort octets is
// kept in one string with the others, in 4 bytes and its octets, or in 4
// bytes alone when it begins the next literal; a longer one shares its
// pattern's text, in 20 bytes. A literal of a few octets would otherwise
// take several times the octets that it takes in the file.
type litSet struct {
	at    []uint32 // per literal: its offset in short<<4 | its octets, or its index in long<<4
	short string
	long  []string
}

// maxShort is the most octets of a literal kept in litSet.short.
const maxShort = 12

// newLitSet returns the set of lits, which are sorted and distinct.
func newLitSet(lits []string) litSet {
	s := litSet{at: make([]uint32, len(lits))}
	octets, long := 0, 0
	for i, l := range lits {
		switch {
		case len(l) > maxShort:
			long++
		case !begins(lits, i):
			octets += len(l)
		}
	}
	var short strings.Builder
	short.Grow(octets)
	s.long = make([]string, 0, long)
	for i := len(lits) - 1; i >= 0; i-- { // a literal that begins the next one takes its offset
		l := lits[i]
		switch {
		case len(l) > maxShort:
			s.at[i] = uint32(len(s.long)) << 4
			s.long = append(s.long, l)
		case begins(lits, i):
			s.at[i] = s.at[i+1]&^maxShortMask | uint32(len(l))
		default:
			s.at[i] = uint32(short.Len())<<4 | uint32(len(l))
			short.WriteString(l)
		}
	}
	s.short = short.String()
	return s
}

// maxShortMask masks the octets of a short literal in litSet.at.
const maxShortMask = 1<<4 - 1

// begins reports whether lits[i] begins lits[i+1], which is short, and so
// is kept at its offset.
func begins(lits []string, i int) bool {
	return i+1 < len(lits) && len(lits[i+1]) <= maxShort && strings.HasPrefix(lits[i+1], lits[i])
}

// lit returns literal l.
func (s *litSet) lit(l int32) string {
	v := s.at[l]
	if n := v & maxShortMask; n != 0 {
		return s.short[v>>4 : v>>4+n]
	}
	return s.long[v>>4]
}

// head returns the octets of literal l and its first octet.
func (s *litSet) head(l int32) (int32, byte) {
	lit := s.lit(l)
	return int32(len(lit)), lit[0]
}

// len returns the number of literals.
func (s *litSet) len() int { return len(s.at) }
