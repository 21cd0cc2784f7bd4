package robotstxt

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// accountFile returns a file of groups of small parts, each of
// tinyRules+2 rules with a '*', whose matchers take more than their share
// of the file's bound, and after them a group named "big" of 200 rules of
// 25 random pieces of 4 octets each; and the names of the small parts'
// groups.
func accountFile(groups int) (body string, tokens []string) {
	var b strings.Builder
	for i := range groups {
		tokens = append(tokens, letterName("s", i))
		fmt.Fprintf(&b, "User-agent: %s\n", tokens[i])
		for j := range tinyRules + 2 {
			fmt.Fprintf(&b, "Disallow: /*%c%d*\n", 'a'+j, i%10)
		}
		fmt.Fprintf(&b, "Allow: /*%c%d*ok\n", 'a'+i%7, i%10)
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(7, 7))
	b.WriteString("User-agent: big\n")
	for range 200 {
		b.WriteString("Disallow: /")
		for range 25 {
			b.WriteByte('*')
			for range 4 {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			}
		}
		b.WriteString("\n")
	}
	return b.String(), tokens
}

// accountPaths are paths that the groups of accountFile decide: the
// linearDecisions first are decided by trying each rule, and the next
// compiles the group.
var accountPaths = []string{"/x/a3/b3", "/c7", "/e3/ok", "/g1d4ok", "/zz", "/f5%41", "/b0/a0/ok/"}

// checkDecisions fails t unless each Group of f, bound by token, decides
// each of paths as bruteDecide does.
func checkDecisions(t *testing.T, f *File, tokens []string, paths []string) {
	t.Helper()
	for _, token := range tokens {
		g := f.Group(token)
		for _, p := range paths {
			allowed, rule, err := g.Decide(p)
			var rules []fileRule
			for _, part := range g.parts {
				rules = append(rules, part.rules...)
			}
			wantAllowed, want := bruteDecide(rules, normalizeTarget(p))
			var wantRule Rule
			if want >= 0 {
				wantRule = rules[want].exported()
			}
			if err != nil || allowed != wantAllowed || rule != wantRule {
				t.Errorf("Group(%q).Decide(%q) = %v, %+v, %v; want %v, %+v", token, p, allowed, rule, err, wantAllowed, wantRule)
			}
		}
	}
}

// TestAccountUndoesSmallMatchers checks that a File compiles its small
// parts only while it keeps no more than its bound, that compiling a
// large part past it undoes small parts' matchers, the Groups that held
// them letting them go, and that every Group decides each path as
// bruteDecide does throughout.
func TestAccountUndoesSmallMatchers(t *testing.T) {
	const groups = 400
	body, tokens := accountFile(groups)
	f := Parse([]byte(body))
	checkDecisions(t, f, tokens, accountPaths)
	without, small := withoutMatcher(f)
	if small != groups || without == 0 || without == small {
		t.Fatalf("%d of %d small parts have no matcher; want some, not all, of %d", without, small, groups)
	}
	if f.left < 0 {
		t.Errorf("the File keeps %d bytes more than its bound", -f.left)
	}

	checkDecisions(t, f, []string{"big"}, accountPaths) // compiles it, past the bound
	if f.Group("big").parts[0].loaded() == nil {
		t.Fatal("the large part was not compiled")
	}
	undone, _ := withoutMatcher(f)
	if undone <= without {
		t.Errorf("compiling the large part left %d small parts without a matcher, %d before; want more", undone, without)
	}
	if f.left < 0 && undone < groups {
		t.Errorf("the File keeps %d bytes more than its bound, and %d small parts' matchers", -f.left, groups-undone)
	}
	for _, token := range tokens {
		if g := f.Group(token); g.single.Load() != nil && g.parts[0].loaded() == nil {
			t.Errorf("Group(%q) holds the matcher its File undid", token)
		}
	}
	checkDecisions(t, f, tokens, accountPaths)
}

// bindingKept reports whether f keeps the binding of token: asked for it
// twice, it returns the same Group.
func bindingKept(f *File, token string) bool {
	g := f.Group(token)
	return f.Group(token) == g
}

// TestAccountBindings checks that a File keeps the bindings it can within
// its bound, the first ones, and makes the others for each call alone,
// deciding as bruteDecide does either way.
func TestAccountBindings(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 32<<10; i++ {
		fmt.Fprintf(&b, "User-agent:%s\nDisallow:/%c\n", letterName("", i), 'a'+i%26)
	}
	f := Parse([]byte(b.String()))
	first := f.Group("a")
	var tokens []string
	transient := 0
	for i := range f.file.groups {
		token := letterName("", i)
		tokens = append(tokens, token)
		if !bindingKept(f, token) {
			transient++
		}
	}
	if transient == 0 || transient == len(tokens) {
		t.Fatalf("%d of %d bindings are made for each call; want some, not all", transient, len(tokens))
	}
	if f.Group("a") != first {
		t.Error("the first binding was not kept")
	}
	if f.left < 0 {
		t.Errorf("the File keeps %d bytes more than its bound", -f.left)
	}
	checkDecisions(t, f, tokens, []string{"/a", "/b/c", "/z", "/"})
	for i, token := range tokens {
		m, err := f.Test(token+"/1.0", &url.URL{Path: fmt.Sprintf("/%c", 'a'+i%26)})
		if err != nil || m.Allowed || m.Agent != token || m.Group != token {
			t.Errorf("Test(%q) = %+v, %v; want disallowed by its own group", token, m, err)
		}
	}
}

// TestAccountConcurrent checks that goroutines binding, compiling and
// deciding on one File, whose account refuses and undoes small parts'
// matchers meanwhile, each get the decisions of bruteDecide; run with
// -race.
func TestAccountConcurrent(t *testing.T) {
	const groups = 200
	body, tokens := accountFile(groups)
	f := Parse([]byte(body))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			order := append([]string{"big"}, tokens...)
			rand.New(rand.NewPCG(uint64(w), 1)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			checkDecisions(t, f, order, accountPaths)
		})
	}
	wg.Wait()
	if without, small := withoutMatcher(f); without == 0 {
		t.Errorf("none of %d small parts is without a matcher; the test is meant to make the File refuse some", small)
	}
}

// TestHeapSize checks that heapSize counts what Go's allocator takes for
// an object: exactly up to the largest size class that runtime.MemStats
// lists, and at most 8 KiB more past it.
func TestHeapSize(t *testing.T) {
	var sink []byte
	for _, n := range []int{16, 17, 33, 100, 344, 1000, 1025, 5000, 9000, 18000, 18433, 30000, 40000, 100000} {
		got := int64(-1)
		for range 5 { // the least of five: other goroutines may allocate meanwhile
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			sink = make([]byte, n)
			runtime.ReadMemStats(&after)
			if d := int64(after.TotalAlloc - before.TotalAlloc); got < 0 || d < got {
				got = d
			}
		}
		largest := sizeClasses().sizes[len(sizeClasses().sizes)-1]
		switch want := heapSize(n); {
		case want < got:
			t.Errorf("heapSize(%d) = %d; the allocator took %d", n, want, got)
		case n <= int(largest) && want != got, want > got+8<<10:
			t.Errorf("heapSize(%d) = %d; the allocator took %d, and the largest size class listed is %d", n, want, got, largest)
		}
	}
	runtime.KeepAlive(sink)
}
