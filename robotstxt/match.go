package robotstxt

import (
	"math/bits"
	"slices"
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
	st := getMatchState(m.lits.len())
	for h := deepest; h >= 0; h = m.heads.parent[h] {
		best = m.try(st, path, m.headKeys[h], m.headKeys[h+1], best, true)
	}
	if filedUnderLits := len(m.litKeys) > 1; filedUnderLits && m.maxWild.beats(best) {
		if !st.scanned {
			m.scan(st, path)
		}
		for _, l := range st.found {
			k := m.keyOf(l)
			if m.wild[m.litKeys[k]].rank >= best.rank { // the best filed under l; an equal rank may come first in the group
				best = m.try(st, path, m.litKeys[k], m.litKeys[k+1], best, false)
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
		tail := m.lits.lit(w.tail)
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
		case least > end:
			return false
		case ls.table != 0: // the table of next ends
			if pos = int32(st.tables[ls.table-1+least-1]); pos == 0 {
				return false
			}
		case ls.ends != 0: // next found its ends: look the next one up
			if ls.lookups++; ls.lookups >= n && len(st.tables)+int(n) <= maxTables {
				m.tabulate(st, l, n)
			}
			e, ends := least-1, st.ends[ls.ends-1:]
			if x := ends[e>>6]>>(e&63) | ends[e>>6+1]<<(63-e&63)<<1; x != 0 { // in the 64 octets from e, as nextEnd
				pos = least + int32(bits.TrailingZeros64(x))
			} else if e = nextEnd(ends, ls.blocks, st.shift, e); e >= 0 {
				pos = e + 1
			} else {
				return false
			}
		case path[pos] == ls.first && (ls.size == 1 || path[pos+1:least] == m.lits.lit(l)[1:]): // at pos
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
// that l ends in, which it searches from its start. Once it has searched
// for l as many octets as there are in the blocks that l ends in but two
// (a search's most), it searches those blocks for l's every end instead
// (findEnds), and the occurrences of l that follow are looked up there:
// so a decision searches at most twice the blocks of a literal and two
// more for it, however many patterns place it. A literal of more than 64 octets is always searched
// for: a search of it costs little more than the octets of the piece, and
// finding its every end could cost its octets an end. A search that would
// start where the last one for l found nothing before its find is not
// made again.
func (m *ruleMatcher) next(st *matchState, path string, l, pos int32) int32 {
	ls := &st.lits[l]
	size := ls.size
	n := int32(len(path))
	least := pos + size // the least end of an occurrence at or after pos
	block := uint32(least-1) >> st.shift
	if least > n || ls.blocks>>block == 0 { // past the last block that l ends in
		return -1
	}
	if ls.ends == 0 && ls.searched >= int32(bits.OnesCount64(ls.blocks)-2)<<st.shift && size <= 64 && len(st.ends)+endsWords(n) <= maxEndsWords {
		m.findEnds(st, path, l)
	}
	if ls.ends != 0 {
		if e := nextEnd(st.ends[ls.ends-1:], ls.blocks, st.shift, least-1); e >= 0 {
			return e + 1 - size
		}
		return -1
	}
	if ls.from >= 0 && ls.from <= pos && (pos <= ls.at || ls.at < 0) { // as the last search found
		return ls.at
	}
	at := m.search(st, path, l, pos, block)
	ls.from, ls.at = pos, at
	return at
}

// search searches path for the first occurrence of literal l that starts
// at or after pos, whose first end can be in block only, as next says.
func (m *ruleMatcher) search(st *matchState, path string, l, pos int32, block uint32) int32 {
	ls := &st.lits[l]
	lit, size := m.lits.lit(l), ls.size
	n := int32(len(path))
	if ls.blocks>>block&1 == 1 {
		stop := min(n, int32(block+1)<<st.shift)
		if j := int32(index(path[pos:stop], lit)); j >= 0 {
			ls.searched += searchCost + j + size
			return pos + j
		}
		ls.searched += searchCost + stop - pos
	}
	later := ls.blocks >> block >> 1
	if later == 0 {
		return -1
	}
	block += 1 + uint32(bits.TrailingZeros64(later))
	from := max(pos, int32(block)<<st.shift+1-size) // an occurrence that ends in block starts there or after
	stop := min(n, int32(block+1)<<st.shift)
	j := int32(index(path[from:stop], lit)) // l ends in block: found
	ls.searched += searchCost + j + size
	return from + j
}

// searchCost is what a search costs besides the octets it reads, in
// octets: next counts it in litState.searched.
const searchCost = 64

// maxEndsWords bounds matchState.ends: 512 KiB, the bitmaps of 1,985
// literals on a path of 2 KiB, 127 on one of 32 KiB. Past it, next
// searches.
const maxEndsWords = 64 << 10

// endsWords returns the words of a bitmap of ends of a path of n octets,
// with a last word that stays empty, so that nextEnd reads two words
// wherever it starts.
func endsWords(n int32) int { return int(n+63)>>6 + 1 }

// findEnds finds the ends of literal l in path and makes its bitmap of
// ends, bit e set when an occurrence of l ends at octet e: it searches
// each block that l ends in for the occurrences that end there. Once two
// occurrences overlap, l has a period, its least, and l occurs a period
// after an occurrence for as long as the path repeats itself a period
// back, and nowhere between: so a run of overlapping occurrences costs a
// comparison an octet.
func (m *ruleMatcher) findEnds(st *matchState, path string, l int32) {
	ls := &st.lits[l]
	lit, size := m.lits.lit(l), ls.size
	n := int32(len(path))
	at := len(st.ends)
	st.ends = slices.Grow(st.ends, endsWords(n))[:at+endsWords(n)]
	ends := st.ends[at:]
	clear(ends)
	from, last, period := int32(0), int32(-1), int32(0)
	for blocks := ls.blocks; blocks != 0; blocks &= blocks - 1 {
		block := int32(bits.TrailingZeros64(blocks))
		from = max(from, block<<st.shift+1-size)
		stop := min(n, (block+1)<<st.shift)
		for from+size <= stop {
			if period > 0 && last+period >= from {
				// As long as the path repeats itself a period back, l
				// occurs a period after each occurrence.
				i := last + size
				for i < stop && path[i] == path[i-period] {
					i++
				}
				if last+period+size <= i {
					for j := last + period; j+size <= i; j += period {
						e := j + size - 1
						ends[e>>6] |= 1 << (e & 63)
						last = j
					}
					from = last + 1
					continue
				}
			}
			k := index(path[from:stop], lit)
			if k < 0 {
				break
			}
			j := from + int32(k)
			if period == 0 && last >= 0 && j-last < size { // they overlap
				period = leastPeriod(lit)
			}
			e := j + size - 1
			ends[e>>6] |= 1 << (e & 63)
			last, from = j, j+1
		}
	}
	ls.ends = int32(at) + 1
}

// leastPeriod returns the least p > 0 such that lit[i] == lit[i+p] for
// every i: lit is lit[:p] repeated, cut.
func leastPeriod(lit string) int32 {
	p := 1
	for p < len(lit) && lit[p:] != lit[:len(lit)-p] {
		p++
	}
	return int32(p)
}

// maxTables bounds matchState.tables: 64 KiB, the tables of 16 literals
// on a path of 2 KiB, one on a path of 32 KiB; few enough to stay in a
// cache near the processor.
const maxTables = 32 << 10

// tabulate makes the table of next ends of literal l, whose bitmap of
// ends findEnds made, on a path of n octets: a lookup there is one load,
// where a lookup in the bitmap is several that depend on each other.
func (m *ruleMatcher) tabulate(st *matchState, l, n int32) {
	ls := &st.lits[l]
	ends := st.ends[ls.ends-1:]
	at := len(st.tables)
	st.tables = slices.Grow(st.tables, int(n))[:at+int(n)]
	table := st.tables[at:]
	next := uint16(0)
	for i := n - 1; i >= 0; i-- {
		if ends[i>>6]>>(i&63)&1 == 1 {
			next = uint16(i + 1)
		}
		table[i] = next
	}
	ls.table = int32(at) + 1
}

// nextEnd returns the first end at or after e in ends, a bitmap of ends
// that are all in the blocks of blocks, or -1 if there is none; a block
// of 1<<shift octets is 1<<shift>>6 words of ends.
func nextEnd(ends []uint64, blocks uint64, shift uint8, e int32) int32 {
	w, s := e>>6, uint(e&63)
	if x := ends[w]>>s | ends[w+1]<<(63-s)<<1; x != 0 { // the 64 octets from e
		return e + int32(bits.TrailingZeros64(x))
	}
	if x := ends[w+1] >> s; x != 0 { // the rest of the next word
		return (w+1)<<6 + int32(s) + int32(bits.TrailingZeros64(x))
	}
	bs := shift - 6 // a block is 1<<bs words
	for w += 2; w < int32(len(ends)); w++ {
		if w&(1<<bs-1) == 0 { // a block's start: go to the next block with ends
			block := uint32(w) >> bs
			if block >= 64 || blocks>>block == 0 {
				return -1
			}
			w = int32(block+uint32(bits.TrailingZeros64(blocks>>block))) << bs
		}
		if ends[w] != 0 {
			return w<<6 + int32(bits.TrailingZeros64(ends[w]))
		}
	}
	return -1
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
