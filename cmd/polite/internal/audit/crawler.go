package audit

import (
	"strings"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/human"
	"github.com/polite-go/polite/robotstxt"
)

// Bounds on what the audit keeps, whatever the log's size.
const (
	maxCrawlers = 5000   // rows of crawlers named by the heuristics; more go to otherName
	maxUAs      = 20_000 // User-Agents remembered with their crawler; the memo is cleared when full
)

// A crawler is a row of the report: the requests of every User-Agent that
// names one crawler, and what they broke.
type crawler struct {
	name    string
	row     int // its place among the rows, in order of appearance
	kind    agentKind
	pacing  bool   // gaps and pauses are judged: not for otherName, which gathers many crawlers
	firstUA string // the first User-Agent seen, as sent

	groups []*robotstxt.Group // the group that binds it under each robots.txt version
	ids    []uint32           // their numbers in the decision cache

	requests, bytes int64
	counts          []int64 // violations by kind: the built-in kinds, then the checks'
	byRule          map[robotstxt.Rule]int64
	minGap          int64 // the least observed start gap of a request too soon; -1 for none
	maxDelay        int64 // the largest Crawl-delay of its groups that applied

	robotsFetches   int64
	robotsIntervals int64 // gaps between two fetches to one host, and their sum
	robotsSpan      int64

	examples []violation // the first few of each kind
	timeline *timelineSample
}

// judged reports whether robots.txt is held against the crawler's
// requests: browsers are people, whom robots.txt does not bind.
func (c *crawler) judged() bool { return c.kind != agentBrowser }

// violations returns the number of its violations of every kind.
func (c *crawler) violations() int64 {
	var n int64
	for _, k := range c.counts {
		n += k
	}
	return n
}

// robotsInterval is the mean time between two robots.txt fetches of the
// crawler to one host, or 0 when it fetched none twice.
func (c *crawler) robotsInterval() time.Duration {
	if c.robotsIntervals == 0 {
		return 0
	}
	return time.Duration(c.robotsSpan / c.robotsIntervals)
}

// groupLabel names the groups that bound the crawler, in the order of
// the robots.txt versions, a change shown as "*→gptbot"; "none" when no
// group did, "-" when not judged.
func (c *crawler) groupLabel() string {
	if !c.judged() {
		return "-"
	}
	var labels []string
	for _, g := range c.groups {
		l := human.OrNone(g.Agent())
		if len(labels) == 0 || labels[len(labels)-1] != l {
			labels = append(labels, l)
		}
	}
	return strings.Join(labels, "→")
}

// crawlerOf returns the row of the User-Agent ua.
func (a *Auditor) crawlerOf(ua []byte) *crawler {
	if c, ok := a.byUA[string(ua)]; ok {
		return c
	}
	name, kind := nameAgent(ua, a.named)
	c := a.byName[name]
	if c == nil {
		if kind == agentCrawler && len(a.crawlers) >= maxCrawlers {
			name = otherName
			c = a.byName[name]
		}
		if c == nil {
			c = a.newCrawler(name, kind, string(ua))
		}
	}
	if len(a.byUA) >= maxUAs {
		clear(a.byUA)
	}
	a.byUA[string(ua)] = c
	return c
}

func (a *Auditor) newCrawler(name string, kind agentKind, ua string) *crawler {
	c := &crawler{
		name:    name,
		row:     len(a.crawlers),
		kind:    kind,
		pacing:  name != otherName,
		firstUA: ua,
		counts:  make([]int64, numKinds+len(a.checks)),
		minGap:  -1,
	}
	bind := name
	if kind != agentNamed && kind != agentCrawler || name == otherName {
		bind = "" // binds what no product token names: the "*" group
	}
	for _, v := range a.versions {
		g := v.file.Group(bind)
		id, ok := a.groupIDs[g]
		if !ok {
			id = uint32(len(a.groupIDs) + 1)
			a.groupIDs[g] = id
		}
		c.groups = append(c.groups, g)
		c.ids = append(c.ids, id)
	}
	if a.timelines != nil && kind != agentBrowser {
		c.timeline = a.timelines.newSample()
	}
	a.byName[name] = c
	a.crawlers = append(a.crawlers, c)
	return c
}
