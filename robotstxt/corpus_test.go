package robotstxt

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite/internal/cputime"
)

// corpusEnv names the directory of the robots.txt corpus: real files
// from popular sites, and in peer-suites/ the decisions that other
// robots.txt parsers' own tests ask (see its README.md). When it is set,
// a missing corpus fails the tests; when it is not, they look beside the
// repository's clone and skip if the corpus is not there.
const corpusEnv = "POLITE_ROBOTS_CORPUS"

// corpusDir returns the corpus's directory, or skips tb without one.
func corpusDir(tb testing.TB) string {
	dir, set := os.LookupEnv(corpusEnv)
	if !set {
		dir = filepath.Join("..", "..", "shared", "robots-corpus")
	}
	if _, err := os.Stat(filepath.Join(dir, "peer-suites")); err != nil {
		if set {
			tb.Fatalf("%s=%s: %v", corpusEnv, dir, err)
		}
		tb.Skipf("no robots.txt corpus at %s; set %s to its path", dir, corpusEnv)
	}
	return dir
}

// peerCase is one decision of a peer's test suite, with the peer's answer.
type peerCase struct {
	ID           string
	Test         string
	Kind         string // "allowed", "crawl-delay" or "sitemaps"
	Robots       string
	RobotsBase64 string `json:"robots_base64"`
	Agents       []string
	URL          string
	WantAllowed  bool     `json:"want_allowed"`
	WantDelay    float64  `json:"want_delay_seconds"`
	WantSitemaps []string `json:"want_sitemaps"`
}

// Where a peer's suite asks for the peer's own choice rather than what
// RFC 9309 says, the case is skipped with the reason. The corpus's
// README.md lists the kinds: typo keys, prefix matching of user-agents, '*'
// inside a user-agent, unknown lines ending a group; and these others.
const (
	ownNoColon        = "reads a line without a colon; RFC 9309 §2.2's grammar requires one"
	ownTypoKeys       = "reads misspelt field names such as Dissallow as Disallow; RFC 9309 §2.2 names the fields"
	ownPrefixAgent    = "binds a crawler to a group whose name is a prefix or substring of its own; §2.2.1 compares product tokens"
	ownStarInAgent    = "reads a '*' inside a user-agent's name as a wildcard; §2.2.1 has '*' alone as the catch-all"
	ownUnknownEnds    = "ends a group's user-agent lines at an unknown line; §2.2.4: other records must not interfere"
	ownSeveralNames   = "reads several names on one user-agent line; §2.2.1's line names one product token"
	ownSeveralAgents  = "binds a crawler of several names to all their groups at once; a File binds one product token"
	ownAgentLine      = "finds the crawler's name anywhere in a user-agent line's value"
	ownAgentString    = "compares the crawler's whole agent string, where the engine reads the User-Agent's product token"
	ownIndexHTML      = "treats /index.html as its directory; RFC 9309 says nothing of it"
	ownLineLimit      = "ignores what a line holds past 16,664 octets; RFC 9309 sets no limit on a line"
	ownEscapedLetters = "compares %62%61%7A as written; §2.2.2 decodes percent-encoded unreserved octets before comparing"
	ownBareURL        = "matches a URL's non-ASCII octets unencoded; §2.2.2 percent-encodes them before comparing"
	ownUTF16          = "decodes a UTF-16 file; §2.3 says the file is UTF-8"
	ownHTML           = "strips HTML markup from lines"
	ownMaxDelay       = "disallows every URL when the Crawl-delay is past its maximum"
	ownStarLength     = "reads Disallow: /* as long as Allow: /; §2.2.2 counts the octets of the pattern"
	ownDollarLiteral  = "matches a final '$' both as the end and as the character; §2.2.3 makes it the end"
	ownAbsoluteURL    = "reads a rule written as an absolute URL; §2.2.2's path-pattern starts with '/'"
	ownNonASCIIName   = "reads a name with non-ASCII letters as a product token; §2.2.1's are ASCII letters, '_' and '-'"
	ownDelayAbove     = "gives a Crawl-delay to the user-agent lines above it only; the engine gives it to its whole group"
	ownCustomMatcher  = "matches user-agents with a function the test supplies"
	ownSitemapDedup   = "lists a sitemap given twice once"
	ownSitemapBare    = "reads a line that is only a URL as a sitemap"
	ownSitemapResolve = "resolves a relative sitemap URL against the robots.txt's"
	notDecided        = "asks of a path longer than MaxPathLength, which the engine does not decide"
	ownDigitNames     = "reads digits as part of a crawler's name; §2.2.1's product token, as Google reads it, is the letters, '_' and '-' before them"
)

