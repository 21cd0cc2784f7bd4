package audit

import (
	"bytes"
	"math"
	"testing"

	"github.com/polite-go/polite/cmd/polite/internal/chart/charttest"
)

// TestWriteAuditTimeline checks what a crawler's timeline draws: every
// request, a band per 429 or 503, a mark per violation, a lane per host.
func TestWriteAuditTimeline(t *testing.T) {
	a := newAuditor([]Robots{versionOf("User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n", math.MinInt64)}, DefaultRetryAfter, false, nil)
	a.timelines = newTimelineBudget()
	const bot = "testbot/1.0"
	auditText(t, a, clfAt("a", 0, "/robots.txt", 200, bot)+clfAt("a", 0, "/private/<x>", 200, bot)+
		clfAt("b", 1, "/", 429, bot)+clfAt("b", 2, "/", 503, bot)+clfAt("a", 30, "/", 404, bot)+clfAt("a", 31, "/", 200, "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"))
	var buf bytes.Buffer
	if err := writeTimeline(&buf, a.byName["testbot"], a.hosts, DefaultRetryAfter); err != nil {
		t.Fatal(err)
	}
	counts, err := charttest.Elements(buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	tests := []struct {
		element string
		want    int
	}{
		{"line.req", 5},
		{"rect.pause", 2},
		{"text.disallowed", 1},
		{"text.too-soon", 2},
		{"text.in-pause", 1},
	}
	for _, tt := range tests {
		if got := counts[tt.element]; got != tt.want {
			t.Errorf("%d %s elements; want %d", got, tt.element, tt.want)
		}
	}
	for _, want := range []string{">a<", ">b<", "testbot (group *): 5 requests", "1 disallowed, 2 too soon, 1 in 429/503 pause", "not verified"} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	if a.byName[browsersName].timeline != nil {
		t.Error("browsers have a timeline")
	}
}
