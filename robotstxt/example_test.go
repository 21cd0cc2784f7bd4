package robotstxt_test

import (
	"fmt"
	"net/url"

	"github.com/polite-go/polite/robotstxt"
)

// Parse reads a robots.txt; Test decides a URL for a User-Agent and names
// the rule that decided.
func ExampleParse() {
	robots := robotstxt.Parse([]byte(`User-agent: *
Disallow: /private/
Allow: /private/press/
Disallow: /*.pdf$
Crawl-delay: 2

Sitemap: https://example.com/sitemap.xml
`))
	for _, raw := range []string{
		"https://example.com/private/report",
		"https://example.com/private/press/2024",
		"https://example.com/docs/guide.pdf",
		"https://example.com/docs/guide.pdf?page=2",
	} {
		u, _ := url.Parse(raw)
		m, err := robots.Test("ExampleBot/1.0 (+https://example.com/bot)", u)
		if err != nil {
			fmt.Println(err) // a path longer than MaxPathLength
			continue
		}
		fmt.Printf("%s allowed=%v rule=%q\n", u.RequestURI(), m.Allowed, m.Rule)
	}
	fmt.Println("crawl-delay:", robots.CrawlDelay("ExampleBot/1.0"))
	fmt.Println("sitemaps:", robots.Sitemaps())
	// Output:
	// /private/report allowed=false rule="Disallow: /private/"
	// /private/press/2024 allowed=true rule="Allow: /private/press/"
	// /docs/guide.pdf allowed=false rule="Disallow: /*.pdf$"
	// /docs/guide.pdf?page=2 allowed=true rule=""
	// crawl-delay: 2s
	// sitemaps: [https://example.com/sitemap.xml]
}

// Skipped lists the lines that a robots.txt reader ignores, with why, so
// that a site owner can fix them.
func ExampleFile_Skipped() {
	robots := robotstxt.Parse([]byte(`Disallow: /tmp/
User-agent: *
Disalow: /private/
Disallow: private/
Crawl-delay: 1s
`))
	for _, line := range robots.Skipped() {
		fmt.Printf("line %d: %s (%s)\n", line.Line, line.Text, line.Reason)
	}
	fmt.Println("rules kept:", robots.NumRules())
	// Output:
	// line 1: Disallow: /tmp/ (rule outside any group)
	// line 3: Disalow: /private/ (unknown field)
	// line 4: Disallow: private/ (not a path pattern)
	// line 5: Crawl-delay: 1s (bad Crawl-delay)
	// rules kept: 0
}

// A file in which the reader understood no line, such as an HTML page
// served as robots.txt, allows everything; NumGroups and NumSkipped tell it
// apart from a real robots.txt.
func ExampleFile_NumGroups() {
	robots := robotstxt.Parse([]byte("<!doctype html>\n<html><body>Not found</body></html>\n"))
	u, _ := url.Parse("https://example.com/private/")
	m, _ := robots.Test("ExampleBot", u)
	fmt.Println("allowed:", m.Allowed)
	fmt.Println("groups:", robots.NumGroups(), "sitemaps:", len(robots.Sitemaps()), "skipped:", robots.NumSkipped())
	// Output:
	// allowed: true
	// groups: 0 sitemaps: 0 skipped: 2
}

// A crawler that sends many requests binds its group once and decides each
// path against it: Decide takes the URL's escaped path and query, and
// allocates nothing.
func ExampleFile_Group() {
	robots := robotstxt.Parse([]byte(`User-agent: *
Disallow: /

User-agent: examplebot
Allow: /docs/
Disallow: /docs/drafts/
Crawl-delay: 0.5
`))
	g := robots.Group("ExampleBot/1.0 (+https://example.com/bot)")
	fmt.Println("group:", g.Agent(), "crawl-delay:", g.CrawlDelay(), "rules:", g.NumRules())
	for _, raw := range []string{
		"https://example.com/docs/guide",
		"https://example.com/docs/drafts/next?rev=2",
		"https://example.com/blog/",
	} {
		u, _ := url.Parse(raw)
		allowed, rule, err := g.Decide(u.RequestURI())
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s allowed=%v rule=%q\n", u.RequestURI(), allowed, rule)
	}
	fmt.Println("other crawlers:", robots.Group("OtherBot").Agent())
	// Output:
	// group: examplebot crawl-delay: 500ms rules: 2
	// /docs/guide allowed=true rule="Allow: /docs/"
	// /docs/drafts/next?rev=2 allowed=false rule="Disallow: /docs/drafts/"
	// /blog/ allowed=true rule=""
	// other crawlers: *
}

