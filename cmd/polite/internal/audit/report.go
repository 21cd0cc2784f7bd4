package audit

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/human"
	"github.com/polite-go/polite/robotstxt"
)

// identityNote is what every report says of the crawlers' names.
const identityNote = "Crawlers are named by the User-Agent of each line, as sent: any client can send any, " +
	"and a \"Googlebot\" line may be forged. The audit does not verify who sent a request."

// maxTableRows and maxExampleRows bound the crawlers that the text
// report's table lists, and those whose violations it shows; the JSON and
// CSV reports list every one.
const (
	maxTableRows   = 50
	maxExampleRows = 20
)

// A Report is what an Auditor found, the crawlers ranked: those that
// robots.txt binds first, by most violations, then most requests; then
// the browsers.
type Report struct {
	a    *Auditor
	logs []string
	rows []*crawler
}

// Report returns the report of what a found in the logs, named in the
// order they were read, once it has judged the requests still waiting for
// their turn.
func (a *Auditor) Report(logs []string) *Report {
	a.flush()
	rows := slices.Clone(a.crawlers)
	unjudged := func(c *crawler) int {
		if c.judged() {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(rows, func(x, y *crawler) int {
		return cmp.Or(cmp.Compare(unjudged(x), unjudged(y)), cmp.Compare(y.violations(), x.violations()),
			cmp.Compare(y.requests, x.requests), strings.Compare(x.name, y.name))
	})
	return &Report{a: a, logs: logs, rows: rows}
}

// kindName returns the heading of a kind of violation, a check's too.
func (rep *Report) kindName(kind int) string {
	if kind < numKinds {
		return kindHeads[kind]
	}
	return rep.a.checks[kind-numKinds].Name()
}

// kindKey returns the JSON and CSV key of a kind of violation.
func (rep *Report) kindKey(kind int) string {
	if kind < numKinds {
		return kindKeys[kind]
	}
	return rep.a.checks[kind-numKinds].Name()
}

// WriteText writes the report for people: what was read, a table of the
// first 50 crawlers, the first 3 violations of each kind of the first 20,
// and the first 20 lines that could not be read.
func (rep *Report) WriteText(out io.Writer) error {
	a := rep.a
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "%s: %d lines, %d requests", strings.Join(rep.logs, ", "), a.lines, a.parsed)
	if a.parsed > 0 {
		fmt.Fprintf(w, " from %s to %s", rfc3339(a.first), rfc3339(a.last))
	}
	fmt.Fprintln(w)
	var files []string
	for _, v := range a.versions {
		files = append(files, v.path+" "+describeVersion(v))
	}
	fmt.Fprintf(w, "robots.txt: %s; a 429 or 503 with no Retry-After asks for %s\n\n", strings.Join(files, "; "), human.Duration(time.Duration(a.pause)))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"crawler", "group", "requests", "bytes"}
	for k := range numKinds + len(a.checks) {
		head = append(head, rep.kindName(k))
	}
	fmt.Fprintln(tw, strings.Join(append(head, "robots.txt"), "\t"))
	var more, moreRequests, moreBytes int64 // the rows past maxTableRows; the browsers', last, is always shown
	for i, c := range rep.rows {
		if i >= maxTableRows && c.kind != agentBrowser {
			more, moreRequests, moreBytes = more+1, moreRequests+c.requests, moreBytes+c.bytes
			continue
		}
		cells := []string{c.name, c.groupLabel(), fmt.Sprint(c.requests), human.Bytes(c.bytes)}
		for k := range c.counts {
			cells = append(cells, rep.countCell(c, k))
		}
		fmt.Fprintln(tw, strings.Join(append(cells, robotsCell(c)), "\t"))
	}
	tw.Flush()
	if more > 0 {
		fmt.Fprintf(w, "and %d more crawlers, with %d requests and %s: -format json or csv lists them all\n", more, moreRequests, human.Bytes(moreBytes))
	}

	rep.writeExamples(w)
	if n := a.Unparsed(); n > 0 {
		fmt.Fprintf(w, "\n%d lines could not be read", n)
		if int64(len(a.unparsed)) < n {
			fmt.Fprintf(w, "; the first %d", len(a.unparsed))
		}
		fmt.Fprintln(w, ":")
		for _, u := range a.unparsed {
			fmt.Fprintf(w, "  %s:%d  %s  %q\n", u.log, u.line, u.reason, u.text)
		}
	}
	if a.forgotten > 0 {
		fmt.Fprintf(w, "\n%d crawler-host pairs were forgotten for want of room: the next request of each was not judged for gaps and pauses\n", a.forgotten)
	}
	fmt.Fprintf(w, "\n%s\n", identityNote)
	return w.Flush()
}

