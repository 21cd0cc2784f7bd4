// Package audit judges the crawlers of a web server's access logs against
// the site's robots.txt: which crawlers fetched URLs that robots.txt
// disallows them, started requests sooner than its Crawl-delay after their
// previous one to the host, or came back inside the pause that a 429 or
// 503 asked for. It is the audit of polite audit, whose manual (go doc
// github.com/polite-go/polite/cmd/polite, "Audit") states the rules a
// request is judged by and the formats a log may be in; this comment says
// how the package applies them.
//
// An [Auditor] reads the lines of one or more logs, one line at a time, and
// [Auditor.Report] ranks what it found, in text, JSON or CSV, with an SVG
// timeline per crawler:
//
//	robots, err := audit.LoadRobots([]audit.RobotsFile{{Path: "robots.txt"}})
//	...
//	a := audit.New(robots, audit.Options{RetryAfter: audit.DefaultRetryAfter})
//	err = audit.ReadLog(ctx, f, func(n int64, line []byte) { a.Line("access.log", n, line) })
//	...
//	err = a.Report([]string{"access.log"}).WriteText(os.Stdout)
//
// A line is named for its crawler by its User-Agent, as sent: the audit
// verifies no one's identity, and every report says so. A line that cannot
// be read is counted, the first ones kept with their reason, and the
// reading goes on: [Auditor.Line] never fails.
//
// # Order
//
// Gaps and pauses are judged in the order the requests started, per
// crawler and host. A server that writes a line when the answer ends, as
// nginx does, writes a slow answer's line after the lines of requests
// that started later; where a line gives its request's duration (a JSON
// log with request_time or duration), its start is its time less the
// duration, and the requests wait in a window as long as the longest
// duration seen so far, at most 5 minutes, to be judged in the order they
// started. A request that took longer than any before it, or than 5
// minutes, or that a full window (8 MiB of requests waiting) let through
// early, may be judged after starts that came later: it is then measured
// from the crawler's latest start on the host, so that an order the window
// could not restore can hide a gap, and never make one up. Lines that give
// no duration, as the Common Log Format's, are judged as they are read.
//
// # Memory
//
// Memory stays bounded whatever the logs' size: at most 5,000 crawlers,
// 20,000 User-Agents remembered with their crawler, 100,000 hosts and
// 100,000 crawler-host pairs (those idle longer than any Crawl-delay or
// pause can matter are forgotten first, and the report counts the others),
// 65,536 cached decisions of the robots.txt engine, 400,000 timeline
// events, and 8 MiB of requests waiting for their turn.
//
// An Auditor is not safe for use by multiple goroutines.
package audit

