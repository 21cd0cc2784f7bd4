package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/cmd/polite/internal/human"
	"github.com/polite-go/polite/pace"
	"github.com/polite-go/polite/robotstxt"
)

// robotsTestOrigin stands for the site when -robots is given and a URL is a
// bare path.
const robotsTestOrigin = "http://robots.test"

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c commonFlags
	fs := newFlagSet("check", stderr, &c)
	var uses usesValue
	fs.Var(&uses, "use", "the crawler's `USES`, as train-ai,search: a URL whose robots.txt usage preference is n for one is blocked")
	robotsFile := fs.String("robots", "", "test the local robots.txt `FILE`, with no network at all")
	if status := parseFlags(fs, args); status >= 0 {
		return status
	}
	opts := c.options()
	if len(uses) > 0 {
		opts = append(opts, flagOption{"-use", "WithUsage", "", polite.WithUsage(polite.RobotsEnforce, uses...)})
	}
	var base http.RoundTripper // nil: the network
	var body []byte
	if *robotsFile != "" {
		var err error
		if body, err = os.ReadFile(*robotsFile); err != nil {
			return valueError(fs, "%v", err)
		}
		base = localRobots(body)
	}
	tr, err := newTransport(base, opts)
	if err != nil {
		return valueError(fs, "%v", err)
	}
	urls, err := urlArgs(fs)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	type target struct {
		shown  string // as the user wrote it
		req    *http.Request
		robots string // the robots.txt consulted, once decided
	}
	targets := make([]target, 0, len(urls))
	for _, arg := range urls {
		u, err := parseURL(arg, *robotsFile != "")
		if err != nil {
			if *robotsFile == "" && strings.HasPrefix(arg, "/") {
				return valueError(fs, "%v; a bare path needs -robots FILE", err)
			}
			return valueError(fs, "%v", err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return valueError(fs, "%v", err)
		}
		targets = append(targets, target{shown: arg, req: req})
	}

	// The arguments are good: what the file holds is said once, before the
	// verdicts.
	status := exitOK
	if *robotsFile != "" && !reportFile(stderr, *robotsFile, body) {
		status = exitError
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for i, t := range targets {
		d, err := tr.Check(t.req)
		if ctx.Err() != nil {
			break // interrupted: what was decided stands
		}
		if err != nil {
			tw.Flush()
			fmt.Fprintf(stderr, "polite check: %s: %v\n", t.shown, err)
			status = worse(status, exitError)
			continue
		}
		targets[i].robots = d.Robots.URL
		verdict, why := "allowed", d.Reason
		switch {
		case !d.Allowed:
			verdict = "blocked"
		case d.UsageBlocked != (robotstxt.Usage{}):
			verdict, why = "blocked", "-use: "+d.UsageBlocked.String()+usageRulesOf(tr, t.req, d.Agent, uses)
		}
		if verdict == "blocked" {
			status = worse(status, exitBlocked)
		}
		usage := ""
		if d.Usage != (robotstxt.Usage{}) {
			usage = "\tusage " + d.Usage.String()
		}
		groupLines, ruleLine := linesOf(tr, t.req, d)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s%s%s\n", verdict, t.shown,
			"group "+human.OrNone(d.Group)+groupLines, "rule "+human.OrNone(quoteRule(d.Rule))+ruleLine,
			"crawl-delay "+crawlDelayOf(d), "pace "+human.Duration(d.Pace), usage, reason(why))
		if d.Robots.Err != nil {
			tw.Flush()
			fmt.Fprintf(stderr, "polite check: %s: %v\n", d.Robots.URL, d.Robots.Err)
			status = worse(status, exitError)
		}
	}
	if ctx.Err() != nil {
		tw.Flush()
		fmt.Fprintln(stderr, "polite check: interrupted")
		return exitInterrupted
	}
	// Then the usage lines of each group of the files consulted, and
	// their sitemaps, each once.
	seen := make(map[string]bool)
	files := make(map[*robotstxt.File]bool)
	origins := make(map[string]bool)
	for _, t := range targets {
		origins[t.robots] = true
	}
	for _, t := range targets {
		f, err := tr.Robots(t.req)
		if err != nil || f == nil || files[f] {
			continue // said above, or listed
		}
		files[f] = true
		of := ""
		if len(origins) > 1 {
			of = "\t" + t.robots
		}
		for _, g := range f.UsageGroups() {
			for _, r := range g.Rules {
				fmt.Fprintf(tw, "usage\tgroup %s\t%s%s\n", strings.Join(g.Agents, ", "), quoteRule(r.String()), of)
			}
		}
		for _, sm := range f.Sitemaps() {
			if !seen[sm] {
				seen[sm] = true
				fmt.Fprintf(tw, "sitemap\t%s\n", sm)
			}
		}
	}
	tw.Flush()
	return status
}

// usageRulesOf returns ", as " and the lines of the robots.txt of req's
// origin that disallow one of uses for req's URL and the product token
// agent, quoted; "" when it cannot tell.
func usageRulesOf(tr *polite.PoliteTransport, req *http.Request, agent string, uses []robotstxt.Category) string {
	f, err := tr.Robots(req)
	path, ok := robotstxt.RequestPath(req.URL)
	if err != nil || f == nil || !ok {
		return ""
	}
	rules, err := f.Group(agent).UsageRules(path)
	rules = slices.DeleteFunc(rules, func(r robotstxt.UsageRule) bool { return r.Usage.Disallowed(uses...) == (robotstxt.Usage{}) })
	if err != nil || len(rules) == 0 {
		return ""
	}
	return ", as " + ruleTexts(rules)
}

