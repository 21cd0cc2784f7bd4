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
	if strings.Join(f.agentNames(0), ",") != "A,b" || g.crawlDelay != 2500*time.Millisecond || len(f.rulesOf(0)) != 1 {
		t.Errorf("group 0 = %+v; want agents A,b, crawl-delay 2.5s, one rule", g)
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

// TestProductToken checks the reading of a product token that RFC 9309
// §2.2.1 and Google's matcher share: the longest run of ASCII letters, '_'
// and '-' that begins the value, whatever follows.
func TestProductToken(t *testing.T) {
	for _, tc := range []struct{ ua, want string }{
		{"MyBot/1.0 (+https://example.com/bot)", "mybot"},
		{"Mozilla/5.0 (compatible; MyBot/1.0)", "mozilla"},
		{"Googlebot/2.1", "googlebot"},
		{"my_bot-2", "my_bot-"},
		{"MJ12bot/v1.4.8", "mj"},
		{"Foo Bar", "foo"},
		{"Foo\tBar", "foo"},
		{"MyBot;1.0", "mybot"},
		{"bot\xff", "bot"},
		{"jävla-fanbot", "j"},
		{"Mail.RU_Bot/2.0", "mail"},
		{"", ""},
		{" leading", ""},
		{"(compatible; MyBot/1.0)", ""},
		{"360Spider", ""},
		{"*", ""},
	} {
		if got := ProductToken(tc.ua); got != tc.want {
			t.Errorf("ProductToken(%q) = %q; want %q", tc.ua, got, tc.want)
		}
	}
}

// TestAgentName checks which crawler a user-agent line's value names:
// "*" for "*" alone or followed by white space, else its product token
// as ProductToken reads one, as written, or none.
func TestAgentName(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"*", "*"},
		{"* BadBot", "*"},
		{"*\tBadBot", "*"},
		{"Googlebot", "Googlebot"},
		{"Googlebot-Image/1.0", "Googlebot-Image"},
		{"Sogou web spider", "Sogou"},
		{"Mediapartners-Google*", "Mediapartners-Google"},
		{"facebookexternalhit/*", "facebookexternalhit"},
		{"foo*bot", "foo"},
		{"bot\xff", "bot"},
		{"MJ12bot", "MJ"},
		{"Jävla-Foobot", "J"},
		{"Mail.RU_Bot", "Mail"},
		{"Googlebot, Bingbot", "Googlebot"},
		{"Mozilla/5.0 (compatible; X)", "Mozilla"},
		{"*BadBot*", ""},
		{"*\u00a0", ""}, // only SP and HTAB are white space
		{`"Vegi bot"`, ""},
		{"360Spider", ""},
		{"", ""},
	} {
		if got := agentName(tc.value); got != tc.want {
			t.Errorf("agentName(%q) = %q; want %q", tc.value, got, tc.want)
		}
	}
}

