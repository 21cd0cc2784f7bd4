package robotstxt

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"
)

// robotsFile is a robots.txt read the RFC 9309 way: line by line, keeping
// every line it understands and skipping the rest, so that one malformed
// line never discards the file (§2.3.1.5). It decides nothing; matching is
// left to the engine in engine.go.
type robotsFile struct {
	groups   []robotsGroup
	agents   []agentLine // the names of every group, group after group
	rules    []fileRule  // the Allow and Disallow rules of every group, group after group
	usage    []UsageRule // the Content-Usage rules and Content-Signal lines of every group, group after group
	sitemaps []string
	cost     int64 // see File.Cost
	// octets is the octets of all the patterns of rules, and skipped the
	// lines that were neither blank, comments nor understood, each at most
	// math.MaxInt32.
	octets, skipped int32
	skippedLines    []SkippedLine // the first maxSkippedLines of skipped
}

// maxSkippedLines and maxSkippedText bound what read records of the
// lines it skips, so that a hostile file cannot make the record large: the
// first 100 lines, each cut to 120 bytes. skipped still counts them all.
const (
	maxSkippedLines = 100
	maxSkippedText  = 120
)

// Why read skipped a line; the Reason of a [SkippedLine].
const (
	skipNoColon       = "no colon"
	skipNoToken       = "no product token"
	skipOutsideGroup  = "rule outside any group"
	skipNotPath       = "not a path pattern"
	skipDelayOutside  = "Crawl-delay outside any group"
	skipBadDelay      = "bad Crawl-delay"
	skipUnknownField  = "unknown field"
	skipBadUsage      = "bad Content-Usage"
	skipBadSignal     = "bad Content-Signal"
	skipSignalOutside = "Content-Signal outside any group"
)

