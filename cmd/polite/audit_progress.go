package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/human"
)

// auditProgress is what the progress line of audit shows, updated by the
// reading and read by the line's own goroutine.
type auditProgress struct {
	read  atomic.Int64 // bytes read from the logs, compressed or not
	lines atomic.Int64
	bad   atomic.Int64
	total int64 // the logs' sizes, or -1 when one is unknown, as a pipe's is
	began time.Time
}

// line formats the progress: how far through the logs, the lines read and
// their rate, and the lines that could not be read.
func (p *auditProgress) line(now time.Time) string {
	lines := p.lines.Load()
	s := ""
	if p.total > 0 {
		s = fmt.Sprintf("%3.0f%% of %s  ", 100*float64(p.read.Load())/float64(p.total), human.Bytes(p.total))
	}
	s += fmt.Sprintf("%d lines", lines)
	if el := now.Sub(p.began).Seconds(); el > 0 {
		s += fmt.Sprintf("  %.0f lines/s", float64(lines)/el)
	}
	if bad := p.bad.Load(); bad > 0 {
		s += fmt.Sprintf("  %d unparsed", bad)
	}
	return "audit: " + s
}
