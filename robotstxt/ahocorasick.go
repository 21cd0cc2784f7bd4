package robotstxt

// automaton finds every occurrence of a set of literals in one pass over a
// text (Aho–Corasick). Its nodes are the prefixes of the literals, the
// root, the empty one, numbered 0, level by level and within a level in
// sorted order, so that the children of a node are consecutive; a node is
// 16 bytes, so that a step reads one or two cache lines.
type automaton struct {
	root  *[256]uint16 // the children of the root by octet, 0 for none: nodes 1 to 256 at most
	nodes []acNode     // and one more, whose first ends the last node's children
}

type acNode struct {
	first int32 // the node's children are nodes[first] up to the next node's first
	fail  int32 // the longest proper suffix that is a node
	// out is -1-l for the node of literal l; for another node, its longest
	// suffix that is a literal's node, or 0 if none.
	out   int32
	label byte // the octet that leads here
}

// newAutomaton returns the automaton of lits, which are sorted, distinct
// and not empty.
func newAutomaton(lits []string) automaton {
	type span struct{ lo, hi, depth int32 } // the literals that start with a node
	size := 1                               // the nodes: the root and each literal's octets past the one before
	for i, l := range lits {
		shared := 0
		if i > 0 {
			for shared < len(l) && shared < len(lits[i-1]) && l[shared] == lits[i-1][shared] {
				shared++
			}
		}
		size += len(l) - shared
	}
	spans := append(make([]span, 0, size), span{0, int32(len(lits)), 0})
	nodes := append(make([]acNode, 0, size+1), acNode{})
	for v := 0; v < len(spans); v++ {
		lo, hi, d := spans[v].lo, spans[v].hi, spans[v].depth
		if lo < hi && int32(len(lits[lo])) == d {
			nodes[v].out = -1 - lo
			lo++
		}
		nodes[v].first = int32(len(spans))
		for lo < hi {
			c := lits[lo][d]
			j := lo + 1
			for j < hi && lits[j][d] == c {
				j++
			}
			spans = append(spans, span{lo, j, d + 1})
			nodes = append(nodes, acNode{label: c})
			lo = j
		}
	}
	n := int32(len(nodes))
	a := automaton{root: new([256]uint16), nodes: append(nodes, acNode{first: n})}
	nodes = a.nodes
	for c := nodes[0].first; c < nodes[1].first; c++ {
		a.root[nodes[c].label] = uint16(c)
	}
	for v := int32(1); v < n; v++ { // a node's suffixes come before it
		for c := nodes[v].first; c < nodes[v+1].first; c++ {
			for f := nodes[v].fail; ; f = nodes[f].fail {
				if t := a.child(f, nodes[c].label); t != 0 {
					nodes[c].fail = t
					break
				}
				if f == 0 {
					break
				}
			}
		}
		if nodes[v].out == 0 {
			nodes[v].out = a.literalNode(nodes[v].fail)
		}
	}
	return a
}

// literalNode returns v if it is a literal's node, or else its longest
// suffix that is; 0 if none.
func (a *automaton) literalNode(v int32) int32 {
	if o := a.nodes[v].out; o > 0 {
		return o
	}
	if a.nodes[v].out < 0 {
		return v
	}
	return 0
}

// child returns v's child by the octet c, or 0.
func (a *automaton) child(v int32, c byte) int32 {
	if v == 0 {
		return int32(a.root[c])
	}
	return a.search(a.nodes[v].first, a.nodes[v+1].first, c)
}

// search returns the node of nodes[lo:hi], siblings in order of label,
// whose label is c, or 0.
func (a *automaton) search(lo, hi int32, c byte) int32 {
	if lo == hi || c < a.nodes[lo].label || c > a.nodes[hi-1].label {
		return 0
	}
	for hi-lo > 4 {
		mid := int32(uint32(lo+hi) >> 1)
		if a.nodes[mid].label <= c {
			lo = mid
		} else {
			hi = mid
		}
	}
	for ; lo < hi; lo++ {
		if a.nodes[lo].label == c {
			return lo
		}
	}
	return 0
}