// skip counts a skipped line and records it while the record has room.
// text is the line as written, without its line break; the record keeps
// at most maxSkippedText bytes of it, cut before a character, with invalid
// UTF-8 replaced.
func (f *robotsFile) skip(lineNo int, text string, reason string) {
	f.skipped = min(f.skipped, math.MaxInt32-1) + 1
	if len(f.skippedLines) == maxSkippedLines {
		return
	}
	text = trimWS(text)
	if cut := maxSkippedText; len(text) > cut {
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	f.skippedLines = append(f.skippedLines, SkippedLine{
		Line: lineNo, Text: strings.ToValidUTF8(strings.Clone(text), "\uFFFD"), Reason: reason})
}

// robotsGroup is one group as the file writes it: one or more user-agent
// lines and the rules that follow them (§2.1). A [Group] combines the
// groups that bind one product token. Its names, rules, and Content-Usage
// rules and Content-Signal lines are its parts of the file's agents, rules
// and usage, each from the end of the group before's (robotsFile.agentsOf,
// rulesOf, usageOf).
type robotsGroup struct {
	agentsEnd  int           // where its names end in the file's agents
	rulesEnd   int           // where its rules end in the file's rules
	usageEnd   int           // where its Content-Usage rules and Content-Signal lines end in the file's usage
	crawlDelay time.Duration // the largest Crawl-delay in the group; 0 if none
}

// agentsOf returns the names that group i gives, each a product token as
// written, compared without regard to case, or "*".
func (f *robotsFile) agentsOf(i int) []agentLine {
	lo := 0
	if i > 0 {
		lo = f.groups[i-1].agentsEnd
	}
	return f.agents[lo:f.groups[i].agentsEnd:f.groups[i].agentsEnd]
}

// rulesOf returns the Allow and Disallow rules of group i, in order.
func (f *robotsFile) rulesOf(i int) []fileRule {
	lo := 0
	if i > 0 {
		lo = f.groups[i-1].rulesEnd
	}
	return f.rules[lo:f.groups[i].rulesEnd:f.groups[i].rulesEnd]
}

// usageOf returns the Content-Usage rules and Content-Signal lines of
// group i, in order.
func (f *robotsFile) usageOf(i int) []UsageRule {
	lo := 0
	if i > 0 {
		lo = f.groups[i-1].usageEnd
	}
	return f.usage[lo:f.groups[i].usageEnd:f.groups[i].usageEnd]
}

// wildOctets returns the octets of the patterns of rules with a '*'.
func wildOctets(rules []fileRule) int {
	n := 0
	for _, r := range rules {
		if strings.IndexByte(r.pattern, '*') >= 0 {
			n += len(r.pattern)
		}
	}
	return n
}

// agentLine is a name that a user-agent line gives its group, and the
// line's number.
type agentLine struct {
	name string
	line int32 // from 1; math.MaxInt32 for any line after it
}

// names reports whether group i names token, a product token or "*".
func (f *robotsFile) names(i int, token string) bool {
	for _, a := range f.agentsOf(i) {
		if len(a.name) == len(token) && strings.EqualFold(a.name, token) {
			return true
		}
	}
	return false
}

// agentNames returns the names that group i gives, as written.
func (f *robotsFile) agentNames(i int) []string {
	agents := f.agentsOf(i)
	names := make([]string, len(agents))
	for j, a := range agents {
		names[j] = a.name
	}
	return names
}

// sameNames reports whether groups i and j give the same names, in the
// same order, compared without regard to case: whether the two have one
// key.
func (f *robotsFile) sameNames(i, j int) bool {
	return slices.EqualFunc(f.agentsOf(i), f.agentsOf(j), func(a, b agentLine) bool { return strings.EqualFold(a.name, b.name) })
}

// A Rule is one Allow or Disallow line of a robots.txt. The zero Rule is
// no rule: what [Group.Decide] reports when no rule matched.
type Rule struct {
	// Allow tells an Allow rule from a Disallow rule.
	Allow bool
	// Line is the rule's line in the file, numbered from 1 as a
	// [SkippedLine]'s.
	Line int
	// Pattern is the rule's path pattern, with its percent-encoding
	// normalised: "/~foo" for "/%7efoo", "/caf%C3%A9" for "/café".
	Pattern string
}

// fileRule is a Rule as a File keeps it: in 24 bytes, where a Rule takes 32.
type fileRule struct {
	pattern string
	line    int32 // from 1; math.MaxInt32 for any line after it
	allow   bool
}

// exported returns r as a Rule.
func (r *fileRule) exported() Rule {
	return Rule{Allow: r.allow, Line: int(r.line), Pattern: r.pattern}
}

// String returns the rule as it would be written in robots.txt, as
// "Disallow: /private/", or "" for the zero Rule.
func (r Rule) String() string {
	switch {
	case r.Pattern == "":
		return ""
	case r.Allow:
		return "Allow: " + r.Pattern
	}
	return "Disallow: " + r.Pattern
}

// parseRobots returns body read into a robotsFile of its own, as read
// reads it.
func parseRobots(body []byte) *robotsFile {
	f := new(robotsFile)
	f.read(body)
	return f
}

// read reads body into f, which is empty. It never fails: what it cannot
// read is counted in skipped, recorded in skippedLines while there is
// room, and otherwise ignored. Lines end at CR, LF or CR LF and are
// numbered from 1. The values it keeps share one copy of body. It returns
// the bytes of heap that f keeps, as heapSize counts them, and those that
// the parts of its groups will (partsKept).
func (f *robotsFile) read(body []byte) (kept int64) {
	// Every group's names, rules and usage lines go to one array each,
	// group after group, which the File keeps at the end.
	var agents []agentLine
	var rules []fileRule
	var usage []UsageRule
	var copied, copiedHeap int64                                   // the bytes of the patterns normalisation wrote anew, by allocSize and by heapSize
	text := string(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))) // without a UTF-8 byte order mark
	var cur *robotsGroup                                           // the group being read; nil before the first user-agent line
	inRules := false                                               // cur has had a rule (Allow, Disallow or Content-Usage), so a user-agent line starts a new group
	lines := lineReader{text: text, cr: -1, lf: -1}
	if n := strings.Count(text, ":"); n > 0 { // a rule's line has one: spare growing rules
		rules = make([]fileRule, 0, n)
	}
	for lineNo := 1; ; lineNo++ {
		raw, ok := lines.next()
		if !ok {
			break
		}
		line := raw
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = trimWS(line)
		if len(line) == 0 {
			continue
		}
		colon := strings.IndexByte(line, ':')
		if colon < 0 {
			f.skip(lineNo, raw, skipNoColon)
			continue
		}
		value := trimWS(line[colon+1:])
		switch key := fieldOf(trimWS(line[:colon])); key {
		case fieldUserAgent:
			if cur == nil || inRules {
				f.groups = append(f.groups, robotsGroup{agentsEnd: len(agents), rulesEnd: len(rules), usageEnd: len(usage)})
				cur = &f.groups[len(f.groups)-1]
				inRules = false
			}
			if token := agentName(value); token != "" {
				agents = append(agents, agentLine{token, int32(min(lineNo, math.MaxInt32))})
				cur.agentsEnd++
			} else {
				f.skip(lineNo, raw, skipNoToken) // it still starts or continues the group
			}
		case fieldAllow, fieldDisallow:
			if cur == nil {
				f.skip(lineNo, raw, skipOutsideGroup) // it binds no one
				continue
			}
			inRules = true
			if value == "" {
				continue // "Disallow:" with no path disallows nothing
			}
			if value[0] != '/' && value[0] != '*' {
				f.skip(lineNo, raw, skipNotPath) // §2.2.2
				continue
			}
			pattern := normalizePath(value)
			if pattern != value {
				copied += allocSize(len(pattern))
				copiedHeap += heapSize(len(pattern))
			}
			f.octets = int32(min(int(f.octets)+len(pattern), math.MaxInt32))
			rules = append(rules, fileRule{pattern: pattern, line: int32(min(lineNo, math.MaxInt32)), allow: key == fieldAllow})
			cur.rulesEnd++
		case fieldCrawlDelay:
			if cur == nil {
				f.skip(lineNo, raw, skipDelayOutside)
				continue
			}
			secs, err := strconv.ParseFloat(value, 64)
			if err != nil || secs < 0 || math.IsInf(secs, 0) || math.IsNaN(secs) {
				f.skip(lineNo, raw, skipBadDelay)
				continue
			}
			d := time.Duration(math.MaxInt64)
			if secs < float64(math.MaxInt64)/float64(time.Second) {
				d = time.Duration(secs * float64(time.Second))
			}
			cur.crawlDelay = max(cur.crawlDelay, d)
		case fieldContentUsage, fieldContentSignal:
			v, skipReason := &contentUsage, skipBadUsage
			if key == fieldContentSignal {
				v, skipReason = &contentSignal, skipBadSignal
			}
			switch {
			case cur == nil && key == fieldContentUsage:
				f.skip(lineNo, raw, skipOutsideGroup) // a rule: it binds no one
				continue
			case cur == nil:
				f.skip(lineNo, raw, skipSignalOutside)
				continue
			case key == fieldContentUsage:
				inRules = true // a rule, as Allow and Disallow are (draft-ietf-aipref-attach-05 §3)
			}
			r, normalized, err := v.rule(value)
			if err != nil {
				f.skip(lineNo, raw, skipReason) // it still holds, stating nothing
			}
			if normalized {
				copied += allocSize(len(r.Pattern))
				copiedHeap += heapSize(len(r.Pattern))
			}
			if r.Usage.other != "" {
				copied += allocSize(len(r.Usage.other))
				copiedHeap += heapSize(len(r.Usage.other))
			}
			usage = append(usage, r)
			cur.usageEnd++
		case fieldSitemap:
			if value != "" && !isSitemapURL(value) {
				f.skip(lineNo, raw, skipBadSitemap)
				continue
			}
			if value != "" {
				f.sitemaps = append(f.sitemaps, value)
			}
		default:
			f.skip(lineNo, raw, skipUnknownField)
		}
	}
	f.groups, f.agents, f.rules, f.usage = fitted(f.groups, text), fitted(agents, text), fitted(rules, text), usage
	f.cost = fileCost(f, text, copied)
	return parsedSize(f, text, copiedHeap, heapSize) + partsKept(f)
}

