package robotstxt

import (
	"math/bits"
	"slices"
	"strings"
)

// prefixSet holds distinct strings, sorted, and for each the index of the
// longest other one that is a prefix of it, or -1.
type prefixSet struct {
	keys   []string
	parent []int32
	steps  int // the steps of a binary search of keys, and one
}

// newPrefixSet returns the set of keys, which are sorted and distinct.
func newPrefixSet(keys []string) prefixSet {
	p := prefixSet{keys: slices.Clone(keys), parent: make([]int32, len(keys)), steps: bits.Len(uint(len(keys))) + 1}
	var stack []int32 // keys each a prefix of the next
	for i, k := range keys {
		for len(stack) > 0 && !strings.HasPrefix(k, keys[stack[len(stack)-1]]) {
			stack = stack[:len(stack)-1]
		}
		p.parent[i] = -1
		if len(stack) > 0 {
			p.parent[i] = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
	}
	return p
}

// deepest returns the index of the longest key that is a prefix of s, or
// -1. Its parents are all the others.
//
// Every key that is a prefix of s sorts at or before s, and so does every
// string between it and s, which starts with it too. So the last key not
// after s starts with each key that is a prefix of s, and those are the
// parents of that key no longer than what it shares with s.
func (p *prefixSet) deepest(s string) int32 {
	lo, hi := 0, len(p.keys)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if p.keys[mid] <= s {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := int32(lo - 1)
	if i < 0 {
		return -1
	}
	k := p.keys[i]
	shared := 0
	for shared < len(k) && shared < len(s) && k[shared] == s[shared] {
		shared++
	}
	for i >= 0 && len(p.keys[i]) > shared {
		i = p.parent[i]
	}
	return i
}

// searchCost returns the units of work (see workBudget) that deepest may
// spend on a string of n octets: a comparison of up to n octets for each
// step of its binary search, and one more octet by octet.
func (p *prefixSet) searchCost(n int) int {
	return p.steps*(1+n/compareOctets) + n/(compareOctets/2)
}
