package robotstxt

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polite-go/polite/internal/robotstest"
)

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestRobotsTest runs the example of RFC 9309 §5.1 through the public API:
// which group binds, which rule decides.
func TestRobotsTest(t *testing.T) {
	r := Parse([]byte(robotstest.RFC9309Example))
	tests := []struct {
		ua, url string
		want    Match
	}{
		{"Mozilla/5.0", "http://h/a/b.gif", Match{false, "mozilla", "*", "Disallow: *.gif$"}},
		{"x", "http://h/example/x", Match{false, "x", "*", "Disallow: /example/"}},
		{"x", "http://h/publications/x.gif", Match{true, "x", "*", "Allow: /publications/"}},
		{"x", "http://h/other", Match{true, "x", "*", ""}},
		{"FooBot/1.0", "http://h/example/page.html", Match{true, "foobot", "foobot", "Allow: /example/page.html"}},
		{"FooBot/1.0", "http://h/x", Match{false, "foobot", "foobot", "Disallow: /"}},
		{"FooBot/1.0", "http://h/robots.txt", Match{true, "foobot", "foobot", ""}},
		{"barbot", "http://h/example/page.html", Match{false, "barbot", "barbot", "Disallow: /example/page.html"}},
		{"bazbot", "http://h/example/page.html?x", Match{false, "bazbot", "bazbot", "Disallow: /example/page.html"}},
		{"quxbot", "http://h/example/page.html", Match{true, "quxbot", "quxbot", ""}},
		{"", "http://h/example/", Match{false, "", "*", "Disallow: /example/"}},
		{"x", "http://h/%7Eexample/%2A", Match{true, "x", "*", ""}},
	}
	for _, tc := range tests {
		if got, err := r.Test(tc.ua, mustURL(t, tc.url)); got != tc.want || err != nil {
			t.Errorf("Test(%q, %s) = %+v, %v; want %+v", tc.ua, tc.url, got, err, tc.want)
		}
	}
}

func TestRobotsNoGroupBinds(t *testing.T) {
	r := Parse([]byte("User-agent: other\nDisallow: /\nCrawl-delay: 3\n"))
	want := Match{Allowed: true, Agent: "mybot"}
	if got, err := r.Test("MyBot", mustURL(t, "http://h/x")); got != want || err != nil {
		t.Errorf("Test = %+v, %v; want %+v", got, err, want)
	}
	if d := r.CrawlDelay("MyBot"); d != 0 {
		t.Errorf("CrawlDelay = %v; want 0", d)
	}
	if d := r.CrawlDelay("other/2"); d != 3*time.Second {
		t.Errorf("CrawlDelay(other) = %v; want 3s", d)
	}
}

func TestRobotsCrawlDelayAndSitemaps(t *testing.T) {
	r := Parse([]byte("Sitemap: http://h/1.xml\nUser-agent: a\nCrawl-delay: 2\nDisallow:\n\nUser-agent: *\nCrawl-delay: 0.5\nDisallow:\n\nUser-agent: a\nCrawl-delay: 4\nSitemap: http://h/2.xml\n"))
	for ua, want := range map[string]time.Duration{"a/1.0": 4 * time.Second, "b": 500 * time.Millisecond} {
		if got := r.CrawlDelay(ua); got != want {
			t.Errorf("CrawlDelay(%q) = %v; want %v", ua, got, want)
		}
	}
	if got := r.Sitemaps(); !slices.Equal(got, []string{"http://h/1.xml", "http://h/2.xml"}) {
		t.Errorf("Sitemaps = %q", got)
	}
	r.Sitemaps()[0] = "changed"
	if r.Sitemaps()[0] != "http://h/1.xml" {
		t.Errorf("Sitemaps shares its slice with the caller")
	}
	if r.NumGroups() != 3 || r.NumRules() != 0 {
		t.Errorf("NumGroups, NumRules = %d, %d; want 3, 0", r.NumGroups(), r.NumRules())
	}
}

