package robotstxt

import (
	"math/bits"
	"slices"
)

// automaton finds every occurrence of a set of literals in one pass over a
// text (Aho–Corasick), in 8 bytes a node and few nodes a literal.
//
// Its nodes are prefixes of the literals, the root, the empty one,
// numbered 0, level by level and within a level in sorted order, so that
// the children of a node are consecutive. A literal that shares no more
// than its first octets with any other is cut: its node is its prefix of
// one octet more than it shares, of minKept octets, or of all but its last
// maxCut octets, whichever is longest, unless that prefix is periodic
// (periodic) or the whole literal. The rest, its cut tail, is compared
// with the text where that node is reached: the literal's last 4 octets
// first, as one number, and the others if those are alike. The prefixes
// of two cut literals are never one a prefix of the other, so at most one
// cut literal's prefix starts at each octet of a text, and comparing costs
// at most maxCut octets an octet of the text; a prefix that is not
// periodic recurs at most every half of its length.
//
// A node with an output, a literal's node or one with a suffix that is,
// has the top bit of its fail set and an entry, found by counting the
// bits of outBits: its literals in outLit, and if it has a proper suffix
// with outputs, the nearest ones in links, found by counting the bits of
// linkBits. Most literals' nodes have none, and take 4 bytes of outputs.
type automaton struct {
	// The children of the root by octet, 0 for none: nodes 1 to 255 at
	// most, since a literal in normal form starts with fewer octets.
	root    *[256]uint8
	nodes   []acNode // and one more, whose first ends the last node's children
	outBits []uint64 // bit v set when node v has an entry
	outRank []int32  // per word of outBits, the nodes' entries of the words before it
	// outLit holds, per entry, the literal of a literal's node, or for a
	// node of cut literals the first in the low 24 bits and how many
	// above, or -1; entry 0 is no node's.
	outLit   []int32
	// linkBits has bit e set when entry e has links, and linkRank, per
	// word of linkBits, the links of the words before it; or both are nil
	// when most entries have links, and links holds each entry's, and
	// suffixes, per whole literal, the literal of its whole link, or -1:
	// so that scan's walks down long chains read one array (spread).
	linkBits []uint64
	linkRank []int32
	links    []acLink
	suffixes []int32
	*acRare  // what an automaton of few literals seldom needs
}

// acRare is the part of an automaton that its cut literals and its nodes
// of many children need.
type acRare struct {
	last4   []uint32 // per literal, if any is cut: its last 4 octets (lastWord)
	cutTail []uint8  // and the octets of its cut tail
	// The nodes of more than wideKids children have the acWide bit of
	// fail set and, found as outs are, their children's octets as bits.
	wideBits []uint64
	wideRank []int32
	wide     [][4]uint64
}

// maxCut is the most octets of a literal's cut tail; minKept the fewest
// of a cut literal's prefix; cutGroup the most literals cut at one node.
const (
	maxCut   = 32
	minKept  = 4
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
	if a.linkBits == nil { // an entry each
		return a.links[e]
	}
	w := e >> 6
	if b := a.linkBits[w]; b>>(e&63)&1 != 0 {
		return a.links[a.linkRank[w]+int32(bits.OnesCount64(b&(1<<(e&63)-1)))]
	}
	return acLink{}
}

// chains returns the entries of the nearest nodes, of e's node itself
// first, of a literal whole and of a cut one.
func (a *automaton) chains(e int32) (whole, cut int32) {
	k := a.link(e)
	whole, cut = k.whole, k.cut
	switch lit := a.outLit[e]; {
	case lit < 0:
	case lit>>24 == 0:
		whole = e
	default:
		cut = e
	}
	return whole, cut
}

