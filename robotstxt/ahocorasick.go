package robotstxt

import "slices"

// automaton finds every occurrence of a set of literals in one pass over a
// text (Aho–Corasick), in 8 bytes a node and few nodes a literal.
//
// Its nodes are prefixes of the literals, the root, the empty one,
// numbered 0, level by level and within a level in sorted order, so that
// the children of a node are consecutive. A literal that shares no more
// than its first octets with any other is cut: its node is its prefix of
// one octet more than it shares, of minKept octets, or of all but its last
// maxCut octets, whichever is longest, unless that prefix is periodic
// (shortPeriod) or the whole literal, or, in an automaton of manyCut
// literals or fewer, all but its last octet. The rest, its cut tail, is compared
// with the text where that node is reached: the literal's last 4 octets
// first, as one number, and the others if those are alike. The prefixes
// of two cut literals are never one a prefix of the other, so at most one
// cut literal's prefix starts at each octet of a text, and comparing costs
// at most maxCut octets an octet of the text; a prefix that is not
// periodic recurs at most every half of its length.
//
// A node with an output, a literal's node or one with a suffix that is,
// has the top bit of its fail set and an entry, its rank in outs and 1:
// its literals in outLit, 4 bytes. The nearest nodes of a whole literal
// and of a cut one on the chain of a node's proper suffixes, for the nodes
// that have them, are in links, by their rank in linked; but when most
// whole literals have another as a suffix, that one is in suffixes, 4
// bytes a literal, read without a rank.
type automaton struct {
	// The children of the root by octet, 0 for none: nodes 1 to 255 at
	// most, since a literal in normal form starts with fewer octets.
	root  *[256]uint8
	nodes []acNode // and one more, whose first ends the last node's children
	outs  bitRank  // the nodes with an entry
	// outLit holds, per entry, the literal of a literal's node, or for a
	// node of cut literals the first in the low 24 bits and how many
	// above, or -1; entry 0 is no node's.
	outLit []int32
	// suffixes holds, per literal whole, the nearest other literal whole
	// that is a suffix of it, or -1, when most have one; else nil, and
	// links hold them.
	suffixes []int32
	linked   bitRank // the entries with links
	links    []acLink
	*acRare  // what an automaton of few literals seldom needs
}

// acRare is the part of an automaton that its cut literals and its nodes
// of many children need.
type acRare struct {
	cut     bitRank  // the literals cut, each found by its rank in last4 and cutTail
	last4   []uint32 // per literal cut: its last 4 octets (lastWord)
	cutTail []uint8  // and the octets of its cut tail
	// The nodes of more than wideKids children have the acWide bit of
	// fail set and, by their rank in wided, their children's octets as
	// bits in wide.
	wided bitRank
	wide  [][4]uint64
}

// maxCut is the most octets of a literal's cut tail; minKept the fewest
// of a cut literal's prefix; cutGroup the most literals cut at one node;
// manyCut the most literals of an automaton that cuts no literal to save
// a single node, which would take less than the arrays of what is cut.
const (
	manyCut  = 64
	maxCut   = 32
	minKept  = 3
	cutGroup = 4
)

// acNode is a node: the index of its first child in the top 24 bits of
// link and the octet that leads to it in the low 8; the index of its
// longest proper suffix that is a node in the low 31 bits of fail, whose
// top bit tells that the node has outputs. A part has no more than
// maxWildOctets octets of literals, and so fewer than 1<<24 nodes.
type acNode struct {
	link uint32
	fail uint32
}

const (
	acFirst  = 1<<24 - 1
	acHasOut = 1 << 31
	acWide   = 1 << 30 // the node has more than wideKids children
	wideKids = 16
)

func (n acNode) first() int32  { return int32(n.link >> 8) }
func (n acNode) label() byte   { return byte(n.link) }
func (n acNode) suffix() int32 { return int32(n.fail & acFirst) }

// acLink is the entries of the nearest nodes, on the chain of a node's
// proper suffixes, of a literal whole and of a cut literal, 0 for none.
type acLink struct {
	whole, cut int32
}

// link returns the links of entry e, zero if it has none.
func (a *automaton) link(e int32) acLink {
	if a.linked.has(e) {
		return a.links[a.linked.rank(e)]
	}
	return acLink{}
}

// chains returns the entries of the nearest nodes, of e's node itself
// first, of a literal whole and of a cut one.
func (a *automaton) chains(e int32) (whole, cut int32) {
	lit := a.outLit[e]
	if lit >= 0 && lit>>24 == 0 { // a whole literal's node, whose chain is in suffixes
		if a.acRare != nil && a.cutTail != nil {
			cut = a.link(e).cut
		}
		return e, cut
	}
	k := a.link(e)
	if lit >= 0 {
		return k.whole, e
	}
	return k.whole, k.cut
}