// A Crawler is a row of the report, as Crawlers gives it.
type Crawler struct {
	Name       string // the crawler's name: a product token, lower-cased, or a row such as "(browsers)"
	Judged     bool   // robots.txt binds it: not the browsers
	Violations int64  // its requests that broke a rule, of every kind
}

// Crawlers returns the rows of the report, in its order.
func (rep *Report) Crawlers() []Crawler {
	rows := make([]Crawler, len(rep.rows))
	for i, c := range rep.rows {
		rows[i] = Crawler{c.name, c.judged(), c.violations()}
	}
	return rows
}

// countCell is a crawler's count of violations of a kind in the table:
// "-" when the rule cannot apply to it, the rule that most requests broke
// beside the disallowed, the Crawl-delay beside the too soon.
func (rep *Report) countCell(c *crawler, kind int) string {
	n := c.counts[kind]
	switch {
	case !c.judged(), kind == kindTooSoon && c.maxDelay == 0, kind != kindDisallowed && kind < numKinds && !c.pacing:
		return "-"
	case n == 0:
		return "0"
	case kind == kindDisallowed:
		return fmt.Sprintf("%d (%s)", n, topRule(c.byRule))
	case kind == kindTooSoon:
		return fmt.Sprintf("%d (Crawl-delay %s)", n, human.Duration(time.Duration(c.maxDelay)))
	}
	return fmt.Sprint(n)
}

// robotsCell says how often a crawler fetched robots.txt.
func robotsCell(c *crawler) string {
	switch {
	case !c.judged():
		return "-"
	case c.robotsFetches == 0:
		return "never"
	case c.robotsIntervals == 0:
		return fmt.Sprint(c.robotsFetches)
	}
	return fmt.Sprintf("%d, every %s", c.robotsFetches, human.Duration(c.robotsInterval()))
}

// topRule returns the rule that disallowed the most requests.
func topRule(byRule map[robotstxt.Rule]int64) string {
	var top robotstxt.Rule
	var most int64
	for r, n := range byRule {
		if n > most || n == most && r.String() < top.String() {
			top, most = r, n
		}
	}
	return top.String()
}

// writeExamples lists the first violations of each kind of the crawlers
// that broke a rule.
func (rep *Report) writeExamples(w io.Writer) {
	shown := 0
	for _, c := range rep.rows {
		if c.violations() == 0 {
			continue
		}
		if shown == maxExampleRows {
			more := 0
			for _, c := range rep.rows {
				if c.violations() > 0 {
					more++
				}
			}
			fmt.Fprintf(w, "\nand %d more crawlers with violations: -format json lists them all\n", more-shown)
			return
		}
		if shown == 0 {
			fmt.Fprintf(w, "\nThe first %d violations of each kind:\n", examplesPerKind)
		}
		shown++
		fmt.Fprintf(w, "\n%s (group %s), User-Agent %q:\n", c.name, c.groupLabel(), c.firstUA)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		examples := slices.Clone(c.examples)
		slices.SortStableFunc(examples, func(x, y violation) int { return cmp.Compare(x.kind, y.kind) })
		for _, v := range examples {
			fmt.Fprintf(tw, "  %s\t%s:%d\t%s\t%s\t%s\t%s\n", rep.kindName(v.kind), v.log, v.line, rfc3339(v.at), v.host, v.target, v.detail)
		}
		tw.Flush()
	}
}