// newAutomaton returns the automaton of lits, which are sorted, distinct
// and not empty, but of those of at most skip octets, which it leaves out
// (grams.go): it numbers literals by their index in lits.
func newAutomaton(lits []string, skip int) *automaton {
	// A span of literals in sorted order that start with a node's octets
	// and are cut there, or whose nodes follow it.
	type span struct{ lo, hi, depth int32 }
	spans := append(make([]span, 0, len(lits)), span{0, int32(len(lits)), 0})
	nodes := append(make([]acNode, 0, len(lits)+1), acNode{})
	lit := append(make([]int32, 0, len(lits)), -1) // per node, its literal or cut literals, as acOut.lit, or -1
	var cutTail []uint8                            // per literal, the octets of its cut tail
	for v := 0; v < len(spans); v++ {
		lo, hi, d := spans[v].lo, spans[v].hi, spans[v].depth
		nodes[v].link |= uint32(len(spans)) << 8
		if cuttable(lits[lo:hi], d) {
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
			from := lo
			if len(lits[from]) <= skip { // left out: it is d+1 octets, and so first
				from++
			}
			if from < j {
				spans = append(spans, span{from, j, d + 1})
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
	rare := &acRare{cutTail: cutTail}
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
		rare.wideBits = make([]uint64, (n+63)/64)
		rare.wideRank = make([]int32, len(rare.wideBits))
		rare.wide = make([][4]uint64, 0, wide)
		for v := int32(1); v < n; v++ {
			if v&63 == 0 {
				rare.wideRank[v>>6] = int32(len(rare.wide))
			}
			if lo, hi := nodes[v].first(), nodes[v+1].first(); hi-lo > wideKids {
				var w [4]uint64
				for c := lo; c < hi; c++ {
					w[nodes[c].label()>>6] |= 1 << (nodes[c].label() & 63)
				}
				rare.wideBits[v>>6] |= 1 << (v & 63)
				nodes[v].fail |= acWide
				rare.wide = append(rare.wide, w)
			}
		}
	}
	if cutTail != nil {
		rare.last4 = make([]uint32, len(lits))
		for l, lit := range lits {
			if cutTail[l] > 0 {
				rare.last4[l] = lastWord(lit, int32(len(lit)))
			}
		}
	}
	if cutTail != nil || wide > 0 {
		a.acRare = rare
	}
	a.outBits = make([]uint64, (n+63)/64)
	a.outRank = make([]int32, len(a.outBits))
	a.outLit = make([]int32, 1, entries+1)
	a.linkBits = make([]uint64, (entries+64)/64)
	a.linkRank = make([]int32, len(a.linkBits))
	var links []acLink
	entry := lit // lit[v] is read before entry[v] is written: v's entry
	entry[0] = 0
	for v := int32(1); v < n; v++ {
		if v&63 == 0 {
			a.outRank[v>>6] = int32(len(a.outLit)) - 1
		}
		l := lit[v]
		entry[v] = 0
		if whole[v] != 0 || cut[v] != 0 {
			a.outBits[v>>6] |= 1 << (v & 63)
			nodes[v].fail |= acHasOut
			e := int32(len(a.outLit))
			entry[v] = e
			a.outLit = append(a.outLit, l)
			f := nodes[v].suffix()
			if k := (acLink{whole: entry[whole[f]], cut: entry[cut[f]]}); k != (acLink{}) {
				a.linkBits[e>>6] |= 1 << (e & 63)
				links = append(links, k)
			}
		}
	}
	if 2*len(links) > len(a.outLit) { // most entries have links: keep them by entry, without a lookup
		a.links = make([]acLink, len(a.outLit))
		for e, k := 0, 0; e < len(a.outLit); e++ {
			if a.linkBits[e>>6]>>(e&63)&1 != 0 {
				a.links[e] = links[k]
				k++
			}
		}
		a.linkBits, a.linkRank = nil, nil
		a.suffixes = make([]int32, len(lits))
		for e, l := range a.outLit {
			if l >= 0 && l>>24 == 0 {
				a.suffixes[l] = -1
				if w := a.links[e].whole; w != 0 {
					a.suffixes[l] = a.outLit[w]
				}
			}
		}
		return a
	}
	a.links = slices.Clone(links)
	for w := 1; w < len(a.linkBits); w++ {
		a.linkRank[w] = a.linkRank[w-1] + int32(bits.OnesCount64(a.linkBits[w-1]))
	}
	return a
}

// cuttable reports whether the literals lits, which start with the same
// d octets and with no other literal's, are cut there, as the doc of
// automaton says.
func cuttable(lits []string, d int32) bool {
	if len(lits) > cutGroup || d < minKept || int32(len(lits[0])) == d || shortPeriod(lits[0][:minKept]) {
		return false
	}
	for _, l := range lits {
		if int32(len(l))-d > maxCut {
			return false
		}
	}
	return true
}

// shortPeriod reports whether s repeats with a period of fewer than
// minKept/2 octets: a prefix that does might recur in a text at every
// octet, and one that does not at most every minKept/2 octets, however
// long it is.
func shortPeriod(s string) bool {
	for p := 1; p < minKept/2; p++ {
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

// entry returns the entry in outs of node v, which has outputs.
func (a *automaton) entry(v int32) int32 {
	w := v >> 6
	return a.outRank[w] + 1 + int32(bits.OnesCount64(a.outBits[w]&(1<<(v&63)-1)))
}

// child returns v's child by the octet c, or 0.
func (a *automaton) child(v int32, c byte) int32 {
	if v == 0 {
		return int32(a.root[c])
	}
	return a.kid(v, a.nodes[v].first(), a.nodes[v+1].first(), c)
}

// kid returns the child by the octet c of node v, whose children are
// nodes[lo:hi], or 0.
func (a *automaton) kid(v, lo, hi int32, c byte) int32 {
	if a.nodes[v].fail&acWide == 0 {
		return a.search(lo, hi, c)
	}
	return a.wideKid(v, lo, c)
}

// wideKid returns the child by the octet c of node v, which has more than
// wideKids children from nodes[lo], or 0.
func (a *automaton) wideKid(v, lo int32, c byte) int32 {
	w := &a.wide[a.wideRank[v>>6]+int32(bits.OnesCount64(a.wideBits[v>>6]&(1<<(v&63)-1)))]
	i := c >> 6
	if w[i]>>(c&63)&1 == 0 {
		return 0
	}
	before := bits.OnesCount64(w[i] & (1<<(c&63) - 1))
	for j := range i {
		before += bits.OnesCount64(w[j])
	}
	return lo + int32(before)
}

// search returns the node of nodes[lo:hi], siblings in order of label,
// whose label is c, or 0.
func (a *automaton) search(lo, hi int32, c byte) int32 {
	if lo == hi || c < a.nodes[lo].label() || c > a.nodes[hi-1].label() {
		return 0
	}
	return a.searchWithin(lo, hi, c)
}

// within returns the child by the octet c of node v, n, whose children
// are nodes[lo:hi] and have labels from below c to above it, or 0: the
// work of kid once its first test is passed, apart from scan's loop.
func (a *automaton) within(n acNode, v, lo, hi int32, c byte) int32 {
	if n.fail&acWide == 0 {
		return a.searchWithin(lo, hi, c)
	}
	return a.wideKid(v, lo, c)
}

// searchWithin does the work of search once c is known to be within the
// labels of nodes[lo:hi]: apart, so that search's first test is inlined.
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
