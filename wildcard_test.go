package polite

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestWildcardOf(t *testing.T) {
	tests := []struct {
		pattern  string
		wild     bool
		pieces   []string
		anchored bool
	}{
		{"/private/", false, nil, false},
		{"/private*", false, nil, false}, // temoto trims a trailing '*'
		{"/private**", false, nil, false},
		{"/*.gif$", true, []string{"/", ".gif"}, true},
		{"*.gif$", true, []string{".gif"}, true},
		{"/a*$", true, []string{"/a"}, false},
		{"/a$b", true, []string{"/a", "b"}, false},
		{"/a$b$", true, []string{"/a", "b"}, true},
		{"/search/*/page", true, []string{"/search/", "/page"}, false},
		{"/*?sort=*", true, []string{"/", "?sort="}, false},
		{"$", true, nil, false},
		{"*", false, nil, false},
	}
	for _, tc := range tests {
		w, ok := wildcardOf(tc.pattern)
		if ok != tc.wild || !slices.Equal(w.pieces, tc.pieces) || w.anchored != tc.anchored {
			t.Errorf("wildcardOf(%q) = %q, anchored %v, %v; want %q, %v, %v",
				tc.pattern, w.pieces, w.anchored, ok, tc.pieces, tc.anchored, tc.wild)
		}
	}
}

// randomPattern and randomPath draw from a small alphabet, so that rules
// and paths often overlap, and put '*' and '$' anywhere in a pattern.
func randomPattern(r *rand.Rand) string {
	const alphabet = "ab/.*$"
	var b strings.Builder
	b.WriteByte("/*"[r.IntN(2)])
	for range r.IntN(6) {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return normalizePath(b.String())
}

func randomPath(r *rand.Rand) string {
	const alphabet = "ab/.?=%"
	var b strings.Builder
	b.WriteByte('/')
	for range r.IntN(8) {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return normalizeTarget(b.String())
}

// TestWildcardMayMatchIsSound checks that mayMatch never says no to a path
// that temoto's regular expression for the rule matches.
func TestWildcardMayMatchIsSound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	checked, matched := 0, 0
	for range 3000 {
		pattern := randomPattern(r)
		w, ok := wildcardOf(pattern)
		if !ok {
			continue
		}
		g := compileGroup([]robotsRule{{pattern: pattern}}) // Disallow: matched means refused
		if g == nil {
			t.Fatalf("temoto rejected Disallow: %s", pattern)
		}
		for range 20 {
			path := randomPath(r)
			if !g.Test(path) {
				matched++
				if !w.mayMatch(path) {
					t.Errorf("Disallow: %s matches %q, but mayMatch says it cannot", pattern, path)
				}
			}
			checked++
		}
	}
	if checked < 10000 || matched < 1000 {
		t.Fatalf("only %d wildcard cases checked, %d of them matches", checked, matched)
	}
}

// TestAllowedDecidesAsTemoto checks that the wildcard filter never changes
// a decision: allowed answers as temoto does with every rule of the group.
func TestAllowedDecidesAsTemoto(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	refused := 0
	for i := range 1500 {
		var robots strings.Builder
		robots.WriteString("User-agent: *\n")
		for range 1 + r.IntN(6) {
			kind := []string{"Allow", "Disallow"}[r.IntN(2)]
			fmt.Fprintf(&robots, "%s: %s\n", kind, randomPattern(r))
		}
		a := compileAgent(parseRobots([]byte(robots.String())), "bot")
		if a.group == nil {
			continue
		}
		for range 20 {
			path := randomPath(r)
			got, want := a.allowed(path), a.group.Test(path)
			if got != want {
				t.Fatalf("case %d: allowed(%q) = %v; temoto on the whole group says %v\n%s", i, path, got, want, robots.String())
			}
			if !got {
				refused++
			}
		}
	}
	if refused < 1000 {
		t.Fatalf("only %d refusals: the cases do not exercise the rules", refused)
	}
}

func TestAllowedSkipsTemotoWhenNoWildcardCanMatch(t *testing.T) {
	a := compileAgent(parseRobots([]byte("User-agent: *\nDisallow: /*.pdf$\nDisallow: /private/\nAllow: /private/ok\n")), "bot")
	if len(a.wild) != 1 || a.plain == nil || a.plain == a.group {
		t.Fatalf("wild %v, plain %p, group %p; want one wildcard and a plain group of its own", a.wild, a.plain, a.group)
	}
	for path, want := range map[string]bool{
		"/a/doc.pdf":     false, // the wildcard may match: temoto decides with every rule
		"/private/x":     false,
		"/private/ok":    true,
		"/public/doc.pd": true,
	} {
		if got := a.allowed(path); got != want {
			t.Errorf("allowed(%q) = %v; want %v", path, got, want)
		}
	}
	only := compileAgent(parseRobots([]byte("User-agent: *\nDisallow: /*.pdf$\n")), "bot")
	if only.plain != nil || !only.allowed("/a.html") || only.allowed("/a.pdf") {
		t.Errorf("a group of wildcards only: plain %p, /a.html %v, /a.pdf %v; want nil, true, false",
			only.plain, only.allowed("/a.html"), only.allowed("/a.pdf"))
	}
}

func TestIsRobotsPath(t *testing.T) {
	for _, raw := range []string{
		"http://h/robots.txt", "http://h/robots.txt?x=1", "http://h/robots%2Etxt", "http://h/robots.tx%74",
		"http://h/Robots.txt", "http://h/a/robots.txt", "http://h/robots.txt/", "http://h", "http://h/%2Frobots.txt",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := isRobotsPath(u), u.EscapedPath() == "/robots.txt"; got != want {
			t.Errorf("isRobotsPath(%s) = %v; want %v", raw, got, want)
		}
	}
}

func TestForAgentKeepsMatchers(t *testing.T) {
	r := &robotsRecord{file: parseRobots([]byte("User-agent: *\nDisallow: /x\n"))}
	first := r.forAgent("bot")
	if r.agents != nil {
		t.Errorf("one agent made a map: %v", r.agents)
	}
	if r.forAgent("other") == first || r.forAgent("bot") != first {
		t.Errorf("forAgent did not keep one matcher per token")
	}
	for i := range 3 * maxAgents {
		r.forAgent(fmt.Sprint("agent-", i))
	}
	if n := len(r.agents) + 1; n != maxAgents {
		t.Errorf("%d matchers kept; want maxAgents = %d", n, maxAgents)
	}
	if r.forAgent("bot") != first {
		t.Errorf("the first matcher was dropped")
	}
}