// peerOwnChoices are the cases where the peer follows its own choice.
var peerOwnChoices = map[string]string{
	"crawler-commons/028":  ownDelayAbove,
	"crawler-commons/074":  ownDelayAbove,
	"crawler-commons/079":  ownDelayAbove,
	"crawler-commons/098":  ownDelayAbove,
	"crawler-commons/285":  ownSeveralNames,
	"crawler-commons/286":  ownSeveralNames,
	"crawler-commons/289":  ownAgentLine,
	"crawler-commons/291":  ownAgentLine,
	"crawler-commons/294":  ownSitemapDedup,
	"crawler-commons/297":  ownUTF16,
	"crawler-commons/298":  ownUTF16,
	"crawler-commons/329":  ownDelayAbove,
	"crawler-commons/330":  ownDelayAbove,
	"crawler-commons/334":  ownHTML,
	"crawler-commons/335":  ownHTML,
	"crawler-commons/336":  ownHTML,
	"crawler-commons/342":  ownStarLength,
	"crawler-commons/402":  ownTypoKeys,
	"crawler-commons/403":  ownTypoKeys,
	"crawler-commons/471":  ownSitemapBare,
	"crawler-commons/474":  ownMaxDelay,
	"crawler-commons/475":  ownSitemapResolve,
	"protego/006":          ownTypoKeys,
	"protego/007":          ownTypoKeys,
	"protego/008":          ownTypoKeys,
	"protego/009":          ownTypoKeys,
	"protego/010":          ownTypoKeys,
	"protego/119":          ownNonASCIIName,
	"protego/123":          ownPrefixAgent,
	"protego/248":          ownUnknownEnds,
	"protego/249":          ownUnknownEnds,
	"protego/250":          ownUnknownEnds,
	"protego/256":          ownNoColon,
	"protego/257":          ownNoColon,
	"protego/260":          ownStarInAgent,
	"protego/275":          ownIndexHTML,
	"protego/303":          ownDollarLiteral,
	"protego/304":          ownDollarLiteral,
	"protego/306":          ownAbsoluteURL,
	"protego/328":          ownPrefixAgent,
	"protego/329":          ownPrefixAgent,
	"protego/331":          ownPrefixAgent,
	"protego/332":          ownPrefixAgent,
	"google-robotstxt/007": ownNoColon,
	"google-robotstxt/041": ownAgentString,
	"google-robotstxt/064": ownBareURL,
	"google-robotstxt/066": ownBareURL,
	"google-robotstxt/067": ownEscapedLetters,
	"google-robotstxt/079": ownIndexHTML,
	"google-robotstxt/084": ownLineLimit,
	"google-robotstxt/087": ownLineLimit,
}

// peerAgent returns the User-Agent that stands for a peer's crawler of the
// given names: the one of them whose product token the file names, or
// any if none does. ok is false when several do, which a File cannot
// express (ownSeveralAgents).
func peerAgent(f *File, names []string) (ua string, ok bool) {
	var named []string
	for _, n := range names {
		if tok := ProductToken(n); tok != "" && f.names(tok) && !slices.Contains(named, tok) {
			named = append(named, tok)
		}
	}
	switch {
	case len(named) == 1:
		return named[0], true
	case len(named) > 1:
		return "", false
	case len(names) > 0:
		return names[0], true
	}
	return "", true
}

// TestPeerSuites asks the engine every decision of crawler-commons',
// Protego's and google/robotstxt's own test suites, and expects the
// peer's answer wherever the peer follows RFC 9309. A case listed in
// peerOwnChoices must still differ, so that the list stays true.
func TestPeerSuites(t *testing.T) {
	dir := corpusDir(t)
	for _, suite := range []string{"crawler-commons", "protego", "google-robotstxt"} {
		t.Run(suite, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "peer-suites", suite+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var s struct{ Cases []peerCase }
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatal(err)
			}
			if len(s.Cases) == 0 {
				t.Fatal("no cases")
			}
			for _, c := range s.Cases {
				t.Run(strings.TrimPrefix(c.ID, suite+"/"), func(t *testing.T) {
					differs, err := peerDiffers(&c)
					if err != nil {
						t.Fatal(err)
					}
					why, own := peerOwnChoices[c.ID]
					switch {
					case own && differs == "":
						t.Errorf("%s: listed as the peer's own choice (%s), but the engine agrees", c.ID, why)
					case own:
						t.Skipf("%s %s", suite, why)
					case differs == ownSeveralAgents || differs == notDecided:
						t.Skipf("%s %s", suite, differs)
					case differs != "" && c.namesDigits():
						t.Skipf("%s %s", suite, ownDigitNames)
					case differs != "":
						t.Errorf("%s (%s): %s\nrobots.txt:\n%s", c.ID, c.Test, differs, c.text())
					}
				})
			}
		})
	}
}

