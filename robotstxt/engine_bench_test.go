package robotstxt

// Benchmarks of the matching engine, each beside temoto/robotstxt v1.1.2
// where that makes sense, so that ratios come from one process:
//
//	go test -run '^$' -bench 'Engine' -benchmem -count 5
//
// They measure; they assert nothing about time. The machine's other work
// shows in ns/op; cpu-ns/op counts only this process's CPU time.

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/polite-go/polite/internal/cputime"
	"github.com/polite-go/polite/internal/robotstest"
	temoto "github.com/temoto/robotstxt"
)

// temotoGroupOf is temoto's group of rules, written as a clean robots.txt
// with the Allow lines first, as the transport first used it.
func temotoGroupOf(tb testing.TB, rules []fileRule) *temoto.Group {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for _, allow := range []bool{true, false} {
		for _, r := range rules {
			if r.allow == allow {
				b.WriteString(r.exported().String() + "\n")
			}
		}
	}
	data, err := temoto.FromString(b.String())
	if err != nil {
		tb.Fatal(err)
	}
	return data.FindGroup("*")
}

// BenchmarkEngineDecision is the whole decision of one request against a
// typical robots.txt of 20 and 200 rules, a quarter of them wildcards: the
// URL's escaped path and query, normalised, then matched. The path matches
// no rule, so every rule counts.
func BenchmarkEngineDecision(b *testing.B) {
	u, err := url.Parse("http://bench.example" + robotstest.Path)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{20, 200} {
		rules, _, _ := parseRobots([]byte(robotstest.File(n, robotstest.WildEvery))).rulesFor("benchbot")
		b.Run(fmt.Sprintf("rules=%d/engine", n), func(b *testing.B) {
			m := compileRules(rules)
			cputime.Loop(b, func() {
				path := normalizeTarget(u.RequestURI())
				if ref := m.match(path); ref.rule >= 0 && !ref.allow() {
					b.Fatal("refused")
				}
			})
		})
		b.Run(fmt.Sprintf("rules=%d/temoto", n), func(b *testing.B) {
			g := temotoGroupOf(b, rules)
			cputime.Loop(b, func() {
				if !g.Test(normalizeTarget(u.RequestURI())) {
					b.Fatal("refused")
				}
			})
		})
	}
}

// BenchmarkRobotsMatch is the matcher alone, on a path already normalised:
// the part of the hot path that grows with the rules. "wild=1/4" is the mix
// of the transport's BenchmarkRoundTrip; "wild=0" has prefix rules only,
// "wild=all" wildcard rules only.
func BenchmarkRobotsMatch(b *testing.B) {
	path := normalizeTarget(robotstest.Path)
	for _, mix := range []struct {
		name  string
		every int
	}{{"wild=1/4", robotstest.WildEvery}, {"wild=0", 0}, {"wild=all", 1}} {
		for _, n := range robotstest.RuleCounts {
			b.Run(fmt.Sprintf("%s/rules=%d", mix.name, n), func(b *testing.B) {
				g := Parse([]byte(robotstest.File(n, mix.every))).Group("benchbot")
				m := compileRules(g.parts[0].rules)
				if ok, _ := matchRule(m, path); !ok {
					b.Fatal("the path is disallowed")
				}
				cputime.Loop(b, func() { m.match(path) })
			})
		}
	}
}

// benchLargeRobots returns a robots.txt of about size bytes: groups for
// many crawlers, each with prefix and wildcard rules, comments and a
// Crawl-delay, as the largest real files are.
func benchLargeRobots(size int) []byte {
	var b strings.Builder
	for g := 0; b.Len() < size; g++ {
		fmt.Fprintf(&b, "# group %d\nUser-agent: crawler-%d\nUser-agent: Other-Crawler-%d/2.0\nCrawl-delay: %d\n", g, g, g, g%10)
		for i := range 50 {
			if i%4 == 3 {
				fmt.Fprintf(&b, "Disallow: /*/private-%d/*.php$\n", i)
			} else {
				fmt.Fprintf(&b, "Disallow: /catalogue/%d/items/%d/  # old section\n", g, i)
			}
		}
		b.WriteString("Allow: /catalogue/public/\n\n")
	}
	b.WriteString("User-agent: *\nDisallow: /private/\nAllow: /\n")
	return []byte(b.String()[:size])
}

