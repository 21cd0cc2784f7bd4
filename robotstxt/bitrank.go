package robotstxt

import "math/bits"

// bitRank is a set of the integers below a bound that counts, in one
// read, the members below any integer: for each 64, a word of their bits
// and the count of the members below the first. It takes 2 bits an
// integer, and a member's rank orders an array of what the members hold.
type bitRank []rankWord

// rankWord is 64 integers of a bitRank.
type rankWord struct {
	bits  uint64 // bit i set when the word's first + i is a member
	below uint64 // the members below the word's first
}

// newBitRank returns an empty bitRank of the integers below n.
func newBitRank(n int) bitRank { return make(bitRank, (n+63)/64) }

// add adds i. Once every member is added, count must be called before
// rank is.
func (b bitRank) add(i int32) { b[i>>6].bits |= 1 << (i & 63) }

// count counts the members below each word's first.
func (b bitRank) count() {
	n := uint64(0)
	for w := range b {
		b[w].below = n
		n += uint64(bits.OnesCount64(b[w].bits))
	}
}

// has reports whether i is a member.
func (b bitRank) has(i int32) bool { return b[i>>6].bits>>(i&63)&1 != 0 }

// rank returns the members below i.
func (b bitRank) rank(i int32) int32 {
	w := &b[i>>6]
	return int32(w.below) + int32(bits.OnesCount64(w.bits&(1<<(i&63)-1)))
}

// octetRank reports whether octet c is in set, a bit an octet, and
// returns the members below it.
func octetRank(set *[4]uint64, c byte) (bool, int32) {
	w := c >> 6
	if set[w]>>(c&63)&1 == 0 {
		return false, 0
	}
	n := bits.OnesCount64(set[w] & (1<<(c&63) - 1))
	for i := range w {
		n += bits.OnesCount64(set[i])
	}
	return true, int32(n)
}
