package robotstxt

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/polite-go/polite/internal/robotstest"
)

// engineGroup returns the rules of a "*" group made of lines, read by
// parseRobots, and their matcher.
func engineGroup(lines string) ([]fileRule, *ruleMatcher) {
	rules, _, _ := parseRobots([]byte("User-agent: *\n" + lines)).rulesFor("x")
	return rules, compileRules(rules)
}

// matchRule returns m's decision on path, normalised: whether it is
// allowed, and the index of the rule that decided, or -1.
func matchRule(m *ruleMatcher, path string) (allowed bool, rule int) {
	ref := m.match(path)
	return ref.rule < 0 || ref.allow(), int(ref.rule)
}

// checkDecision fails t unless m, and linearMatch, decide path as
// bruteDecide does, by the same rule.
func checkDecision(t *testing.T, rules []fileRule, m *ruleMatcher, path string) {
	t.Helper()
	wantAllowed, want := bruteDecide(rules, path)
	allowed, rule := matchRule(m, path)
	ref, ok := linearMatch(rules, path)
	switch {
	case allowed != wantAllowed || rule != want:
		t.Fatalf("match(%q) = %v by rule %d; want %v by rule %d\nrules %v", path, allowed, rule, wantAllowed, want, rules)
	case ok && int(ref.rule) != want:
		t.Fatalf("linearMatch(%q) = rule %d; want rule %d\nrules %v", path, ref.rule, want, rules)
	}
}

