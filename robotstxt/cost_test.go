package robotstxt

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// compileAll binds every product token that f names, and one it does not,
// and compiles every part they bind but the tiny ones, which decisions
// never compile: all that decisions on f may build.
func compileAll(f *File) {
	f.Group("no-group-names-this-token")
	for _, a := range f.file.agents {
		for _, p := range f.Group(strings.ToLower(a.name)).parts {
			if !p.tiny() {
				p.compiled(f)
			}
		}
	}
	for _, p := range f.Group("no-group-names-this-token").parts {
		if !p.tiny() {
			p.compiled(f)
		}
	}
}

// heapKept returns the bytes of heap that n Files parsed from body and
// compiled keep, each, measured after a collection before and after:
// runtime.GC returns once the heap is swept.
// Other allocations of the process can only add to what it measures, so
// when that passes limit it measures twice more and returns the least.
func heapKept(body []byte, n int, limit func(*File) int64) (kept int64, f *File) {
	kept = -1
	for range 3 {
		files := make([]*File, n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range files {
			files[i] = Parse(body)
			compileAll(files[i])
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(files)
		if k := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(n); kept < 0 || k < kept {
			kept = k
		}
		if f = files[0]; kept <= limit(f) {
			break
		}
	}
	return kept, f
}

// checkCost fails t unless what Files parsed from body keep, compiled,
// stays within their Cost. It returns the Cost and the bytes kept. When
// quick, it first counts the bytes that parsing and compiling allocate, an
// upper bound of what they keep, and measures the heap only when those are
// more than the Cost.
func checkCost(t *testing.T, name string, body []byte, quick bool) (cost, kept int64) {
	t.Helper()
	if quick {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f := Parse(body)
		compileAll(f)
		runtime.ReadMemStats(&after)
		if allocated := int64(after.TotalAlloc - before.TotalAlloc); allocated <= f.Cost() {
			return f.Cost(), allocated
		}
	}
	copies := 1
	if len(body) < 64<<10 {
		copies = 4 // a small file keeps little: measure more of it
	}
	kept, f := heapKept(body, copies, (*File).Cost)
	if cost = f.Cost(); kept > cost {
		t.Errorf("%s: %d bytes of robots.txt keep %d bytes compiled; Cost says at most %d", name, len(body), kept, cost)
	}
	return cost, kept
}

// costFiles are files written to make the engine keep much: 500 KiB of
// rules of each kind that engine_bench_test.go knows, and of pieces of
// non-ASCII characters, each octet of which normalisation writes as
// three; of distinct random pieces of 3, 4 and 8 octets, the most a
// piece's node and entry take against its octets; of pieces that end
// with others, which chain; every piece of two octets, and of one; one
// group of 16 names; rules with a '$' inside; many groups of one rule,
// each bound, and of five, each compiled, alone and before a group of
// 500 KiB that is bound and compiled after them; groups of the fewest
// octets, of a rule, of a rule with a '$' inside, and one group of many
// names, each bound; groups of one rule more than a small part, of three
// random pieces of 4 octets, of eight of 3 octets, and of three of 5
// octets that begin with 3 octets one more than fewWords pieces share,
// which words leaves to the automaton; and lines the reader skips.
func costFiles() map[string]string {
	r := rand.New(rand.NewPCG(4, 4))
	nonASCII := func(int) string {
		var b strings.Builder
		b.WriteString("Disallow: /")
		for range 4 {
			b.WriteByte('*')
			for range 4 {
				b.WriteRune(rune(0x4e00 + r.IntN(2000)))
			}
		}
		return b.String()
	}
	var names strings.Builder
	for i := range 16 {
		fmt.Fprintf(&names, "User-agent: %s\n", letterName("Bot", i))
	}
	var groups strings.Builder // of a size that binding each of its names takes no long
	for i := 0; groups.Len() < 64<<10; i++ {
		fmt.Fprintf(&groups, "User-agent: %s\nDisallow: /*p%d*q\n", letterName("b", i), i)
	}
	minimal := func(rule string) string { // groups of the fewest octets, each of its own name
		var b strings.Builder
		for i := 0; b.Len() < 64<<10; i++ {
			fmt.Fprintf(&b, "User-agent:%s\n%s", letterName("", i), rule)
		}
		return b.String()
	}
	smallGroups := func(size int) string { // groups of a few more rules than a part that is never compiled
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, "User-agent: %s\n", letterName("b", i))
			for j := range tinyRules + 1 {
				fmt.Fprintf(&b, "Disallow: /*%c%d*\n", 'a'+j, i%10)
			}
		}
		return b.String()
	}
	cjk := func(n int) string { // n random CJK characters, 9 octets each in normal form
		var b strings.Builder
		for range n {
			b.WriteRune(rune(0x4e00 + r.IntN(20000)))
		}
		return b.String()
	}
	pairs := func(int) string { // two literals that share a long prefix, distinct from any other's
		p := cjk(4)
		return "Disallow: /*" + p + "x*" + p + "y"
	}
	tiny := func(int) string { // distinct pieces of three octets
		const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!&'()+,;=:@/"
		var b strings.Builder
		b.WriteString("Disallow: /")
		for range 12 {
			b.WriteByte('*')
			for range 3 {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			}
		}
		return b.String()
	}
	suffixes := func(i int) string { // every node ends with a literal, "a"
		if i == 0 {
			return "Disallow: /*a*z"
		}
		var b strings.Builder
		b.WriteString("Disallow: /*")
		for range 24 {
			b.WriteString("a" + string(rune('b'+r.IntN(24))))
		}
		return b.String()
	}
	periodic := func(int) string { // long literals whose prefixes repeat, which are not cut
		return "Disallow: /*" + strings.Repeat(cjk(1), 4) + cjk(2)
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!&'()+,;=:@/"
	random := func(n int) string { // n random octets of alphabet
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	pieces := func(size int) func(int) string { // 100 distinct pieces of size octets a rule
		return func(int) string {
			var b strings.Builder
			b.WriteString("Disallow: /")
			for range 100 {
				b.WriteString("*" + random(size))
			}
			return b.String()
		}
	}
	suffixed := func(int) string { // a piece of 3 octets, and 8 of 4 that end with it
		s := random(3)
		line := "Disallow: /*" + s
		for range 8 {
			line += "*" + random(1) + s
		}
		return line
	}
	twoOctets := func(ones bool) string { // every piece of two octets of alphabet, and of one
		var b strings.Builder
		b.WriteString("User-agent: *\n")
		if ones {
			b.WriteString("Disallow: /")
			for i := range len(alphabet) {
				b.WriteString("*" + alphabet[i:i+1])
			}
			b.WriteString("\n")
		}
		for i := range len(alphabet) {
			b.WriteString("Disallow: /")
			for j := range len(alphabet) {
				b.WriteString("*" + alphabet[i:i+1] + alphabet[j:j+1])
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	largeGroups := func(size, pieces int, piece func() string) string { // groups of one rule more than a small part
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, "User-agent:%s\n", letterName("", i))
			for range smallRules + 1 {
				b.WriteString("Disallow:/")
				for range pieces {
					b.WriteString("*" + piece())
				}
				b.WriteString("\n")
			}
		}
		return b.String()
	}
	var shared []string
	sharing := func(octets, prefix, k int) func() string { // pieces of octets random octets, k of which begin with each prefix
		return func() string {
			if len(shared) == 0 {
				p := random(prefix)
				for range k {
					shared = append(shared, p+random(octets-prefix))
				}
			}
			p := shared[len(shared)-1]
			shared = shared[:len(shared)-1]
			return p
		}
	}
	return map[string]string{
		"pairs":     engineFile(pairs),
		"tiny":      engineFile(tiny),
		"4-octets":  engineFile(pieces(4)),
		"8-octets":  engineFile(pieces(8)),
		"suffixed":  engineFile(suffixed),
		"2-octets":  twoOctets(false),
		"2-and-1":   twoOctets(true),
		"suffixes":  engineFile(suffixes),
		"periodic":  engineFile(periodic),
		"plain":     engineFile(enginePlain),
		"xN":        engineFile(engineXN),
		"random":    engineFile(engineRandomPieces),
		"long":      engineFile(engineLongRules),
		"non-ASCII": engineFile(nonASCII),
		"16-names":  names.String() + engineFile(engineRandomPieces)[len("User-agent: *\n"):],
		"dollars":   engineFile(func(i int) string { return fmt.Sprintf("Disallow: /a$%d*$b$c*$", i) }),
		"groups":    groups.String(),
		"minimal":   minimal("Disallow:/\n"),
		"minimal-$": minimal("Disallow:/$*\n"),
		"names":     minimal(""),
		"compiled":  smallGroups(64 << 10),
		"large":     largeGroups(300<<10, 3, func() string { return random(4) }),
		"large-3":   largeGroups(300<<10, 8, func() string { return random(3) }),
		"large-9":   largeGroups(300<<10, 3, sharing(5, 3, fewWords+1)),
		"evicted":   smallGroups(128<<10) + "User-agent: z\n" + engineFile(periodic)[len("User-agent: *\n"):],
		"skipped":   strings.Repeat("nonsense \xff\xfe line, not a field of robots.txt\n", 20000),
		"sitemaps":  strings.Repeat("Sitemap: https://example.com/sitemap.xml\n", 12000),
		"typical":   typicalFile,
		"usage": engineFile(func(i int) string {
			return fmt.Sprintf("Content-Usage: /é%d/*x train-ai=n, search=y, label-%d=y, other-%d=n", i, i, i)
		}),
		"signals": strings.Repeat("User-agent: a\nUser-agent: b\nContent-Signal: search=yes, ai-train=no, use=immediate\n", 8000),
	}
}

const typicalFile = "User-agent: *\nDisallow: /private/\nAllow: /private/press/\nDisallow: /*.pdf$\nCrawl-delay: 2\n\nSitemap: https://example.com/sitemap.xml\n"

// checkKept fails t when kept, the heap that a File parsed from size
// bytes keeps compiled, passes its bound: keepRatio times its size and
// keepSlack bytes more.
func checkKept(t *testing.T, name string, size int, kept int64) {
	t.Helper()
	if bound := int64(keepRatio*size) + keepSlack; kept > bound {
		t.Errorf("%s: %d bytes of robots.txt keep %d bytes compiled (%.1f times); want at most %d times and %d bytes more: %d",
			name, size, kept, float64(kept)/float64(size), keepRatio, keepSlack, bound)
	}
}

// withoutMatcher returns the small parts of f that have no matcher once
// compiled, and decide by trying each rule in turn, and all its small
// parts.
func withoutMatcher(f *File) (without, small int) {
	seen := make(map[*groupPart]bool)
	for _, p := range f.classes {
		if p == nil || seen[p] || p.tiny() || !p.compiling.small {
			continue
		}
		seen[p] = true
		small++
		if p.loaded() == nil {
			without++
		}
	}
	return without, small
}

// TestCostBoundsHeap checks that Cost bounds the heap that a compiled File
// keeps, on the files of costFiles and on the real files of the corpus,
// and that what a file keeps is within its bound (account.go); and that every
// small part of a real file is compiled, and every binding kept, so that
// its decisions are as fast as ever.
func TestCostBoundsHeap(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures the heap of 500 KiB files, slowly in -short mode and under the race detector")
	}
	for name, body := range costFiles() {
		cost, kept := checkCost(t, name, []byte(body), false)
		checkKept(t, name, len(body), kept)
		t.Logf("%-10s %7d bytes of file: Cost %9d (%5.1f×), kept %9d (%5.1f×)", name, len(body),
			cost, float64(cost)/float64(len(body)), kept, float64(kept)/float64(len(body)))
	}
	t.Run("corpus", func(t *testing.T) {
		files := corpusFiles(t)
		var most, mostKept float64
		for _, cf := range files {
			cost, kept := checkCost(t, cf.name, cf.body, false)
			checkKept(t, cf.name, len(cf.body), kept)
			f := Parse(cf.body)
			compileAll(f)
			if without, small := withoutMatcher(f); without > 0 {
				t.Errorf("%s: %d of its %d small parts have no matcher", cf.name, without, small)
			}
			for _, a := range f.file.agents {
				if token := strings.ToLower(a.name); !bindingKept(f, token) {
					t.Errorf("%s: the binding of %q is not kept", cf.name, token)
				}
			}
			if kept > 0 {
				most = max(most, float64(cost)/float64(kept))
			}
			if len(cf.body) >= keepSlack {
				mostKept = max(mostKept, float64(kept)/float64(len(cf.body)))
			}
		}
		t.Logf("%d files, each within its Cost, which is at most %.1f times what a file keeps; "+
			"a file of %d bytes or more keeps at most %.1f times its size", len(files), most, keepSlack, mostKept)
	})
}

// FuzzCost checks that Cost bounds the heap that any file keeps once
// compiled: the bytes allocated to parse and compile it, or when those are
// more, the heap measured after a collection.
//
//	go test -run '^$' -fuzz '^FuzzCost$' -fuzztime 100000x ./robotstxt
func FuzzCost(f *testing.F) {
	f.Add([]byte(typicalFile))
	f.Add([]byte("User-agent: a\nUser-agent: B\nDisallow: /*x$y*z$\nAllow: /é*ü\n\nUser-agent: *\nDisallow: *\n"))
	f.Add([]byte("Sitemap: s\nnonsense\nUser-agent: a b\nDisallow: /%7e*%2f**$\n"))
	f.Add([]byte(attachExample + "User-agent: a\nContent-Signal: /é zz=yes, ai-train=no\nContent-Usage: /x Bad\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkCost(t, "input", body, true)
	})
}
