package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/cmd/polite/internal/human"
)

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// A progressLine keeps one status line up to date on a terminal.
type progressLine struct {
	w    io.Writer
	line func(now time.Time) string
	stop chan struct{}
	done sync.WaitGroup
}

// startProgress redraws line(now) on w every 200ms until stopped, if w is a
// terminal; otherwise it does nothing.
func startProgress(w io.Writer, line func(now time.Time) string) *progressLine {
	p := &progressLine{w: w, line: line, stop: make(chan struct{})}
	if !isTerminal(w) {
		return p
	}
	p.done.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			fmt.Fprintf(p.w, "\r\x1b[K%s", p.line(time.Now()))
			select {
			case <-p.stop:
				fmt.Fprint(p.w, "\r\x1b[K") // leave the terminal clean
				return
			case <-t.C:
			}
		}
	})
	return p
}

// Stop erases the line and stops redrawing it.
func (p *progressLine) Stop() {
	close(p.stop)
	p.done.Wait()
}

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