// fitted returns s, or a copy of it without the room to grow that append
// left, or that read made for rules on lines with a colon that are
// not, when that room takes more than a quarter of the octets of text, as
// it can when many groups are short: a File keeps the arrays as long as
// it is kept.
func fitted[S ~[]E, E any](s S, text string) S {
	var e E
	if (cap(s)-len(s))*int(unsafe.Sizeof(e)) <= len(text)/4 {
		return s
	}
	return slices.Clone(s)
}

// lineReader cuts a text into lines, which end at CR, LF or CR LF. It
// remembers where the next CR and LF are, so that a file of one kind of
// line end is read in one pass, however long.
type lineReader struct {
	text   string
	at     int // where the next line starts
	cr, lf int // the next CR and LF at or after at; -1 before the first look, len(text) for none
}

// next returns the next line, without its end, or ok false at the end.
func (r *lineReader) next() (line string, ok bool) {
	if r.at >= len(r.text) {
		return "", false
	}
	if r.cr < r.at {
		r.cr = indexFrom(r.text, r.at, '\r')
	}
	if r.lf < r.at {
		r.lf = indexFrom(r.text, r.at, '\n')
	}
	end, next := r.lf, r.lf+1
	if r.cr < r.lf {
		end, next = r.cr, r.cr+1
		if next == r.lf {
			next++ // CR LF ends one line
		}
	}
	line, r.at = r.text[r.at:end], next
	return line, true
}

