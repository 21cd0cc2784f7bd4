package main

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
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

// The timeline's geometry, in SVG user units.
const (
	tlWidth  = 1000
	tlLeft   = 130 // room for the host names
	tlRight  = 20
	tlTop    = 44
	tlLane   = 60
	tlAxis   = 34
	tlLegend = 30
)

// Colours of the request marks.
const (
	colRobots  = "#7b4fd6"
	colOK      = "#2a9d4b"
	colOther   = "#8a8a8a" // 3xx and 4xx
	colBackoff = "#d62728" // 429 and 5xx: the transport backs off
	colError   = "#222222"
)

// writeTimeline writes d as an SVG image: one lane per host, a tick at each
// request start with a bar for its time to headers, a shaded band from each
// 429 or 5xx answer to the next start (the backoff, labelled with any
// Retry-After), and a cross at each URL refused by robots.txt. Gaps between
// ticks are the pace at a glance.
func writeTimeline(w io.Writer, d timelineData) error {
	bw := bufio.NewWriter(w)
	span := max(d.End.Sub(d.Start), time.Millisecond)
	plot := float64(tlWidth - tlLeft - tlRight)
	x := func(t time.Time) float64 {
		return tlLeft + plot*float64(t.Sub(d.Start))/float64(span)
	}
	lanes := make(map[string]int, len(d.Hosts))
	for i, h := range d.Hosts {
		lanes[h] = i
	}
	height := tlTop + tlLane*len(d.Hosts) + tlAxis + tlLegend

	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		tlWidth, height, tlWidth, height)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>`+"\n", tlWidth, height)
	title := d.Title
	if title == "" {
		title = "request starts per host"
	}
	fmt.Fprintf(bw, `<text x="10" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", esc(title))

	for i, h := range d.Hosts {
		y0 := tlTop + i*tlLane
		if i%2 == 0 {
			fmt.Fprintf(bw, `<rect x="0" y="%d" width="%d" height="%d" fill="#f4f6f8"/>`+"\n", y0, tlWidth, tlLane)
		}
		base := y0 + tlLane - 14
		label := h
		if l, ok := d.Labels[h]; ok {
			label = l
		}
		fmt.Fprintf(bw, `<text x="10" y="%d">%s</text>`+"\n", base, esc(label))
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c8ccd0"/>`+"\n", tlLeft, base, tlWidth-tlRight, base)
	}

	// Backoff bands first, so the ticks draw over them.
	next := nextStarts(d.Wire)
	for i, r := range d.Wire {
		lane, ok := lanes[r.Host]
		if !ok || !r.backoff() {
			continue
		}
		base := tlTop + lane*tlLane + tlLane - 14
		end := d.End
		if j := next[i]; j >= 0 {
			end = d.Wire[j].Start
		}
		label := "paused " + short(end.Sub(r.End))
		if r.RetryAfter > 0 {
			label += " · Retry-After " + short(r.RetryAfter)
		}
		x0, x1 := x(r.End), x(end)
		fmt.Fprintf(bw, `<rect class="pause" x="%.1f" y="%d" width="%.1f" height="34" fill="%s" fill-opacity="0.13"><title>%s: %d, paused %s</title></rect>`+"\n",
			x0, base-34, max(x1-x0, 1), colBackoff, esc(r.URL), r.Status, short(end.Sub(r.End)))
		fmt.Fprintf(bw, `<text x="%.1f" y="%d" font-size="10" fill="%s">%s</text>`+"\n", x0+3, base-36, colBackoff, esc(label))
	}

	for _, r := range d.Wire {
		lane, ok := lanes[r.Host]
		if !ok {
			continue
		}
		base := tlTop + lane*tlLane + tlLane - 14
		col, what := markColour(r)
		xs, xe := x(r.Start), x(r.End)
		fmt.Fprintf(bw, `<rect x="%.1f" y="%d" width="%.1f" height="4" fill="%s" fill-opacity="0.45"/>`+"\n", xs, base-4, max(xe-xs, 1), col)
		fmt.Fprintf(bw, `<line class="req" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"><title>+%s %s → %s (%s to headers)</title></line>`+"\n",
			xs, base-24, xs, base, col, short(r.Start.Sub(d.Start)), esc(pathOf(r.URL)), esc(what), short(r.Latency()))
	}

	for _, f := range d.Refusals {
		lane, ok := lanes[f.Host]
		if !ok {
			continue
		}
		base := tlTop + lane*tlLane + tlLane - 14
		fmt.Fprintf(bw, `<text class="refusal" x="%.1f" y="%d" font-size="11" fill="%s" text-anchor="middle">×<title>%s refused by robots.txt (%s)</title></text>`+"\n",
			x(f.At), base+12, colOther, esc(pathOf(f.URL)), esc(f.Rule))
	}

	axisY := tlTop + tlLane*len(d.Hosts) + 6
	fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#555"/>`+"\n", tlLeft, axisY, tlWidth-tlRight, axisY)
	step := axisStep(span)
	for t := time.Duration(0); t <= span; t += step {
		xt := x(d.Start.Add(t))
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#555"/>`+"\n", xt, axisY, xt, axisY+5)
		fmt.Fprintf(bw, `<text x="%.1f" y="%d" text-anchor="middle" font-size="10">%s</text>`+"\n", xt, axisY+17, t)
	}

	legendY := axisY + tlAxis
	lx := tlLeft
	for _, item := range []struct{ col, label string }{
		{colRobots, "robots.txt"}, {colOK, "2xx"}, {colOther, "3xx, 4xx"}, {colBackoff, "429, 5xx"}, {colError, "network error"},
	} {
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", lx, legendY-10, lx, legendY+2, item.col)
		fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", lx+6, legendY, esc(item.label))
		lx += 30 + 8*len(item.label)
	}
	fmt.Fprintf(bw, `<rect x="%d" y="%d" width="14" height="12" fill="%s" fill-opacity="0.13"/>`+"\n", lx, legendY-10, colBackoff)
	fmt.Fprintf(bw, `<text x="%d" y="%d">backoff pause</text>`+"\n", lx+20, legendY)
	lx += 130
	fmt.Fprintf(bw, `<text x="%d" y="%d" fill="%s">×</text><text x="%d" y="%d">refused by robots.txt</text>`+"\n", lx, legendY, colOther, lx+14, legendY)
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
		return colError, r.Err
	case r.Robots && !r.backoff():
		return colRobots, fmt.Sprint(r.Status)
	case 200 <= r.Status && r.Status < 300:
		return colOK, fmt.Sprint(r.Status)
	case r.backoff():
		return colBackoff, fmt.Sprint(r.Status)
	}
	return colOther, fmt.Sprint(r.Status)
}

// axisStep returns a round tick interval that puts at most 12 ticks on span.
func axisStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{
		100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	} {
		if span/s <= 12 {
			return s
		}
	}
	return span / 12
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

// esc escapes s for XML text and attributes.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
