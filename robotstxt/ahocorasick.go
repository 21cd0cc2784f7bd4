package robotstxt

import "math/bits"

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
// has the top bit of its fail set and an entry in outs, found by counting
// the bits of outBits.
type automaton struct {
	root    *[256]uint16 // the children of the root by octet, 0 for none: nodes 1 to 256 at most
	nodes   []acNode     // and one more, whose first ends the last node's children
	outBits []uint64     // bit v set when node v has an entry in outs
	outRank []int32      // per word of outBits, the nodes' entries of the words before it
	outs    []acOut
	last4   []uint32 // per literal, if any is cut: its last 4 octets (lastWord)
	// The nodes of more than wideKids children have the acWide bit of
	// fail set and, found as outs are, their children's octets as bits.
	wideBits []uint64
	wideRank []int32
	wide     [][4]uint64
}

// maxCut is the most octets of a literal's cut tail; minKept the fewest
// of a cut literal's prefix.
const (
	maxCut  = 32
	minKept = 8
)

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
	acWide   = 1 << 30 // the node has more than wideKids children
	wideKids = 16
)

func (n acNode) first() int32  { return int32(n.link & acFirst) }
func (n acNode) label() byte   { return byte(n.link >> 24) }
func (n acNode) suffix() int32 { return int32(n.fail & acFirst) }

// acOut is the outputs of a node, an entry of outs: the entries, on the
// chain of its proper suffixes, of the nearest node of a literal whole and
// of the nearest node of a cut literal, 0 for none (outs[0] is no node's);
// and, for a literal's node, its literal in the low 24 bits of lit and the
// octets of its cut tail above, or -1.
type acOut struct {
	whole, cut int32
	lit        int32
}

// chains returns the entries of the nearest nodes, of e's node itself
// first, of a literal whole and of a cut one.
func (a *automaton) chains(e int32) (whole, cut int32) {
	o := &a.outs[e]
	whole, cut = o.whole, o.cut
	switch {
	case o.lit < 0:
	case o.lit>>24 == 0:
		whole = e
	default:
		cut = e
	}
	return whole, cut
}

// newAutomaton returns the automaton of lits, which are sorted, distinct
// and not empty.
func newAutomaton(lits []string) *automaton {
	// depth[l] is the octets of literal l's node: one more than it shares
	// with its neighbours, which is what it shares with any literal, or
	// fewer when it is cut, as the doc of automaton says.
	depth := make([]int32, len(lits))
	var border []int32
	for l, lit := range lits {
		shared := 0
		if l > 0 {
			shared = commonPrefix(lit, lits[l-1])
		}
		if l+1 < len(lits) {
			shared = max(shared, commonPrefix(lit, lits[l+1]))
		}
		depth[l] = int32(len(lit))
		if t := max(shared+1, len(lit)-maxCut, minKept); t < len(lit) && !periodic(lit[:t], &border) {
			depth[l] = int32(t)
		}
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
	a := &automaton{root: new([256]uint16), nodes: append(nodes, acNode{link: uint32(n)})}
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
	wide := 0
	for v := int32(1); v < n; v++ {
		if nodes[v+1].first()-nodes[v].first() > wideKids {
			wide++
		}
	}
	if wide > 0 {
		a.wideBits = make([]uint64, (n+63)/64)
		a.wideRank = make([]int32, len(a.wideBits))
		a.wide = make([][4]uint64, 0, wide)
		for v := int32(1); v < n; v++ {
			if v&63 == 0 {
				a.wideRank[v>>6] = int32(len(a.wide))
			}
			if lo, hi := nodes[v].first(), nodes[v+1].first(); hi-lo > wideKids {
				var w [4]uint64
				for c := lo; c < hi; c++ {
					w[nodes[c].label()>>6] |= 1 << (nodes[c].label() & 63)
				}
				a.wideBits[v>>6] |= 1 << (v & 63)
				nodes[v].fail |= acWide
				a.wide = append(a.wide, w)
			}
		}
	}
	for l, lit := range lits {
		if int(depth[l]) < len(lit) {
			if a.last4 == nil {
				a.last4 = make([]uint32, len(lits))
			}
			a.last4[l] = lastWord(lit, int32(len(lit)))
		}
	}
	a.outBits = make([]uint64, (n+63)/64)
	a.outRank = make([]int32, len(a.outBits))
	a.outs = make([]acOut, 1, entries+1)
	entry := lit // lit[v] is read before entry[v] is written: v's entry
	entry[0] = 0
	for v := int32(1); v < n; v++ {
		if v&63 == 0 {
			a.outRank[v>>6] = int32(len(a.outs)) - 1
		}
		l := lit[v]
		entry[v] = 0
		if whole[v] != 0 || cut[v] != 0 {
			a.outBits[v>>6] |= 1 << (v & 63)
			nodes[v].fail |= acHasOut
			f := nodes[v].suffix()
			o := acOut{whole: entry[whole[f]], cut: entry[cut[f]], lit: -1}
			if l >= 0 {
				o.lit = l | (int32(len(lits[l]))-depth[l])<<24
			}
			entry[v] = int32(len(a.outs))
			a.outs = append(a.outs, o)
		}
	}
	return a
}

// periodic reports whether s repeats with a period of less than half its
// length: a cut literal's prefix that does would recur in a text as often
// as every octet, to be compared each time. border is scratch space.
func periodic(s string, border *[]int32) bool {
	if cap(*border) < len(s) {
		*border = make([]int32, len(s))
	}
	b := (*border)[:len(s)] // b[i]: the longest proper border of s[:i+1]
	b[0] = 0
	for i := 1; i < len(s); i++ {
		k := b[i-1]
		for k > 0 && s[i] != s[k] {
			k = b[k-1]
		}
		if s[i] == s[k] {
			k++
		}
		b[i] = k
	}
	return 2*(len(s)-int(b[len(s)-1])) < len(s)
}

// lastWord returns the 4 octets of s that end at end, as one number.
func lastWord(s string, end int32) uint32 {
	s = s[end-4 : end]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// commonPrefix returns the octets that a and b start with alike.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
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
