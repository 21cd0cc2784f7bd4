package audit

import (
	"fmt"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/human"
	"github.com/polite-go/polite/robotstxt"
)

// The kinds of violation, in the order of the report's columns; the
// checks of usage.go add theirs after them.
const (
	kindDisallowed = iota // a URL the group disallows
	kindTooSoon           // a start less than the group's Crawl-delay after the last one to the host
	kindInPause           // a start inside the pause a 429 or 503 asked for
	numKinds
)

// kindKeys name the kinds in JSON and CSV; kindHeads in the table.
var (
	kindKeys  = [numKinds]string{"disallowed", "too_soon", "in_pause"}
	kindHeads = [numKinds]string{"disallowed", "too soon", "in 429/503 pause"}
)

// examplesPerKind is how many violations of each kind the report shows
// for a crawler.
const examplesPerKind = 3

// A violation is one request that broke what robots.txt or the site asked.
type violation struct {
	kind    int // kindDisallowed..., or numKinds+i for the check i
	crawler string
	log     string
	line    int64
	at      int64 // the request's start, Unix nanoseconds
	host    string
	target  string
	detail  string // the rule; or what the gap or the pause was
}

// A pairState is what the audit remembers of one crawler on one host.
type pairState struct {
	last, lastRes int64 // the latest start and its precision; lastRes is 0 before any
	// The pause the latest 429 or 503 answers asked for: from the answer
	// that began it, with that answer's precision, to its end.
	pauseFrom, pauseRes, pauseUntil int64
	answerAt                        int64 // the latest 429 or 503 answer, its status and what it asked
	answerStatus                    int
	answerAsked                     int64
	robotsLast                      int64 // the latest robots.txt fetch; 0 for none
}

// maxPairs bounds the crawler-host pairs remembered. Past it, those idle
// for longer than any Crawl-delay or pause can matter are forgotten.
const maxPairs = 100_000

// observe counts one request, and judges it once no request that started
// before it can come (see startOrder).
func (a *Auditor) observe(loc lineLoc, r *logRecord) {
	c := a.crawlerOf(r.ua)
	c.requests++
	c.bytes += r.bytes
	a.first, a.last = min(a.first, r.start), max(a.last, r.start)
	host := noHost
	if !a.oneHost {
		host = a.hosts.id(r.host)
	}
	if !c.judged() {
		return
	}
	robots := isRobotsPath(r.target)
	if a.order.read(r) {
		a.settle(c, loc, r, host, robots)
		return
	}
	a.order.wait(c, loc, r, host, robots)
	for w := &a.turn; a.order.next(w); a.order.done(w) {
		a.settle(w.c, w.loc, &w.rec, w.host, w.robots)
	}
}

// flush judges the requests still waiting for their turn: the logs have
// no more lines.
func (a *Auditor) flush() {
	for w := &a.turn; len(a.order.heap) > 0; a.order.done(w) {
		*w = a.order.pop()
		a.settle(w.c, w.loc, &w.rec, w.host, w.robots)
	}
}

// settle judges a request of a crawler that robots.txt binds, and adds it
// to the crawler's timeline.
func (a *Auditor) settle(c *crawler, loc lineLoc, r *logRecord, host uint32, robots bool) {
	flags := a.judge(c, loc, r, host, robots)
	if c.timeline != nil {
		c.timeline.add(r, host, robots, flags)
	}
}

// judge judges a request of a crawler that robots.txt binds, and returns
// the kinds it broke, a bit each.
func (a *Auditor) judge(c *crawler, loc lineLoc, r *logRecord, host uint32, robots bool) (flags uint8) {
	v := versionAt(a.versions, r.start, a.hint)
	var g *robotstxt.Group
	var delay int64
	if v >= 0 {
		a.hint = v
		g = c.groups[v]
		delay = int64(g.CrawlDelay())
		c.maxDelay = max(c.maxDelay, delay)
	}

	allowed := !robots && len(r.target) > 0 && r.target[0] == '/' // a path robots.txt lets the crawler fetch
	if robots {
		c.robotsFetches++
	} else if g != nil && g.NumRules() > 0 && allowed {
		if ok, rule := a.decisions.decide(c.ids[v], g, r.target); !ok {
			allowed = false
			if c.byRule == nil {
				c.byRule = make(map[robotstxt.Rule]int64)
			}
			c.byRule[rule]++
			flags |= 1 << kindDisallowed
			if a.count(c, kindDisallowed) {
				a.record(c, kindDisallowed, loc, r, host, rule.String())
			}
		}
	}

	if c.pacing && host != untrackedHost {
		flags |= a.pace(c, a.pair(c, host), loc, r, host, delay, robots)
	}

	for i, chk := range a.checks {
		if broke, what := chk.Judge(c, g, allowed, r); broke && a.count(c, numKinds+i) {
			a.record(c, numKinds+i, loc, r, host, what)
		}
	}
	return flags
}