// TestRuleMatcherRFC9309 holds cases read off RFC 9309 §2.2.2, §2.2.3 and
// the examples of §5; each name quotes the sentence it tests.
func TestRuleMatcherRFC9309(t *testing.T) {
	const rfc51star = "Disallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n"
	const rfc51foobot = "Disallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n"
	const rfc52 = "Allow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
	tests := []struct {
		name    string
		rules   string
		uri     string
		allowed bool
		rule    string // the rule that decides; "" for none
	}{
		{"2.2.2 The matching MUST start with the first octet of the path",
			"Disallow: /bar\n", "/foo/bar", true, ""},
		{"2.2.2 The matching MUST start with the first octet of the path: a pattern with a wildcard too",
			"Disallow: /foo/*/bar\n", "/x/foo/y/bar", true, ""},
		{"2.2.2 The matching MUST start with the first octet of the path: the same pattern at the start",
			"Disallow: /foo/*/bar\n", "/foo/y/bar", false, "Disallow: /foo/*/bar"},
		{"2.2.2 The most specific match is the match that has the most octets: a wildcard's own octets",
			"Allow: /ab.c\nDisallow: /*.c\n", "/ab.c", true, "Allow: /ab.c"},
		{"2.2.2 The most specific match is the match that has the most octets: the wildcard alone",
			"Allow: /ab.c\nDisallow: /*.c\n", "/xy.c", false, "Disallow: /*.c"},
		{"2.2.2 The most specific match is the match that has the most octets: '*' counts",
			"Allow: /a\nDisallow: /a*\n", "/ab", false, "Disallow: /a*"},
		{"2.2.2 The most specific match found MUST be used: longer Allow",
			"Disallow: /a\nAllow: /a/b\n", "/a/b/c", true, "Allow: /a/b"},
		{"2.2.2 The most specific match found MUST be used: longer Disallow",
			"Allow: /a\nDisallow: /a/b\n", "/a/b/c", false, "Disallow: /a/b"},
		{"2.2.2 If an allow rule and a disallow rule are equivalent, then the allow rule SHOULD be used",
			"Disallow: /page\nAllow: /page\n", "/page", true, "Allow: /page"},
		{"2.2.2 If an allow rule and a disallow rule are equivalent, then the allow rule SHOULD be used: as long, one a wildcard",
			"Disallow: /*.php\nAllow: /a.php\n", "/a.php", true, "Allow: /a.php"},
		{"2.2.2 If an allow rule and a disallow rule are equivalent, then the allow rule SHOULD be used: both wildcards",
			"Disallow: /a*\nAllow: /*x\n", "/ax", true, "Allow: /*x"},
		{"2.2.2 If no match is found amongst the rules in a group, the URI is allowed",
			"Disallow: /a\nDisallow: /*.gif$\n", "/b.png", true, ""},
		{"2.2.2 The matching SHOULD be case sensitive",
			"Disallow: /Private\n", "/private", true, ""},
		{"2.2.2 Duplicate rules in a group MAY be deduplicated",
			"Disallow: /a\nDisallow: /a\nDisallow: /*b\nDisallow: /*b\n", "/ab", false, "Disallow: /*b"},
		{"2.2.2 If a percent-encoded ASCII octet is encountered in the URI, it MUST be unencoded prior to comparison",
			"Disallow: /foo/bar/baz\n", "/foo/bar/%62%61%7A", false, "Disallow: /foo/bar/baz"},
		{"2.2.2 Octets outside the range of the ASCII coded character set MUST be percent-encoded",
			"Disallow: /foo/bar/ツ*\n", "/foo/bar/%E3%83%84/x", false, "Disallow: /foo/bar/%E3%83%84*"},
		{"2.2.3 $ Designates the end of the match pattern",
			"Disallow: /\nAllow: /this/path/exactly$\n", "/this/path/exactly", true, "Allow: /this/path/exactly$"},
		{"2.2.3 $ Designates the end of the match pattern: a longer path",
			"Disallow: /\nAllow: /this/path/exactly$\n", "/this/path/exactly/more", false, "Disallow: /"},
		{"2.2.3 $ Designates the end of the match pattern: a query",
			"Disallow: /\nAllow: /this/path/exactly$\n", "/this/path/exactly?x=1", false, "Disallow: /"},
		{"2.2.3 $ Designates the end of the match pattern: after a wildcard",
			"Disallow: /*.php$\n", "/a.php.php", false, "Disallow: /*.php$"},
		{"2.2.3 $ Designates the end of the match pattern: after a wildcard, a longer path",
			"Disallow: /*.php$\n", "/a.php?x", true, ""},
		{"2.2.3 $ Designates the end of the match pattern: only as its last octet",
			"Disallow: /a$b\n", "/a$b", false, "Disallow: /a$b"},
		{"2.2.3 $ Designates the end of the match pattern: only as its last octet, not an anchor",
			"Disallow: /a$b\n", "/ab", true, ""},
		{"2.2.3 * Designates 0 or more instances of any character",
			"Disallow: /\nAllow: /this/*/exactly\n", "/this/a/b/exactly", true, "Allow: /this/*/exactly"},
		{"2.2.3 * Designates 0 or more instances of any character: 0 instances",
			"Disallow: /\nAllow: /this/*/exactly\n", "/this//exactly", true, "Allow: /this/*/exactly"},
		{"2.2.3 * Designates 0 or more instances of any character: the literals still in order",
			"Disallow: /\nAllow: /this/*/exactly\n", "/this/exactly", false, "Disallow: /"},
		{"2.2.3 * Designates 0 or more instances of any character: at the start",
			"Disallow: *a\n", "/xa", false, "Disallow: *a"},
		{"2.2.3 * Designates 0 or more instances of any character: repeated",
			"Disallow: /a**b\n", "/ab", false, "Disallow: /a**b"},
		{"2.2.3 If crawlers match special characters verbatim in the URI, crawlers SHOULD use % encoding: %2A",
			"Disallow: /path/file-with-a-%2A.html\n", "/path/file-with-a-*.html", false, "Disallow: /path/file-with-a-%2A.html"},
		{"2.2.3 If crawlers match special characters verbatim in the URI, crawlers SHOULD use % encoding: %2A is not a wildcard",
			"Disallow: /path/file-with-a-%2A.html\n", "/path/file-with-a-x.html", true, ""},
		{"2.2.3 If crawlers match special characters verbatim in the URI, crawlers SHOULD use % encoding: %24",
			"Disallow: /path/foo-%24\n", "/path/foo-$", false, "Disallow: /path/foo-%24"},
		{"2.2.3 If crawlers match special characters verbatim in the URI, crawlers SHOULD use % encoding: %24 is not an anchor",
			"Disallow: /path/foo-%24\n", "/path/foo-bar", true, ""},
		{"5.1 disallow: *.gif$", rfc51star, "/a/b.gif", false, "Disallow: *.gif$"},
		{"5.1 disallow: /example/", rfc51star, "/example/x.html", false, "Disallow: /example/"},
		{"5.1 allow: /publications/", rfc51star, "/publications/a.gif", true, "Allow: /publications/"},
		{"5.1 The crawler only has access to two URL path prefixes on the site: /example/page.html",
			rfc51foobot, "/example/page.html", true, "Allow: /example/page.html"},
		{"5.1 The crawler only has access to two URL path prefixes on the site: /example/allowed.gif",
			rfc51foobot, "/example/allowed.gif", true, "Allow: /example/allowed.gif"},
		{"5.1 The crawler only has access to two URL path prefixes on the site: not /example/",
			rfc51foobot, "/example/", false, "Disallow: /"},
		{"5.2 the longest one is used for matching: /example/page/", rfc52, "/example/page/", true, "Allow: /example/page/"},
		{"5.2 the longest one is used for matching: /example/page/disallowed.gif",
			rfc52, "/example/page/disallowed.gif", false, "Disallow: /example/page/disallowed.gif"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules, m := engineGroup(tc.rules)
			path := normalizeTarget(tc.uri)
			allowed, i := matchRule(m, path)
			rule := ""
			if i >= 0 {
				rule = rules[i].exported().String()
			}
			if allowed != tc.allowed || rule != tc.rule {
				t.Errorf("rules\n%s%s: allowed %v by %q; want %v by %q", tc.rules, tc.uri, allowed, rule, tc.allowed, tc.rule)
			}
			checkDecision(t, rules, m, path)
		})
	}
}

