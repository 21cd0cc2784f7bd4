package robotstxt

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The constructions of this file are written against the engine as it
// now matches (the doc of ruleMatcher): files of 500 KiB of rules and a
// path of size octets that make a decision do the most work the engine
// can be made to do, each a different part of it.

// engineRecordsCase makes scan record the most: a path that repeats one
// unit of 64 random octets, and rules whose pieces are every substring of
// the unit up to the length that fits, so that in every block of the path
// thousands of literals occur for the first time in the block. A last
// piece that never occurs makes every rule fail.
func engineRecordsCase(size int) engineWorstCase {
	const alphabet = "abcdefghijklmnop"
	r := rand.New(rand.NewPCG(5, 5))
	unit := make([]byte, 64)
	for i := range unit {
		unit[i] = alphabet[r.IntN(len(alphabet))]
	}
	twice := string(unit) + string(unit)
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	line := "Disallow: /"
	for length := 1; b.Len() < engineMaxBytes-300; length++ {
		for at := 0; at < 64 && b.Len() < engineMaxBytes-300; at++ {
			line += "*" + twice[at:at+length%64+1]
			if len(line) > 200 {
				b.WriteString(line + "*Z\n")
				line = "Disallow: /"
			}
		}
	}
	return engineWorstCase{"records/unit-substrings", b.String(), "/" + strings.Repeat(string(unit), size/64+1)[:size-1], false}
}

// engineKeys returns a stretch of random letters of about size octets,
// none of them a, b, q, r or Z, and literals that occur in it, each once
// and at a different place: its substrings of 2 to 9 octets. A rule whose
// rarest literal is one of them is tried on any path that holds the
// stretch.
func engineKeys(size int) (stretch string, keys []string) {
	const alphabet = "cdefghijklmnopstuvwxy"
	r := rand.New(rand.NewPCG(9, 9))
	s := make([]byte, size)
	for i := range s {
		s[i] = alphabet[r.IntN(len(alphabet))]
	}
	seen := make(map[string]bool)
	for length := 2; length <= 9; length++ {
		for at := 0; at+length <= size; at++ {
			if k := string(s[at : at+length]); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return string(s), keys
}

// engineWalkCase makes rules place the most pieces: rules that start with
// a key of engineKeys, then as many "*a" as the path has room for, then
// "*b*a", on a path of the keys' stretch, a run of "a" and a "b": each
// rule places its key, walks the run a piece an octet, places the b and
// fails at the last a. The keys differ, so that no two rules walk from the
// same place.
func engineWalkCase(size int) engineWorstCase {
	stretch, keys := engineKeys(size / 8)
	path := "/" + stretch + strings.Repeat("a", size-len(stretch)-2) + "b"
	walk := strings.Repeat("*a", (size-len(stretch)-2)/2)
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < engineMaxBytes-len(walk)-40; i++ {
		fmt.Fprintf(&b, "Disallow: /*%s%s*b*a\n", keys[i%len(keys)], walk)
	}
	return engineWorstCase{"walk/a-run", b.String(), path, false}
}

// engineBlocksCase makes next search blocks the most: q begins each block
// of the path and r follows it, and rules that start with a key of
// engineKeys, then "*q*r" again and again: each q after the first is
// placed past the rest of a block that holds no other q, which next
// searches, then in the next block. A last piece that never occurs makes
// every rule fail.
func engineBlocksCase(size int) engineWorstCase {
	shift := blockShift(size)
	stretch, keys := engineKeys(size)
	p := []byte("/" + stretch[:size-1])
	for at := 1 << shift; at+1 < size; at += 1 << shift {
		p[at], p[at+1] = 'q', 'r'
	}
	pairs := strings.Repeat("*q*r", size>>shift)
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < engineMaxBytes-len(pairs)-40; i++ {
		fmt.Fprintf(&b, "Disallow: /*%s%s*Z\n", keys[i%len(keys)], pairs)
	}
	return engineWorstCase{"blocks/q-per-block", b.String(), string(p), false}
}
