package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/cmd/polite/internal/human"
)

// maxWaitingShown bounds the hosts the progress line names as waiting, so
// that it fits on a line.
const maxWaitingShown = 6

// crawlProgress formats the crawl's progress line: pages done, queued,
// blocked by robots.txt, and the hosts that wait for their turn, in the
// frontier or in the transport, with how long until it comes (before
// jitter); the first maxWaitingShown by name, then how many more.
func crawlProgress(c crawlCounts, stats []polite.HostStats, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pages %d  queued %d  blocked by robots.txt %d", c.Done, c.Queued, c.Blocked)
	var waiting []string
	more := 0
	for _, h := range stats {
		if h.Waiting == 0 && !c.Due[h.Key] {
			continue
		}
		next := h.LastStart.Add(h.Pace)
		why := ""
		if h.PausedUntil.After(next) {
			next, why = h.PausedUntil, " backoff"
		}
		left := next.Sub(now).Round(100 * time.Millisecond)
		if left <= 0 {
			continue // its turn has come: it is starting, or waits for an answer
		}
		if len(waiting) == maxWaitingShown {
			more++
			continue
		}
		waiting = append(waiting, fmt.Sprintf("%s %s%s", h.Key, human.Duration(left), why))
	}
	if len(waiting) > 0 {
		fmt.Fprintf(&b, "  waiting: %s", strings.Join(waiting, ", "))
	}
	if more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	return b.String()
}
