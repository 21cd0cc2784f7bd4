package robotstxt

import (
	"math/bits"
	"strings"
)

// match returns the rule that decides path, normalised by
// normalizeTarget: the best of the rules that match it, with its index in
// the rules given to compileRules; noRule when none matches, and so path
// is allowed.
func (m *ruleMatcher) match(path string) ruleRef {
	best := noRule
	deepest := m.heads.deepest(path)
	for h := deepest; h >= 0; h = m.heads.parent[h] {
		if m.plain[h].beats(best) {
			best = m.plain[h]
		}
		if len(m.heads.keys[h]) == len(path) && m.exact[h].beats(best) {
			best = m.exact[h]
		}
	}
	if m.maxWild.beats(best) {
		best = m.matchWild(path, deepest, best)
	}
	return best
}

// matchWild returns the better of best and the best pattern with a '*'
// that matches path. deepest is the longest head that begins path, or -1.
func (m *ruleMatcher) matchWild(path string, deepest int32, best ruleRef) ruleRef {
	st := getMatchState(len(m.lits))
	for h := deepest; h >= 0; h = m.heads.parent[h] {
		best = m.try(st, path, m.headKeys[h], m.headKeys[h+1], best, true)
	}
	if filedUnderLits := int(m.litKeys[0]) < len(m.wild); filedUnderLits && m.maxWild.beats(best) {
		if !st.scanned {
			m.scan(st, path)
		}
		for _, l := range st.found {
			if m.litTop[l] >= best.rank { // an equal rank may come first in the group
				best = m.try(st, path, m.litKeys[l], m.litKeys[l+1], best, false)
			}
		}
	}
	matchStates.Put(st)
	return best
}

// try returns the better of best and the first of the patterns wild[from:to],
// which are best first, that matches path. headed tells that their heads
// begin path.
func (m *ruleMatcher) try(st *matchState, path string, from, to int32, best ruleRef, headed bool) ruleRef {
	for i := from; i < to; i++ {
		w := &m.wild[i]
		if !w.beats(best) {
			break
		}
		if m.wildMatches(st, path, i, headed) {
			return w.ruleRef
		}
	}
	return best
}

// wildMatches reports whether wild[i] matches path. headed tells that its
// head begins path. It places each piece at its first occurrence after
// the one before, which leaves the most path for those that follow.
func (m *ruleMatcher) wildMatches(st *matchState, path string, i int32, headed bool) bool {
	w := &m.wild[i]
	n := int32(len(path))
	head := m.heads.keys[w.head]
	if n < w.minLen || !headed && !strings.HasPrefix(path, head) {
		return false
	}
	end := n // where the pieces must end
	if w.tail >= 0 {
		tail := m.lits[w.tail]
		if !strings.HasSuffix(path, tail) {
			return false
		}
		end -= int32(len(tail))
	}
	pieces := m.pieces[w.from:w.to]
	if len(pieces) == 0 {
		return true
	}
	if !st.scanned {
		m.scan(st, path)
	}
	gen := st.gen
	if first, last := &st.lits[pieces[0]], &st.lits[pieces[len(pieces)-1]]; first.seen != gen || last.seen != gen ||
		last.blocks>>bits.TrailingZeros64(first.blocks) == 0 {
		return false // the last piece does not end after the first can
	}
	pos := int32(len(head))
	for _, l := range pieces {
		ls := &st.lits[l]
		if ls.seen != gen { // l does not occur
			return false
		}
		least := pos + ls.size // the least end of an occurrence at or after pos
		switch {
		case ls.firstEnd >= least: // l does not occur before pos
			pos = ls.firstEnd
		case least <= n && path[pos] == ls.first && (ls.size == 1 || path[pos+1:least] == m.lits[l][1:]): // at pos
			pos = least
		default:
			at := m.next(st, path, l, pos)
			if at < 0 {
				return false
			}
			pos = at + ls.size
		}
		if pos > end {
			return false
		}
	}
	return true
}

// next returns where the first occurrence of literal l that starts after
// pos starts, or -1 if there is none; l occurs in path, but neither at pos
// nor first at or after it, as wildMatches has seen. scan recorded the
// blocks of path that l ends in: the first occurrence after pos is in the
// rest of pos's block, which next searches, or else in the next block
// that l ends in, which it searches from its start.
func (m *ruleMatcher) next(st *matchState, path string, l, pos int32) int32 {
	ls := &st.lits[l]
	lit, size := m.lits[l], ls.size
	n := int32(len(path))
	least := pos + size // the least end of an occurrence at or after pos
	block := uint32(least-1) >> st.shift
	if least > n || ls.blocks>>block == 0 { // past the last block that l ends in
		return -1
	}
	if ls.blocks>>block&1 == 1 {
		if j := index(path[pos:min(n, int32(block+1)<<st.shift)], lit); j >= 0 {
			return pos + int32(j)
		}
	}
	later := ls.blocks >> block >> 1
	if later == 0 {
		return -1
	}
	block += 1 + uint32(bits.TrailingZeros64(later))
	from := max(pos, int32(block)<<st.shift+1-size)                              // an occurrence that ends in block starts there or after
	return from + int32(index(path[from:min(n, int32(block+1)<<st.shift)], lit)) // l ends in block: found
}

// index returns the index of the first lit in s, or -1, as strings.Index
// does, looking at s's first octets before it calls it.
func index(s, lit string) int {
	switch {
	case len(lit) == 1:
		return strings.IndexByte(s, lit[0])
	case len(s) >= len(lit) && s[:len(lit)] == lit:
		return 0
	}
	return strings.Index(s, lit)
}
