package audit

import (
	"bytes"
	"strings"
)

// The kinds of agent a User-Agent names.
type agentKind uint8

const (
	agentNamed   agentKind = iota // a group of a robots.txt version names its crawler
	agentCrawler                  // a crawler of its own name, bound by the "*" group
	agentBrowser                  // a browser, or a client that names no crawler: not judged
	agentNone                     // no User-Agent at all: bound by the "*" group
)

// The rows that no crawler's name fits.
const (
	browsersName = "(browsers)"
	noAgentName  = "(no user-agent)"
	otherName    = "(other agents)" // crawlers past maxCrawlers
)

// crawlerWords mark a word of a User-Agent as a crawler's name.
var crawlerWords = []string{"bot", "crawl", "spider", "slurp"}

// notCompatible are the words after "compatible;" that name no crawler:
// browsers that write it ("compatible; MSIE 6.0", "compatible;
// Konqueror/4.5"), and platforms, which some crawlers write before their
// name ("compatible; Linux x86_64; Mail.RU_Bot/2.0").
var notCompatible = map[string]bool{
	"msie": true, "konqueror": true,
	"windows": true, "win32": true, "win64": true, "linux": true, "macintosh": true, "x11": true, "android": true, "u": true,
}

// nameAgent returns the name of the crawler that sent the User-Agent ua, by
// the rule polite audit's manual states, and its kind. named holds the
// product tokens the groups of the robots.txt files name, lower-cased.
//
//  1. A word of ua that a group names: the first, where a word is a run
//     of letters, digits, '_' and '-', compared without regard to case.
//     "Mozilla/5.0 (compatible; Googlebot/2.1)" is googlebot when a group
//     names googlebot. The first word is the product token, so a crawler
//     that the engine itself binds to a group is named by it.
//  2. Otherwise the product token, unless it is "mozilla" or "opera",
//     which browsers send: "curl/8.5" is curl.
//  3. Otherwise the first word after "compatible;", whatever follows it,
//     unless it is one of notCompatible: "Mozilla/5.0 (compatible;
//     YandexBot/3.0)" is yandexbot, "Mozilla/4.5 (compatible; HTTrack
//     3.0x; Windows 98)" is httrack.
//  4. Otherwise the first word that contains "bot", "crawl", "spider" or
//     "slurp", one followed by '/' (a product) first.
//  5. Otherwise a browser.
//
// An empty ua, or "-", is agentNone.
func nameAgent(ua []byte, named map[string]bool) (string, agentKind) {
	ua = bytes.TrimSpace(ua)
	if len(ua) == 0 || string(ua) == "-" {
		return noAgentName, agentNone
	}
	var buf [64]byte
	for w := range words(ua) {
		if lw := lower(buf[:0], w.text); named[string(lw)] {
			return string(lw), agentNamed
		}
	}
	first, _ := nextWord(ua, 0)
	if first.start == 0 && len(first.text) > 0 {
		if pt := strings.ToLower(string(first.text)); pt != "mozilla" && pt != "opera" {
			return pt, agentCrawler
		}
	}
	if i := indexFold(ua, "compatible;"); i >= 0 {
		w, _ := nextWord(ua, i+len("compatible;"))
		if name := strings.ToLower(string(w.text)); name != "" && !notCompatible[name] {
			return name, agentCrawler
		}
	}
	fallback := ""
	for w := range words(ua) {
		name := strings.ToLower(string(w.text))
		if !containsAny(name, crawlerWords) {
			continue
		}
		if end := w.start + len(w.text); end < len(ua) && ua[end] == '/' {
			return name, agentCrawler
		}
		if fallback == "" {
			fallback = name
		}
	}
	if fallback != "" {
		return fallback, agentCrawler
	}
	return browsersName, agentBrowser
}

// A word is a run of token bytes of a User-Agent, and where it starts.
type word struct {
	text  []byte
	start int
}

// words yields the words of ua in order.
func words(ua []byte) func(yield func(word) bool) {
	return func(yield func(word) bool) {
		for i := 0; ; {
			w, next := nextWord(ua, i)
			if len(w.text) == 0 || !yield(w) {
				return
			}
			i = next
		}
	}
}

// nextWord returns the first word of ua at or after i, and the index after
// it; an empty word when there is none.
func nextWord(ua []byte, i int) (word, int) {
	for i < len(ua) && !tokenByte(ua[i]) {
		i++
	}
	start := i
	for i < len(ua) && tokenByte(ua[i]) {
		i++
	}
	return word{ua[start:i], start}, i
}

// tokenByte reports whether c may be part of a product token: a letter, a
// digit, '_' or '-', as the robots.txt engine reads them.
func tokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// lower appends the ASCII lower case of s to dst.
func lower(dst, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// indexFold returns the index of the first instance of the lower-case ASCII
// sep in s, compared without regard to case, or -1.
func indexFold(s []byte, sep string) int {
	for i := 0; i+len(sep) <= len(s); i++ {
		if strings.EqualFold(string(s[i:i+len(sep)]), sep) {
			return i
		}
	}
	return -1
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
