package audit

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// A written request is a line of a generated log: the request's start and
// duration, in milliseconds, and its target.
type written struct {
	start, took int
	target      string
}

// writeByEnd writes the requests as nginx does, a line each when its
// answer ends, and returns the log.
func writeByEnd(reqs []written) string {
	reqs = slices.Clone(reqs)
	slices.SortStableFunc(reqs, func(a, b written) int { return cmp.Compare(a.start+a.took, b.start+b.took) })
	var b strings.Builder
	for _, r := range reqs {
		b.WriteString(nginxAt(r.start+r.took, r.target, "Scrapy/2.8.0", fmt.Sprintf("%d.%03d", r.took/1000, r.took%1000)))
	}
	return b.String()
}

// judgedStarts returns the starts of a crawler's requests in the order
// they were judged, as its timeline drew them.
func judgedStarts(c *crawler) []int64 {
	var starts []int64
	for _, e := range c.timeline.ticks.events {
		starts = append(starts, e.start)
	}
	return starts
}

// TestJudgedInStartOrder writes a log of requests that took up to 30s each
// in the order their answers ended, and checks that they are judged in
// the order they started, every one of them.
func TestJudgedInStartOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	reqs := []written{{-30_000, 30_000, "/slowest"}} // the first line, which opens the window
	for i, at := 1, 0; i < 1500; i++ {
		at += rng.IntN(2000)
		reqs = append(reqs, written{at, rng.IntN(30_000), fmt.Sprintf("/p/%d", i)})
	}
	a := newAuditor([]Robots{versionOf("User-agent: *\nCrawl-delay: 1\n", math.MinInt64)}, DefaultRetryAfter, false, nil)
	a.timelines = newTimelineBudget()
	log := writeByEnd(reqs)
	auditText(t, a, log)

	starts := judgedStarts(a.byName["scrapy"])
	if len(starts) != len(reqs) {
		t.Fatalf("%d requests judged; want %d", len(starts), len(reqs))
	}
	if !slices.IsSorted(starts) {
		t.Errorf("requests judged out of start order")
	}
	if first := strings.SplitN(log, "\n", 2)[0]; !strings.Contains(first, "/slowest") {
		t.Errorf("the log's first line is %s; want /slowest's, which opens the window", first)
	}
}

// TestWaitingBounded writes requests of 48 KiB targets, each of which
// started 100ms after the last, after one that took 200s: the window of
// 200s holds more than its 8 MiB. The requests waiting stay within the
// bound, the earliest going first, and every request is judged.
func TestWaitingBounded(t *testing.T) {
	reqs := []written{{-200_000, 200_000, "/slow"}}
	for i := range 200 {
		reqs = append(reqs, written{i * 100, 100, fmt.Sprintf("/%d/%s", i, strings.Repeat("x", 48<<10))})
	}
	a := newAuditor([]Robots{versionOf("User-agent: *\nCrawl-delay: 1\n", math.MinInt64)}, DefaultRetryAfter, false, nil)
	a.timelines = newTimelineBudget()
	most := 0
	for n, line := range strings.SplitAfter(writeByEnd(reqs), "\n") {
		a.Line("log", int64(n+1), []byte(line))
		if a.order.bytes > maxWaitingBytes+waitingCost+64<<10 {
			t.Fatalf("line %d: %d bytes waiting; want at most %d and a request", n+1, a.order.bytes, maxWaitingBytes)
		}
		most = max(most, len(a.order.heap))
	}
	if most >= len(reqs) || most < 100 {
		t.Errorf("at most %d requests waited; want the bound to hold some 170 of the %d", most, len(reqs))
	}
	a.flush()
	if starts := judgedStarts(a.byName["scrapy"]); len(starts) != len(reqs) || !slices.IsSorted(starts) {
		t.Errorf("%d requests judged, in start order %v; want %d, in order", len(starts), slices.IsSorted(starts), len(reqs))
	}
	if a.order.bytes != 0 || a.Unparsed() != 0 {
		t.Errorf("%d bytes waiting after the flush, %d lines unparsed; want none", a.order.bytes, a.Unparsed())
	}
}

// TestNoWaitWithoutDurations checks that lines that give no duration are
// judged as they are read: nothing waits, and nothing is copied.
func TestNoWaitWithoutDurations(t *testing.T) {
	a := newAuditor([]Robots{versionOf("User-agent: *\nCrawl-delay: 1\n", math.MinInt64)}, DefaultRetryAfter, false, nil)
	for s := range 100 {
		a.Line("log", int64(s+1), []byte(clfAt("a", s%7, "/", 200, "testbot")))
		if len(a.order.heap) != 0 {
			t.Fatalf("line %d: %d requests waiting; want none", s+1, len(a.order.heap))
		}
	}
	if a.order.window != 0 || a.byName["testbot"].requests != 100 {
		t.Errorf("window %v, %d requests; want 0 and 100", time.Duration(a.order.window), a.byName["testbot"].requests)
	}
}
