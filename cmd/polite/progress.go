package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
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