// peerDiffers asks the engine the decision of c, and says how its answer
// differs from the peer's; "" when they agree.
func peerDiffers(c *peerCase) (string, error) {
	body := []byte(c.Robots)
	if c.RobotsBase64 != "" {
		var err error
		if body, err = base64.StdEncoding.DecodeString(c.RobotsBase64); err != nil {
			return "", err
		}
	}
	f := Parse(body)
	ua, ok := peerAgent(f, c.Agents)
	if !ok {
		return ownSeveralAgents, nil
	}
	switch c.Kind {
	case "allowed":
		u, err := url.Parse(c.URL)
		if err != nil {
			return "", err
		}
		m, err := f.Test(ua, u)
		if errors.Is(err, ErrPathTooLong) {
			return notDecided, nil
		}
		if err != nil || m.Allowed != c.WantAllowed {
			return fmt.Sprintf("Test(%q, %.200q) = %+v, %v; the peer says allowed: %v", ua, c.URL, m, err, c.WantAllowed), nil
		}
	case "crawl-delay":
		if got := f.CrawlDelay(ua).Seconds(); math.Abs(got-c.WantDelay) > 1e-9 {
			return fmt.Sprintf("CrawlDelay(%q) = %vs; the peer says %vs", ua, got, c.WantDelay), nil
		}
	case "sitemaps":
		if got := f.Sitemaps(); !slices.Equal(got, c.WantSitemaps) && len(got)+len(c.WantSitemaps) > 0 {
			return fmt.Sprintf("Sitemaps = %q; the peer says %q", got, c.WantSitemaps), nil
		}
	default:
		return "", fmt.Errorf("%s: unknown kind %q", c.ID, c.Kind)
	}
	return "", nil
}

// namesDigits reports whether a name that c gives a crawler, or a
// user-agent line of its robots.txt, goes on with a digit after its
// product token ("bot1", "Rule1TestBot"): a name that peers read in full
// and the engine, as RFC 9309 §2.2.1 and Google do, reads up to the
// digit.
func (c *peerCase) namesDigits() bool {
	digitAfter := func(v string) bool {
		n := len(tokenOf(v))
		return n < len(v) && '0' <= v[n] && v[n] <= '9'
	}
	if slices.ContainsFunc(c.Agents, digitAfter) {
		return true
	}
	body := c.Robots
	if c.RobotsBase64 != "" {
		b, _ := base64.StdEncoding.DecodeString(c.RobotsBase64)
		body = string(b)
	}
	for line := range strings.Lines(body) {
		key, value, ok := strings.Cut(line, ":")
		if ok && fieldOf(trimWS(key)) == fieldUserAgent && digitAfter(trimWS(value)) {
			return true
		}
	}
	return false
}

// text returns c's robots.txt for a failure message, cut to 1 KiB.
func (c *peerCase) text() string {
	s := c.Robots
	if c.RobotsBase64 != "" {
		s = "(base64) " + c.RobotsBase64
	}
	if len(s) > 1<<10 {
		s = s[:1<<10] + "..."
	}
	return s
}

// corpusFile is a real robots.txt of the corpus, named by its host.
type corpusFile struct {
	name string
	body []byte
}

// corpusFiles returns the corpus's robots.txt files, in name order.
func corpusFiles(tb testing.TB) []corpusFile {
	dir := corpusDir(tb)
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var files []corpusFile
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "README.md" {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, corpusFile{e.Name(), body})
	}
	if len(files) == 0 {
		tb.Fatalf("no files in %s", dir)
	}
	return files
}

// corpusAgents are the User-Agents that the corpus's decisions are asked
// for: crawlers that many files name, one that fewer do, and one that
// none does, which the "*" groups bind.
var corpusAgents = []string{"Googlebot", "bingbot", "Baiduspider", "PoliteCorpusBot"}

