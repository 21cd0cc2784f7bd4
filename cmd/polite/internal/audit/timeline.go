package audit

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/backoff"
	"github.com/polite-go/polite/cmd/polite/internal/chart"
	"github.com/polite-go/polite/cmd/polite/internal/human"
)

// Colours of the violation marks; the requests take those of package chart.
const (
	colTooSoon = "#e07b00"
	colPause   = "#8b0000"
)

// A markStyle is how a kind of violation is drawn above its request.
type markStyle struct {
	class, glyph, colour, what string
}

var markStyles = [numKinds]markStyle{
	kindDisallowed: {"disallowed", "×", chart.Backoff, "disallowed by robots.txt"},
	kindTooSoon:    {"too-soon", "▲", colTooSoon, "sooner than the Crawl-delay"},
	kindInPause:    {"in-pause", "●", colPause, "inside a 429/503 pause"},
}

// writeTimeline draws a crawler's requests as writeTimeline draws a
// crawl's: a lane per host, a tick at each request start coloured by its
// answer, and a band from each 429 or 503 answer over the pause it asked
// for; a mark above each request that broke a rule, by kind. pause is the
// pause asked for when the log recorded none.
func writeTimeline(w io.Writer, c *crawler, hosts *hostTable, pause time.Duration) error {
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
	x := func(t int64) float64 { return chart.X(time.Duration(t-start), span) }
	base := func(host uint32) int { return chart.Base(lanes[host]) }

	bw := bufio.NewWriter(w)
	chart.Open(bw, len(laneNames))
	drawn := ""
	if c.timeline.ticks.stride > 1 {
		drawn = fmt.Sprintf(", one in %d drawn", c.timeline.ticks.stride)
	}
	fmt.Fprintf(bw, `<text x="10" y="18" font-size="15" font-weight="bold">%s (group %s): %d requests%s, from %s</text>`+"\n",
		chart.Esc(c.name), chart.Esc(c.groupLabel()), c.requests, drawn, time.Unix(0, start).UTC().Format(time.RFC3339))
	var counts []string
	for k, n := range c.counts[:numKinds] {
		counts = append(counts, fmt.Sprintf("%d %s", n, kindHeads[k]))
	}
	fmt.Fprintf(bw, `<text x="10" y="34">%s; the User-Agent is as sent, not verified</text>`+"\n", chart.Esc(strings.Join(counts, ", ")))

	chart.Lanes(bw, laneNames)
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
			x0, base(e.host)-34, max(x1-x0, 1), chart.Backoff, e.status, human.Duration(asked))
	}
	for _, e := range ticks {
		col := tickColour(e)
		fmt.Fprintf(bw, `<line class="req" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1.5"><title>+%s %d</title></line>`+"\n",
			x(e.start), base(e.host)-20, x(e.start), base(e.host), col, human.Duration(time.Duration(e.start-start)), e.status)
	}
	for _, e := range marks {
		for k, st := range markStyles {
			if e.flags&(1<<k) == 0 {
				continue
			}
			fmt.Fprintf(bw, `<text class="%s" x="%.1f" y="%d" font-size="11" fill="%s" text-anchor="middle">%s<title>+%s %s</title></text>`+"\n",
				st.class, x(e.start), base(e.host)-22-9*k, st.colour, st.glyph, human.Duration(time.Duration(e.start-start)), st.what)
		}
	}

	lx, ly := chart.Left, chart.Axis(bw, len(laneNames), span)
	for _, item := range []struct{ colour, glyph, label string }{
		{chart.Robots, "|", "robots.txt"}, {chart.OK, "|", "2xx"}, {chart.Other, "|", "3xx, 4xx"}, {chart.Backoff, "|", "429, 5xx"},
		{markStyles[kindDisallowed].colour, "×", "disallowed"}, {colTooSoon, "▲", "too soon"}, {colPause, "●", "in pause"},
	} {
		fmt.Fprintf(bw, `<text x="%d" y="%d" fill="%s">%s</text><text x="%d" y="%d">%s</text>`+"\n", lx, ly, item.colour, item.glyph, lx+13, ly, chart.Esc(item.label))
		lx += 30 + 7*len(item.label)
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
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
		return chart.Robots
	case 200 <= e.status && e.status < 300:
		return chart.OK
	case backoff.Status(int(e.status)):
		return chart.Backoff
	}
	return chart.Other
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

// WriteTimelines writes the timelines of the first 20 crawlers of the
// report that have one, to dir, a file each, named after the crawler: its
// name with every byte but letters, digits, '-' and '_' made '_', and
// ".svg". It has timelines to write only when the Auditor was made with
// Options.Timelines.
func (rep *Report) WriteTimelines(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	drawn := 0
	for _, c := range rep.rows {
		if drawn == timelinesDrawn {
			break
		}
		if c.timeline == nil || len(c.timeline.ticks.events) == 0 {
			continue
		}
		drawn++
		f, err := os.Create(filepath.Join(dir, timelineFile(c.name)))
		if err != nil {
			return err
		}
		err = writeTimeline(f, c, rep.a.hosts, time.Duration(rep.a.pause))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
