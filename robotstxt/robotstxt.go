package robotstxt

import (
	"maps"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A File is a robots.txt as [Parse] reads it: its groups, which decide
// URLs, its sitemaps, and the lines it skipped.
//
// A File is safe for concurrent use by multiple goroutines.
type File struct {
	file  *robotsFile
	named map[string]bool // the product tokens that some group names, "*" too
	rules int

	// bound holds the bindings compiled so far, by the group token that
	// binds: read without a lock on every decision, replaced by a copy
	// with one more under mu, so that each group is compiled once, and
	// shared by every product token it binds.
	bound atomic.Pointer[map[string]*Group]
	mu    sync.Mutex // serialises compiling

	// last is the User-Agent or token asked for last and its Group: most
	// transports send one User-Agent, whose decisions then cost one atomic
	// load and a string comparison.
	last atomic.Pointer[tokenBinding]
}

// tokenBinding is a User-Agent or product token and what binds it.
type tokenBinding struct {
	token string
	b     *Group
}

// A Group is the rules that bind a User-Agent, compiled: those of every
// group of the file that names its product token, combined; else those of
// every "*" group; or none, when no group binds (RFC 9309 §2.2.1).
// [File.Group] returns it, compiled once for each group token: every
// product token that falls back to the "*" groups shares one. Its
// decisions take no lock, and allocate nothing once a path is in normal
// form.
type Group struct {
	group   string // the group token: a product token, "*", or "" for none
	rules   []Rule
	delay   time.Duration
	matcher *ruleMatcher
}

// Parse reads a robots.txt body with the tolerance of RFC 9309
// §2.3.1.5: it keeps every line it understands and skips the others, which
// [File.Skipped] lists. It reads the whole body; a crawler reads at
// most the first 500 KiB of a file (§2.5).
func Parse(body []byte) *File {
	r := &File{file: parseRobots(body), named: make(map[string]bool)}
	for _, g := range r.file.groups {
		for _, a := range g.agents {
			r.named[a] = true
		}
		r.rules += len(g.rules)
	}
	return r
}

// Match is the decision of a robots.txt for one User-Agent and URL.
type Match struct {
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
// value, fetch u. It matches the path and query that the server receives,
// as [RequestPath] gives them, as RFC 9309 §2.2.2 and §2.2.3 say;
// /robots.txt itself is always allowed, and a u whose request names no
// path is not.
func (r *File) Test(userAgent string, u *url.URL) Match {
	token := ProductToken(userAgent)
	b := r.Group(token)
	m := Match{Agent: token, Group: b.group}
	path, ok := RequestPath(u)
	switch {
	case !ok:
		return m
	case isRobotsTxt(path):
		m.Allowed = true
		return m
	}
	allowed, rule := b.Decide(path)
	m.Allowed, m.Rule = allowed, rule.String()
	return m
}

// CrawlDelay returns the Crawl-delay of the groups that bind userAgent, the
// largest if several give one, or 0 if none does.
func (r *File) CrawlDelay(userAgent string) time.Duration {
	return r.Group(ProductToken(userAgent)).delay
}

// MaxCrawlDelay returns the largest Crawl-delay of the file's groups,
// whichever User-Agents they bind, or 0 if none gives one.
func (r *File) MaxCrawlDelay() time.Duration {
	var d time.Duration
	for _, g := range r.file.groups {
		d = max(d, g.crawlDelay)
	}
	return d
}

// Sitemaps returns the values of the file's Sitemap lines, in order: each
// an absolute http or https URL, since a line with any other value is
// skipped.
func (r *File) Sitemaps() []string { return slices.Clone(r.file.sitemaps) }

// NumGroups returns the number of groups in the file. A file with no group,
// no sitemap and skipped lines had no line that a robots.txt reader
// understands: an HTML page or binary data served as robots.txt.
func (r *File) NumGroups() int { return len(r.file.groups) }

// NumRules returns the number of Allow and Disallow rules in all groups.
func (r *File) NumRules() int { return r.rules }

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
	// "Crawl-delay outside any group", "bad Crawl-delay", "Sitemap not an
	// absolute http(s) URL" or "unknown field".
	Reason string
}

// Skipped returns the first 100 lines that the reader skipped, in order;
// [File.NumSkipped] counts them all.
func (r *File) Skipped() []SkippedLine { return slices.Clone(r.file.skippedLines) }

// NumSkipped returns the number of lines that the reader skipped.
func (r *File) NumSkipped() int { return r.file.skipped }

// Group returns the [Group] that binds userAgent, a User-Agent header value
// or its product token ("MyBot/1.0" or "mybot"), compiling it the first
// time. It never returns nil.
func (r *File) Group(userAgent string) *Group {
	if l := r.last.Load(); l != nil && l.token == userAgent {
		return l.b
	}
	b := r.bindGroup(ProductToken(userAgent))
	r.last.Store(&tokenBinding{userAgent, b})
	return b
}

// bindGroup returns what binds token, through the bindings by group.
func (r *File) bindGroup(token string) *Group {
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
	b := &Group{group: group}
	if group != "" {
		b.rules, b.delay, _ = r.file.rulesFor(group)
	}
	b.matcher = compileRules(b.rules)
	m := make(map[string]*Group, 1)
	if old != nil {
		maps.Copy(m, *old)
	}
	m[group] = b
	r.bound.Store(&m)
	return b
}