func TestShapeOf(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    string
	}{
		{"/a/b", `head "/a/b"`},
		{"/a$", `head "/a" exact`},
		{"/a*", `head "/a" *`},
		{"/a*$", `head "/a" *`},
		{"*.gif$", `head "" * tail ".gif"`},
		{"/a*b**c*", `head "/a" * pieces ["b" "c"]`},
		{"/a*b*c$", `head "/a" * pieces ["b"] tail "c"`},
		{"/a$b*$c$", `head "/a%24b" * tail "%24c"`},
		{"/a$$", `head "/a%24" exact`},
	} {
		s := shapeOf(tc.pattern)
		got := fmt.Sprintf("head %q", s.head)
		if s.exact {
			got += " exact"
		}
		if s.wild {
			got += " *"
		}
		if len(s.pieces) > 0 {
			got += fmt.Sprintf(" pieces %q", s.pieces)
		}
		if s.tail != "" {
			got += fmt.Sprintf(" tail %q", s.tail)
		}
		if got != tc.want {
			t.Errorf("shapeOf(%q) = %s; want %s", tc.pattern, got, tc.want)
		}
	}
}

func TestRuleMatcherEmpty(t *testing.T) {
	for _, rules := range [][]fileRule{nil, {{pattern: ""}}, {{allow: false, pattern: ""}, {allow: true, pattern: ""}}} {
		if allowed, rule := matchRule(compileRules(rules), "/x"); !allowed || rule != -1 {
			t.Errorf("rules %v: match = %v, %d; want true, -1", rules, allowed, rule)
		}
	}
}

// TestRuleMatcherReportsIndex checks that the rule reported is an index
// into the rules as given, the first Allow of a duplicated pattern.
func TestRuleMatcherReportsIndex(t *testing.T) {
	rules := []fileRule{
		{pattern: "/a"}, {pattern: "/a/*x"}, {pattern: "/a/*x", allow: true}, {pattern: "/a/*x", allow: true}, {pattern: "/b$"},
	}
	m := compileRules(rules)
	for path, want := range map[string]int{"/a/b": 0, "/a/bx": 2, "/b": 4, "/bb": -1} {
		if _, got := matchRule(m, path); got != want {
			t.Errorf("match(%q) rule = %d; want %d", path, got, want)
		}
	}
}

// engineRandomRules returns n rules drawn from a small alphabet, with '*'
// and '$' anywhere, so that rules and paths often overlap.
func engineRandomRules(r *rand.Rand, n int) []fileRule {
	rules := make([]fileRule, n)
	for i := range rules {
		var b strings.Builder
		b.WriteByte("/*"[r.IntN(2)])
		for range r.IntN(7) {
			b.WriteString([]string{"a", "b", "/", "*", "$", "%24"}[r.IntN(6)])
		}
		rules[i] = fileRule{pattern: normalizePath(b.String()), allow: r.IntN(2) == 0}
	}
	return rules
}

func engineRandomPath(r *rand.Rand) string {
	var b strings.Builder
	b.WriteByte('/')
	for range r.IntN(9) {
		b.WriteString([]string{"a", "b", "/", "$", "?"}[r.IntN(5)])
	}
	return normalizeTarget(b.String())
}

