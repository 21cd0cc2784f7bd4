package robotstxt

import (
	"math/bits"
	"sync"
)

// scan records, for each literal that occurs in path, where its first
// occurrence ends and which blocks of the path it ends in: next finds any
// other occurrence by searching one or two of them. A block is 64 octets,
// or for a path longer than 4 KiB a 64th of it (blockShift). The literals
// of grams and words are recorded at each place they end (scanGrams,
// scanWords); the others by running the automaton over path, or when a
// matcher has none of these, by searching the path for each (scanFew).
//
// The whole literals of the automaton that end at one place are a chain,
// each a suffix of the one before. scan records each place for the first
// of its chain only, the deepest whole literal that ends there (record),
// and then hands each such literal's records down its chain (spread): a
// step an octet, and a step for each literal and block it ends in at most,
// however long the chains. A literal that the automaton cuts is recorded
// where its prefix's node is reached and its tail follows.
func (m *ruleMatcher) scan(st *matchState, path string) {
	st.scanned = true
	st.shift = blockShift(len(path))
	a := m.ac
	switch {
	case m.words != nil:
		if m.grams != nil {
			m.scanGrams(st, path)
		}
		m.scanWords(st, path)
		if a == nil {
			return
		}
	case m.grams != nil:
		m.scanGrams(st, path)
		if a == nil {
			return
		}
	case a == nil:
		m.scanFew(st, path)
		return
	}
	root, nodes := a.root, a.nodes
	s := int32(0)
	for i := 0; i < len(path); i++ {
		c := path[i]
		if s == 0 {
			for root[c] == 0 { // no literal starts here: skip
				if i++; i == len(path) {
					m.spread(st)
					return
				}
				c = path[i]
			}
			s = int32(root[c])
		} else { // the automaton's step by hand: most nodes within a literal have one child
			for {
				n := nodes[s]
				if lo, hi := n.first(), nodes[s+1].first(); hi-lo == 1 {
					if nodes[lo].label() == c {
						s = lo
						break
					}
				} else if lo < hi && c >= nodes[lo].label() && c <= nodes[hi-1].label() { // search's first test, inlined
					if t := a.within(n, s, lo, hi, c); t != 0 {
						s = t
						break
					}
				}
				if s = n.suffix(); s == 0 {
					s = int32(root[c])
					break
				}
			}
		}
		if nodes[s].fail&acHasOut != 0 { // a literal ends here, or a cut one's prefix
			m.record(st, path, int32(i+1), s)
		}
	}
	m.spread(st)
}

// fewLits is the most literals that a matcher finds without an automaton,
// by searching the path for each in turn (scanFew): few enough that the
// searches cost about what a pass of an automaton would, which would take
// more memory than the group's rules.
const fewLits = 4

// scanFew does the work of scan for a matcher without an automaton: for
// each literal, it searches the path for its first occurrence, and then
// for the first that ends in a later block than the one before, 64
// searches at most.
func (m *ruleMatcher) scanFew(st *matchState, path string) {
	for l := range int32(m.lits.len()) {
		lit := m.lits.lit(l)
		at := index(path, lit)
		if at < 0 {
			continue
		}
		m.see(st, l, int32(at+len(lit)))
		ls := &st.lits[l]
		for {
			block := uint32(at+len(lit)-1) >> st.shift
			ls.blocks |= 1 << block
			from := max(at+1, int(block+1)<<st.shift+1-len(lit)) // where an occurrence that ends in a later block starts, or after
			if from+len(lit) > len(path) {
				break
			}
			j := index(path[from:], lit)
			if j < 0 {
				break
			}
			at = from + j
		}
	}
}

// blockShift returns the log₂ of the octets of a block of a path of n
// octets: 64 octets up to 4 KiB, and a 64th of the path from there, so
// that a path has at most 64 blocks, a bit each in litState.blocks.
func blockShift(n int) uint8 {
	return uint8(max(6, bits.Len(uint(n-1))-6))
}

// record records the literals that end at end, where scan is in state s,
// which has outputs, as scan says; and those cut whose prefixes end
// there, when their cut tails follow in path.
func (m *ruleMatcher) record(st *matchState, path string, end, s int32) {
	a := m.ac
	whole, cut := a.chains(a.entry(s))
	block := uint32(end-1) >> st.shift
	if whole != 0 {
		m.markDeepest(st, whole, block, end)
	}
	for cut != 0 {
		lits := a.outLit[cut]
		lo := lits & acFirst
		c := a.cut.rank(lo) // the literals cut at a node are cut one after the other
		for l, to := lo, lo+lits>>24; l < to; l, c = l+1, c+1 {
			size := int32(a.cutTail[c])
			if e := end + size; e <= int32(len(path)) && lastWord(path, e) == a.last4[c] &&
				(size <= 4 || cutRest(path, m.lits.lit(l), end, e, size)) {
				m.markAt(st, l, e)
			}
		}
		cut = a.link(cut).cut
	}
}

