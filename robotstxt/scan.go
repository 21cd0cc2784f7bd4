package robotstxt

import (
	"math/bits"
	"sync"
)

// scan runs the automaton over path and records, for each literal that
// occurs, where its first occurrence ends and which blocks of the path it
// ends in: next finds any other occurrence by searching one or two of
// them. A block is 64 octets, or for a path longer than 4 KiB a 64th of
// it (blockShift).
//
// The literals that end at one place are a chain, each a suffix of the one
// before. scan records each place for the first of its chain only, the
// deepest literal that ends there (mark), and then hands each such
// literal's records down its chain (spread): a step an octet, and a step
// for each literal and block it ends in at most, however long the chains.
func (m *ruleMatcher) scan(st *matchState, path string) {
	st.scanned = true
	st.shift = blockShift(len(path))
	a := &m.ac
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
				if lo, hi := nodes[s].first, nodes[s+1].first; hi-lo == 1 {
					if nodes[lo].label == c {
						s = lo
						break
					}
				} else if t := a.search(lo, hi, c); t != 0 {
					s = t
					break
				}
				if s = nodes[s].fail; s == 0 {
					s = int32(root[c])
					break
				}
			}
		}
		if nodes[s].out != 0 { // a literal ends here
			m.mark(st, int32(i+1), s)
		}
	}
	m.spread(st)
}

// blockShift returns the log₂ of the octets of a block of a path of n
// octets: 64 octets up to 4 KiB, and a 64th of the path from there, so
// that a path has at most 64 blocks, a bit each in litState.blocks.
func blockShift(n int) uint8 {
	return uint8(max(6, bits.Len(uint(n-1))-6))
}

// mark records that the deepest literal of state s, which is or has a
// literal's node, ends at end. The deepest literals are listed in
// st.deepest in the order they first end.
func (m *ruleMatcher) mark(st *matchState, end, s int32) {
	l := -1 - m.ac.nodes[m.ac.literalNode(s)].out
	ls := &st.lits[l]
	if ls.seen != st.gen {
		m.see(st, l, end)
		st.deepest = append(st.deepest, l)
	}
	ls.blocks |= 1 << (uint32(end-1) >> st.shift)
}

// see starts the litState of literal l, which first ends at end.
func (m *ruleMatcher) see(st *matchState, l, end int32) {
	lit := m.lits[l]
	st.lits[l] = litState{seen: st.gen, firstEnd: end, size: int32(len(lit)), first: lit[0], from: -1}
	if m.litKeys[l] < m.litKeys[l+1] {
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
	for _, l := range st.deepest {
		from := &st.lits[l]
		blocks, first := from.blocks, from.firstEnd
		for l = m.suffixes[l]; l >= 0; l = m.suffixes[l] {
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
	deepest []int32 // the literals that are the deepest to end somewhere (mark)
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
