package robotstxt

import "math/bits"

// automaton finds every occurrence of a set of literals in one pass over a
// text (Aho–Corasick), in 8 bytes a node and few nodes a literal.
//
// Its nodes are prefixes of the literals, the root, the empty one,
// numbered 0, level by level and within a level in sorted order, so that
// the children of a node are consecutive. A literal that shares no more
// than its first octets with any other is cut: its node is the prefix one
// octet longer than what it shares, or than all but its last maxCut
// octets, whichever is longer, and the rest, its cut tail, is compared
// with the text where that node is reached. The prefixes of two cut
// literals are never one a prefix of the other, so at most one cut
// literal's prefix starts at each octet of a text, and comparing costs at
// most maxCut octets an octet of the text.
//
// A node with an output, a literal's node or one whose longest suffix
// with one is a literal's node, has the top bit of its fail set and an
// entry in outs, found by counting the bits of outBits.
type automaton struct {
	root    *[256]uint16 // the children of the root by octet, 0 for none: nodes 1 to 256 at most
	nodes   []acNode     // and one more, whose first ends the last node's children
	outBits []uint64     // bit v set when node v has an entry in outs
	outRank []int32      // per word of outBits, the entries of the words before it
	outs    []acOut
}

// maxCut is the most octets of a literal's cut tail.
const maxCut = 32

// acNode is a node: the index of its first child in the low 24 bits of
// link and the octet that leads to it in the top 8; the index of its
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
)

func (n acNode) first() int32 { return int32(n.link & acFirst) }
func (n acNode) label() byte  { return byte(n.link >> 24) }
func (n acNode) suffix() int32 {
	return int32(n.fail &^ acHasOut)
}

// acOut is the outputs of a node: the nodes, on its chain of suffixes and
// itself first, of the nearest literal whole and of the nearest cut
// literal, 0 for none; and, for a literal's node, its literal in the low
// 24 bits of lit and the octets of its cut tail above, or -1.
type acOut struct {
	whole, cut int32
	lit        int32
}

// literal returns the literal of o's node and its cut tail's octets.
func (o *acOut) literal() (l, tail int32) { return o.lit & acFirst, o.lit >> 24 }

// newAutomaton returns the automaton of lits, which are sorted, distinct
// and not empty.
func newAutomaton(lits []string) automaton {
	// depth[l] is the octets of literal l's node: one more than it shares
	// with its neighbours, which is what it shares with any literal, or
	// all but its last maxCut octets.
	depth := make([]int32, len(lits))
	for l, lit := range lits {
		shared := 0
		if l > 0 {
			shared = commonPrefix(lit, lits[l-1])
		}
		if l+1 < len(lits) {
			shared = max(shared, commonPrefix(lit, lits[l+1]))
		}
		depth[l] = int32(min(len(lit), max(shared+1, len(lit)-maxCut)))
	}
	type span struct{ lo, hi, depth int32 } // the literals whose nodes start with a node
	size := 1                               // the nodes: the root and each prefix's octets past the one before
	for l := range lits {
		shared := 0
		if l > 0 {
			shared = min(int(depth[l]), int(depth[l-1]), commonPrefix(lits[l], lits[l-1]))
		}
		size += int(depth[l]) - shared
	}
	if size >= acFirst {
		panic("robotstxt: literals beyond the automaton's reach")
	}
	spans := append(make([]span, 0, size), span{0, int32(len(lits)), 0})
	nodes := append(make([]acNode, 0, size+1), acNode{})
	lit := make([]int32, 0, size) // per node, the literal it is the node of, or -1
	lit = append(lit, -1)
	for v := 0; v < len(spans); v++ {
		lo, hi, d := spans[v].lo, spans[v].hi, spans[v].depth
		if lo < hi && depth[lo] == d {
			lit[v] = lo
			lo++
		}
		nodes[v].link |= uint32(len(spans))
		for lo < hi {
			c := lits[lo][d]
			j := lo + 1
			for j < hi && lits[j][d] == c {
				j++
			}
			spans = append(spans, span{lo, j, d + 1})
			nodes = append(nodes, acNode{link: uint32(c) << 24})
			lit = append(lit, -1)
			lo = j
		}
	}
	n := int32(len(nodes))
	a := automaton{root: new([256]uint16), nodes: append(nodes, acNode{link: uint32(n)})}
	nodes = a.nodes
	for c := nodes[0].first(); c < nodes[1].first(); c++ {
		a.root[nodes[c].label()] = uint16(c)
	}
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
		if l := lit[v]; l >= 0 && int(depth[l]) == len(lits[l]) {
			whole[v] = v
		} else if l >= 0 {
			cut[v] = v
		}
		if whole[v] != 0 || cut[v] != 0 {
			entries++
		}
	}
	a.outBits = make([]uint64, (n+63)/64)
	a.outRank = make([]int32, len(a.outBits))
	a.outs = make([]acOut, 0, entries)
	for v := int32(1); v < n; v++ {
		if v&63 == 0 {
			a.outRank[v>>6] = int32(len(a.outs))
		}
		if whole[v] != 0 || cut[v] != 0 {
			a.outBits[v>>6] |= 1 << (v & 63)
			nodes[v].fail |= acHasOut
			o := acOut{whole: whole[v], cut: cut[v], lit: -1}
			if l := lit[v]; l >= 0 {
				o.lit = l | (int32(len(lits[l]))-depth[l])<<24
			}
			a.outs = append(a.outs, o)
		}
	}
	return a
}

// commonPrefix returns the octets that a and b start with alike.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// out returns the outputs of node v, which has some.
func (a *automaton) out(v int32) *acOut {
	w := v >> 6
	return &a.outs[a.outRank[w]+int32(bits.OnesCount64(a.outBits[w]&(1<<(v&63)-1)))]
}

// child returns v's child by the octet c, or 0.
func (a *automaton) child(v int32, c byte) int32 {
	if v == 0 {
		return int32(a.root[c])
	}
	return a.search(a.nodes[v].first(), a.nodes[v+1].first(), c)
}

// search returns the node of nodes[lo:hi], siblings in order of label,
// whose label is c, or 0.
func (a *automaton) search(lo, hi int32, c byte) int32 {
	if lo == hi || c < a.nodes[lo].label() || c > a.nodes[hi-1].label() {
		return 0
	}
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