// corpusPaths returns the paths decided against f: a few that any site
// has, and for each of the first 40 distinct patterns of its rules, in any
// group, the pattern with each '*' as "x" and no final '$', and that path
// with more after it.
func corpusPaths(f *File) []string {
	paths := []string{"/", "/index.html", "/search?q=robots", "/private/x", "/a/b/c.php?id=1"}
	seen := make(map[string]bool)
	for i := range f.file.groups {
		for _, r := range f.file.rulesOf(i) {
			if seen[r.pattern] || len(seen) == 40 {
				continue
			}
			seen[r.pattern] = true
			p := strings.ReplaceAll(strings.TrimSuffix(r.pattern, "$"), "*", "x")
			if p == "" || p[0] != '/' {
				p = "/" + p
			}
			paths = append(paths, p, p+"x/y?z=1")
		}
	}
	return paths
}

var corpusDecisions = flag.String("robotstxt.decisions", "",
	"TestCorpus writes each decision it asks and the engine's answer to this file, one a line: file, User-Agent, URL, allowed, tab-separated")

// TestCorpus runs every file of the corpus through the engine: each of
// corpusAgents asks each of corpusPaths.
func TestCorpus(t *testing.T) {
	files := corpusFiles(t)
	var out *bufio.Writer
	if *corpusDecisions != "" {
		w, err := os.Create(*corpusDecisions)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		out = bufio.NewWriter(w)
		defer out.Flush()
	}
	ds := corpusDecisionsOf(t, files)
	parsed := make([]*File, len(files))
	for _, d := range ds {
		f := parsed[d.file]
		if f == nil {
			f = Parse(files[d.file].body)
			parsed[d.file] = f
		}
		m, err := f.Test(d.ua, d.u)
		if err != nil {
			t.Errorf("%s: Test(%q, %s): %v", files[d.file].name, d.ua, d.u, err)
		}
		if out != nil {
			fmt.Fprintf(out, "%s\t%s\t%s\t%v\n", files[d.file].name, d.ua, d.u, m.Allowed)
		}
	}
	t.Logf("%d files, %d decisions, each made", len(files), len(ds))
}

// corpusDecision is one decision of the corpus: a file, by its index in
// corpusFiles, a User-Agent and a URL.
type corpusDecision struct {
	file int
	ua   string
	u    *url.URL
}

// corpusDecisionsOf returns the decisions that TestCorpus asks, in order.
func corpusDecisionsOf(tb testing.TB, files []corpusFile) []corpusDecision {
	var ds []corpusDecision
	for i, cf := range files {
		f := Parse(cf.body)
		for _, ua := range corpusAgents {
			for _, p := range corpusPaths(f) {
				u, err := url.Parse("http://example.com" + p)
				if err != nil {
					tb.Fatal(err)
				}
				ds = append(ds, corpusDecision{i, ua, u})
			}
		}
	}
	return ds
}

// BenchmarkCorpus decides TestCorpus's decisions, each op all of them:
// "from-scratch" parses the file for each decision, binds and compiles its
// group and decides, as a matcher that keeps nothing does; "parsed"
// decides on files parsed and bound before; "parse" parses each file once.
// ns/decision and cpu-ns/decision divide by the decisions, or the files.
// To compare with a matcher of one thread, run it with -cpu 1:
//
//	go test -run '^$' -bench '^BenchmarkCorpus$' -benchtime 3x -cpu 1 ./robotstxt
func BenchmarkCorpus(b *testing.B) {
	files := corpusFiles(b)
	ds := corpusDecisionsOf(b, files)
	perDecision := func(b *testing.B, n int, body func()) {
		b.ReportAllocs()
		cpu0, _ := cputime.Process()
		start := time.Now()
		for b.Loop() {
			body()
		}
		cpu1, _ := cputime.Process()
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/decision")
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N*n), "cpu-ns/decision")
	}
	b.Run("from-scratch", func(b *testing.B) {
		perDecision(b, len(ds), func() {
			for _, d := range ds {
				if _, err := Parse(files[d.file].body).Test(d.ua, d.u); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("parsed", func(b *testing.B) {
		parsed := make([]*File, len(files))
		for i, cf := range files {
			parsed[i] = Parse(cf.body)
		}
		for _, d := range ds {
			parsed[d.file].Test(d.ua, d.u)
		}
		perDecision(b, len(ds), func() {
			for _, d := range ds {
				if _, err := parsed[d.file].Test(d.ua, d.u); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("parse", func(b *testing.B) {
		perDecision(b, len(files), func() {
			for _, cf := range files {
				Parse(cf.body)
			}
		})
	})
}
