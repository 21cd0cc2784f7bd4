package robotstxt

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The constructions of this file are files of 500 KiB of rules written to
// make the engine work, each with a path of size octets built against it:
// BenchmarkEngineWorst times the decisions, TestWorstCasesDecided checks
// them. The last ones are written against the engine as it matches now
// (the doc of ruleMatcher): scan's records and spread's walks down chains,
// a walk of many pieces, next's searches of blocks, from places that
// differ from rule to rule and for literals that few rules place, and the
// ends that findEnds finds of literals that overlap themselves.

// engineWorstCase is a file and a path built against it; match tells
// whether a rule matches.
type engineWorstCase struct {
	name  string
	body  string
	path  string
	match bool
}

// engineWorstCases are the worst files and paths found for the engine:
// 500 KiB files of rules written to make it work, and paths of size octets.
func engineWorstCases(size int) []engineWorstCase {
	run := strings.Repeat
	return []engineWorstCase{
		{"xN/numbers+y", engineFile(engineXN), engineNumbers("x", size, "y"), true},
		{"xN/numbers", engineFile(engineXN), engineNumbers("x", size, "z"), false},
		{"xN/x-run+y", engineFile(engineXN), "/" + run("x", size-2) + "y", false},
		{"star-a/no-a", engineFile(engineStarA), "/" + run("b", size-1), false},
		{"one-rule/a-run", "User-agent: *\nDisallow: /" + run("*a", (engineMaxBytes-40)/2) + "*b\n", "/" + run("a", size-1), false},
		{"shared/numbers", engineFile(engineShared), "/catalogue/items/2024/x" + engineNumbers("/p", size-23, "q")[1:], true},
		{"random/pieces", engineFile(engineRandomPieces), engineAdversaryPath(size), false},
		{"long/c-then-a", engineFile(engineLongRules), engineNumbers("c", size/2, "") + run("a", size-size/2), false},
		{"long/b-first", engineFile(engineLongRules), "/b" + engineNumbers("c", size/2, "")[1:] + run("a", size-size/2-1), false},
		{"order/w-z-x-z", engineFile(engineOrder), "/wz" + engineNumbers("x", size-3, "z")[1:], false},
		{"nested-heads/a-run", engineFile(engineNested), "/" + run("a", size-1), false},
		engineRepeats(size),
		engineAlternating(size),
		engineAllFail(size),
		engineRecordsCase(size),
		engineWalkCase(size),
		engineBlocksCase(size),
		engineOffsetsCase(size),
		engineTaggedCase(size),
		engineTwiceCase(size),
		engineOverlapCase(size),
		engineRunsCase(size),
		engineQsCase(size, 40),
		engineQsCase(size, 65),
	}
}

// engineNumbers returns "/" and the numbers 0, 1, 2, ... each after
// letter, cut to size octets with end last.
func engineNumbers(letter string, size int, end string) string {
	var b strings.Builder
	b.WriteByte('/')
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%s%d", letter, i)
	}
	return b.String()[:size-len(end)] + end
}

// engineAdversaryPath returns a path of size octets built from the pieces of
// engineRandomPieces, cut short, so that the automaton runs deep and finds
// little.
func engineAdversaryPath(size int) string {
	var b strings.Builder
	b.WriteByte('/')
	for i := 0; b.Len() < size; i++ {
		line := engineRandomPieces(i % 8000)
		pieces := strings.Split(line[len("Disallow: /*"):], "*")
		b.WriteString(pieces[i%4][:11])
	}
	return b.String()[:size]
}

