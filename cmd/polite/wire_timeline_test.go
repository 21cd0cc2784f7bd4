package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite/cmd/polite/internal/chart/charttest"
)

// svgElements counts the elements of an SVG document by "name.class"
// (or "name" without a class), as charttest.Elements does, and fails the
// test on a malformed one.
func svgElements(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	counts, err := charttest.Elements(doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return counts
}

func TestWriteTimeline(t *testing.T) {
	wire := []wireRequest{
		wreq("a", "/robots.txt", 0, 1, 200),
		wreq("b", "/robots.txt", 0, 1, 503),
		withRetryAfter(wreq("a", "/busy?x=<&>", 300, 310, 429), 8*time.Second),
		wreq("b", "/", 6000, 6001, 200),
		wreq("a", "/next", 8400, 8401, 200),
		{Host: "a", URL: "http://a/err", Start: at(9000), End: at(9001), Err: "connection reset"},
		wreq("unknown", "/", 100, 101, 200), // not in Hosts: not drawn
	}
	d := timelineData{
		Start: t0, End: at(10_000),
		Hosts:    []string{"a", "b"},
		Labels:   map[string]string{"a": "a shop"},
		Wire:     wire,
		Refusals: []refusal{{Host: "a", URL: "http://a/private", Rule: "Disallow: /private", At: at(400)}},
	}
	var buf bytes.Buffer
	if err := writeTimeline(&buf, d); err != nil {
		t.Fatal(err)
	}
	counts := svgElements(t, buf.Bytes())
	tests := []struct {
		element string
		want    int
	}{
		{"line.req", 6},     // every request of a known host
		{"rect.pause", 2},   // the 429 and the 503
		{"text.refusal", 1}, // the refused URL
	}
	for _, tt := range tests {
		if got := counts[tt.element]; got != tt.want {
			t.Errorf("%d %s elements; want %d", got, tt.element, tt.want)
		}
	}
	for _, want := range []string{
		"a shop", "paused 8.09s · Retry-After 8s", "paused 5.999s", "/busy?x=&lt;&amp;&gt;", "connection reset", ">10s<",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
}