// Rule.Line and Group.AgentLines say which lines of a file decided: here
// the two groups that name ExampleBot, combined, and the longest rule
// that matches.
func ExampleGroup_AgentLines() {
	robots := robotstxt.Parse([]byte(`User-agent: *
Disallow: /

User-agent: ExampleBot
Disallow: /docs/

User-agent: ExampleBot
Allow: /docs/public/
`))
	g := robots.Group("ExampleBot/1.0")
	_, rule, _ := g.Decide("/docs/public/guide")
	fmt.Printf("user-agent lines %v, rule on line %d: %s\n", g.AgentLines(), rule.Line, rule)
	// Output:
	// user-agent lines [4 7], rule on line 8: Allow: /docs/public/
}

// ProductToken is the name by which a User-Agent chooses its group.
func ExampleProductToken() {
	fmt.Println(robotstxt.ProductToken("ExampleBot/1.0 (+https://example.com/bot)"))
	fmt.Println(robotstxt.ProductToken("Mozilla/5.0 (compatible; ExampleBot/1.0)"))
	fmt.Println(robotstxt.ProductToken("MJ12bot/v1.4.8"))
	// Output:
	// examplebot
	// mozilla
	// mj
}

// Usage answers the usage preferences that a robots.txt states for a
// crawler and a URL: here the example of draft-ietf-aipref-attach-05,
// with the Content-Signal line that Cloudflare writes into the files it
// manages.
func ExampleFile_Usage() {
	robots := robotstxt.Parse([]byte(`User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
Content-Signal: search=yes

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
`))
	for _, ua := range []string{"OtherBot/1.0", "ExampleBot/1.0"} {
		for _, path := range []string{"/test", "/never/test", "/ai-ok/test"} {
			u, _ := url.Parse("https://example.com" + path)
			pref, _ := robots.Usage(ua, u)
			fmt.Printf("%-14s %-12s train-ai=%-7v %q\n", ua, path, pref.Of(robotstxt.TrainAI), pref)
		}
	}
	// Output:
	// OtherBot/1.0   /test        train-ai=n       "train-ai=n, search=y"
	// OtherBot/1.0   /never/test  train-ai=unknown ""
	// OtherBot/1.0   /ai-ok/test  train-ai=y       "train-ai=y, search=y"
	// ExampleBot/1.0 /test        train-ai=y       "train-ai=y"
	// ExampleBot/1.0 /never/test  train-ai=y       "train-ai=y"
	// ExampleBot/1.0 /ai-ok/test  train-ai=y       "train-ai=y"
}

// ParseContentUsage reads a Content-Usage field; statements combine, the
// most restrictive winning, with those of a Content-Signal field.
func ExampleParseContentUsage() {
	usage, err := robotstxt.ParseContentUsage("train-ai=y, search=n")
	if err != nil {
		fmt.Println(err)
		return
	}
	signal, _ := robotstxt.ParseContentSignal("ai-train=no, ai-input=yes")
	both := usage.Combine(signal)
	fmt.Println(both)
	fmt.Println(both.Of(robotstxt.TrainAI), both.Of(robotstxt.Search), both.Of(robotstxt.AIInput))
	_, err = robotstxt.ParseContentUsage("Train-AI=n")
	fmt.Println(err)
	// Output:
	// train-ai=n, search=n, ai-input=y
	// n n y
	// robotstxt: Content-Usage: not a structured-field dictionary: a key must start with a-z or '*'
}