// TestRobotsSkipped checks the line numbers, with CR LF, CR and LF line
// ends, and each reason.
func TestRobotsSkipped(t *testing.T) {
	body := "Disallow: /early\r\n" + // 1
		"User-agent: *\r\n" + // 2
		"Disalow: /typo\r" + // 3
		"Disallow: relative\n" + // 4
		"\n" + // 5
		"Crawl-delay: soon # comment kept in Text\n" + // 6
		"<html>\n" + // 7
		"User-agent: /\n" + // 8
		"Allow: /ok\n" // 9
	r := Parse([]byte("Crawl-delay: 1\n" + body))
	want := []SkippedLine{
		{1, "Crawl-delay: 1", "Crawl-delay outside any group"},
		{2, "Disallow: /early", "rule outside any group"},
		{4, "Disalow: /typo", "unknown field"},
		{5, "Disallow: relative", "not a path pattern"},
		{7, "Crawl-delay: soon # comment kept in Text", "bad Crawl-delay"},
		{8, "<html>", "no colon"},
		{9, "User-agent: /", "no product token"},
	}
	if got := r.Skipped(); !slices.Equal(got, want) {
		t.Errorf("Skipped =\n%q\nwant\n%q", got, want)
	}
	// "User-agent: /" names no crawler, but opens a group: Allow: /ok is
	// its rule, and binds no one.
	if r.NumSkipped() != len(want) || r.NumRules() != 1 || r.NumGroups() != 2 {
		t.Errorf("NumSkipped, NumRules, NumGroups = %d, %d, %d; want %d, 1, 2", r.NumSkipped(), r.NumRules(), r.NumGroups(), len(want))
	}
}

// TestRobotsSkippedIsBounded checks that a hostile file cannot make the
// record of skipped lines large.
func TestRobotsSkippedIsBounded(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes of 2-byte characters
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "junk %d %s\n", i, long)
	}
	b.WriteString("\xff\xfe binary\n")
	r := Parse([]byte(b.String()))
	skipped := r.Skipped()
	if len(skipped) != maxSkippedLines || r.NumSkipped() != 1001 {
		t.Fatalf("recorded %d of %d skipped lines; want %d of 1001", len(skipped), r.NumSkipped(), maxSkippedLines)
	}
	last := skipped[len(skipped)-1]
	if last.Line != maxSkippedLines || len(last.Text) > maxSkippedText || !strings.HasPrefix(last.Text, "junk 99 éé") ||
		strings.ContainsRune(last.Text, '\uFFFD') {
		t.Errorf("last recorded = %+v (%d bytes); want line %d, at most %d bytes, whole characters",
			last, len(last.Text), maxSkippedLines, maxSkippedText)
	}
	if r.NumGroups() != 0 || len(r.Sitemaps()) != 0 {
		t.Errorf("a file of junk has %d groups, %d sitemaps; want none", r.NumGroups(), len(r.Sitemaps()))
	}
	bin := Parse([]byte("\x00\x01\xff: \xfe"))
	if got := bin.Skipped(); len(got) != 1 || got[0].Text != "\x00\x01\uFFFD: \uFFFD" || got[0].Reason != skipUnknownField {
		t.Errorf("binary line recorded as %q; want its invalid bytes replaced", got)
	}
}

