package chart

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/chart/charttest"
)

func TestAxisStep(t *testing.T) {
	tests := []struct {
		span   time.Duration
		step   time.Duration
		labels string // of the first ticks
	}{
		{500 * time.Millisecond, 100 * time.Millisecond, "0s 100ms 200ms"},
		{1500 * time.Millisecond, 200 * time.Millisecond, "0s 200ms 400ms"},
		{9 * time.Second, time.Second, "0s 1s 2s"},
		{15 * time.Second, 2 * time.Second, "0s 2s 4s"},
		{time.Minute, 5 * time.Second, "0s 5s 10s"},
		{2 * time.Hour, 10 * time.Minute, "0s 10m 20m"},
		{5 * time.Hour, 30 * time.Minute, "0s 30m 1h"},
		{6 * time.Hour, 30 * time.Minute, "0s 30m 1h"},
		{6*time.Hour + time.Minute, time.Hour, "0s 1h 2h"},
		{7 * time.Hour, time.Hour, "0s 1h 2h"},
		{24 * time.Hour, 2 * time.Hour, "0s 2h 4h"},
		{30 * 24 * time.Hour, 3 * 24 * time.Hour, "0s 3d 6d"},
	}
	for _, tt := range tests {
		step := AxisStep(tt.span)
		labels := []string{AxisLabel(0), AxisLabel(step), AxisLabel(2 * step)}
		if step != tt.step || strings.Join(labels, " ") != tt.labels {
			t.Errorf("AxisStep(%v) = %v, labelled %v; want %v, %s", tt.span, step, labels, tt.step, tt.labels)
		}
		if n := tt.span / step; n > 12 {
			t.Errorf("AxisStep(%v) = %v: %d ticks; want at most 12", tt.span, step, n)
		}
	}
	if got := AxisLabel(90 * time.Second); got != "90s" {
		t.Errorf("AxisLabel(90s) = %q; want 90s", got)
	}
}

// TestChart draws a chart of two lanes and reads it back: the lanes, the
// ticks of the axis, the escaped labels.
func TestChart(t *testing.T) {
	var buf bytes.Buffer
	Open(&buf, 2)
	Lanes(&buf, []string{"a.example", "<b & c>"})
	legendY := Axis(&buf, 2, 10*time.Second)
	buf.WriteString("</svg>\n")
	counts, err := charttest.Elements(buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	// A background, a shaded band, and 1 + 11 lines and 11 labels on the
	// axis, 0s to 10s.
	if counts["rect"] != 2 || counts["line"] != 2+1+11 || counts["text"] != 2+11 {
		t.Errorf("elements %v; want 2 rects, 14 lines, 13 texts", counts)
	}
	for _, want := range []string{">a.example<", ">&lt;b &amp; c&gt;<", ">10s<", `height="228"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the chart lacks %q:\n%s", want, buf.String())
		}
	}
	if legendY <= Height(2)-LegendHeight || legendY >= Height(2) {
		t.Errorf("legend at y %d; want it in the legend's room, %d to %d", legendY, Height(2)-LegendHeight, Height(2))
	}
	if x0, x1 := X(0, time.Second), X(time.Second, time.Second); x0 != Left || x1 != Width-Right {
		t.Errorf("X spans %v to %v; want %d to %d", x0, x1, Left, Width-Right)
	}
}