// BenchmarkRobotsParse reads a 500 KiB robots.txt ("read") and then builds
// the matcher of one group from it ("compile").
func BenchmarkRobotsParse(b *testing.B) {
	body := benchLargeRobots(engineMaxBytes)
	b.Run("read/500KiB", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			parseRobots(body)
		}
	})
	f := parseRobots(body)
	rules, _, _ := f.rulesFor("crawler-7")
	b.Run(fmt.Sprintf("compile/rules=%d", len(rules)), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			compileRules(rules)
		}
	})
}

// BenchmarkEngineParse reads a 500 KiB robots.txt into what decides:
// "many-groups" is the file of BenchmarkRobotsParse, many crawlers' groups,
// of which the engine compiles the one a crawler binds; "one-group" is one
// group of 500 KiB of distinct wildcard rules, all compiled. temoto parses
// the whole file and compiles every rule as it reads.
func BenchmarkEngineParse(b *testing.B) {
	files := []struct {
		name  string
		body  []byte
		token string
	}{
		{"many-groups", benchLargeRobots(engineMaxBytes), "crawler-7"},
		{"one-group", []byte(engineFile(engineXN)), "x"},
	}
	for _, f := range files {
		b.Run(f.name+"/engine", func(b *testing.B) {
			b.SetBytes(int64(len(f.body)))
			cputime.Loop(b, func() {
				rules, _, _ := parseRobots(f.body).rulesFor(f.token)
				compileRules(rules)
			})
		})
		b.Run(f.name+"/temoto", func(b *testing.B) {
			b.SetBytes(int64(len(f.body)))
			cputime.Loop(b, func() {
				data, err := temoto.FromBytes(f.body)
				if err != nil {
					b.Fatal(err)
				}
				data.FindGroup(f.token)
			})
		})
	}
}

// heapOf returns the bytes that build's result keeps on the heap.
func heapOf(build func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(x)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// BenchmarkEngineMemory is the heap that one origin's compiled rules keep,
// for one group, as heap-B: a typical file of 20 rules, 500 KiB of plain
// rules, and the 500 KiB files of wildcard rules of BenchmarkEngineWorst.
// rules-B is the bytes of the group's lines in robots.txt; the parsed rules,
// which the transport keeps too, are file-B.
func BenchmarkEngineMemory(b *testing.B) {
	files := []struct{ name, body string }{
		{"typical-20", robotstest.File(20, robotstest.WildEvery)},
		{"plain-500KiB", engineFile(enginePlain)},
		{"xN-500KiB", engineFile(engineXN)},
		{"random-500KiB", engineFile(engineRandomPieces)},
		{"long-500KiB", engineFile(engineLongRules)},
	}
	for _, f := range files {
		rules, _, _ := parseRobots([]byte(f.body)).rulesFor("x")
		ruleBytes := 0
		for _, r := range rules {
			ruleBytes += len(r.exported().String()) + 1
		}
		b.Run(f.name+"/engine", func(b *testing.B) {
			var heap float64
			for b.Loop() {
				heap = heapOf(func() any { return compileRules(rules) })
			}
			b.ReportMetric(heap, "heap-B")
			b.ReportMetric(float64(ruleBytes), "rules-B")
			b.ReportMetric(heapOf(func() any { return parseRobots([]byte(f.body)) }), "file-B")
		})
		b.Run(f.name+"/temoto", func(b *testing.B) {
			var heap float64
			for b.Loop() {
				heap = heapOf(func() any { return temotoGroupOf(b, rules) })
			}
			b.ReportMetric(heap, "heap-B")
			b.ReportMetric(float64(ruleBytes), "rules-B")
		})
	}
}

// engineMaxBytes is the size of the large and adversarial files: what a
// crawler reads of a robots.txt (RFC 9309 §2.5), and the transport does.
const engineMaxBytes = 500 << 10

// engineFile returns a "*" group of rules written by line(i) for i = 0,
// 1, ..., as many as fit in engineMaxBytes.
func engineFile(line func(i int) string) string {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; ; i++ {
		l := line(i) + "\n"
		if b.Len()+len(l) > engineMaxBytes {
			return b.String()
		}
		b.WriteString(l)
	}
}

// The adversarial files, one line each.
var (
	// enginePlain is plain prefix rules under a few sections.
	enginePlain = func(i int) string { return fmt.Sprintf("Disallow: /section-%d/item-%d/", i%50, i) }
	// engineXN is distinct anchored wildcards sharing their head and tail.
	engineXN = func(i int) string { return fmt.Sprintf("Disallow: /*x%d*y$", i) }
	// engineStarA is one wildcard repeated.
	engineStarA = func(int) string { return "Disallow: *a" }
	// engineShared is wildcards that share a long head, with distinct pieces.
	engineShared = func(i int) string { return fmt.Sprintf("Disallow: /catalogue/items/2024/*/p%d*q", i) }
	// engineRandomPieces is wildcards of random 12-octet pieces: the largest
	// automaton per byte of file.
	engineRandomPieces = func(i int) string {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		var b strings.Builder
		b.WriteString("Disallow: /")
		for range 4 {
			b.WriteByte('*')
			for range 12 {
				b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[r.IntN(36)])
			}
		}
		return b.String()
	}
	// engineLongRules is rules of thousands of one-octet pieces, each with a
	// distinct first piece so that none shares work with another.
	engineLongRules = func(i int) string {
		return fmt.Sprintf("Disallow: /*c%d%s*b", i, strings.Repeat("*a", 3000))
	}
	// engineOrder is wildcards whose pieces all occur in the worst path but
	// in the wrong order: x<N> in the middle, z only at either end, w only
	// at the start.
	engineOrder = func(i int) string { return fmt.Sprintf("Disallow: /*x%d*z*w", i) }
	// engineNested is heads each a prefix of the next, with a wildcard each.
	engineNested = func(i int) string { return "Disallow: /" + strings.Repeat("a", i+1) + "*b" }
)

