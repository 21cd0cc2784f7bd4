package main

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/chart"
	"github.com/polite-go/polite/cmd/polite/internal/human"
)

// timelineData is what the SVG timeline draws.
type timelineData struct {
	Title      string
	Start, End time.Time
	Hosts      []string          // one lane each, in this order
	Labels     map[string]string // lane labels by host; the host itself when missing
	Wire       []wireRequest     // ordered by start
	Refusals   []refusal         // URLs robots.txt refused: they never reached the wire
}

// A refusal is a URL that robots.txt refused.
type refusal struct {
	Host, URL, Rule string
	At              time.Time
}

// writeTimeline writes d as an SVG image: one lane per host, a tick at each
// request start with a bar for its time to headers, a shaded band from each
// 429 or 5xx answer to the next start (the backoff, labelled with any
// Retry-After), and a cross at each URL refused by robots.txt. Gaps between
// ticks are the pace at a glance.
func writeTimeline(w io.Writer, d timelineData) error {
	bw := bufio.NewWriter(w)
	span := max(d.End.Sub(d.Start), time.Millisecond)
	x := func(t time.Time) float64 { return chart.X(t.Sub(d.Start), span) }
	lanes := make(map[string]int, len(d.Hosts))
	labels := make([]string, len(d.Hosts))
	for i, h := range d.Hosts {
		lanes[h] = i
		labels[i] = h
		if l, ok := d.Labels[h]; ok {
			labels[i] = l
		}
	}

	chart.Open(bw, len(d.Hosts))
	title := d.Title
	if title == "" {
		title = "request starts per host"
	}
	fmt.Fprintf(bw, `<text x="10" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", chart.Esc(title))
	chart.Lanes(bw, labels)

	// Backoff bands first, so the ticks draw over them.
	next := nextStarts(d.Wire)
	for i, r := range d.Wire {
		lane, ok := lanes[r.Host]
		if !ok || !r.backedOff() {
			continue
		}
		base := chart.Base(lane)
		end := d.End
		if j := next[i]; j >= 0 {
			end = d.Wire[j].Start
		}
		label := "paused " + human.Duration(end.Sub(r.End))
		if r.RetryAfter > 0 {
			label += " · Retry-After " + human.Duration(r.RetryAfter)
		}
		x0, x1 := x(r.End), x(end)
		fmt.Fprintf(bw, `<rect class="pause" x="%.1f" y="%d" width="%.1f" height="34" fill="%s" fill-opacity="0.13"><title>%s: %d, paused %s</title></rect>`+"\n",
			x0, base-34, max(x1-x0, 1), chart.Backoff, chart.Esc(r.URL), r.Status, human.Duration(end.Sub(r.End)))
		fmt.Fprintf(bw, `<text x="%.1f" y="%d" font-size="10" fill="%s">%s</text>`+"\n", x0+3, base-36, chart.Backoff, chart.Esc(label))
	}

	for _, r := range d.Wire {
		lane, ok := lanes[r.Host]
		if !ok {
			continue
		}
		base := chart.Base(lane)
		col, what := markColour(r)
		xs, xe := x(r.Start), x(r.End)
		fmt.Fprintf(bw, `<rect x="%.1f" y="%d" width="%.1f" height="4" fill="%s" fill-opacity="0.45"/>`+"\n", xs, base-4, max(xe-xs, 1), col)
		fmt.Fprintf(bw, `<line class="req" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"><title>+%s %s → %s (%s to headers)</title></line>`+"\n",
			xs, base-24, xs, base, col, human.Duration(r.Start.Sub(d.Start)), chart.Esc(pathOf(r.URL)), chart.Esc(what), human.Duration(r.Latency()))
	}

	for _, f := range d.Refusals {
		lane, ok := lanes[f.Host]
		if !ok {
			continue
		}
		base := chart.Base(lane)
		fmt.Fprintf(bw, `<text class="refusal" x="%.1f" y="%d" font-size="11" fill="%s" text-anchor="middle">×<title>%s refused by robots.txt (%s)</title></text>`+"\n",
			x(f.At), base+12, chart.Other, chart.Esc(pathOf(f.URL)), chart.Esc(f.Rule))
	}

	legendY := chart.Axis(bw, len(d.Hosts), span)
	lx := chart.Left
	for _, item := range []struct{ col, label string }{
		{chart.Robots, "robots.txt"}, {chart.OK, "2xx"}, {chart.Other, "3xx, 4xx"}, {chart.Backoff, "429, 5xx"}, {chart.Error, "network error"},
	} {
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", lx, legendY-10, lx, legendY+2, item.col)
		fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", lx+6, legendY, chart.Esc(item.label))
		lx += 30 + 8*len(item.label)
	}
	fmt.Fprintf(bw, `<rect x="%d" y="%d" width="14" height="12" fill="%s" fill-opacity="0.13"/>`+"\n", lx, legendY-10, chart.Backoff)
	fmt.Fprintf(bw, `<text x="%d" y="%d">backoff pause</text>`+"\n", lx+20, legendY)
	lx += 130
	fmt.Fprintf(bw, `<text x="%d" y="%d" fill="%s">×</text><text x="%d" y="%d">refused by robots.txt</text>`+"\n", lx, legendY, chart.Other, lx+14, legendY)
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

// nextStarts returns, for each request of wire (ordered by start), the index
// of the next request to the same host, or -1.
func nextStarts(wire []wireRequest) []int {
	next := make([]int, len(wire))
	last := make(map[string]int)
	for i := len(wire) - 1; i >= 0; i-- {
		next[i] = -1
		if j, ok := last[wire[i].Host]; ok {
			next[i] = j
		}
		last[wire[i].Host] = i
	}
	return next
}

// markColour returns the colour of r's tick and the words for its outcome.
func markColour(r wireRequest) (colour, what string) {
	switch {
	case r.Err != "":
		return chart.Error, r.Err
	case r.Robots && !r.backedOff():
		return chart.Robots, fmt.Sprint(r.Status)
	case 200 <= r.Status && r.Status < 300:
		return chart.OK, fmt.Sprint(r.Status)
	case r.backedOff():
		return chart.Backoff, fmt.Sprint(r.Status)
	}
	return chart.Other, fmt.Sprint(r.Status)
}

// pathOf returns the path and query of rawURL, or rawURL when it cannot be
// parsed.
func pathOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	return u.RequestURI()
}