// newAutomaton returns the automaton of lits, which are sorted, distinct
// and not empty, but of those of at most skip octets (grams.go) and the
// words that word tells, when it is not nil (words.go), which it leaves
// out: it numbers literals by their index in lits.
func newAutomaton(lits []string, skip int, word []bool) *automaton {
	// A span of literals in sorted order that start with a node's octets
	// and are cut there, or whose nodes follow it.
	type span struct{ lo, hi, depth int32 }
	spans := append(make([]span, 0, len(lits)), span{0, int32(len(lits)), 0})
	nodes := append(make([]acNode, 0, len(lits)+1), acNode{})
	lit := append(make([]int32, 0, len(lits)), -1) // per node, its literal or cut literals, as outLit holds them, or -1
	var cutTail []uint8                            // per literal, the octets of its cut tail, for now
	for v := 0; v < len(spans); v++ {
		lo, hi, d := spans[v].lo, spans[v].hi, spans[v].depth
		nodes[v].link |= uint32(len(spans)) << 8
		if cuttable(lits[lo:hi], d, len(lits) > manyCut) {
			if cutTail == nil {
				cutTail = make([]uint8, len(lits))
			}
			for l := lo; l < hi; l++ {
				cutTail[l] = uint8(int32(len(lits[l])) - d)
			}
			lit[v] = lo | (hi-lo)<<24
			continue
		}
		if lo < hi && int32(len(lits[lo])) == d {
			lit[v] = lo
			lo++
		}
		for lo < hi {
			c := lits[lo][d]
			j := lo + 1
			for j < hi && lits[j][d] == c {
				j++
			}
			from, to := lo, j
			if len(lits[from]) <= skip { // left out: it is d+1 octets, and so first
				from++
			}
			if d == 1 && word != nil && word[j-1] { // a pair of words, which are left out: only a literal of the pair alone stays
				to = from
				if to < j && len(lits[to]) == 2 {
					to++
				}
			}
			if from < to {
				spans = append(spans, span{from, to, d + 1})
				nodes = append(nodes, acNode{link: uint32(c)})
				lit = append(lit, -1)
			}
			lo = j
		}
		if len(nodes) >= acFirst {
			panic("robotstxt: literals beyond the automaton's reach")
		}
	}
	nodes = append(slices.Grow([]acNode(nil), len(nodes)+1), nodes...) // copied to its size, and one more
	nodes = append(nodes, acNode{link: uint32(len(nodes)) << 8})
	n := int32(len(nodes) - 1)
	a := &automaton{root: new([256]uint8), nodes: nodes}
	if nodes[1].first() > 256 {
		panic("robotstxt: literals not in normal form")
	}
	for c := nodes[0].first(); c < nodes[1].first(); c++ {
		a.root[nodes[c].label()] = uint8(c)
	}
	rare := new(acRare)
	// whole and cut per node, then the entries of the nodes with either.
	whole, cut := make([]int32, n), make([]int32, n)
	entries := 0
	for v := int32(1); v < n; v++ { // a node's suffixes come before it
		for c := nodes[v].first(); c < nodes[v+1].first(); c++ {
			for f := nodes[v].suffix(); ; f = nodes[f].suffix() {
				if t := a.child(f, nodes[c].label()); t != 0 {
					nodes[c].fail = uint32(t)
					break
				}
				if f == 0 {
					break
				}
			}
		}
		f := nodes[v].suffix()
		whole[v], cut[v] = whole[f], cut[f]
		if l := lit[v]; l >= 0 && l>>24 == 0 {
			whole[v] = v
		} else if l >= 0 {
			cut[v] = v
		}
		if whole[v] != 0 || cut[v] != 0 {
			entries++
		}
	}
	wide := 0
	for v := int32(1); v < n; v++ {
		if nodes[v+1].first()-nodes[v].first() > wideKids {
			wide++
		}
	}
	if wide > 0 {
		rare.wided = newBitRank(int(n))
		rare.wide = make([][4]uint64, 0, wide)
		for v := int32(1); v < n; v++ {
			if lo, hi := nodes[v].first(), nodes[v+1].first(); hi-lo > wideKids {
				var w [4]uint64
				for c := lo; c < hi; c++ {
					w[nodes[c].label()>>6] |= 1 << (nodes[c].label() & 63)
				}
				rare.wided.add(v)
				nodes[v].fail |= acWide
				rare.wide = append(rare.wide, w)
			}
		}
		rare.wided.count()
	}
	if cutTail != nil {
		rare.cut = newBitRank(len(lits))
		cuts := 0
		for l, size := range cutTail {
			if size > 0 {
				rare.cut.add(int32(l))
				cuts++
			}
		}
		rare.cut.count()
		rare.last4 = make([]uint32, 0, cuts)
		rare.cutTail = make([]uint8, 0, cuts)
		for l, size := range cutTail {
			if size > 0 {
				rare.last4 = append(rare.last4, lastWord(lits[l], int32(len(lits[l]))))
				rare.cutTail = append(rare.cutTail, size)
			}
		}
	}
	if cutTail != nil || wide > 0 {
		a.acRare = rare
	}
	a.outs = newBitRank(int(n))
	a.outLit = make([]int32, 1, entries+1)
	a.linked = newBitRank(entries + 1)
	ks := make([]acLink, 1, entries+1) // per entry, its links
	chained := 0                       // literals whole with a suffix that is one
	entry := lit                       // lit[v] is read before entry[v] is written: v's entry
	entry[0] = 0
	for v := int32(1); v < n; v++ {
		l := lit[v]
		entry[v] = 0
		if whole[v] == 0 && cut[v] == 0 {
			continue
		}
		a.outs.add(v)
		nodes[v].fail |= acHasOut
		entry[v] = int32(len(a.outLit))
		a.outLit = append(a.outLit, l)
		f := nodes[v].suffix()
		k := acLink{whole: entry[whole[f]], cut: entry[cut[f]]}
		ks = append(ks, k)
		if l >= 0 && l>>24 == 0 && k.whole != 0 {
			chained++
		}
	}
	// When many literals have chains, spread walks them by literal, in
	// suffixes, 4 bytes a literal; else by their links.
	if 2*chained > len(lits) {
		a.suffixes = make([]int32, len(lits))
		for i := range a.suffixes {
			a.suffixes[i] = -1
		}
	}
	var links []acLink
	for e, k := range ks {
		l := a.outLit[e]
		wholeLit := l >= 0 && l>>24 == 0
		if wholeLit && k.whole != 0 && a.suffixes != nil {
			a.suffixes[l] = a.outLit[k.whole]
			k.whole = 0 // there
		}
		if k != (acLink{}) {
			a.linked.add(int32(e))
			links = append(links, k)
		}
	}
	a.links = slices.Clone(links)
	a.outs.count()
	a.linked.count()
	return a
}