// indexFrom returns the index of the first c in s at or after from, or
// len(s) if there is none.
func indexFrom(s string, from int, c byte) int {
	if i := strings.IndexByte(s[from:], c); i >= 0 {
		return from + i
	}
	return len(s)
}

// The fields of a robots.txt line that the reader understands.
const (
	fieldUnknown = iota
	fieldUserAgent
	fieldAllow
	fieldDisallow
	fieldCrawlDelay
	fieldSitemap
	fieldContentUsage
	fieldContentSignal
)

// fieldOf returns the field that key names, compared without regard to
// case: "user-agent" (or "useragent", "user agent"), "allow", "disallow",
// "crawl-delay" (or "crawldelay"), "sitemap" (or "site-map"),
// "content-usage", "content-signal".
func fieldOf(key string) int {
	switch len(key) {
	case 5:
		if strings.EqualFold(key, "allow") {
			return fieldAllow
		}
	case 7:
		if strings.EqualFold(key, "sitemap") {
			return fieldSitemap
		}
	case 8:
		if strings.EqualFold(key, "disallow") {
			return fieldDisallow
		} else if strings.EqualFold(key, "site-map") {
			return fieldSitemap
		}
	case 9:
		if strings.EqualFold(key, "useragent") {
			return fieldUserAgent
		}
	case 10:
		if strings.EqualFold(key, "user-agent") || strings.EqualFold(key, "user agent") || strings.EqualFold(key, "crawldelay") {
			if key[0]|0x20 == 'c' {
				return fieldCrawlDelay
			}
			return fieldUserAgent
		}
	case 11:
		if strings.EqualFold(key, "crawl-delay") {
			return fieldCrawlDelay
		}
	case 13:
		if strings.EqualFold(key, "content-usage") {
			return fieldContentUsage
		}
	case 14:
		if strings.EqualFold(key, "content-signal") {
			return fieldContentSignal
		}
	}
	return fieldUnknown
}

// rulesFor returns the rules that bind the product token (lower-case): those
// of every group naming it, combined (§2.2.1), else those of every "*"
// group, else none. agent is the group token that bound, or "" for none.
func (f *robotsFile) rulesFor(token string) (rules []fileRule, crawlDelay time.Duration, agent string) {
	for _, want := range []string{token, "*"} {
		if want == "" {
			continue
		}
		for i := range f.groups {
			if f.names(i, want) {
				rules = append(rules, f.rulesOf(i)...)
				crawlDelay = max(crawlDelay, f.groups[i].crawlDelay)
				agent = want
			}
		}
		if agent != "" {
			return rules, crawlDelay, agent
		}
	}
	return nil, 0, ""
}

// agentName reads the name that a user-agent line's value gives its
// group, as written: "*" for the catch-all, which is the value "*" alone
// or followed by white space ("* BadBot"), as Google reads it; else its
// product token, as [ProductToken] reads it, whatever follows
// ("Mediapartners-Google*" names "Mediapartners-Google", "MJ12bot" names
// "MJ"); "" when it has none ("*BadBot*", `"Vegi bot"`), and then the
// line names no crawler.
func agentName(value string) string {
	if value != "" && value[0] == '*' && (len(value) == 1 || value[1] == ' ' || value[1] == '\t') {
		return "*"
	}
	return tokenOf(value)
}

