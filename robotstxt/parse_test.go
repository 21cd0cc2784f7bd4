package robotstxt

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite/internal/robotstest"
)

func TestParseRobots(t *testing.T) {
	f := parseRobots([]byte("Sitemap: http://h/1.xml\nUser-agent: A\nuser-agent: b/2\nCrawl-delay: 2.5\nDisallow: /x\nCrawl-delay: nope\nAllow:\n\nUser-agent: *\nCrawl-delay: 1\nSitemap: http://h/2.xml\nfoo bar\n"))
	if len(f.groups) != 2 {
		t.Fatalf("groups = %d; want 2", len(f.groups))
	}
	g := f.groups[0]
	if strings.Join(g.agents, ",") != "a,b" || g.crawlDelay != 2500*time.Millisecond || len(g.rules) != 1 {
		t.Errorf("group 0 = %+v; want agents a,b, crawl-delay 2.5s, one rule", g)
	}
	if strings.Join(f.sitemaps, " ") != "http://h/1.xml http://h/2.xml" {
		t.Errorf("sitemaps = %q", f.sitemaps)
	}
	if f.skipped != 2 {
		t.Errorf("skipped = %d; want 2 (bad Crawl-delay, line with no colon)", f.skipped)
	}
	if _, d, agent := f.rulesFor("b"); d != 2500*time.Millisecond || agent != "b" {
		t.Errorf("rulesFor(b) crawl-delay %v agent %q", d, agent)
	}
	if _, d, agent := f.rulesFor("c"); d != time.Second || agent != "*" {
		t.Errorf("rulesFor(c) crawl-delay %v agent %q", d, agent)
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, path, target string }{
		{"/a/b?c=d", "/a/b?c=d", "/a/b?c=d"},
		{"/%7efoo", "/~foo", "/~foo"},
		{"/a%2fb", "/a%2Fb", "/a%2Fb"},
		{"/a%2Fb", "/a%2Fb", "/a%2Fb"},
		{"/caf\xc3\xa9", "/caf%C3%A9", "/caf%C3%A9"},
		{"/a b", "/a%20b", "/a%20b"},
		{"/100%", "/100%25", "/100%25"},
		{"/%zz", "/%25zz", "/%25zz"},
		{"/*.php$", "/*.php$", "/%2A.php%24"},
		{"/%41", "/A", "/A"},
	}
	for _, tt := range tests {
		if got := normalizePath(tt.in); got != tt.path {
			t.Errorf("normalizePath(%q) = %q; want %q", tt.in, got, tt.path)
		}
		if got := normalizeTarget(tt.in); got != tt.target {
			t.Errorf("normalizeTarget(%q) = %q; want %q", tt.in, got, tt.target)
		}
	}
	if n := testing.AllocsPerRun(100, func() { normalizeTarget("/already/normal%2F?q=1") }); n != 0 {
		t.Errorf("normalizeTarget of a normal path allocates %v times; want 0", n)
	}
}

func TestProductToken(t *testing.T) {
	for ua, want := range map[string]string{
		"MyBot/1.0 (+https://example.com/bot)": "mybot",
		"Mozilla/5.0 (compatible; MyBot/1.0)":  "mozilla",
		"my_bot-2":                             "my_bot-2",
		"":                                     "",
		" leading":                             "",
	} {
		if got := ProductToken(ua); got != want {
			t.Errorf("ProductToken(%q) = %q; want %q", ua, got, want)
		}
	}
}

// FuzzParseRobots checks that no robots.txt makes the reader or the matcher
// panic.
func FuzzParseRobots(f *testing.F) {
	f.Add([]byte(robotstest.RFC9309Example), "example/page.html")
	f.Add([]byte("User-agent: *\nDisallow: /*$*$\nAllow: /%\nCrawl-delay: 1e400\n"), "%zz")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		r := Parse(body)
		u := &url.URL{Scheme: "http", Host: "h", Path: "/" + path}
		for _, ua := range []string{"x", "*", "foobot"} {
			r.Test(ua, u)
		}
	})
}