// TestRuleMatcherAgreesWithBruteForce compares the engine with bruteDecide
// on random groups; FuzzEngine explores further.
func TestRuleMatcherAgreesWithBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 3))
	refused, byWildcard := 0, 0
	for range 3000 {
		rules := engineRandomRules(r, 1+r.IntN(12))
		m := compileRules(rules)
		for range 20 {
			path := engineRandomPath(r)
			checkDecision(t, rules, m, path)
			if allowed, rule := matchRule(m, path); !allowed {
				refused++
				if strings.Contains(rules[rule].pattern, "*") {
					byWildcard++
				}
			}
		}
	}
	if refused < 10000 || byWildcard < 5000 {
		t.Fatalf("%d refusals, %d by a wildcard rule: the cases do not exercise the engine", refused, byWildcard)
	}
}

// TestRuleMatcherSearchesAgree compares the engine with bruteDecide where
// many patterns search the same literals between their first and last
// occurrence in one decision: many rules of few letters, long paths.
func TestRuleMatcherSearchesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	token := func(tokens ...string) string { return tokens[r.IntN(len(tokens))] }
	for range 400 {
		rules := make([]fileRule, 10+r.IntN(40))
		for i := range rules {
			var b strings.Builder
			b.WriteString(token("/", "*", "/*"))
			for range 1 + r.IntN(8) {
				b.WriteString(token("a", "b", "ab", "ba", "*", "*a", "*b", "*ab"))
			}
			if r.IntN(4) == 0 {
				b.WriteByte('$')
			}
			rules[i] = fileRule{pattern: normalizePath(b.String()), allow: r.IntN(3) == 0}
		}
		m := compileRules(rules)
		for range 30 {
			var b strings.Builder
			b.WriteByte('/')
			for range r.IntN(40) {
				b.WriteString(token("a", "b", "ab", "aab", "/"))
			}
			checkDecision(t, rules, m, b.String())
		}
	}
}

// TestNextAgreesWithIndex checks next, which searches blocks and then
// looks occurrences up in the bitmaps of ends that findEnds builds, and
// the tables of next ends that tabulate builds from them, against
// strings.Index, for every place of paths short and long (blocks of 64
// octets and more) and literals that overlap themselves.
func TestNextAgreesWithIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 5))
	lits := []string{"a", "b", "ab", "aa", "aab", "abab", "baab", "aaaa", "abba"}
	var rules []fileRule
	for _, l := range lits {
		rules = append(rules, fileRule{pattern: "/*" + l + "*Z"})
	}
	m := compileRules(rules)
	for _, size := range []int{70, 700, 4 << 10, 5000, 20 << 10} {
		for _, alphabet := range []string{"ab", "abbbbbbbbbbbbbbbbbbb", "abcdefghijklmnopqrstuvwxyz"} {
			p := make([]byte, size)
			for i := range p {
				p[i] = alphabet[r.IntN(len(alphabet))]
			}
			path := string(p)
			for _, bitmap := range []bool{false, true} {
				st := getMatchState(m.lits.len())
				m.scan(st, path)
				for l := range int32(m.lits.len()) {
					lit := m.lits.lit(l)
					ls := &st.lits[l]
					if ls.seen != st.gen || lit == "Z" {
						continue
					}
					for pos := 0; pos < size; pos += 1 + r.IntN(3) {
						if bitmap {
							ls.searched = int32(size) // findEnds, then look up
						}
						want := strings.Index(path[pos:], lit)
						if want >= 0 {
							want += pos
						}
						if want == pos || int(ls.firstEnd)-len(lit) >= pos && ls.ends == 0 {
							continue // wildMatches does not call next there
						}
						if got := m.next(st, path, int32(l), int32(pos)); int(got) != want {
							t.Fatalf("%d octets of %q, bitmap %v: next(%q, %d) = %d; want %d", size, alphabet, bitmap, lit, pos, got, want)
						}
					}
					if ls.ends != 0 && len(st.tables)+size <= maxTables {
						m.tabulate(st, int32(l), int32(size))
						table := st.tables[ls.table-1:][:size]
						for i := range size { // the end, plus 1, of the first occurrence that ends at or after i
							want := 0
							if j := strings.Index(path[max(0, i+1-len(lit)):], lit); j >= 0 {
								want = max(0, i+1-len(lit)) + j + len(lit)
							}
							if int(table[i]) != want {
								t.Fatalf("%d octets of %q: table of %q at %d = %d; want %d", size, alphabet, lit, i, table[i], want)
							}
						}
					}
				}
				matchStates.Put(st)
			}
		}
	}
}