// reportFile writes to w what a crawler makes of body, the robots.txt at
// path. First, whether it is robots.txt at all: when it is binary data or
// an HTML page, or none of its lines is robots.txt, every crawler reads
// it as allowing everything, and reportFile says so and reports false.
// Then the lines a crawler skips, but for binary data or markup, whose
// lines are only counted.
func reportFile(w io.Writer, path string, body []byte) bool {
	r := robotstxt.Parse(body)
	if kind := notText(body); kind != "" {
		fmt.Fprintf(w, "polite check: %s: %s, not robots.txt: %s\n", path, kind, whatIsRead(r))
		if n := r.NumSkipped(); n > 0 {
			fmt.Fprintf(w, "polite check: %s: %d lines skipped, not listed\n", path, n)
		}
		return false
	}
	ok := true
	if r.NumGroups() == 0 && len(r.Sitemaps()) == 0 && r.NumSkipped() > 0 {
		fmt.Fprintf(w, "polite check: %s: no line of it is robots.txt: %s\n", path, whatIsRead(r))
		ok = false
	}
	for _, l := range r.Skipped() {
		fmt.Fprintf(w, "polite check: %s:%d: skipped, %s: %q\n", path, l.Line, l.Reason, l.Text)
	}
	if more := r.NumSkipped() - len(r.Skipped()); more > 0 {
		fmt.Fprintf(w, "polite check: %s: and %d more lines skipped\n", path, more)
	}
	return ok
}

// whatIsRead says what a crawler reads in a file that is not robots.txt.
func whatIsRead(r *robotstxt.File) string {
	if r.NumGroups() == 0 {
		return "a crawler reads no rule in it, and every URL is allowed"
	}
	return fmt.Sprintf("a crawler reads only the %d rules of %d groups in it", r.NumRules(), r.NumGroups())
}

// sniffLen is how much of a file notText looks at.
const sniffLen = 8 << 10

// notText returns what body is when it is not text, as "an HTML page",
// "an XML document", "binary data (image/png)" or "binary data"; or ""
// when it is text. Binary data has a NUL byte, or more than one byte in
// ten that is a control character other than white space or not UTF-8,
// in its first 8 KiB; the rest is told by [http.DetectContentType].
func notText(body []byte) string {
	mediaType, params, _ := mime.ParseMediaType(http.DetectContentType(body))
	switch {
	case mediaType == "text/html":
		return "an HTML page"
	case mediaType == "text/xml":
		return "an XML document"
	case mediaType == "text/plain" && params["charset"] != "utf-8":
		return "text in " + strings.ToUpper(params["charset"])
	case mediaType != "text/plain" && mediaType != "application/octet-stream":
		return "binary data (" + mediaType + ")"
	}
	head := body[:min(len(body), sniffLen)]
	bad := 0
	for len(head) > 0 {
		r, size := utf8.DecodeRune(head)
		switch {
		case r == 0:
			return "binary data"
		case r == utf8.RuneError && size == 1,
			r < ' ' && !strings.ContainsRune("\t\n\v\f\r", r),
			r == 0x7f:
			bad++
		}
		head = head[size:]
	}
	if bad*10 > min(len(body), sniffLen) {
		return "binary data"
	}
	return ""
}

// localRobots is a base transport that answers every robots.txt request
// with body and refuses everything else: Check never sends anything else.
type localRobots []byte

func (b localRobots) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.EscapedPath() != "/robots.txt" {
		return nil, errors.New("polite check -robots: no network")
	}
	return &http.Response{
		StatusCode:    http.StatusOK,
		Status:        "200 OK",
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"text/plain"}},
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       req,
	}, nil
}

// linesOf returns the lines of the robots.txt that decided d, as
// " (lines 1, 7)" for the user-agent lines of its group and " (line 9)"
// for its rule; "" for either when no line did or the file is not at hand.
func linesOf(tr *polite.PoliteTransport, req *http.Request, d polite.Decision) (group, rule string) {
	if d.Group == "" {
		return "", ""
	}
	f, err := tr.Robots(req)
	if err != nil || f == nil {
		return "", ""
	}
	g := f.Group(d.Agent)
	group = lineList(g.AgentLines())
	if path, ok := robotstxt.RequestPath(req.URL); ok && d.Rule != "" {
		if _, r, err := g.Decide(path); err == nil && r.Line > 0 {
			rule = lineList([]int{r.Line})
		}
	}
	return group, rule
}

// lineList returns " (line 3)" or " (lines 1, 3)"; "" for no line.
func lineList(lines []int) string {
	if len(lines) == 0 {
		return ""
	}
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = strconv.Itoa(l)
	}
	if len(lines) == 1 {
		return " (line " + s[0] + ")"
	}
	return " (lines " + strings.Join(s, ", ") + ")"
}

// crawlDelayOf returns d's Crawl-delay as written, and what the policy's
// MaxCrawlDelay does to it: " (capped at 1m0s)", or " (ignored)" when the
// policy ignores Crawl-delay.
func crawlDelayOf(d polite.Decision) string {
	s := durationOrNone(d.CrawlDelay)
	switch limit := d.Policy.MaxCrawlDelay; {
	case d.CrawlDelay <= 0:
	case limit == pace.None:
		s += " (ignored)"
	case d.CrawlDelay > limit:
		s += " (capped at " + human.Duration(limit) + ")"
	}
	return s
}

func quoteRule(rule string) string {
	if rule == "" {
		return ""
	}
	return strconv.Quote(rule)
}

func durationOrNone(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return human.Duration(d)
}

func reason(r string) string {
	if r == "" {
		return ""
	}
	return "\t(" + r + ")"
}