// engineAlternating is rules "/*z<i>*x<i%2>*L*W" whose places of L alternate
// between two far regions of the path, so that a search for L's next
// occurrence never starts where the one before did: L is "a" 63 times and
// "b", which occurs 16 times early, then once after x0 and once after x1,
// each after a long run of "a"; W occurs only at the start, so no rule
// matches; the z<i> occur in order, so the rules are tried in turn.
func engineAlternating(size int) engineWorstCase {
	lit := strings.Repeat("a", 63) + "b"
	gap := (size - 2*len(lit)*8) / 4
	var z strings.Builder
	n := 0
	for ; z.Len() < size-16*len(lit)-2*gap-40; n++ {
		fmt.Fprintf(&z, "z%dy", n)
	}
	path := "/W" + z.String() + strings.Repeat(lit, 16) + "x0" + strings.Repeat("a", gap) + "b" + "x1" + strings.Repeat("a", gap) + "b"
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; i < n && b.Len() < engineMaxBytes-200; i++ {
		fmt.Fprintf(&b, "Disallow: /*z%dy*x%d*%s*W\n", i, i%2, lit)
	}
	return engineWorstCase{"alternating/regions", b.String(), path[:min(len(path), size)], false}
}

// engineAllFail is 500 KiB of rules "/*<A>*<B>*Q" whose literals all occur
// and whose last piece fails: A and B two octets of a 40-letter alphabet,
// Q only at the start of the path. Every rule is tried, and each fails at
// its last piece: the work grows with the rules, not the path.
func engineAllFail(size int) engineWorstCase {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-._~"
	r := rand.New(rand.NewPCG(3, 3))
	path := make([]byte, size)
	path[0], path[1] = '/', 'Q'
	for i := 2; i < size; i++ {
		path[i] = alphabet[r.IntN(len(alphabet))]
	}
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for b.Len() < engineMaxBytes-40 {
		i, j := 2+r.IntN(60), 2+r.IntN(size-4) // the first pair in the first block, as Q is
		fmt.Fprintf(&b, "allow:/*%s*%s*Q\n", path[i:i+2], path[j:j+2])
	}
	return engineWorstCase{"all-fail/pairs", b.String(), string(path), false}
}

// engineRepeats is rules "/*K*Z*w" whose literals all occur, K once and Z
// twice, so that placing Z after K needs its second occurrence, while w
// occurs only at the start: a path "/w" then S twice, S random, and for
// each place i in S a rule with K the 5 octets of S at i+3 and Z the 3 at i.
func engineRepeats(size int) engineWorstCase {
	const alphabet = "abcdefghijklmnopqrstuvxyz0123456789" // no w
	r := rand.New(rand.NewPCG(1, 1))
	s := make([]byte, size/2-1)
	for i := range s {
		s[i] = alphabet[r.IntN(len(alphabet))]
	}
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; i+8 <= len(s) && b.Len() < engineMaxBytes-40; i++ {
		fmt.Fprintf(&b, "Disallow: /*%s*%s*w\n", s[i+3:i+8], s[i:i+3])
	}
	return engineWorstCase{"repeats/w-S-S", b.String(), "/w" + string(s) + string(s), false}
}

// engineRecordsCase makes scan record the most: a path that repeats one
// unit of 64 random octets, and rules whose pieces are every substring of
// the unit up to the length that fits, so that in every block of the path
// thousands of literals occur for the first time in the block. A last
// piece W, at the start of the path only, makes every rule fail.
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
				b.WriteString(line + "*W\n")
				line = "Disallow: /"
			}
		}
	}
	return engineWorstCase{"records/unit-substrings", b.String(), "/W" + strings.Repeat(string(unit), size/64+1)[:size-2], false}
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
// engineKeys from the first block, then "*q*r" again and again, as many
// times as the rule's number says: each q after the first is placed past
// the rest of a block that holds no other q, which next searches, then in
// the next block. A last piece W, at the start of the path only, makes
// every rule fail.
func engineBlocksCase(size int) engineWorstCase {
	shift := blockShift(size)
	blocks := size >> shift
	stretch, _ := engineKeys(size)
	_, early := engineKeys(1<<shift - 4) // a prefix of the stretch: these occur in the first block
	p := []byte("/W" + stretch[:size-2])
	for at := 1 << shift; at+1 < size; at += 1 << shift {
		p[at], p[at+1] = 'q', 'r'
	}
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < engineMaxBytes-4*blocks-40; i++ {
		fmt.Fprintf(&b, "Disallow: /*%s%s*W\n", early[i%len(early)], strings.Repeat("*q*r", blocks-i/len(early)%blocks))
	}
	return engineWorstCase{"blocks/q-per-block", b.String(), string(p), false}
}

