package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Colours of the violation marks; the requests take those of timeline.go.
const (
	colTooSoon = "#e07b00"
	colPause   = "#8b0000"
)

// A markStyle is how a kind of violation is drawn above its request.
type markStyle struct {
	class, glyph, colour, what string
}

var markStyles = [numKinds]markStyle{
	kindDisallowed: {"disallowed", "×", colBackoff, "disallowed by robots.txt"},
	kindTooSoon:    {"too-soon", "▲", colTooSoon, "sooner than the Crawl-delay"},
	kindInPause:    {"in-pause", "●", colPause, "inside a 429/503 pause"},
}

// writeAuditTimeline draws a crawler's requests as writeTimeline draws a
// crawl's: a lane per host, a tick at each request start coloured by its
// answer, and a band from each 429 or 503 answer over the pause it asked
// for; a mark above each request that broke a rule, by kind. pause is the
// pause asked for when the log recorded none.
func writeAuditTimeline(w io.Writer, c *auditRow, hosts *hostTable, pause time.Duration) error {
	ticks, marks := c.timeline.ticks.events, c.timeline.marks.events
	if len(ticks) == 0 {
		return nil
	}
	lanes, laneNames := timelineLaneOf(ticks, hosts)
	start, end := ticks[0].start, ticks[0].start
	for _, e := range slices.Concat(ticks, marks) {
		start, end = min(start, e.start), max(end, e.end, e.start)
		if e.asked > 0 {
			end = max(end, e.end+e.asked)
		} else if e.asked < 0 && (e.status == 429 || e.status == 503) {
			end = max(end, e.end+int64(pause))
		}
	}
	span := max(time.Duration(end-start), time.Second)
	plot := float64(tlWidth - tlLeft - tlRight)
	x := func(t int64) float64 { return tlLeft + plot*float64(t-start)/float64(span) }
	base := func(host uint32) int { return tlTop + lanes[host]*tlLane + tlLane - 14 }
	height := tlTop + tlLane*len(laneNames) + tlAxis + tlLegend

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		tlWidth, height, tlWidth, height)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>`+"\n", tlWidth, height)
	drawn := ""
	if c.timeline.ticks.stride > 1 {
		drawn = fmt.Sprintf(", one in %d drawn", c.timeline.ticks.stride)
	}
	fmt.Fprintf(bw, `<text x="10" y="18" font-size="15" font-weight="bold">%s (group %s): %d requests%s, from %s</text>`+"\n",
		esc(c.name), esc(c.groupLabel()), c.requests, drawn, time.Unix(0, start).UTC().Format(time.RFC3339))
	var counts []string
	for k, n := range c.counts[:numKinds] {
		counts = append(counts, fmt.Sprintf("%d %s", n, kindHeads[k]))
	}
	fmt.Fprintf(bw, `<text x="10" y="34">%s; the User-Agent is as sent, not verified</text>`+"\n", esc(strings.Join(counts, ", ")))

	for i, name := range laneNames {
		y0 := tlTop + i*tlLane
		if i%2 == 0 {
			fmt.Fprintf(bw, `<rect x="0" y="%d" width="%d" height="%d" fill="#f4f6f8"/>`+"\n", y0, tlWidth, tlLane)
		}
		fmt.Fprintf(bw, `<text x="10" y="%d">%s</text>`+"\n", y0+tlLane-14, esc(name))
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c8ccd0"/>`+"\n", tlLeft, y0+tlLane-14, tlWidth-tlRight, y0+tlLane-14)
	}
	for _, e := range marks { // pauses first, so that the ticks draw over them
		if e.status != 429 && e.status != 503 {
			continue
		}
		asked := time.Duration(e.asked)
		if e.asked < 0 {
			asked = pause
		}
		x0, x1 := x(e.end), x(e.end+int64(asked))
		fmt.Fprintf(bw, `<rect class="pause" x="%.1f" y="%d" width="%.1f" height="34" fill="%s" fill-opacity="0.13"><title>%d asked for a pause of %s</title></rect>`+"\n",
			x0, base(e.host)-34, max(x1-x0, 1), colBackoff, e.status, short(asked))
	}
	for _, e := range ticks {
		col := tickColour(e)
		fmt.Fprintf(bw, `<line class="req" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1.5"><title>+%s %d</title></line>`+"\n",
			x(e.start), base(e.host)-20, x(e.start), base(e.host), col, short(time.Duration(e.start-start)), e.status)
	}
	for _, e := range marks {
		for k, st := range markStyles {
			if e.flags&(1<<k) == 0 {
				continue
			}
			fmt.Fprintf(bw, `<text class="%s" x="%.1f" y="%d" font-size="11" fill="%s" text-anchor="middle">%s<title>+%s %s</title></text>`+"\n",
				st.class, x(e.start), base(e.host)-22-9*k, st.colour, st.glyph, short(time.Duration(e.start-start)), st.what)
		}
	}

	axisY := tlTop + tlLane*len(laneNames) + 6
	fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#555"/>`+"\n", tlLeft, axisY, tlWidth-tlRight, axisY)
	step := logAxisStep(span)
	for t := time.Duration(0); t <= span; t += step {
		xt := x(start + int64(t))
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#555"/><text x="%.1f" y="%d" text-anchor="middle" font-size="10">%s</text>`+"\n",
			xt, axisY, xt, axisY+5, xt, axisY+17, axisLabel(t))
	}
	lx, ly := tlLeft, axisY+tlAxis
	for _, item := range []struct{ colour, glyph, label string }{
		{colRobots, "|", "robots.txt"}, {colOK, "|", "2xx"}, {colOther, "|", "3xx, 4xx"}, {colBackoff, "|", "429, 5xx"},
		{markStyles[kindDisallowed].colour, "×", "disallowed"}, {colTooSoon, "▲", "too soon"}, {colPause, "●", "in pause"},
	} {
		fmt.Fprintf(bw, `<text x="%d" y="%d" fill="%s">%s</text><text x="%d" y="%d">%s</text>`+"\n", lx, ly, item.colour, item.glyph, lx+13, ly, esc(item.label))
		lx += 30 + 7*len(item.label)
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

// logAxisStep returns a round tick interval that puts at most 12 ticks on
// span, as axisStep does, for the hours and days that logs span too.
func logAxisStep(span time.Duration) time.Duration {
	if span <= 12*30*time.Minute {
		return axisStep(span)
	}
	for _, s := range []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour} {
		if span/s <= 12 {
			return s
		}
	}
	days := (span/(24*time.Hour) + 11) / 12
	return days * 24 * time.Hour
}