// ProductToken returns the product token of a User-Agent header value, the
// name that chooses its group, lower-cased: the longest run of ASCII
// letters, '_' and '-' that begins the value, whatever follows it, as
// RFC 9309 §2.2.1 and Google's matcher read a product token. So
// "MyBot/1.0 (+https://example.com/bot)" gives "mybot", "MJ12bot/v1.4.8"
// gives "mj", and " MyBot" or "(compatible)" none: ProductToken returns
// "". A user-agent line of robots.txt is read the same way, so a crawler
// and the line that names it agree.
func ProductToken(ua string) string {
	token := tokenOf(ua)
	for i := range len(token) {
		if 'A' <= token[i] && token[i] <= 'Z' {
			return strings.ToLower(token)
		}
	}
	return token
}

// tokenOf returns the product token of s as written: its longest prefix
// of ASCII letters, '_' and '-'.
func tokenOf(s string) string {
	n := 0
	for n < len(s) && isTokenByte(s[n]) {
		n++
	}
	return s[:n]
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-'
}

// trimWS returns s without its leading and trailing spaces and tabs, the
// white space of RFC 9309's grammar (§2.2). Other octets stay: a path
// that ends in U+00A0 keeps it.
func trimWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// normalizePath puts a rule's path pattern in the form that normalizeTarget
// gives a URI, so that the two compare as RFC 9309 §2.2.2 says: a
// percent-encoded unreserved character is decoded ("/%7Efoo" is "/~foo"),
// other escapes keep their encoding with upper-case hex ("%2f" is "%2F",
// still distinct from "/"), and bytes that may not stand bare in a URI,
// such as non-ASCII octets and spaces, are percent-encoded. It returns p
// itself, without allocating, when p is already in that form.
func normalizePath(p string) string { return normalize(p, &bareInPattern) }

// normalizeTarget normalises a URI's escaped path and query like
// normalizePath, and also encodes '*' and '$', which are special in rules,
// so that a rule matches them only where it writes them as "%2A" and "%24"
// (RFC 9309 §2.2.3).
func normalizeTarget(p string) string { return normalize(p, &bareInTarget) }

// byteSet is a set of bytes, looked up in one step: normalize runs on the
// path of every request.
type byteSet [256]bool

// bareInPattern and bareInTarget hold the bytes that normalizePath and
// normalizeTarget leave as they are: those that may stand bare in a URI,
// but '%', and for a target but '*' and '$'.
var bareInPattern, bareInTarget = bareBytes(""), bareBytes("*$")

func bareBytes(literal string) byteSet {
	var s byteSet
	for c := range 256 {
		s[c] = c != '%' && isURIByte(byte(c)) && strings.IndexByte(literal, byte(c)) < 0
	}
	return s
}

// normalize does the work of normalizePath and normalizeTarget; bytes not
// in bare are percent-encoded, but for escapes.
func normalize(p string, bare *byteSet) string {
	i := 0
	for i < len(p) {
		for i+4 <= len(p) && bare[p[i]] && bare[p[i+1]] && bare[p[i+2]] && bare[p[i+3]] {
			i += 4 // most paths are bare octets: four at a go
		}
		if i == len(p) {
			break
		}
		if c := p[i]; bare[c] {
			i++
		} else if c == '%' && i+2 < len(p) && isUpperHex(p[i+1]) && isUpperHex(p[i+2]) &&
			!isUnreserved(unhex(p[i+1])<<4|unhex(p[i+2])) {
			i += 3 // already in normal form
		} else {
			break
		}
	}
	if i == len(p) {
		return p
	}
	size := i // of the normal form, so that it takes no more memory than its octets
	for j := i; j < len(p); j++ {
		c := p[j]
		switch {
		case c == '%' && j+2 < len(p) && isHex(p[j+1]) && isHex(p[j+2]):
			size += 3
			if isUnreserved(unhex(p[j+1])<<4 | unhex(p[j+2])) {
				size -= 2
			}
			j += 2
		case bare[c]:
			size++
		default:
			size += 3
		}
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(p[:i])
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			v := unhex(p[i+1])<<4 | unhex(p[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				writeEscaped(&b, v)
			}
			i += 2
		case bare[c]:
			b.WriteByte(c)
		default:
			writeEscaped(&b, c)
		}
	}
	return b.String()
}

func writeEscaped(b *strings.Builder, c byte) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('%')
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&15])
}

// isURIByte reports whether c may stand bare in a URI: an unreserved or
// reserved character of RFC 3986, or '%'.
func isURIByte(c byte) bool {
	if isUnreserved(c) {
		return true
	}
	return strings.IndexByte(":/?#[]@!$&'()*+,;=%", c) >= 0
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
