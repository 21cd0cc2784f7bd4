package robotstxt

import (
	"slices"
	"strings"
)

// words finds, in place of the automaton, the literals of 3 to maxWord
// octets that begin with a pair of octets whose literals of 3 octets or
// more are all such, and at most fewWords begin with each octet that
// follows the pair, when a matcher has more than manyWords of them: in 5
// bytes a pair and 1 a literal, and 32 bytes a first octet of more than
// wideKids pairs. The automaton would take a node or two for each literal
// that shares no more than its pair with others, and an entry for each,
// several times the 4 or 5 octets that such a literal takes in the file.
// scanWords reads the path once: at each octet it looks up the pair that
// begins there, by a bit of its first octet and a search or a bit of its
// second, then searches the third octets of the pair's literals for the
// next octet, and compares at most fewWords literals of at most maxWord
// octets with the path.
//
// The literals of a matcher are numbered in sorted order, so those that
// begin with one pair follow one another, and within them those that
// begin with one triple.
type words struct {
	firsts  [4]uint64 // bit c set when a pair begins with c
	base    []int32   // per bit of firsts, in order, and one more: the index in pairs of its first pair
	seconds []byte    // per pair, in order: its second octet
	// The first octets of more than wideKids pairs have their bit in
	// wided and, by its rank, their pairs' second octets as bits in wide.
	wided [4]uint64
	wide  [][4]uint64
	// pairs holds per pair its first literal<<wordsShift | its literals
	// less one: fewer than 1<<21 and 256*fewWords.
	pairs  []uint32
	thirds []byte // per literal: the third octet of a word
}

// fewWords is the most literals of a triple of words; maxWord the most
// octets of a word; manyWords the most words that a matcher leaves to its
// automaton; wordsShift places a pair's first literal in words.pairs. A
// part has at most maxWildOctets octets of literals, and so fewer than
// 1<<(32-wordsShift): maxWildOctets/3 of 3 octets or more, and 256+1<<16
// shorter ones.
const (
	fewWords   = 8
	maxWord    = maxShort
	manyWords  = 64
	wordsShift = 11
)

// span returns the literals of pair k: lits[from:to].
func (w *words) span(k int32) (from, to int32) {
	p := w.pairs[k]
	return int32(p >> wordsShift), int32(p>>wordsShift + p&(1<<wordsShift-1) + 1)
}

// pairWords returns, for lits, which are sorted and distinct, whether
// each literal is a word, as the doc of words says, and how many are.
func pairWords(lits []string) (word []bool, n int) {
	word = make([]bool, len(lits))
	for lo := 0; lo < len(lits); {
		if len(lits[lo]) < 3 {
			lo++
			continue
		}
		hi, ok, run := lo+1, len(lits[lo]) <= maxWord, 1 // run: the literals so far of the last triple
		for ; hi < len(lits) && strings.HasPrefix(lits[hi], lits[lo][:2]); hi++ {
			if run++; lits[hi][2] != lits[hi-1][2] {
				run = 1
			}
			ok = ok && len(lits[hi]) <= maxWord && run <= fewWords
		}
		if ok {
			for l := lo; l < hi; l++ {
				word[l] = true
			}
			n += hi - lo
		}
		lo = hi
	}
	return word, n
}

// newWords returns the words of lits, which are sorted and distinct, that
// word tells.
func newWords(lits []string, word []bool) *words {
	w := &words{thirds: make([]byte, len(lits))}
	for l, lit := range lits {
		if !word[l] {
			continue
		}
		w.thirds[l] = lit[2]
		if len(w.pairs) > 0 && strings.HasPrefix(lit, lits[w.pairs[len(w.pairs)-1]>>wordsShift][:2]) {
			w.pairs[len(w.pairs)-1]++ // at most 256*fewWords
			continue
		}
		if w.firsts[lit[0]>>6]>>(lit[0]&63)&1 == 0 {
			w.firsts[lit[0]>>6] |= 1 << (lit[0] & 63)
			w.base = append(w.base, int32(len(w.pairs)))
		}
		if l >= 1<<(32-wordsShift) {
			panic("robotstxt: literals beyond the reach of words")
		}
		w.seconds = append(w.seconds, lit[1])
		w.pairs = append(w.pairs, uint32(l)<<wordsShift)
	}
	w.base = append(w.base, int32(len(w.pairs)))
	for r := range len(w.base) - 1 {
		if w.base[r+1]-w.base[r] <= wideKids {
			continue
		}
		var set [4]uint64
		for _, d := range w.seconds[w.base[r]:w.base[r+1]] {
			set[d>>6] |= 1 << (d & 63)
		}
		c := lits[w.pairs[w.base[r]]>>wordsShift][0]
		w.wided[c>>6] |= 1 << (c & 63)
		w.wide = append(w.wide, set)
	}
	w.wide = slices.Clone(w.wide)
	w.base = slices.Clone(w.base) // at their size
	w.seconds = slices.Clone(w.seconds)
	w.pairs = slices.Clone(w.pairs)
	return w
}

// pair returns the index in pairs of the pair of octets c and d, or -1.
func (w *words) pair(c, d byte) int32 {
	ok, r := octetRank(&w.firsts, c)
	if !ok {
		return -1
	}
	lo := w.base[r]
	if ok, x := octetRank(&w.wided, c); ok {
		if ok, before := octetRank(&w.wide[x], d); ok {
			return lo + before
		}
		return -1
	}
	s := w.seconds[lo:w.base[r+1]]
	at := 0 // the last of s at or before d, by a binary search
	for n := len(s); n > 1; n -= n >> 1 {
		if mid := at + n>>1; s[mid] <= d {
			at = mid
		}
	}
	if s[at] != d {
		return -1
	}
	return lo + int32(at)
}

// scanWords records the words that occur in path, as scan does.
func (m *ruleMatcher) scanWords(st *matchState, path string) {
	w := m.words
	for i := 0; i+3 <= len(path); i++ {
		k := w.pair(path[i], path[i+1])
		if k < 0 {
			continue
		}
		lo, to := w.span(k)
		c := path[i+2]
		thirds := w.thirds[lo:to]
		at := 0 // the first of thirds at or after c, or the one before, by a binary search
		for n := len(thirds); n > 1; n -= n >> 1 {
			if mid := at + n>>1; thirds[mid-1] < c {
				at = mid
			}
		}
		for l := lo + int32(at); l < to && w.thirds[l] <= c; l++ {
			if w.thirds[l] < c {
				continue
			}
			if lit := m.lits.lit(l); strings.HasPrefix(path[i:], lit) {
				m.markAt(st, l, int32(i+len(lit)))
			}
		}
	}
}