// TestRobotsSharesMatchers checks that every product token bound by the
// "*" groups shares one compiled matcher, and that a File is safe for
// concurrent use.
func TestRobotsSharesMatchers(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /*.pdf$\n\nUser-agent: a\nDisallow: /a\n"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				ua := letterName("bot", i*100+j) + "/1.0"
				if m, _ := r.Test(ua, mustURL(t, "http://h/x.pdf")); m.Allowed || m.Group != "*" {
					t.Errorf("Test(%q) = %+v; want refused by the * group", ua, m)
					return
				}
				r.Test("a", mustURL(t, "http://h/a"))
			}
		}()
	}
	wg.Wait()
	if n := len(*r.bound.Load()); n != 2 {
		t.Errorf("%d matchers for 801 User-Agents of two bindings; want 2", n)
	}
}

// TestGroup checks the API that a crawler's hot path uses: Group binds a
// User-Agent or its product token alike, and Decide normalises the path
// and reports the deciding rule.
func TestGroup(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /\n\nUser-agent: a\nUser-agent: b\nDisallow: /~x/\nAllow: /~x/ok\nCrawl-delay: 2\n\nUser-agent: c\nCrawl-delay: 7\n"))
	g := r.Group("A/1.0 (+https://example.com/bot)")
	if g != r.Group("a") || g == r.Group("c") || r.Group("x") != r.Group("Y/2") {
		t.Errorf("Group: A/1.0 and a, or x and Y/2, do not share one group, or c shares a's")
	}
	if g.Agent() != "a" || g.CrawlDelay() != 2*time.Second || g.NumRules() != 2 {
		t.Errorf("Agent, CrawlDelay, NumRules = %q, %v, %d; want a, 2s, 2", g.Agent(), g.CrawlDelay(), g.NumRules())
	}
	for path, want := range map[string]struct {
		allowed bool
		rule    Rule
	}{
		"/%7Ex/y":  {false, Rule{Line: 6, Pattern: "/~x/"}},
		"/~x/ok?q": {true, Rule{Allow: true, Line: 7, Pattern: "/~x/ok"}},
		"/other":   {true, Rule{}},
		"/%2A":     {true, Rule{}},
	} {
		if allowed, rule, err := g.Decide(path); allowed != want.allowed || rule != want.rule || err != nil {
			t.Errorf("Decide(%q) = %v, %+v, %v; want %v, %+v", path, allowed, rule, err, want.allowed, want.rule)
		}
	}
	if c := r.Group("c"); c.NumRules() != 0 || c.CrawlDelay() != 7*time.Second {
		t.Errorf("group c: %d rules, Crawl-delay %v; want 0, 7s", c.NumRules(), c.CrawlDelay())
	}
	star := r.Group("other")
	if allowed, rule, _ := star.Decide("/robots.txt"); star.Agent() != "*" || allowed || rule.String() != "Disallow: /" {
		t.Errorf("Group(other) = %q, deciding /robots.txt %v by %q; want *, refused by Disallow: / (only Test exempts it)",
			star.Agent(), allowed, rule)
	}
	if none := Parse(nil).Group("a"); none.Agent() != "" || none.NumRules() != 0 {
		t.Errorf("an empty file binds %q with %d rules; want no group", none.Agent(), none.NumRules())
	}
	if d := r.MaxCrawlDelay(); d != 7*time.Second {
		t.Errorf("MaxCrawlDelay = %v; want 7s", d)
	}
	if s := (Rule{}).String(); s != "" {
		t.Errorf("Rule{}.String() = %q; want \"\"", s)
	}
}

// TestLines checks the line numbers that say which lines decided: the
// rule's, and the user-agent lines that bound, numbered from 1 with lines
// ending at CR, LF or CR LF.
func TestLines(t *testing.T) {
	body := "\xef\xbb\xbfUser-agent: *\r\nDisallow: /\r\n\r\n# a comment\rUser-agent: a\rUser-agent: \"no name\"\n" +
		"User-agent: b # and a comment\nDisallow: /x # the rule\nAllow: /x/y\n\nUser-agent: B\nDisallow: /z\n"
	r := Parse([]byte(body))
	for _, tc := range []struct {
		ua, path   string
		agentLines []int
		rule       Rule
	}{
		{"other", "/a", []int{1}, Rule{Line: 2, Pattern: "/"}},
		{"a", "/x/z", []int{5}, Rule{Line: 8, Pattern: "/x"}},
		{"b", "/x/y", []int{7, 11}, Rule{Allow: true, Line: 9, Pattern: "/x/y"}},
		{"B/1.0", "/z", []int{7, 11}, Rule{Line: 12, Pattern: "/z"}},
		{"a", "/other", []int{5}, Rule{}},
	} {
		g := r.Group(tc.ua)
		if got := g.AgentLines(); !slices.Equal(got, tc.agentLines) {
			t.Errorf("Group(%q).AgentLines() = %v; want %v", tc.ua, got, tc.agentLines)
		}
		if _, rule, err := g.Decide(tc.path); rule != tc.rule || err != nil {
			t.Errorf("Group(%q).Decide(%q) = %+v, %v; want %+v", tc.ua, tc.path, rule, err, tc.rule)
		}
	}
	if lines := Parse([]byte("User-agent: a\nDisallow: /\n")).Group("b").AgentLines(); len(lines) != 0 {
		t.Errorf("AgentLines of no group = %v; want none", lines)
	}
}

// TestGroupCompiledOnce checks that a group of the file is compiled once,
// however many names it has and however many product tokens ask for it,
// that groups giving the same names are compiled together, and that a
// product token named by several groups is decided by the best rule of all
// of them (RFC 9309 §2.2.1, §2.2.2).
func TestGroupCompiledOnce(t *testing.T) {
	var b strings.Builder
	for i := range 16 {
		fmt.Fprintf(&b, "User-agent: %s\n", letterName("bot", i))
	}
	b.WriteString("Disallow: /*x*y$\nDisallow: /a/\n\nUser-agent: botd\nAllow: /a/b\n\nUser-agent: *\nDisallow: /\n\nUser-agent: *\nAllow: /b/ok\n")
	r := Parse([]byte(b.String()))
	for i := range 16 {
		r.Group(strings.ToUpper(letterName("bot", i)) + "/1.0")
	}
	if n := len(*r.bound.Load()); n != 16 {
		t.Errorf("%d bindings for 16 product tokens; want 16", n)
	}
	distinct := map[*groupPart]bool{}
	for _, p := range r.classes {
		if p != nil {
			distinct[p] = true
		}
	}
	if n := len(distinct); n != 2 || r.Group(letterName("bot", 0)).parts[0] != r.Group(letterName("bot", 15)).parts[0] || len(r.Group("other").parts) != 1 {
		t.Errorf("%d classes compiled for 16 tokens of one group and one of another; want 2, the first shared, and the * groups one", n)
	}
	for _, tc := range []struct {
		ua, path string
		allowed  bool
		rule     string
	}{
		{"botd", "/a/b/c", true, "Allow: /a/b"},
		{"botd", "/a/c", false, "Disallow: /a/"},
		{"botd", "/zxqy", false, "Disallow: /*x*y$"},
		{"bote", "/a/b/c", false, "Disallow: /a/"},
		{"other", "/a/b/c", false, "Disallow: /"},
		{"other", "/b/ok", true, "Allow: /b/ok"},
	} {
		allowed, rule, err := r.Group(tc.ua).Decide(tc.path)
		if allowed != tc.allowed || rule.String() != tc.rule || err != nil {
			t.Errorf("Group(%q).Decide(%q) = %v, %q, %v; want %v, %q", tc.ua, tc.path, allowed, rule, err, tc.allowed, tc.rule)
		}
	}
}

// TestGroupErr checks the groups that decide no path: those whose patterns
// with a '*' hold more than maxWildOctets octets, which Group.Err reports
// once bound, without compiling, and whose every decision fails with that
// error; and that the others of the file decide as ever.
func TestGroupErr(t *testing.T) {
	wildGroup := func(name string, octets int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "User-agent: %s\nDisallow: /plain/\n", name)
		for i := 0; octets > 0; i++ {
			line := fmt.Sprintf("/*%s*%d", strings.Repeat("w", min(octets, 200)), i)
			line = line[:min(len(line), octets)]
			if !strings.Contains(line, "*") {
				line = "*" + line[1:]
			}
			b.WriteString("Disallow: " + line + "\n")
			octets -= len(line)
		}
		return b.String()
	}
	body := wildGroup("big", maxWildOctets+1) + wildGroup("edge", maxWildOctets) + "User-agent: *\nDisallow: /*.pdf$\n"
	r := Parse([]byte(body))
	if big, edge := wildOctets(r.file.rulesOf(0)), wildOctets(r.file.rulesOf(1)); big != maxWildOctets+1 || edge != maxWildOctets {
		t.Fatalf("the groups hold %d and %d octets of patterns with a '*'; want %d and %d", big, edge, maxWildOctets+1, maxWildOctets)
	}
	for _, tc := range []struct {
		ua      string
		tooMany bool
	}{{"big", true}, {"edge", false}, {"other", false}} {
		g := r.Group(tc.ua)
		err := g.Err()
		if tc.tooMany != (err != nil) || err != nil && !errors.Is(err, ErrTooComplex) {
			t.Errorf("Group(%q).Err() = %v; want ErrTooComplex: %v", tc.ua, err, tc.tooMany)
		}
		var de *DecideError
		allowed, rule, err := g.Decide("/plain/page")
		switch {
		case tc.tooMany && (!errors.As(err, &de) || de.Err != ErrTooComplex || de.Length != len("/plain/page") || allowed || rule != Rule{}):
			t.Errorf("Group(%q).Decide = %v, %+v, %v; want refused with a *DecideError of 11 octets matching ErrTooComplex", tc.ua, allowed, rule, err)
		case tc.tooMany:
			for _, p := range g.parts {
				if p.loaded() != nil {
					t.Errorf("Group(%q) decides nothing, and compiled its rules", tc.ua)
				}
			}
		case tc.ua != "other" && (err != nil || allowed || rule.Pattern != "/plain/"):
			t.Errorf("Group(%q).Decide = %v, %+v, %v; want refused by Disallow: /plain/", tc.ua, allowed, rule, err)
		}
	}
	if got := (&DecideError{Err: ErrTooComplex}).Error(); !strings.Contains(got, "no path is decided") {
		t.Errorf("Group.Err's error reads %q; want it to say that no path is decided", got)
	}
}

// TestDecidePathTooLong checks the rule for long paths: a group with rules
// decides a path of up to MaxPathLength octets in normal form, and refuses
// to decide a longer one with an error that matches ErrPathTooLong.
func TestDecidePathTooLong(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /private/\n\nUser-agent: free\nCrawl-delay: 1\n"))
	g := r.Group("mybot")
	for _, tc := range []struct {
		name string
		path string
		ok   bool
	}{
		{"MaxPathLength octets", "/" + strings.Repeat("a", MaxPathLength-1), true},
		{"one more", "/" + strings.Repeat("a", MaxPathLength), false},
		{"short, but long in normal form", "/" + strings.Repeat("*", MaxPathLength/3+1), false},
		{"long, but short in normal form", "/" + strings.Repeat("%41", MaxPathLength/2), true},
		{"8 MiB", "/" + strings.Repeat("a", 8<<20), false},
	} {
		allowed, rule, err := g.Decide(tc.path)
		var de *DecideError
		switch {
		case tc.ok && (err != nil || !allowed):
			t.Errorf("%s: Decide = %v, %q, %v; want allowed", tc.name, allowed, rule, err)
		case !tc.ok && (!errors.Is(err, ErrPathTooLong) || !errors.As(err, &de) || de.Length != len(tc.path) || allowed):
			t.Errorf("%s: Decide = %v, %v; want not allowed, and a *DecideError of length %d that matches ErrPathTooLong",
				tc.name, allowed, err, len(tc.path))
		case !tc.ok && !strings.HasPrefix(err.Error(), "robotstxt: "):
			t.Errorf("%s: error %q; want it prefixed with the package's name", tc.name, err)
		}
	}
	long := mustURL(t, "http://h/"+strings.Repeat("a", MaxPathLength))
	if m, err := r.Test("mybot", long); !errors.Is(err, ErrPathTooLong) || m.Allowed || m.Group != "*" {
		t.Errorf("Test of a long path = %+v, %v; want not allowed, bound by *, and ErrPathTooLong", m, err)
	}
	if m, err := r.Test("free", long); err != nil || !m.Allowed {
		t.Errorf("Test of a long path for a group with no rules = %+v, %v; want allowed: no rule applies", m, err)
	}
}

// letterName returns prefix and i written in the letters a to z, as a
// product token may be written (RFC 9309 §2.2.1): "bota" for 0, "botba"
// for 26.
func letterName(prefix string, i int) string {
	var digits []byte
	for {
		digits = append(digits, byte('a'+i%26))
		if i /= 26; i == 0 {
			break
		}
	}
	slices.Reverse(digits)
	return prefix + string(digits)
}