import (
	"bytes"
	"math"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

// DefaultRetryAfter is the pause a 429 or 503 asks for when its line
// records no Retry-After: the least pause the transport of this
// repository takes after one, pace.Policy's BackoffBase by default.
const DefaultRetryAfter = 5 * time.Second

// Options are an Auditor's settings. The zero Options judge every request
// by robots.txt and Crawl-delay, and ask no pause after a 429 or 503 that
// records no Retry-After.
type Options struct {
	// RetryAfter is the pause that a 429 or 503 asks for when its line
	// records no Retry-After; 0 for none. polite audit's default is
	// DefaultRetryAfter.
	RetryAfter time.Duration

	// OneHost takes every line for one host's, whatever host it names.
	OneHost bool

	// Uses are the categories of use that crawlers declare, by crawler
	// name ("*" for every crawler): a request for content whose robots.txt
	// usage preference is n for one of them counts as usage_pref. Nil for
	// no such column.
	Uses map[string][]robotstxt.Category

	// Fields are the keys of JSON logs' fields; nil for the defaults.
	Fields Fields

	// Timelines keeps a sample of each crawler's requests, for
	// Report.WriteTimelines.
	Timelines bool
}

// An Auditor reads the lines of access logs and judges each request.
type Auditor struct {
	versions []Robots
	named    map[string]bool // the product tokens the versions' groups name
	hint     int             // the version in force at the last line
	pause    int64           // the pause a 429 or 503 asks for when the line records none
	oneHost  bool
	checks   []requestCheck

	parser    lineParser
	rec       logRecord
	crawlers  []*crawler
	byName    map[string]*crawler
	byUA      map[string]*crawler
	hosts     *hostTable
	pairs     map[uint64]*pairState
	decisions *decisionCache
	groupIDs  map[*robotstxt.Group]uint32
	timelines *timelineBudget // nil without Options.Timelines
	order     startOrder      // the requests waiting to be judged in the order they started
	turn      waiting         // the request of order being judged

	window    int64 // the longest a pair's state can matter: Crawl-delays, pauses, precision
	forgotten int64 // pairs forgotten while their state could still matter

	lines, parsed int64
	first, last   int64 // the earliest and latest start
	unparsed      []unparsedLine

	onViolation func(violation) // every violation, for tests; nil otherwise
}

// New returns an Auditor that judges requests by the robots.txt versions
// of robots, as LoadRobots returns them, ordered by date.
func New(robots []Robots, o Options) *Auditor {
	var checks []requestCheck
	if len(o.Uses) > 0 {
		checks = append(checks, usageCheck{o.Uses})
	}
	a := newAuditor(robots, o.RetryAfter, o.OneHost, checks)
	a.parser.json.root = newJSONTree(o.Fields)
	if o.Timelines {
		a.timelines = newTimelineBudget()
	}
	return a
}

func newAuditor(versions []Robots, pause time.Duration, oneHost bool, checks []requestCheck) *Auditor {
	a := &Auditor{
		versions:  versions,
		named:     make(map[string]bool),
		pause:     int64(pause),
		oneHost:   oneHost,
		checks:    checks,
		byName:    make(map[string]*crawler),
		byUA:      make(map[string]*crawler),
		hosts:     newHostTable(),
		pairs:     make(map[uint64]*pairState),
		decisions: newDecisionCache(),
		groupIDs:  make(map[*robotstxt.Group]uint32),
		first:     math.MaxInt64,
		last:      math.MinInt64,
	}
	var maxDelay time.Duration
	for _, v := range versions {
		for _, t := range v.tokens {
			a.named[t] = true
		}
		maxDelay = max(maxDelay, v.file.MaxCrawlDelay())
	}
	a.window = int64(maxDelay) + a.pause + 2*int64(time.Second)
	return a
}

// A lineLoc is where a line is: its log, as named on the command line,
// and its number there, from 1.
type lineLoc struct {
	log  string
	line int64
}

// An unparsedLine is a line that could not be read.
type unparsedLine struct {
	lineLoc
	reason string
	text   string // its first bytes
}

// maxUnparsedShown is how many unparsed lines the report lists.
const maxUnparsedShown = 20

// Line reads and judges the line numbered n of the log named log. A blank
// line is skipped; one that is no request it can read, or is longer than
// 64 KiB, is counted as unparsed, and the first 20 are kept for the
// report. A request whose line gives its duration may wait for the
// requests that started before it (see Order in the package
// documentation); Report judges those still waiting.
func (a *Auditor) Line(log string, n int64, text []byte) {
	if len(bytes.TrimSpace(text)) == 0 {
		return // a blank line is no request, and nothing wrong
	}
	a.lines++
	loc := lineLoc{log, n}
	if len(text) > maxLine {
		a.bad(loc, badTooLong, text)
		return
	}
	if bad := a.parser.parse(text, &a.rec); bad != "" {
		a.bad(loc, bad, text)
		return
	}
	a.parsed++
	a.observe(loc, &a.rec)
}

// bad counts a line that could not be read, and keeps the first ones.
func (a *Auditor) bad(loc lineLoc, reason string, text []byte) {
	if len(a.unparsed) < maxUnparsedShown {
		a.unparsed = append(a.unparsed, unparsedLine{loc, reason, string(text[:min(len(text), 120)])})
	}
}

// Lines returns the number of lines read, blank lines apart.
func (a *Auditor) Lines() int64 { return a.lines }

// Unparsed returns the number of lines that could not be read.
func (a *Auditor) Unparsed() int64 { return a.lines - a.parsed }
