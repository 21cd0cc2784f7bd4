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
// parents of that key no longer than what it shares with s. The search
// compares two strings of 8 octets or more by their first 8 as one number
// first.
func (p *prefixSet) deepest(s string) int32 {
	lo, hi := 0, len(p.keys)
	long := len(s) >= 8
	var s8 uint64
	if long {
		s8 = first8(s)
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k := p.keys[mid]
		var atMost bool // k <= s
		if long && len(k) >= 8 && first8(k) != s8 {
			atMost = first8(k) < s8
		} else {
			atMost = k <= s
		}
		if atMost {
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

// first8 returns the first 8 octets of s, at least 8 long, as one
// big-endian number: two strings whose first8 differ compare as those do.
func first8(s string) uint64 {
	return uint64(s[7]) | uint64(s[6])<<8 | uint64(s[5])<<16 | uint64(s[4])<<24 |
		uint64(s[3])<<32 | uint64(s[2])<<40 | uint64(s[1])<<48 | uint64(s[0])<<56
}