// TestRuleMatcherAllocatesNothing checks decisions on small and large
// matchers, short and long paths.
func TestRuleMatcherAllocatesNothing(t *testing.T) {
	if poolDrops() {
		t.Skip("sync.Pool drops what it is given, as under the race detector")
	}
	long := normalizeTarget("/" + strings.Repeat("x1y2", 2000))
	for _, tc := range []struct {
		name  string
		rules []fileRule
	}{
		{"typical", typicalRules()},
		{"wildcards", engineWildcardFile(64 << 10)},
		{"empty", nil},
	} {
		m := compileRules(tc.rules)
		for _, path := range []string{"/", normalizeTarget(robotstest.Path), "/x12/y", long} {
			if n := testing.AllocsPerRun(50, func() { matchRule(m, path) }); n != 0 {
				t.Errorf("%s: match of a %d-octet path allocates %v times; want 0", tc.name, len(path), n)
			}
		}
	}
}

// poolDrops reports whether a sync.Pool loses what it is given, as it
// does at random under the race detector.
func poolDrops() bool {
	var pool sync.Pool
	for range 100 {
		x := new(int)
		pool.Put(x)
		if pool.Get() != x {
			return true
		}
	}
	return false
}

// typicalRules are the rules of a typical robots.txt: 20 rules, a quarter
// of them wildcards.
func typicalRules() []fileRule {
	rules, _, _ := parseRobots([]byte(robotstest.File(20, 4))).rulesFor("benchbot")
	return rules
}

// engineWildcardFile returns about size bytes of distinct wildcard rules
// "Disallow: /*x<N>*y$", the first file the engine's doc bounds.
func engineWildcardFile(size int) []fileRule {
	var rules []fileRule
	for n, bytes := 0, 0; bytes < size; n++ {
		r := fileRule{pattern: fmt.Sprintf("/*x%d*y$", n)}
		rules = append(rules, r)
		bytes += len(r.exported().String()) + 1
	}
	return rules
}

// TestRuleMatcherSize checks the memory that the doc of ruleMatcher states:
// per distinct head 40 bytes, per pattern with a '*' 28 bytes and 4 a
// piece, per distinct piece or tail 24 bytes and 16 an octet, and no more
// than 12 times the bytes of the rules' lines for the 500 KiB files of
// engine_bench_test.go.
func TestRuleMatcherSize(t *testing.T) {
	for _, f := range []struct {
		name     string
		body     string
		maxRatio float64
	}{
		{"typical-20", robotstest.File(20, robotstest.WildEvery), 5},
		{"plain", engineFile(enginePlain), 1.25},
		{"xN", engineFile(engineXN), 3},
		{"order", engineFile(engineOrder), 3.2},
		{"shared", engineFile(engineShared), 1.7},
		{"long", engineFile(engineLongRules), 2.1},
		{"random", engineFile(engineRandomPieces), 2},
	} {
		rules, _, _ := parseRobots([]byte(f.body)).rulesFor("x")
		lineBytes := 0
		for _, r := range rules {
			lineBytes += len(r.exported().String()) + 1
		}
		m := compileRules(rules)
		litBytes := 0
		for l := range int32(m.lits.len()) {
			litBytes += len(m.lits.lit(l))
		}
		bound := int(unsafe.Sizeof(*m)) + 40*len(m.heads.keys) + 28*len(m.wild) + 4*len(m.pieces) +
			24*m.lits.len() + 4 + 21*(litBytes+2) + 512
		bound += bound / 8 // capacities rounded up to the allocator's size classes
		got := int(m.heapBytes())
		t.Logf("%s: %.2f times", f.name, float64(got)/float64(lineBytes))
		if got > bound || float64(got) > f.maxRatio*float64(lineBytes) {
			t.Errorf("%s: %d bytes compiled from %d bytes of rules (%.2f times); want at most %d and %.2f times",
				f.name, got, lineBytes, float64(got)/float64(lineBytes), bound, f.maxRatio)
		}
	}
}