// cutRest reports whether the octets of path before e-4, from end, are
// those of lit's cut tail of size octets before its last 4.
func cutRest(path, lit string, end, e, size int32) bool {
	return path[end:e-4] == lit[int32(len(lit))-size:len(lit)-4]
}

// markAt records that literal l, which is cut or in grams, ends at end.
// Those literals are recorded out of order, so that its first end is the
// least recorded.
func (m *ruleMatcher) markAt(st *matchState, l, end int32) {
	ls := &st.lits[l]
	if ls.seen != st.gen {
		m.see(st, l, end)
	}
	ls.firstEnd = min(ls.firstEnd, end)
	ls.blocks |= 1 << (uint32(end-1) >> st.shift)
}

// markDeepest records that the whole literal of entry e, the deepest of
// its chain to end there, ends at end, in block. The entries of the
// deepest literals are listed in st.deepest in the order they first end.
func (m *ruleMatcher) markDeepest(st *matchState, e int32, block uint32, end int32) {
	l := m.ac.outLit[e]
	ls := &st.lits[l]
	if ls.seen != st.gen {
		m.see(st, l, end)
		st.deepest = append(st.deepest, e)
	}
	ls.blocks |= 1 << block
}

// see starts the litState of literal l, which first ends at end.
func (m *ruleMatcher) see(st *matchState, l, end int32) {
	size, first := m.lits.head(l)
	st.lits[l] = litState{seen: st.gen, firstEnd: end, size: size, first: first, from: -1}
	if m.keys(l) {
		st.found = append(st.found, l)
	}
}

// spread gives each literal of st.deepest's chains the blocks and the
// first end of the literals before it: a literal ends wherever one that
// it is a suffix of does. The deepest literals are taken in the order
// they first end, so a walk down a chain stops at a literal that ends in
// every block it brings and no later: the literals past it have both
// already, or will have when it is taken itself. So each step past the
// first adds a block to a literal's, at most 64 a literal.
func (m *ruleMatcher) spread(st *matchState) {
	a := m.ac
	for _, e := range st.deepest {
		l := a.outLit[e]
		from := &st.lits[l]
		blocks, first := from.blocks, from.firstEnd
		for {
			if a.suffixes != nil {
				if l = a.suffixes[l]; l < 0 {
					break
				}
			} else if e = a.link(e).whole; e != 0 {
				l = a.outLit[e]
			} else {
				break
			}
			ls := &st.lits[l]
			if ls.seen != st.gen {
				m.see(st, l, first)
			} else if ls.blocks|blocks == ls.blocks && ls.firstEnd <= first {
				break
			}
			ls.blocks |= blocks
			ls.firstEnd = min(ls.firstEnd, first)
		}
	}
}

// matchState is what one decision needs besides the matcher; decisions
// borrow it from matchStates, so that they allocate nothing.
type matchState struct {
	gen     uint32
	scanned bool  // scan has run
	shift   uint8 // a block of the path is 1<<shift octets
	lits    []litState
	found   []int32 // the literals that occur and key patterns
	deepest []int32 // the entries of the automaton of the literals that are the deepest to end somewhere (markDeepest)
	// ends holds bitmaps of the path, a bit an octet, set where a literal
	// ends: next builds one for a literal it has searched much for
	// (litState.ends).
	ends []uint64
	// tables holds tables of the path, an entry an octet i, of where a
	// literal's first occurrence that ends at or after i ends, plus 1, or 0
	// if none: wildMatches makes one for a literal it has looked up in its
	// bitmap of ends many times (litState.table).
	tables []uint16
}

// litState is what a decision knows of one literal: the fields hold when
// seen is the decision's gen.
type litState struct {
	seen     uint32
	firstEnd int32  // where its first occurrence ends
	size     int32  // its octets
	first    byte   // its first octet
	blocks   uint64 // bit b set when it ends in block b of the path
	searched int32  // the octets next has searched for it
	ends     int32  // 1 + where its bitmap of ends begins in matchState.ends; 0 if none
	lookups  int32  // the times its next end was looked up in its bitmap
	table    int32  // 1 + where its table of next ends begins in matchState.tables; 0 if none
	// next's last search: none of its occurrences starts in [from, at),
	// and one starts at at, or none after from if at is -1; from is -1
	// before any search.
	from, at int32
}

var matchStates = sync.Pool{New: func() any { return new(matchState) }}

// getMatchState returns a matchState for a matcher of lits literals.
func getMatchState(lits int) *matchState {
	st := matchStates.Get().(*matchState)
	if len(st.lits) < lits {
		st.lits = make([]litState, lits)
		st.gen = 0
	}
	st.gen++
	if st.gen == 0 { // wrapped: forget every old entry
		clear(st.lits)
		st.gen = 1
	}
	st.scanned = false
	st.found = st.found[:0]
	st.deepest = st.deepest[:0]
	st.ends = st.ends[:0]
	st.tables = st.tables[:0]
	return st
}
