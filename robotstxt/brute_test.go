package robotstxt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// bruteGlob is the reference the engine is tested against: whether
// pattern, in normal form, matches path, in normal form, as RFC 9309
// §2.2.2 and §2.2.3 say, found by dynamic programming over every prefix of
// both and nothing cleverer (bruteMatcher.matches).
func bruteGlob(pattern, path string) bool {
	return newBruteMatcher(path).matches(pattern)
}

// bruteMatcher matches patterns against one path by dynamic programming,
// 64 prefixes of the path to a word: after the pattern's first i octets,
// bit j of reach tells whether they can match the path's first j octets.
type bruteMatcher struct {
	path  string
	at    map[byte][]uint64 // per octet, bit j set where path[j-1] is that octet
	reach []uint64
}

func newBruteMatcher(path string) *bruteMatcher {
	return &bruteMatcher{path: path, at: make(map[byte][]uint64), reach: make([]uint64, len(path)/64+1)}
}

// matches reports whether pattern matches the path. A final '$' anchors
// the pattern at the end of the path; any other '$' is the literal
// character, which a path carries as "%24".
func (b *bruteMatcher) matches(pattern string) bool {
	p, anchored := strings.CutSuffix(pattern, "$")
	p = strings.ReplaceAll(p, "$", "%24")
	n := len(b.path)
	reach := b.reach
	clear(reach)
	reach[0] = 1 // the empty prefix of the pattern matches the empty prefix of the path
	for i := 0; i < len(p); i++ {
		if p[i] == '*' { // every prefix at or after the shortest one reached
			k := slices.IndexFunc(reach, func(w uint64) bool { return w != 0 })
			if k < 0 {
				return false
			}
			reach[k] |= -(reach[k] & -reach[k])
			for w := k + 1; w < len(reach); w++ {
				reach[w] = ^uint64(0)
			}
			continue
		}
		at := b.octet(p[i])
		for w := len(reach) - 1; w >= 0; w-- { // one octet more: shift by one, keep where it is p[i]
			carry := uint64(0)
			if w > 0 {
				carry = reach[w-1] >> 63
			}
			reach[w] = (reach[w]<<1 | carry) & at[w]
		}
	}
	reach[n/64] &= 1<<(n%64+1) - 1 // no prefix past the path's end
	if anchored {
		return reach[n/64]>>(n%64)&1 == 1
	}
	return slices.ContainsFunc(reach, func(w uint64) bool { return w != 0 }) // a prefix of the path
}

// octet returns the bits j where path[j-1] is c.
func (b *bruteMatcher) octet(c byte) []uint64 {
	if at, ok := b.at[c]; ok {
		return at
	}
	at := make([]uint64, len(b.reach))
	for j := 1; j <= len(b.path); j++ {
		if b.path[j-1] == c {
			at[j/64] |= 1 << (j % 64)
		}
	}
	b.at[c] = at
	return at
}

// bruteDecide decides path, in normal form, against rules as RFC 9309
// §2.2.2 says, with bruteMatcher: of the rules that match, the one whose
// pattern has the most octets; of two as long, an Allow; of two as long
// and of one kind, the first. It returns the rule's index, -1 when none
// matches and so path is allowed.
func bruteDecide(rules []fileRule, path string) (allowed bool, rule int) {
	rule = -1
	b := newBruteMatcher(path)
	for i, r := range rules {
		if r.pattern == "" || !b.matches(r.pattern) {
			continue
		}
		if rule >= 0 {
			best := rules[rule]
			if len(r.pattern) < len(best.pattern) || len(r.pattern) == len(best.pattern) && (best.allow || !r.allow) {
				continue
			}
		}
		rule = i
	}
	return rule < 0 || rules[rule].allow, rule
}

func TestBruteGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"/a", "/a", true}, {"/a", "/ab", true}, {"/a", "/", false}, {"/a", "/ba", false},
		{"/a$", "/a", true}, {"/a$", "/ab", false}, {"/*b", "/ab", true}, {"/*b", "/a", false},
		{"*b$", "/ab", true}, {"*b$", "/abc", false}, {"/a*b*c$", "/abbc", true}, {"/a*b*c$", "/acb", false},
		{"/a$b", "/a%24b", true}, {"/a$b", "/ab", false}, {"/a$$", "/a%24", true}, {"/a$$", "/a%24b", false},
		{"*", "/", true}, {"*$", "/x", true}, {"/**a**", "/xxa", true}, {"/*a*a*a$", "/aa", false},
		{"/a*", "/a", true}, {"/a*$", "/a", true}, {"/*aba*bab", "/abab", false}, {"/*aba*bab", "/ababab", true},
	} {
		if got := bruteGlob(tc.pattern, tc.path); got != tc.want {
			t.Errorf("bruteGlob(%q, %q) = %v; want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

// TestBruteGlobAgreesWithRecursion checks bruteGlob against the plainest
// reading of §2.2.3, a recursion that tries every way to match, on
// patterns and paths small enough for it.
func TestBruteGlobAgreesWithRecursion(t *testing.T) {
	var from func(p, s string, anchored bool) bool // whether p matches a prefix of s, or s if anchored
	from = func(p, s string, anchored bool) bool {
		switch {
		case p == "":
			return !anchored || s == ""
		case p[0] == '*':
			return from(p[1:], s, anchored) || s != "" && from(p, s[1:], anchored)
		}
		return s != "" && p[0] == s[0] && from(p[1:], s[1:], anchored)
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 20000 {
		var p, s strings.Builder
		for range r.IntN(8) {
			p.WriteByte("ab*"[r.IntN(3)])
		}
		for range r.IntN(10) {
			s.WriteByte("ab"[r.IntN(2)])
		}
		anchored := r.IntN(3) == 0
		pattern := "/" + p.String()
		if anchored {
			pattern += "$"
		}
		path := "/" + s.String()
		if got, want := bruteGlob(pattern, path), from(strings.TrimSuffix(pattern, "$"), path, anchored); got != want {
			t.Fatalf("bruteGlob(%q, %q) = %v; want %v", pattern, path, got, want)
		}
	}
}

func TestBruteDecide(t *testing.T) {
	rules := []fileRule{{pattern: "/a"}, {pattern: "/*b", allow: true}, {pattern: "/a*"}, {pattern: "/a*", allow: true}, {pattern: "/*c"}, {pattern: "/*d"}}
	for _, tc := range []struct {
		path    string
		allowed bool
		rule    int
	}{
		{"/x", true, -1},
		{"/a", true, 3},   // /a* is longer than /a, and of the two /a*, the Allow
		{"/ab", true, 1},  // /*b and the /a* as long: the first Allow
		{"/xb", true, 1},  // /*b alone
		{"/cd", false, 4}, // /*c and /*d as long, both Disallow: the first
		{"/dc", false, 4},
	} {
		if allowed, rule := bruteDecide(rules, tc.path); allowed != tc.allowed || rule != tc.rule {
			t.Errorf("bruteDecide(%q) = %v, %d; want %v, %d", tc.path, allowed, rule, tc.allowed, tc.rule)
		}
	}
}

// genRules returns n rules over a small alphabet, with many '*' and an
// occasional final '$': the files on which a work budget left decisions
// undecided.
func genRules(r *rand.Rand, n, maxTokens int) []fileRule {
	tokens := []string{"a", "b", "/", "*", "ab", "ba", "aa", "*a", "b*", "*ab*"}
	rules := make([]fileRule, n)
	for i := range rules {
		var b strings.Builder
		b.WriteByte("/*"[r.IntN(2)])
		for range 1 + r.IntN(maxTokens) {
			b.WriteString(tokens[r.IntN(len(tokens))])
		}
		if r.IntN(4) == 0 {
			b.WriteByte('$')
		}
		rules[i] = fileRule{pattern: normalizePath(b.String()), line: int32(i + 2), allow: r.IntN(3) == 0}
	}
	return rules
}

// genPath returns a path of about size octets over the rules' alphabet:
// random, or a short random unit repeated, which makes every piece occur
// again and again.
func genPath(r *rand.Rand, size int) string {
	tokens := []string{"a", "b", "/", "ab", "aab", "ba"}
	var b strings.Builder
	b.WriteByte('/')
	if r.IntN(2) == 0 {
		var unit strings.Builder
		for range 1 + r.IntN(6) {
			unit.WriteString(tokens[r.IntN(len(tokens))])
		}
		for b.Len() < size {
			b.WriteString(unit.String())
			if r.IntN(8) == 0 {
				b.WriteString(tokens[r.IntN(len(tokens))])
			}
		}
	} else {
		for b.Len() < size {
			b.WriteString(tokens[r.IntN(len(tokens))])
		}
	}
	return b.String()[:size]
}

// groupOf returns the Group of a "*" group of rules, written as a file.
func groupOf(rules []fileRule) *Group {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for _, r := range rules {
		fmt.Fprintln(&b, r.exported())
	}
	return Parse([]byte(b.String())).Group("x")
}

// checkDecide fails t unless g decides path as bruteDecide does on rules,
// by the same rule, with no error.
func checkDecide(t *testing.T, g *Group, rules []fileRule, path string) {
	t.Helper()
	allowed, rule, err := g.Decide(path)
	wantAllowed, want := bruteDecide(rules, normalizeTarget(path))
	var wantRule Rule
	if want >= 0 {
		wantRule = rules[want].exported()
	}
	if err != nil || allowed != wantAllowed || rule != wantRule {
		t.Fatalf("Decide(%.80q, %d octets) = %v, %+v, %v; want %v, %+v\nrules %v",
			path, len(path), allowed, rule, err, wantAllowed, wantRule, rules)
	}
}

// TestDecideAgreesWithBruteForce decides generated files as the issue that
// removed the work budget found them undecided: up to 40 rules over a
// small alphabet, many of them wildcards, and paths of 253 to 307 octets,
// 30,000 decisions; then fewer, with paths up to MaxPathLength. Every
// decision is made, and is bruteDecide's.
func TestDecideAgreesWithBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 1))
	for _, tc := range []struct {
		files, paths, minSize, maxSize int
	}{
		{1500, 20, 253, 307},
		{40, 5, 2 << 10, 4 << 10},
		{4, 3, MaxPathLength - 64, MaxPathLength},
	} {
		if testing.Short() && tc.minSize > 1<<10 {
			continue
		}
		refused := 0
		for range tc.files {
			rules := genRules(r, 1+r.IntN(40), 12)
			g := groupOf(rules)
			for range tc.paths {
				path := genPath(r, tc.minSize+r.IntN(tc.maxSize-tc.minSize+1))
				checkDecide(t, g, rules, path)
				if allowed, _, _ := g.Decide(path); !allowed {
					refused++
				}
			}
		}
		if decided := tc.files * tc.paths; refused < decided/10 || refused > decided*9/10 {
			t.Errorf("paths of %d to %d octets: %d of %d refused; the cases do not exercise the engine", tc.minSize, tc.maxSize, refused, decided)
		}
	}
}
