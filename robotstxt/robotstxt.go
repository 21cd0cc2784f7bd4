package robotstxt

import (
	"cmp"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A File is a robots.txt as [Parse] reads it: its groups, which decide
// URLs, its sitemaps, and the lines it skipped.
//
// A File is safe for concurrent use by multiple goroutines.
type File struct {
	file robotsFile // as Parse read it, in the File's allocation

	// classes holds the parts made so far, by the index of each of their
	// groups: the groups that give the same names always bind together,
	// and are compiled together once, however many names they have and
	// however many bindings share them. A Group of one part holds it
	// here, spared an array of its own. Guarded by mu.
	classes []*groupPart
	// bound holds the bindings made so far, in the order of the group
	// token that binds (lookupBound): read without a lock on every
	// decision, replaced by a copy with one more under mu. A sorted array
	// takes 8 bytes a binding, where a map would take 40 or more.
	bound atomic.Pointer[[]*Group]
	// named holds the names that the groups give, as indexes of the
	// file's agents, sorted as compareFold sorts them and each once, once
	// a second binding is made: a File bound once, as one decided from
	// scratch is, looks its names over instead.
	named atomic.Pointer[[]int32]
	mu    sync.Mutex // serialises compiling and binding, and guards left
	// left is the bytes of heap that the File may keep more than it does
	// within its bound, below 0 once it keeps more (account.go).
	left int64

	// last is the User-Agent or token asked for last, its product token
	// and its Group: most transports send one User-Agent, whose decisions
	// then cost one atomic load and a string comparison.
	last atomic.Pointer[tokenBinding]
}

// tokenBinding is a User-Agent or product token, its product token and
// what binds it.
type tokenBinding struct {
	userAgent, token string
	b                *Group
}

// A Group is the rules that bind a User-Agent: those of every group of the
// file that names its product token, combined; else those of every "*"
// group; or none, when no group binds (RFC 9309 §2.2.1). [File.Group]
// returns it, made once for each group token and kept while the File
// keeps within its bound (the package doc, "Memory"), else made for each
// call: every product token that falls back to the "*" groups shares
// one. The groups of the file that
// give the same names are compiled together, once, when a Group first
// needs them; a Group that combines groups giving different names decides
// by each of their matchers. Its decisions take no lock, and once it is
// compiled allocate nothing when a path is in normal form.
type Group struct {
	group string       // the group token: a product token, "*", or "" for none
	from  *File        // the File it binds in
	parts []*groupPart // the parts of its groups, in the order of their first groups
	// single is the matcher of a Group of one part, once compiled: the
	// common case, which a decision reaches in one step.
	single atomic.Pointer[ruleMatcher]
	delay  time.Duration
	rules  int32
	usage  int32 // Content-Usage rules and Content-Signal lines, in all parts
	// tooComplex tells that the group's rules hold more than maxWildOctets
	// octets of patterns with a '*': it decides no path (Group.Err).
	tooComplex bool
}

// maxWildOctets is the most octets of patterns with a '*', in normal form,
// that a Group decides: three times 512 KiB, as much as the 500 KiB of a
// file that a crawler reads can hold once each of its octets is written
// "%XX". The time that the package doc states ("Cost") is measured on
// groups of that size.
const maxWildOctets = 3 * 512 << 10

// groupPart is the groups of the file that give the same names, which a
// Group combines, with their rules and, once compiled, their matcher.
//
// A part decides its first linearDecisions paths by trying each rule in
// turn (linearMatch), when that takes at most linearLimit units of work,
// and compiles when it does not, or for the decision after: a File that
// decides a few paths, as a crawler's first requests to a site do, seldom
// pays for compiling. A decision that linearMatch does not finish within
// its limit is made by the compiled matcher. A small part, of at most
// smallRules rules and smallOctets octets of patterns, keeps its matcher
// only while its File can within its bound, and decides by trying each
// rule in turn without (account.go).
type groupPart struct {
	rules []fileRule // the rules of its groups, in order
	// usage holds the Content-Usage rules and Content-Signal lines of its
	// groups, in order (usage_rules.go), or is nil for none, as for most
	// parts: a pointer takes 16 bytes less than a slice.
	usage *[]UsageRule
	// compiling holds the state of compiling the part, or is nil for a
	// tiny part: one of tinyRules rules or fewer, short and with no '$'
	// but at their ends, which is never compiled, since trying each rule
	// in turn decides as fast as a matcher would, and allocates nothing.
	compiling *partCompiling
}

// partCompiling is the state of compiling a part that is not tiny: the
// decisions asked of it, and its matcher once compiled.
type partCompiling struct {
	linear int32        // the units that linearMatch spends before searching the path
	uses   atomic.Int32 // decisions asked of the part
	once   sync.Once    // compiles it
	// small tells a small part (smallRules), whose matcher its File keeps
	// only while it can within its bound (account.go).
	small bool
	// matcher is the part's matcher, once compiled; nil for a small part
	// whose matcher its File could not keep, or undid (account.go).
	matcher atomic.Pointer[ruleMatcher]
}

// linearDecisions is how many decisions a part makes before it compiles.
const linearDecisions = 3

// tinyRules is the most rules of a part that is never compiled.
const tinyRules = 4

// setRules makes p the part of rules, not compiled.
func (p *groupPart) setRules(rules []fileRule) {
	p.rules = rules
	if isTiny(rules) {
		return
	}
	linear, octets := 0, 0
	for i := range rules {
		linear += linearUnits(&rules[i])
		octets += len(rules[i].pattern)
	}
	p.compiling = &partCompiling{linear: int32(min(linear, math.MaxInt32)), small: len(rules) <= smallRules && octets <= smallOctets}
}

// isTiny reports whether rules are a tiny part's: tinyRules or fewer, each
// of at most 128 octets with no '$' but at its end, which trying each in
// turn decides as fast as a matcher would, allocating nothing.
func isTiny(rules []fileRule) bool {
	if len(rules) > tinyRules {
		return false
	}
	for i := range rules {
		if body := strings.TrimSuffix(rules[i].pattern, "$"); len(body) > 128 || strings.IndexByte(body, '$') >= 0 {
			return false
		}
	}
	return true
}

// tiny reports whether p is a tiny part, which is never compiled.
func (p *groupPart) tiny() bool { return p.compiling == nil }

// loaded returns the part's matcher, or nil until it is compiled.
func (p *groupPart) loaded() *ruleMatcher {
	if p.compiling == nil {
		return nil
	}
	return p.compiling.matcher.Load()
}

// matchTiny returns the rule of a tiny part, or of a small one without a
// matcher, that decides target, a path in normal form, as
// ruleMatcher.match does, by trying each rule in turn. It allocates
// nothing but for a small part's rule with a '$' that is not its last
// octet, which it writes anew each time.
func (p *groupPart) matchTiny(target string) ruleRef {
	best := noRule
	units := 0
	for i := range p.rules {
		r := &p.rules[i]
		if ref := (ruleRef{rank: rankOf(r), rule: int32(i)}); r.pattern != "" && ref.beats(best) && globMatches(r.pattern, target, &units) {
			best = ref
		}
	}
	return best
}

// match returns the rule of the part, of a File r, that decides target, a
// path in normal form, as ruleMatcher.match does.
func (p *groupPart) match(r *File, target string) ruleRef {
	c := p.compiling
	if c == nil {
		return p.matchTiny(target)
	}
	if m := c.matcher.Load(); m != nil {
		return m.match(target)
	}
	if c.uses.Load() < linearDecisions && c.uses.Add(1) <= linearDecisions && c.linear <= linearLimit { // a load alone once past them
		if ref, ok := linearMatch(p.rules, target); ok {
			return ref
		}
	}
	if m := p.compiled(r); m != nil {
		return m.match(target)
	}
	return p.matchTiny(target)
}

// compiled returns the matcher of p, a part of r that is not tiny,
// compiling it the first time, and counting what it keeps in r's account;
// or nil for a small part whose matcher r could not keep within its
// bound, or undid (account.go).
func (p *groupPart) compiled(r *File) *ruleMatcher {
	c := p.compiling
	c.once.Do(func() {
		m := compileRules(p.rules)
		n := m.heapBytes()
		r.mu.Lock()
		defer r.mu.Unlock()
		if c.small {
			r.admit(p, m, n)
			return
		}
		c.matcher.Store(m)
		r.keep(n)
	})
	return c.matcher.Load()
}

// Parse reads a robots.txt body with the tolerance of RFC 9309
// §2.3.1.5: it keeps every line it understands and skips the others, which
// [File.Skipped] lists. It reads the whole body; a crawler reads at
// most the first 500 KiB of a file (§2.5).
func Parse(body []byte) *File {
	r := new(File)
	kept := r.file.read(body) + heapSize(sizeToken) // and the last User-Agent's binding, whose strings are the caller's
	r.left = int64(keepRatio*len(body)+keepSlack) - kept
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
// path is not. It fails only as [Group.Decide] does, for a path it does
// not decide; the Match then has Allowed false and no Rule.
func (r *File) Test(userAgent string, u *url.URL) (Match, error) {
	l := r.binding(userAgent)
	b := l.b
	m := Match{Agent: l.token, Group: b.group}
	path, ok := RequestPath(u)
	switch {
	case !ok:
		return m, nil
	case isRobotsTxt(path):
		m.Allowed = true
		return m, nil
	}
	allowed, rule, err := b.Decide(path)
	m.Allowed, m.Rule = allowed, rule.String()
	return m, err
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
	for i := range r.file.groups {
		d = max(d, r.file.groups[i].crawlDelay)
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
func (r *File) NumRules() int { return len(r.file.rules) }

// A SkippedLine is a line of a robots.txt that the reader did not
// understand and so ignored; or a user-agent line that names no crawler,
// which still starts or continues a group; or a statement of usage
// preferences that does not parse (see Reason).
type SkippedLine struct {
	// Line is the line's number, from 1. A line ends at CR, LF or CR LF.
	Line int
	// Text is the line as written, without surrounding white space, cut
	// to its first 120 bytes, with invalid UTF-8 replaced by U+FFFD.
	Text string
	// Reason says why the line was skipped: "no colon", "no product
	// token", "rule outside any group", "not a path pattern",
	// "Crawl-delay outside any group", "bad Crawl-delay", "Sitemap not an
	// absolute http(s) URL", "Content-Signal outside any group", "bad
	// Content-Usage", "bad Content-Signal" or "unknown field". A
	// Content-Usage rule or Content-Signal line whose statement does not
	// parse still holds for its paths, stating nothing: every preference
	// is unknown there, as draft-ietf-aipref-vocab-07 §6.5.1 says.
	Reason string
}

// Skipped returns the first 100 lines that the reader skipped, in order;
// [File.NumSkipped] counts them all.
func (r *File) Skipped() []SkippedLine { return slices.Clone(r.file.skippedLines) }

// NumSkipped returns the number of lines that the reader skipped.
func (r *File) NumSkipped() int { return int(r.file.skipped) }

// Group returns the [Group] that binds userAgent, a User-Agent header value
// or its product token ("MyBot/1.0" or "mybot"), compiling the groups it
// needs the first time. It never returns nil.
func (r *File) Group(userAgent string) *Group { return r.binding(userAgent).b }

// binding returns userAgent's product token and the Group that binds it.
func (r *File) binding(userAgent string) *tokenBinding {
	if l := r.last.Load(); l != nil && l.userAgent == userAgent {
		return l
	}
	token := ProductToken(userAgent)
	b, kept := r.bindGroup(token)
	l := &tokenBinding{userAgent, token, b}
	if kept {
		r.last.Store(l)
	}
	return l
}

// bindGroup returns what binds token, through the bindings by group token,
// and whether r keeps it: a binding that r cannot keep within its bound
// is made for the call alone (account.go).
func (r *File) bindGroup(token string) (b *Group, kept bool) {
	bound := r.bound.Load()
	if bound != nil {
		if b := lookupBound(*bound, token); b != nil && token != "" {
			return b, true // a token that some group names
		}
	}
	group := ""
	switch {
	case r.names(token):
		group = token
	case r.names("*"):
		group = "*"
	}
	if bound != nil {
		if b := lookupBound(*bound, group); b != nil {
			return b, true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.bound.Load()
	if old != nil {
		if b := lookupBound(*old, group); b != nil {
			return b, true // bound while this call waited
		}
	}
	b = &Group{group: group, from: r}
	var parts int64 // what the parts made for it keep past what Parse counted for them (partsKept)
	wild := 0       // octets of the patterns with a '*' of its groups, when those may be too many
	for i := range r.file.groups {
		if group == "" || !r.file.names(i, group) {
			continue
		}
		rules := r.file.rulesOf(i)
		b.delay = max(b.delay, r.file.groups[i].crawlDelay)
		b.rules += int32(len(rules))
		b.usage += int32(len(r.file.usageOf(i)))
		if r.file.octets > maxWildOctets { // else too few to tell
			wild += wildOctets(rules)
		}
		if r.classes == nil {
			r.classes = make([]*groupPart, len(r.file.groups))
		}
		part := r.classes[i]
		if part == nil { // the first group that gives its names
			var n int64
			part, n = r.compileClass(i)
			parts += n
		} else if slices.Contains(b.parts, part) {
			continue
		}
		if b.parts == nil {
			b.parts = r.classes[i : i+1 : i+1]
		} else {
			b.parts = append(b.parts, part)
		}
	}
	b.tooComplex = wild > maxWildOctets
	r.keep(parts)
	var list []*Group
	if old != nil {
		list = *old
	}
	// What keeping the binding takes: the Group, its token (the caller's,
	// or a copy), its array of parts, and the list of bindings one longer,
	// in place of the old one.
	n := heapSize(sizeBinding) + heapSize(len(group)) + heapSize(8*(len(list)+1)) - heapSize(8*len(list))
	if len(b.parts) > 1 {
		n += heapSize(cap(b.parts) * 8)
	}
	if old == nil {
		n += heapSize(sizeSlice) // the list's header, replaced with it
	}
	if n > r.left {
		return b, false
	}
	r.keep(n)
	at, _ := slices.BinarySearchFunc(list, group, func(g *Group, t string) int { return strings.Compare(g.group, t) })
	list = append(append(append(make([]*Group, 0, len(list)+1), list[:at]...), b), list[at:]...) // a copy
	r.bound.Store(&list)
	if agents := r.file.agents; len(list) == 2 && len(agents) <= math.MaxInt32 {
		named := make([]int32, len(agents))
		for i := range named {
			named[i] = int32(i)
		}
		slices.SortFunc(named, func(i, j int32) int { return compareFold(agents[i].name, agents[j].name) })
		named = slices.Clone(slices.CompactFunc(named, func(i, j int32) bool { return compareFold(agents[i].name, agents[j].name) == 0 })) // to its size
		r.named.Store(&named)
		r.keep(heapSize(cap(named)*4) + heapSize(sizeSlice))
	}
	return b, true
}

// lookupBound returns the Group of list, sorted by group token, that
// token binds, or nil.
func lookupBound(list []*Group, token string) *Group {
	lo, hi := 0, len(list)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch g := list[mid]; {
		case g.group == token:
			return g
		case g.group < token:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return nil
}

// compileClass makes the part of the groups that give the names of the
// group at index first, the first of them, and keeps it in r.classes at
// the index of each. It returns the part and the bytes of heap it keeps
// past what Parse counted for it (partsKept), as heapSize counts them: the
// rules and usage lines gathered from several groups, and its state of
// compiling when the first group's rules alone are tiny and the gathered
// ones are not. r.mu is held.
func (r *File) compileClass(first int) (part *groupPart, kept int64) {
	part = new(groupPart)
	r.classes[first] = part
	rules, usage := r.file.rulesOf(first), r.file.usageOf(first)
	gatheredRules, gatheredUsage := false, false
	for i := first + 1; i < len(r.file.groups); i++ {
		if !r.file.sameNames(i, first) {
			continue
		}
		r.classes[i] = part
		if more := r.file.rulesOf(i); len(more) > 0 {
			rules, gatheredRules = append(rules, more...), true
		}
		if more := r.file.usageOf(i); len(more) > 0 {
			usage, gatheredUsage = append(usage, more...), true
		}
	}
	part.setRules(rules)
	if part.compiling != nil && isTiny(r.file.rulesOf(first)) {
		kept += heapSize(sizeCompiling)
	}
	if gatheredRules {
		kept += heapSize(cap(rules) * sizeRule)
	}
	if len(usage) > 0 {
		gathered := usage
		part.usage = &gathered
	}
	if gatheredUsage {
		kept += heapSize(cap(usage) * sizeUsageRule)
	}
	return part, kept
}

// names reports whether a group of the file names token, a product token
// or "*".
func (r *File) names(token string) bool {
	if token == "" {
		return false
	}
	if named := r.named.Load(); named != nil {
		_, found := slices.BinarySearchFunc(*named, token, func(i int32, token string) int { return compareFold(r.file.agents[i].name, token) })
		return found
	}
	for i := range r.file.groups {
		if r.file.names(i, token) {
			return true
		}
	}
	return false
}

// compareFold compares a and b as strings.Compare compares them
// lower-cased: names and product tokens, whose letters are ASCII.
func compareFold(a, b string) int {
	for i := range min(len(a), len(b)) {
		if x, y := lowerASCII(a[i]), lowerASCII(b[i]); x != y {
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(len(a), len(b))
}

// lowerASCII returns c lower-cased, if it is an ASCII letter.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