// TestWorstCasesDecided checks that the engine decides each of
// engineWorstCases, with paths of 2 and 16 KiB, as bruteDecide does.
func TestWorstCasesDecided(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("compiles 500 KiB files and matches them by brute force")
	}
	for _, size := range []int{2 << 10, 16 << 10} {
		for _, c := range engineWorstCases(size) {
			rules, _, _ := parseRobots([]byte(c.body)).rulesFor("x")
			path := normalizeTarget(c.path)
			_, want := bruteDecide(rules, path)
			if got := compileRules(rules).match(path); int(got.rule) != want || (want >= 0) != c.match {
				t.Errorf("%s, %d octets: rule %d; want %d, a match: %v", c.name, len(path), got.rule, want, c.match)
			}
		}
	}
}

// engineOffsetsCase makes next search far and never twice alike: a path
// that repeats one unit of 64 random octets, and rules of 4-octet pieces of
// the unit, each starting 1 to 3 octets before the end of the one before,
// so that its next occurrence is most of a unit on; the steps are random,
// so that the rules search from different places. A last piece W, at the
// start of the path only, makes every rule fail.
func engineOffsetsCase(size int) engineWorstCase {
	const alphabet = "abcdefghijklmnop"
	r := rand.New(rand.NewPCG(7, 7))
	unit := make([]byte, 64)
	for i := range unit {
		unit[i] = alphabet[r.IntN(len(alphabet))]
	}
	path := "/W" + strings.Repeat(string(unit), size/64+1)[:size-2]
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for b.Len() < engineMaxBytes-size/8-40 {
		b.WriteString("Disallow: /")
		for start := 2 + r.IntN(64); start+4 <= len(path); start += 4 - 1 - r.IntN(3) + 64 {
			b.WriteString("*" + path[start:start+4])
		}
		b.WriteString("*W\n")
	}
	return engineWorstCase{"offsets/periodic", b.String(), path, false}
}

// engineTaggedCase makes spread hand the most blocks down chains: a path
// of units of 128 octets, each a tag of its own and then one text U, and
// rules whose pieces are the substrings of U and each tag followed by each
// start of U. At each place of U the deepest literal is a tag's, new in
// each unit, whose chain holds every substring of U that ends there: each
// unit's blocks are handed down to every substring of U. A last piece W,
// at the start of the path only, makes every rule fail.
func engineTaggedCase(size int) engineWorstCase {
	const alphabet, tags = "abcdefghijklmnop", "qrstuvwxyz"
	r := rand.New(rand.NewPCG(11, 11))
	u := make([]byte, 124)
	for i := range u {
		u[i] = alphabet[r.IntN(len(alphabet))]
	}
	var p strings.Builder
	p.WriteString("/W")
	var lits []string
	for p.Len() < size {
		tag := make([]byte, 4)
		for i := range tag {
			tag[i] = tags[r.IntN(len(tags))]
		}
		for k := 1; k <= len(u); k++ {
			lits = append(lits, string(tag)+string(u[:k]))
		}
		p.WriteString(string(tag) + string(u))
	}
	for length := 2; length <= len(u); length++ {
		for at := 0; at+length <= len(u); at++ {
			lits = append(lits, string(u[at:at+length]))
		}
	}
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	line := "Disallow: /"
	for _, l := range lits {
		if b.Len()+len(line)+len(l) > engineMaxBytes-300 {
			break
		}
		line += "*" + l
		if len(line) > 200 {
			b.WriteString(line + "*W\n")
			line = "Disallow: /"
		}
	}
	return engineWorstCase{"tagged/unit-chains", b.String(), p.String()[:size], false}
}

