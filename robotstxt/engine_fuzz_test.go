package robotstxt

import (
	"strings"
	"testing"
)

// engineFuzzFile turns fuzz bytes into a robots.txt group and a path, so
// that a seed reads like one: lines are rules, Disallow unless the line
// starts with '+', and the last line is the path. In a rule the octets a,
// b, /, ., '*' and '$' stand for themselves and '%' for "%24"; in the path
// a, b, /, ., ?, '$' and '*' do. Any other octet stands for one of those,
// so that every input is a small-alphabet case. A rule that does not start
// with '/' or '*' gets a '/'. At most 32 rules of 32 octets and a path of
// 64 are read; a path line that starts with a digit d is the rest of the
// line 4^d times, up to 16 KiB in normal form, so that long paths repeat
// what rules find.
func engineFuzzFile(data []byte) (robots, path string) {
	fold := func(c byte, alphabet string) byte {
		if strings.IndexByte(alphabet, c) >= 0 {
			return c
		}
		return alphabet[int(c)%len(alphabet)]
	}
	lines := strings.Split(string(data), "\n")
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for _, line := range lines[:len(lines)-1][:min(len(lines)-1, 32)] {
		kind := "Disallow: "
		if rest, ok := strings.CutPrefix(line, "+"); ok {
			kind, line = "Allow: ", rest
		}
		var p strings.Builder
		for i := 0; i < len(line) && i < 32; i++ {
			if c := fold(line[i], "ab/.*$%"); c == '%' {
				p.WriteString("%24")
			} else {
				p.WriteByte(c)
			}
		}
		pattern := p.String()
		if pattern != "" && pattern[0] != '/' && pattern[0] != '*' {
			pattern = "/" + pattern
		}
		b.WriteString(kind + pattern + "\n")
	}
	last := lines[len(lines)-1]
	times := 1
	if last != "" && '0' <= last[0] && last[0] <= '4' {
		times, last = 1<<(2*(last[0]-'0')), last[1:]
	}
	var unit strings.Builder
	for i := 0; i < len(last) && i < 64; i++ {
		unit.WriteByte(fold(last[i], "ab/.?$*"))
	}
	u := normalizeTarget(unit.String())
	if len(u) > 0 {
		times = min(times, (16<<10)/len(u))
	}
	return b.String(), "/" + strings.Repeat(u, times)
}

// FuzzEngine checks the engine against bruteDecide on every file, and
// against temoto/robotstxt v1.1.2 where temoto follows RFC 9309: on the
// file's rules without '*' or '$'. Where a wildcard makes temoto differ,
// bruteDecide's agreement with the engine shows that the RFC sides with
// the engine. In CI:
//
//	go test -run '^$' -fuzz '^FuzzEngine$' -fuzztime 100000x ./robotstxt
func FuzzEngine(f *testing.F) {
	for _, seed := range []string{
		"/a\n+/a/b\n/a/b/c",                      // Disallow: /a, Allow: /a/b
		"*.b$\n.aa.b",                            // Disallow: *.b$ against /.aa.b
		"/a*b\n+/ab\naab",                        // a wildcard against a plain rule
		"/a$b\n+/a%b\na$b",                       // a '$' that is not last
		"*\nx",                                   // Disallow: *
		"/a/*/b\n+/a\na/x/b",                     // §2.2.2: a match starts at the first octet
		"*ab*ab*b\n*b*/\nabab",                   // literals repeated within and across rules
		"*a*b*a*b*a\n+*ab*ba\n/*b*b$\n3ab/",      // a path of 64 repeats: pieces found block after block
		"/*a*a*a*a*a*a*a*a*b\n*ba$\n4aaaaaaaaab", // 16 KiB: a walk placed piece by piece
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		robots, path := engineFuzzFile(data)
		rules, _, _ := parseRobots([]byte(robots)).rulesFor("x")
		checkDecision(t, rules, compileRules(rules), path)
		checkDecide(t, Parse([]byte(robots)).Group("x"), rules, path)
		var plain []fileRule
		for _, r := range rules {
			if !strings.ContainsAny(r.pattern, "*$") {
				plain = append(plain, r)
			}
		}
		allowed, _ := matchRule(compileRules(plain), path)
		if want := temotoGroupOf(t, plain).Test(path); allowed != want {
			t.Fatalf("rules %v\n%s: engine allowed = %v; temoto says %v", plain, path, allowed, want)
		}
	})
}