// cuttable reports whether the literals lits, which start with the same
// d octets and with no other literal's, are cut there, as the doc of
// automaton says.
func cuttable(lits []string, d int32, many bool) bool {
	if len(lits) > cutGroup || d < minKept || int32(len(lits[0])) == d || shortPeriod(lits[0][:minKept]) {
		return false
	}
	for _, l := range lits {
		if tail := int32(len(l)) - d; tail > maxCut || tail < 2 && !many {
			return false
		}
	}
	return true
}

// shortPeriod reports whether s repeats with a period of at most half
// its octets, minKept/2: a prefix that does might recur in a text at
// every octet, and one that does not less often.
func shortPeriod(s string) bool {
	for p := 1; p <= minKept/2; p++ {
		if s[p:] == s[:len(s)-p] {
			return true
		}
	}
	return false
}

// lastWord returns the 4 octets of s that end at end, as one number.
func lastWord(s string, end int32) uint32 {
	s = s[end-4 : end]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// entry returns the entry of node v, which has outputs.
func (a *automaton) entry(v int32) int32 { return a.outs.rank(v) + 1 }

// child returns v's child by the octet c, or 0.
func (a *automaton) child(v int32, c byte) int32 {
	if v == 0 {
		return int32(a.root[c])
	}
	lo, hi := a.nodes[v].first(), a.nodes[v+1].first()
	if lo == hi || c < a.nodes[lo].label() || c > a.nodes[hi-1].label() {
		return 0
	}
	return a.within(a.nodes[v], v, lo, hi, c)
}

// wideKid returns the child by the octet c of node v, which has more than
// wideKids children from nodes[lo], or 0.
func (a *automaton) wideKid(v, lo int32, c byte) int32 {
	if ok, before := octetRank(&a.wide[a.wided.rank(v)], c); ok {
		return lo + before
	}
	return 0
}

// within returns the child by the octet c of node v, n, whose children
// are nodes[lo:hi] and have labels from below c to above it, or 0: the
// work of child once its first test is passed, apart from scan's loop.
func (a *automaton) within(n acNode, v, lo, hi int32, c byte) int32 {
	if n.fail&acWide == 0 {
		return a.searchWithin(lo, hi, c)
	}
	return a.wideKid(v, lo, c)
}

// searchWithin returns the node of nodes[lo:hi], siblings in order of
// label, whose label is c, or 0; c is within their labels.
func (a *automaton) searchWithin(lo, hi int32, c byte) int32 {
	for hi-lo > 4 {
		mid := int32(uint32(lo+hi) >> 1)
		if a.nodes[mid].label() <= c {
			lo = mid
		} else {
			hi = mid
		}
	}
	for ; lo < hi; lo++ {
		if a.nodes[lo].label() == c {
			return lo
		}
	}
	return 0
}