// TestReadingGroups holds the ways real files write their groups, each
// read as RFC 9309 §2.1, §2.2.1 and §2.2.4 say.
func TestReadingGroups(t *testing.T) {
	tests := []struct {
		name   string
		robots string
		ua     string
		path   string
		want   Match // Agent is filled in from ua
	}{
		{"2.2.4 a Crawl-delay line does not end the user-agent lines: the Disallow binds bingbot",
			"User-agent: bingbot\nCrawl-delay: 10\n\nUser-agent: *\nDisallow: /private/\n",
			"bingbot/2.0", "/private/x", Match{Group: "bingbot", Rule: "Disallow: /private/"}},
		{"2.2.4 a Crawl-delay line does not end the user-agent lines: and binds *",
			"User-agent: bingbot\nCrawl-delay: 10\n\nUser-agent: *\nDisallow: /private/\n",
			"other", "/private/x", Match{Group: "*", Rule: "Disallow: /private/"}},
		{"2.2.4 a Sitemap line does not end the user-agent lines",
			"User-agent: a\nSitemap: https://h/s.xml\nUser-agent: b\nDisallow: /x\n",
			"a", "/x", Match{Group: "a", Rule: "Disallow: /x"}},
		{"2.2.4 an unknown line does not end the user-agent lines",
			"User-agent: a\nNoindex: /y\nUser-agent: b\nDisallow: /x\n",
			"a", "/x", Match{Group: "a", Rule: "Disallow: /x"}},
		{"2.1 a rule line ends them: a user-agent line after it starts a group",
			"User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n",
			"a", "/y", Match{Allowed: true, Group: "a"}},
		{"2.1 an empty Disallow line ends them too",
			"User-agent: a\nDisallow:\nUser-agent: b\nDisallow: /y\n",
			"a", "/y", Match{Allowed: true, Group: "a"}},
		{"2.2.1 *BadBot* is not the catch-all group",
			"User-agent: *BadBot*\nDisallow: /\n",
			"mybot", "/x", Match{Allowed: true}},
		{"2.2.1 *BadBot* binds no crawler, not even badbot",
			"User-agent: *BadBot*\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n",
			"BadBot", "/x", Match{Allowed: true, Group: "*"}},
		{"2.2.1 a name with a '*' after it binds the name",
			"User-agent: Mediapartners-Google*\nDisallow: /\n",
			"Mediapartners-Google", "/x", Match{Group: "mediapartners-google", Rule: "Disallow: /"}},
		{"2.2.1 a user-agent line with no product token opens a group that binds no crawler",
			"User-agent: *\nDisallow: /sandbox\n\nUser-agent: \"Vegi bot (we follow your robots.txt)\"\nDisallow: /\n",
			"mybot", "/x", Match{Allowed: true, Group: "*"}},
		{"2.2.1 an empty user-agent line opens a group that binds no crawler",
			"User-agent: *\nDisallow: /sandbox\n\nUser-agent:\nDisallow: /\n",
			"mybot", "/x", Match{Allowed: true, Group: "*"}},
		{"2.2.1 a user-agent line with no product token continues a group",
			"User-agent: a\nUser-agent: \"Vegi bot\"\nDisallow: /x\n",
			"a", "/x", Match{Group: "a", Rule: "Disallow: /x"}},
		{"2.2 white space is SP and HTAB: a path keeps its trailing U+00A0",
			"User-agent: *\nDisallow: /a\u00a0\t \n",
			"mybot", "/a", Match{Allowed: true, Group: "*"}},
		{"2.2 white space is SP and HTAB: the U+00A0 is the path's",
			"User-agent: *\nDisallow: /a\u00a0\t \n",
			"mybot", "/a%C2%A0", Match{Group: "*", Rule: "Disallow: /a%C2%A0"}},
		{"2.2.1 a product token is the longest run of letters, '_' and '-': on both sides",
			"User-Agent: Jävla-Foobot\nDisallow: /\n",
			"jävla-fanbot", "/foo/bar.html", Match{Group: "j", Rule: "Disallow: /"}},
		{"2.2.1 a product token is the longest run of letters, '_' and '-': cut at a dot",
			"User-Agent: Mail.Ru\nDisallow: /\n",
			"Mail.RU_Bot/2.0", "/x", Match{Group: "mail", Rule: "Disallow: /"}},
		{"2.2.1 a product token is the longest run of letters, '_' and '-': MJ12bot finds its group",
			"User-Agent: *\nDisallow: /\n\nUser-Agent: MJ12bot\nDisallow: /private/\n",
			"MJ12bot/v1.4.8", "/x", Match{Allowed: true, Group: "mj"}},
		{"2.2.1 a product token is the longest run of letters, '_' and '-': whatever follows",
			"User-Agent: bot\xff\nDisallow: /\n",
			"Bot/2.0", "/x", Match{Group: "bot", Rule: "Disallow: /"}},
		{"2.2.1 a '*' followed by white space is the catch-all, as Google reads it",
			"User-Agent: * other words\nDisallow: /\n",
			"mybot", "/x", Match{Group: "*", Rule: "Disallow: /"}},
		{"2.2.1 a name that starts with a digit names no crawler",
			"User-Agent: 360Spider\nDisallow: /\n",
			"360Spider", "/x", Match{Allowed: true}},
		{"2.2.1 the product token of a User-Agent is its first product's name",
			"User-Agent: Sogou web spider\nDisallow: /\n",
			"Sogou inst spider/4.0", "/x", Match{Group: "sogou", Rule: "Disallow: /"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			want.Agent = ProductToken(tc.ua)
			got, err := Parse([]byte(tc.robots)).Test(tc.ua, mustURL(t, "http://h"+tc.path))
			if got != want || err != nil {
				t.Errorf("Test(%q, %q) = %+v, %v; want %+v\nrobots.txt:\n%s", tc.ua, tc.path, got, err, want, tc.robots)
			}
		})
	}
}

// FuzzParseRobots checks that no robots.txt makes the reader or the matcher
// panic.
func FuzzParseRobots(f *testing.F) {
	f.Add([]byte(robotstest.RFC9309Example), "example/page.html")
	f.Add([]byte("User-agent: *\nDisallow: /*$*$\nAllow: /%\nCrawl-delay: 1e400\n"), "%zz")
	f.Add([]byte(attachExample), "ai-ok/x")
	f.Add([]byte("User-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: /a*$ train-ai=y;p, x=(1)\n"), "a")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		r := Parse(body)
		u := &url.URL{Scheme: "http", Host: "h", Path: "/" + path}
		for _, ua := range []string{"x", "*", "foobot"} {
			r.Test(ua, u)
			r.Usage(ua, u)
			r.Group(ua).UsageRules(u.EscapedPath())
		}
		r.UsageGroups()
	})
}
