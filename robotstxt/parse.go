package robotstxt

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// robotsFile is a robots.txt read the RFC 9309 way: line by line, keeping
// every line it understands and skipping the rest, so that one malformed
// line never discards the file (§2.3.1.5). It decides nothing; matching is
// left to the engine in engine.go.
type robotsFile struct {
	groups       []robotsGroup
	sitemaps     []string
	skipped      int           // lines that were neither blank, comments nor understood
	skippedLines []SkippedLine // the first maxSkippedLines of them
}

// maxSkippedLines and maxSkippedText bound what parseRobots records of the
// lines it skips, so that a hostile file cannot make the record large: the
// first 100 lines, each cut to 120 bytes. skipped still counts them all.
const (
	maxSkippedLines = 100
	maxSkippedText  = 120
)

// Why parseRobots skipped a line; the Reason of a [SkippedLine].
const (
	skipNoColon      = "no colon"
	skipNoToken      = "no product token"
	skipOutsideGroup = "rule outside any group"
	skipNotPath      = "not a path pattern"
	skipDelayOutside = "Crawl-delay outside any group"
	skipBadDelay     = "bad Crawl-delay"
	skipUnknownField = "unknown field"
)

// skip counts a skipped line and records it while the record has room.
// text is the line as written, without its line break; the record keeps
// at most maxSkippedText bytes of it, cut before a character, with invalid
// UTF-8 replaced.
func (f *robotsFile) skip(lineNo int, text []byte, reason string) {
	f.skipped++
	if len(f.skippedLines) == maxSkippedLines {
		return
	}
	text = bytes.TrimSpace(text)
	if cut := maxSkippedText; len(text) > cut {
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	f.skippedLines = append(f.skippedLines, SkippedLine{
		Line: lineNo, Text: strings.ToValidUTF8(string(text), "\uFFFD"), Reason: reason})
}

// robotsGroup is one group as the file writes it: one or more user-agent
// lines and the rules that follow them (§2.1). A [Group] combines the
// groups that bind one product token.
type robotsGroup struct {
	agents     []string // product tokens, lower-cased; "*" for the default group
	rules      []Rule
	crawlDelay time.Duration // the largest Crawl-delay in the group; 0 if none
}

// A Rule is one Allow or Disallow line of a robots.txt. The zero Rule is
// no rule: what [Group.Decide] reports when no rule matched.
type Rule struct {
	// Allow tells an Allow rule from a Disallow rule.
	Allow bool
	// Pattern is the rule's path pattern, with its percent-encoding
	// normalised: "/~foo" for "/%7efoo", "/caf%C3%A9" for "/café".
	Pattern string
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

// parseRobots reads body. It never fails: what it cannot read is counted in
// skipped, recorded in skippedLines while there is room, and otherwise
// ignored. Lines end at CR, LF or CR LF and are numbered from 1.
func parseRobots(body []byte) *robotsFile {
	f := &robotsFile{}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
	var cur *robotsGroup                                  // the group being read; nil before the first user-agent line
	inRules := false                                      // cur has had a rule or Crawl-delay, so a user-agent line starts a new group
	for lineNo := 1; len(body) > 0; lineNo++ {
		var raw []byte
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			end := i + 1
			if body[i] == '\r' && end < len(body) && body[end] == '\n' {
				end++ // CR LF ends one line
			}
			raw, body = body[:i], body[end:]
		} else {
			raw, body = body, nil
		}
		line := raw
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			f.skip(lineNo, raw, skipNoColon)
			continue
		}
		key := strings.ToLower(string(bytes.TrimSpace(line[:colon])))
		value := string(bytes.TrimSpace(line[colon+1:]))
		switch key {
		case "user-agent", "useragent", "user agent":
			token := agentToken(value)
			if token == "" {
				f.skip(lineNo, raw, skipNoToken)
				continue
			}
			if cur == nil || inRules {
				f.groups = append(f.groups, robotsGroup{})
				cur = &f.groups[len(f.groups)-1]
				inRules = false
			}
			cur.agents = append(cur.agents, token)
		case "allow", "disallow":
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
			cur.rules = append(cur.rules, Rule{Allow: key == "allow", Pattern: normalizePath(value)})
		case "crawl-delay", "crawldelay":
			secs, err := strconv.ParseFloat(value, 64)
			if cur == nil {
				f.skip(lineNo, raw, skipDelayOutside)
				continue
			}
			if err != nil || secs < 0 || math.IsInf(secs, 0) || math.IsNaN(secs) {
				f.skip(lineNo, raw, skipBadDelay)
				continue
			}
			inRules = true
			d := time.Duration(math.MaxInt64)
			if secs < float64(math.MaxInt64)/float64(time.Second) {
				d = time.Duration(secs * float64(time.Second))
			}
			cur.crawlDelay = max(cur.crawlDelay, d)
		case "sitemap", "site-map":
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
	return f
}

// rulesFor returns the rules that bind the product token (lower-case): those
// of every group naming it, combined (§2.2.1), else those of every "*"
// group, else none. agent is the group token that bound, or "" for none.
func (f *robotsFile) rulesFor(token string) (rules []Rule, crawlDelay time.Duration, agent string) {
	for _, want := range []string{token, "*"} {
		if want == "" {
			continue
		}
		for i := range f.groups {
			g := &f.groups[i]
			for _, a := range g.agents {
				if a == want {
					rules = append(rules, g.rules...)
					crawlDelay = max(crawlDelay, g.crawlDelay)
					agent = want
					break
				}
			}
		}
		if agent != "" {
			return rules, crawlDelay, agent
		}
	}
	return nil, 0, ""
}

// agentToken reads the product token of a user-agent line's value: "*", or
// the leading letters, digits, '_' and '-', lower-cased. "Googlebot/2.1"
// names "googlebot".
func agentToken(value string) string {
	if strings.HasPrefix(value, "*") {
		return "*"
	}
	return ProductToken(value)
}

// ProductToken returns the product token of a User-Agent header value, the
// name that chooses its group, lower-cased: "mybot" for
// "MyBot/1.0 (+https://example.com/bot)". It is the value's leading run of
// letters, digits, '_' and '-', so "" for a value that starts with
// anything else.
func ProductToken(ua string) string {
	n := 0
	for n < len(ua) && isTokenByte(ua[n]) {
		n++
	}
	return strings.ToLower(ua[:n])
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
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
	var b strings.Builder
	b.Grow(len(p) + 8)
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