// BenchmarkEngineWorst is the whole decision on engineWorstCases, with
// paths of 2, 16 and 32 KiB (MaxPathLength), and temoto's on the first of
// them at 2 KiB.
func BenchmarkEngineWorst(b *testing.B) {
	for _, size := range []int{2 << 10, 16 << 10, MaxPathLength} {
		for _, c := range engineWorstCases(size) {
			rules, _, _ := parseRobots([]byte(c.body)).rulesFor("x")
			path := normalizeTarget(c.path)
			b.Run(fmt.Sprintf("%s/%dKiB/engine", c.name, size>>10), func(b *testing.B) {
				m := compileRules(rules)
				if ref := m.match(path); (ref.rule >= 0) != c.match {
					b.Fatalf("match = %+v; want a match: %v", ref, c.match)
				}
				cputime.Loop(b, func() { m.match(path) })
			})
			if c.name == "xN/numbers+y" && size == 2<<10 {
				b.Run(fmt.Sprintf("%s/%dKiB/temoto", c.name, size>>10), func(b *testing.B) {
					g := temotoGroupOf(b, rules)
					cputime.Loop(b, func() { g.Test(path) })
				})
			}
		}
	}
}

// BenchmarkEngineTried is the decision of a small part that its File does
// not compile (account.go), which tries each of its rules in turn, on the
// worst rules it may have: smallRules rules of 128 octets each, of two
// pieces of 62 and 63 octets that the path nearly holds everywhere, of one
// of 126, or of 63 pieces of one octet but the last, with paths of 2, 16
// and 32 KiB of the octet they nearly hold.
func BenchmarkEngineTried(b *testing.B) {
	long := "/*" + strings.Repeat("a", 61) + "b*" + strings.Repeat("a", 62) + "c"
	many := "/" + strings.Repeat("*a", 63) + "b"
	one := "/*" + strings.Repeat("a", 125) + "b"
	for _, c := range []struct{ name, pattern string }{{"long-pieces", long}, {"one-piece", one}, {"many-pieces", many}} {
		var body strings.Builder
		body.WriteString("User-agent: x\n")
		for i := range smallRules {
			fmt.Fprintf(&body, "Disallow: %s%c\n", c.pattern[:len(c.pattern)-1], 'c'+i%20)
		}
		f := Parse([]byte(body.String()))
		p := f.Group("x").parts[0]
		if p.tiny() || !p.compiling.small {
			b.Fatalf("%s: the part is not small", c.name)
		}
		for _, size := range []int{2 << 10, 16 << 10, MaxPathLength} {
			path := "/" + strings.Repeat("a", size-1)
			b.Run(fmt.Sprintf("%s/%dKiB", c.name, size>>10), func(b *testing.B) {
				if got, want := p.matchTiny(path), compileRules(p.rules).match(path); got != want {
					b.Fatalf("matchTiny = %+v; the matcher decides %+v", got, want)
				}
				cputime.Loop(b, func() { p.matchTiny(path) })
			})
		}
	}
}