// engineTwiceCase makes next search once a pattern for many literals: a
// path of W and one random text X twice, and rules of W, a piece of X, a
// piece from before it in X, which is placed in the second X, and a last
// piece from before that one, which fails. The pieces are 4 octets at
// random places, so that each literal is searched for by a few rules only.
func engineTwiceCase(size int) engineWorstCase {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(13, 13))
	half := (size - 2) / 2
	x := make([]byte, half)
	for i := range x {
		x[i] = alphabet[r.IntN(len(alphabet))]
	}
	path := "/W" + string(x) + string(x)
	path += strings.Repeat("z", size-len(path))
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for b.Len() < engineMaxBytes-40 {
		a := 8 + r.IntN(half-12)
		c := 4 + r.IntN(a-7)
		d := r.IntN(c - 3)
		if rule := fmt.Sprintf("/*W*%s*%s*%s", x[a:a+4], x[c:c+4], x[d:d+4]); !globMatches(rule, path, new(int)) {
			b.WriteString("Disallow: " + rule + "\n") // not the few that a repeat in X lets match
		}
	}
	return engineWorstCase{"twice/x-x", b.String(), path, false}
}

// engineOverlapCase makes the ends of long literals that overlap
// themselves costly to find: a path of two runs of "a" with a "b" between,
// and rules "/*a^j*a^k*W" with j+k past the first run, so that a^k, not at
// its place and first ending before it, is searched for in the second
// run, where it occurs at every octet, by four rules each k.
func engineOverlapCase(size int) engineWorstCase {
	run := (size - 3) / 2
	path := "/" + strings.Repeat("a", run) + "b" + strings.Repeat("a", size-run-3) + "W"
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for k := run / 2; b.Len() < engineMaxBytes-2*run-40; k++ {
		j := run + 1 - k%run
		for t := range 4 {
			fmt.Fprintf(&b, "Disallow: /*%s*%s*W*W\n", strings.Repeat("a", j+t), strings.Repeat("a", k%run+1))
		}
	}
	return engineWorstCase{"overlap/a-runs", b.String(), path, false}
}

// engineRunsCase makes next find the ends of short literals that overlap
// themselves: a path of runs of 63 "a" and a "b", and rules "/*a^j*a^k*W"
// and longer, with j+k past a run, so that a^k, not at its place, is
// searched for until its every end is found, at every octet of each run.
func engineRunsCase(size int) engineWorstCase {
	path := "/" + strings.Repeat(strings.Repeat("a", 63)+"b", (size-2)/64)
	path += strings.Repeat("a", size-len(path)-1) + "W"
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for more := 0; b.Len() < engineMaxBytes-200; more++ {
		for j := 1; j < 64 && b.Len() < engineMaxBytes-200; j++ {
			for k := 64 - j; k < 64; k++ {
				fmt.Fprintf(&b, "Disallow: /*%s%s*W*W\n", strings.Repeat("a", j), strings.Repeat("*"+strings.Repeat("a", k), 1+more))
			}
		}
	}
	return engineWorstCase{"runs/a63-b", b.String(), path, false}
}

// engineQsCase is engineBlocksCase with every piece after the key a q,
// which occurs every spacing octets, so that each is looked up past the
// place, and with a spacing past 64, past the 64 octets that nextEnd
// looks at first.
func engineQsCase(size, spacing int) engineWorstCase {
	shift := blockShift(size)
	stretch, _ := engineKeys(size)
	_, early := engineKeys(1<<shift - 4) // a prefix of the stretch: these occur in the first block
	p := []byte("/W" + stretch[:size-2])
	qs := 0
	for at := 1 << shift; at < size; at += spacing {
		p[at] = 'q'
		qs++
	}
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < engineMaxBytes-2*qs-40; i++ {
		fmt.Fprintf(&b, "Disallow: /*%s%s*W\n", early[i%len(early)], strings.Repeat("*q", qs-i/len(early)%qs))
	}
	return engineWorstCase{fmt.Sprintf("qs/every-%d", spacing), b.String(), string(p), false}
}