// pace judges a request's start against the crawler's earlier ones on
// the host: the gap since the latest start, against the Crawl-delay; and
// the pause the latest 429 or 503 asked for. Times are known to their
// precision only, and a request counts only when it broke the rule
// whatever the fractions lost. It returns the kinds broken, a bit each.
func (a *Auditor) pace(c *crawler, st *pairState, loc lineLoc, r *logRecord, host uint32, delay int64, robots bool) (flags uint8) {
	if st.lastRes > 0 {
		gap := r.start - st.last
		if gap < 0 {
			gap = -gap // logged out of order: still two starts that close
		}
		if delay > 0 && gap+max(r.res, st.lastRes) <= delay {
			flags |= 1 << kindTooSoon
			if c.minGap < 0 || gap < c.minGap {
				c.minGap = gap
			}
			if a.count(c, kindTooSoon) {
				a.record(c, kindTooSoon, loc, r, host, fmt.Sprintf("less than %s after the previous start; Crawl-delay %s",
					human.Duration(time.Duration(gap+max(r.res, st.lastRes))), human.Duration(time.Duration(delay))))
			}
		}
	}
	if st.lastRes == 0 || r.start >= st.last {
		st.last, st.lastRes = r.start, r.res
	}

	if st.pauseUntil != 0 && r.start >= st.pauseFrom+st.pauseRes && r.start+r.res <= st.pauseUntil {
		flags |= 1 << kindInPause
		if a.count(c, kindInPause) {
			a.record(c, kindInPause, loc, r, host, fmt.Sprintf("%s after a %d at %s that asked for %s",
				human.Duration(time.Duration(r.start-st.answerAt)), st.answerStatus,
				time.Unix(0, st.answerAt).UTC().Format(time.TimeOnly), human.Duration(time.Duration(st.answerAsked))))
		}
	}
	if r.status == 429 || r.status == 503 {
		asked := a.pause
		if r.retryAfter >= 0 {
			asked = r.retryAfter
		}
		if st.pauseUntil != 0 && r.end+r.res <= st.pauseUntil {
			st.pauseUntil = max(st.pauseUntil, r.end+asked) // asked again inside the pause: it goes on
		} else {
			st.pauseFrom, st.pauseRes, st.pauseUntil = r.end, r.res, r.end+asked
		}
		st.answerAt, st.answerStatus, st.answerAsked = r.end, r.status, asked
		a.window = max(a.window, asked+2*r.res)
	}

	if robots {
		if st.robotsLast != 0 && r.start > st.robotsLast {
			c.robotsIntervals++
			c.robotsSpan += r.start - st.robotsLast
		}
		st.robotsLast = max(st.robotsLast, r.start)
	}
	return flags
}

// pair returns the state of crawler c on host, making room when the
// bound is reached.
func (a *Auditor) pair(c *crawler, host uint32) *pairState {
	key := uint64(c.row)<<32 | uint64(host)
	if st := a.pairs[key]; st != nil {
		return st
	}
	if len(a.pairs) >= maxPairs {
		a.sweep()
	}
	st := &pairState{}
	a.pairs[key] = st
	return st
}

// sweep forgets the pairs idle for longer than their state can matter;
// when too few are, it forgets half of the rest, and counts them.
func (a *Auditor) sweep() {
	stale := a.last - a.window - a.order.window // a request still waiting may need its pair
	for k, st := range a.pairs {
		if st.last < stale && st.pauseUntil < a.last {
			delete(a.pairs, k)
		}
	}
	if len(a.pairs) < maxPairs*3/4 {
		return
	}
	for k := range a.pairs {
		if len(a.pairs) < maxPairs/2 {
			break
		}
		delete(a.pairs, k)
		a.forgotten++
	}
}

// count counts a violation of c, and reports whether to record it: one
// of the first of its kind for c, or any when a test watches them all.
func (a *Auditor) count(c *crawler, kind int) bool {
	c.counts[kind]++
	return c.counts[kind] <= examplesPerKind || a.onViolation != nil
}

// record keeps a violation among c's examples while there is room, and
// hands it to the test watching.
func (a *Auditor) record(c *crawler, kind int, loc lineLoc, r *logRecord, host uint32, detail string) {
	v := violation{
		kind:    kind,
		crawler: c.name,
		log:     loc.log,
		line:    loc.line,
		at:      r.start,
		host:    a.hosts.name(host),
		target:  string(r.target),
		detail:  detail,
	}
	if c.counts[kind] <= examplesPerKind {
		c.examples = append(c.examples, v)
	}
	if a.onViolation != nil {
		a.onViolation(v)
	}
}
