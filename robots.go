package polite

import (
	"maps"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Robots is a robots.txt read as [PoliteTransport] reads it, for those who
// want its decisions without a transport: site owners checking their file,
// crawler authors filtering URLs. Build one with [ParseRobots].
//
// Robots is safe for concurrent use by multiple goroutines.
type Robots struct {
	file  *robotsFile
	named map[string]bool // the product tokens that some group names, "*" too
	rules int

	// bound holds the bindings compiled so far, by the group token that
	// binds: read without a lock on every decision, replaced by a copy
	// with one more under mu, so that each group is compiled once, and
	// shared by every product token it binds.
	bound atomic.Pointer[map[string]*robotsBinding]
	mu    sync.Mutex // serialises compiling

	// last is the product token asked for last and its binding: most
	// transports send one User-Agent, whose decisions then cost one atomic
	// load and a string comparison.
	last atomic.Pointer[tokenBinding]
}

// tokenBinding is a product token and what binds it.
type tokenBinding struct {
	token string
	b     *robotsBinding
}

// robotsBinding is what binds the product tokens of one group token: the
// rules of every group that names it, with their matcher.
type robotsBinding struct {
	group   string // the group token: a product token, "*", or "" for none
	rules   []robotsRule
	delay   time.Duration
	matcher *ruleMatcher
}

// ParseRobots reads a robots.txt body with the tolerance of RFC 9309
// §2.3.1.5: it keeps every line it understands and skips the others, which
// [Robots.Skipped] lists. It reads the whole body; the transport reads at
// most the first 500 KiB of a file (§2.5).
func ParseRobots(body []byte) *Robots {
	r := &Robots{file: parseRobots(body), named: make(map[string]bool)}
	for _, g := range r.file.groups {
		for _, a := range g.agents {
			r.named[a] = true
		}
		r.rules += len(g.rules)
	}
	return r
}

// RobotsMatch is the decision of a robots.txt for one User-Agent and URL.
type RobotsMatch struct {
	// Allowed reports whether the User-Agent may fetch the URL.
	Allowed bool
	// Agent is the User-Agent's product token, lower-cased: "mybot" for
	// "MyBot/1.0 (+https://example.com/bot)".
	Agent string
	// Group is the user-agent token of the groups that bound: Agent, "*",
	// or "" when no group did and so no rule applies (RFC 9309 §2.2.1).
	Group string
	// Rule is the rule that decided, as "Disallow: /private/", or "" when
	// no rule matched.
	Rule string
}

// Test decides whether the robots.txt lets userAgent, a User-Agent header
// value, fetch u. It matches u's escaped path and query as RFC 9309 §2.2.2
// and §2.2.3 say; /robots.txt itself is always allowed.
func (r *Robots) Test(userAgent string, u *url.URL) RobotsMatch {
	token := productToken(userAgent)
	b := r.binding(token)
	m := RobotsMatch{Allowed: true, Agent: token, Group: b.group}
	if isRobotsPath(u) {
		return m
	}
	allowed, rule := b.matcher.match(normalizeTarget(u.RequestURI()))
	m.Allowed = allowed
	if rule >= 0 {
		m.Rule = b.rules[rule].String()
	}
	return m
}

// CrawlDelay returns the Crawl-delay of the groups that bind userAgent, the
// largest if several give one, or 0 if none does.
func (r *Robots) CrawlDelay(userAgent string) time.Duration {
	return r.binding(productToken(userAgent)).delay
}

// Sitemaps returns the values of the file's Sitemap lines, in order.
func (r *Robots) Sitemaps() []string { return slices.Clone(r.file.sitemaps) }

// Groups returns the number of groups in the file. A file with no group,
// no sitemap and skipped lines had no line that a robots.txt reader
// understands: an HTML page or binary data served as robots.txt.
func (r *Robots) Groups() int { return len(r.file.groups) }

// Rules returns the number of Allow and Disallow rules in all groups.
func (r *Robots) Rules() int { return r.rules }

// A SkippedLine is a line of a robots.txt that the reader did not
// understand and so ignored.
type SkippedLine struct {
	// Line is the line's number, from 1. A line ends at CR, LF or CR LF.
	Line int
	// Text is the line as written, without surrounding white space, cut
	// to its first 120 bytes, with invalid UTF-8 replaced by U+FFFD.
	Text string
	// Reason says why the line was skipped: "no colon", "no product
	// token", "rule outside any group", "not a path pattern",
	// "Crawl-delay outside any group", "bad Crawl-delay" or
	// "unknown field".
	Reason string
}

// Skipped returns the first 100 lines that the reader skipped, in order;
// [Robots.SkippedCount] counts them all.
func (r *Robots) Skipped() []SkippedLine { return slices.Clone(r.file.skippedLines) }

// SkippedCount returns the number of lines that the reader skipped.
func (r *Robots) SkippedCount() int { return r.file.skipped }

// binding returns what binds token, compiling it the first time.
func (r *Robots) binding(token string) *robotsBinding {
	if l := r.last.Load(); l != nil && l.token == token {
		return l.b
	}
	b := r.bindGroup(token)
	r.last.Store(&tokenBinding{token, b})
	return b
}

// bindGroup returns what binds token, through the bindings by group.
func (r *Robots) bindGroup(token string) *robotsBinding {
	group := ""
	switch {
	case r.named[token]:
		group = token
	case r.named["*"]:
		group = "*"
	}
	if m := r.bound.Load(); m != nil {
		if b := (*m)[group]; b != nil {
			return b
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.bound.Load()
	if old != nil {
		if b := (*old)[group]; b != nil {
			return b // compiled while this call waited
		}
	}
	b := &robotsBinding{group: group}
	if group != "" {
		b.rules, b.delay, _ = r.file.rulesFor(group)
	}
	b.matcher = compileRules(b.rules)
	m := make(map[string]*robotsBinding, 1)
	if old != nil {
		maps.Copy(m, *old)
	}
	m[group] = b
	r.bound.Store(&m)
	return b
}

// largestCrawlDelay returns the largest Crawl-delay of r's groups, 0 for
// none or a nil r.
func (r *Robots) largestCrawlDelay() time.Duration {
	var d time.Duration
	if r != nil {
		for _, g := range r.file.groups {
			d = max(d, g.crawlDelay)
		}
	}
	return d
}