// axisLabel writes a tick's time since the start: "90s", "30m", "6h",
// "2d" when it is whole in that unit, as the steps of logAxisStep are.
func axisLabel(t time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		unit string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if t >= u.d && t%u.d == 0 {
			return fmt.Sprintf("%d%s", t/u.d, u.unit)
		}
	}
	return t.String()
}

// timelineLaneOf gives the hosts of the ticks lanes, the busiest first;
// past timelineLanes, the rest share the last.
func timelineLaneOf(ticks []timelineEvent, hosts *hostTable) (map[uint32]int, []string) {
	count := make(map[uint32]int)
	for _, e := range ticks {
		count[e.host]++
	}
	order := make([]uint32, 0, len(count))
	for h := range count {
		order = append(order, h)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(hosts.name(a), hosts.name(b)))
	})
	lanes := make(map[uint32]int, len(order))
	var names []string
	for i, h := range order {
		if i == timelineLanes-1 && len(order) > timelineLanes {
			names = append(names, fmt.Sprintf("%d other hosts", len(order)-i))
		}
		if i >= timelineLanes-1 && len(order) > timelineLanes {
			lanes[h] = timelineLanes - 1
			continue
		}
		lanes[h] = i
		names = append(names, hosts.name(h))
	}
	return lanes, names
}

// tickColour is the colour of a request's tick, by its answer.
func tickColour(e timelineEvent) string {
	switch {
	case e.robots && e.status < 400:
		return colRobots
	case 200 <= e.status && e.status < 300:
		return colOK
	case backoffStatus(int(e.status)):
		return colBackoff
	}
	return colOther
}

// timelineFile returns the file name of a crawler's timeline: its name,
// with every byte but letters, digits, '-' and '_' made '_'.
func timelineFile(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !tokenByte(c) {
			b[i] = '_'
		}
	}
	return string(b) + ".svg"
}
