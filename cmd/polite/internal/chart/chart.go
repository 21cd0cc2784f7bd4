// Package chart draws what the command's SVG timelines share: a lane per
// host, each a baseline under which its name stands, over a time axis
// whose ticks fall on round steps. The crawl's timeline (request starts on
// the wire) and the audit's (request starts in an access log) draw their
// marks on it, in the colours of a request's answer that this package
// names.
//
// A chart is written top to bottom: [Open], [Lanes], the caller's marks at
// [X] and [Base], [Axis], the caller's legend, and "</svg>".
package chart

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// The chart's geometry, in SVG user units.
const (
	Width        = 1000
	Left         = 130 // room for the host names
	Right        = 20
	Top          = 44 // room for the title
	LaneHeight   = 60
	AxisHeight   = 34 // the axis and its labels
	LegendHeight = 30
)

// Colours of a request by its answer.
const (
	Robots  = "#7b4fd6" // a robots.txt fetch
	OK      = "#2a9d4b" // 2xx
	Other   = "#8a8a8a" // 3xx and 4xx
	Backoff = "#d62728" // 429 and 5xx: the transport backs off
	Error   = "#222222" // no answer
)

// Height is the height of a chart of lanes lanes.
func Height(lanes int) int { return Top + LaneHeight*lanes + AxisHeight + LegendHeight }

// Open writes the start of a chart of lanes lanes: the svg element and a
// white background.
func Open(w io.Writer, lanes int) {
	h := Height(lanes)
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		Width, h, Width, h)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/>`+"\n", Width, h)
}

// Lanes draws a lane for each label, from the top: a shaded band behind
// every other one, the label, and the lane's baseline.
func Lanes(w io.Writer, labels []string) {
	for i, label := range labels {
		y0 := Top + i*LaneHeight
		if i%2 == 0 {
			fmt.Fprintf(w, `<rect x="0" y="%d" width="%d" height="%d" fill="#f4f6f8"/>`+"\n", y0, Width, LaneHeight)
		}
		fmt.Fprintf(w, `<text x="10" y="%d">%s</text>`+"\n", Base(i), Esc(label))
		fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c8ccd0"/>`+"\n", Left, Base(i), Width-Right, Base(i))
	}
}

// Base is the y of the baseline of lane, from 0: marks stand above it.
func Base(lane int) int { return Top + lane*LaneHeight + LaneHeight - 14 }

// X is the x of a time offset from the start of a chart that spans span.
func X(offset, span time.Duration) float64 {
	return Left + float64(Width-Left-Right)*float64(offset)/float64(span)
}

// Axis draws the time axis under lanes lanes, over span, with a tick and
// its label at every AxisStep; it returns the y of the legend's line.
func Axis(w io.Writer, lanes int, span time.Duration) (legendY int) {
	y := Top + LaneHeight*lanes + 6
	fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#555"/>`+"\n", Left, y, Width-Right, y)
	step := AxisStep(span)
	for t := time.Duration(0); t <= span; t += step {
		xt := X(t, span)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#555"/><text x="%.1f" y="%d" text-anchor="middle" font-size="10">%s</text>`+"\n",
			xt, y, xt, y+5, xt, y+17, AxisLabel(t))
	}
	return y + AxisHeight
}

// AxisStep returns a round tick interval that puts at most 12 whole steps
// on span (a part of a 13th may follow): from a tenth of a second to half
// an hour for a span of up to 6 hours, then hours, then days, which logs
// span too.
func AxisStep(span time.Duration) time.Duration {
	steps := []time.Duration{
		100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	}
	if span > 12*30*time.Minute {
		steps = []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}
	}
	for _, s := range steps {
		if span/s <= 12 {
			return s
		}
	}
	days := (span/(24*time.Hour) + 11) / 12
	return days * 24 * time.Hour
}

// AxisLabel writes a tick's time since the start: "90s", "30m", "6h",
// "2d" when it is whole in that unit, as the steps of AxisStep are, and
// as time.Duration writes it otherwise ("500ms").
func AxisLabel(t time.Duration) string {
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

// Esc escapes s for XML text and attributes.
func Esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
