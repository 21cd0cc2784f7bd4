package audit

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polite-go/polite/robotstxt"
)

// versionOf returns the robots.txt body as a version from the Unix
// nanoseconds from.
func versionOf(body string, from int64) Robots {
	f := robotstxt.Parse([]byte(body))
	return Robots{path: "robots.txt", from: from, file: f, tokens: groupTokens([]byte(body), f)}
}

// A violationKey is a violation as the tests compare them: its line and
// kind.
type violationKey struct {
	line int64
	kind int
}

// auditText judges the lines of a log given as text, and the requests
// still waiting for their turn at its end, and returns the violations it
// found, in the order it found them.
func auditText(t *testing.T, a *Auditor, log string) []violationKey {
	t.Helper()
	var got []violationKey
	a.onViolation = func(v violation) { got = append(got, violationKey{v.line, v.kind}) }
	if err := readLines(t.Context(), strings.NewReader(log), func(n int64, text []byte) { a.Line("log", n, text) }); err != nil {
		t.Fatal(err)
	}
	if n := a.Unparsed(); n > 0 {
		t.Fatalf("%d lines could not be read: %+v", n, a.unparsed)
	}
	a.flush()
	return got
}

// clfAt writes a Combined Log Format line at second s after 10:00.
func clfAt(host string, s int, target string, status int, ua string) string {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(s) * time.Second)
	return fmt.Sprintf("%s 192.0.2.1 - - [%s] \"GET %s HTTP/1.1\" %d 10 \"-\" %q\n", host, at.Format("02/Jan/2006:15:04:05 -0700"), target, status, ua)
}

// jsonAt writes a JSON line at ms milliseconds after 10:00, with extra
// fields.
func jsonAt(ms int, target string, status int, ua, extra string) string {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	return fmt.Sprintf(`{"time":%q,"path":%q,"status":%d,"ua":%q%s}`+"\n", at.Format("2006-01-02T15:04:05.000Z"), target, status, ua, extra)
}

// nginxAt writes a line of nginx's JSON log, as a log_format with
// escape=json writes $msec, $host, $request, $status, $body_bytes_sent,
// $http_user_agent and $request_time: the line of a request that ended ms
// milliseconds after 10:00 and took rt seconds.
func nginxAt(ms int, target, ua, rt string) string {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	return fmt.Sprintf(`{"msec":"%d.%03d","host":"a","request":"GET %s HTTP/1.1","status":"200","body_bytes_sent":"512","http_user_agent":%q,"request_time":%q}`+"\n",
		at.Unix(), at.Nanosecond()/1e6, target, ua, rt)
}

// TestAuditRules checks each rule of the judging on small logs: which
// lines break which rule, and which break none.
func TestAuditRules(t *testing.T) {
	const (
		bot     = "testbot/1.0"
		scrapy  = "Scrapy/2.8.0 (+https://scrapy.org)"
		firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
	)
	delay := func(d string) string { return "User-agent: *\nCrawl-delay: " + d + "\n" }
	switchAt := time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC).UnixNano()
	tests := []struct {
		name    string
		robots  []Robots
		pause   time.Duration
		oneHost bool
		log     string
		want    []violationKey
	}{
		{
			name:   "a gap at a second's precision",
			robots: []Robots{versionOf(delay("2"), math.MinInt64)},
			log:    clfAt("a", 0, "/", 200, bot) + clfAt("a", 1, "/", 200, bot) + clfAt("a", 3, "/", 200, bot) + clfAt("a", 3, "/", 200, bot),
			want:   []violationKey{{2, kindTooSoon}, {4, kindTooSoon}},
		},
		{
			name:   "a gap at a millisecond's precision",
			robots: []Robots{versionOf(delay("2"), math.MinInt64)},
			log:    jsonAt(0, "/", 200, bot, "") + jsonAt(1998, "/", 200, bot, "") + jsonAt(3998, "/", 200, bot, ""),
			want:   []violationKey{{2, kindTooSoon}},
		},
		{
			name:   "a line logged out of order",
			robots: []Robots{versionOf(delay("10"), math.MinInt64)},
			log:    jsonAt(0, "/a", 200, bot, "") + jsonAt(20_000, "/b", 200, bot, "") + jsonAt(15_000, "/c", 200, bot, "") + jsonAt(40_000, "/d", 200, bot, ""),
			want:   []violationKey{{3, kindTooSoon}},
		},
		{
			name:   "hosts apart",
			robots: []Robots{versionOf(delay("5"), math.MinInt64)},
			log:    clfAt("a", 0, "/", 200, bot) + clfAt("b", 1, "/", 200, bot) + clfAt("A:80", 5, "/", 200, bot) + clfAt("b", 6, "/", 200, bot),
		},
		{
			name:    "hosts as one with -one-host",
			robots:  []Robots{versionOf(delay("5"), math.MinInt64)},
			oneHost: true,
			log:     clfAt("a", 0, "/", 200, bot) + clfAt("b", 1, "/", 200, bot) + clfAt("a", 5, "/", 200, bot) + clfAt("b", 6, "/", 200, bot),
			want:    []violationKey{{2, kindTooSoon}, {3, kindTooSoon}, {4, kindTooSoon}},
		},
		{
			name:   "a pause of the default 5s",
			robots: []Robots{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)},
			log: clfAt("a", 0, "/", 429, bot) + clfAt("a", 0, "/in-flight", 200, bot) + clfAt("a", 1, "/", 200, bot) + clfAt("a", 3, "/", 200, bot) +
				clfAt("a", 4, "/", 200, bot) + clfAt("a", 5, "/", 200, bot) + clfAt("b", 2, "/other-host", 200, bot),
			want: []violationKey{{3, kindInPause}, {4, kindInPause}, {5, kindInPause}},
		},
		{
			name:   "a 503 inside the pause makes it last",
			robots: []Robots{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)},
			log:    clfAt("a", 0, "/", 429, bot) + clfAt("a", 3, "/", 503, bot) + clfAt("a", 7, "/", 200, bot) + clfAt("a", 8, "/", 200, bot),
			want:   []violationKey{{2, kindInPause}, {3, kindInPause}},
		},
		{
			name:   "no pause after other statuses",
			robots: []Robots{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)},
			log:    clfAt("a", 0, "/", 500, bot) + clfAt("a", 1, "/", 404, bot) + clfAt("a", 2, "/", 200, bot),
		},
		{
			name:   "a pause of -retry-after",
			robots: []Robots{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)},
			pause:  time.Minute,
			log:    clfAt("a", 0, "/", 503, bot) + clfAt("a", 30, "/", 200, bot) + clfAt("a", 60, "/", 200, bot),
			want:   []violationKey{{2, kindInPause}},
		},
		{
			name:   "no pause with -retry-after 0",
			robots: []Robots{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)},
			pause:  -1, // 0
			log:    clfAt("a", 0, "/", 429, bot) + clfAt("a", 1, "/", 200, bot),
		},
		{
			name:   "the Retry-After of the line",
			robots: []Robots{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)},
			log: jsonAt(0, "/", 429, bot, `,"retry_after":"30"`) + jsonAt(10_000, "/", 200, bot, "") + jsonAt(29_000, "/", 200, bot, "") +
				jsonAt(30_000, "/", 503, bot, `,"retry_after":"0"`) + jsonAt(30_500, "/", 200, bot, ""),
			want: []violationKey{{2, kindInPause}, {3, kindInPause}},
		},
		{
			name:   "a duration makes the time the answer's",
			robots: []Robots{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)},
			log:    jsonAt(10_000, "/", 429, bot, `,"duration":10`) + jsonAt(11_000, "/", 200, bot, `,"duration":5`) + jsonAt(17_000, "/", 200, bot, `,"duration":5`),
			want:   []violationKey{{3, kindInPause}},
		},
		{
			// Scrapy's request for a 3-second page started 0.726s after its
			// previous start at the host, but nginx wrote its line after the
			// lines of two later requests. An earlier fetch of the page
			// showed that a request may take 3s.
			name:   "starts judged in the order they happened",
			robots: []Robots{versionOf(delay("1"), math.MinInt64)},
			log: nginxAt(3_000, "/slow", scrapy, "3.000") + nginxAt(10_000, "/a", scrapy, "0.100") + nginxAt(11_800, "/c", scrapy, "0.100") +
				nginxAt(12_900, "/d", scrapy, "0.100") + nginxAt(13_626, "/slow?again", scrapy, "3.000") + nginxAt(14_900, "/e", scrapy, "0.100"),
			want: []violationKey{{5, kindTooSoon}},
		},
		{
			// The same, but the slow request is the first that long: the
			// lines before it were judged while the window was 100ms, and
			// its start is measured from the latest, which hides its gap.
			name:   "a duration longer than any before it",
			robots: []Robots{versionOf(delay("1"), math.MinInt64)},
			log: nginxAt(10_000, "/a", scrapy, "0.100") + nginxAt(11_800, "/c", scrapy, "0.100") +
				nginxAt(12_900, "/d", scrapy, "0.100") + nginxAt(13_626, "/slow", scrapy, "3.000"),
		},
		{
			// The window waits 5 minutes at most, although the first
			// request took 700s: /b is judged when /c's line comes, and
			// /longer, which took 745s and started 5s after /a, comes later
			// still; it is measured from /b, which hides its gap.
			name:   "a duration past the window's 5 minutes",
			robots: []Robots{versionOf(delay("10"), math.MinInt64)},
			log: nginxAt(700_000, "/huge", scrapy, "700.000") + nginxAt(1_000_000, "/a", scrapy, "0.000") + nginxAt(1_400_000, "/b", scrapy, "0.000") +
				nginxAt(1_710_000, "/c", scrapy, "0.000") + nginxAt(1_750_000, "/longer", scrapy, "745.000"),
		},
		{
			name:   "robots.txt is always allowed",
			robots: []Robots{versionOf("User-agent: *\nDisallow: /\n", math.MinInt64)},
			log:    clfAt("a", 0, "/robots.txt", 200, bot) + clfAt("a", 1, "/robots.txt?x", 200, bot) + clfAt("a", 2, "/x", 200, bot) + clfAt("a", 3, "http://a/", 200, bot),
			want:   []violationKey{{3, kindDisallowed}, {4, kindDisallowed}},
		},
		{
			name:   "the group that names the crawler",
			robots: []Robots{versionOf("User-agent: *\nDisallow: /\n\nUser-agent: testbot\nDisallow: /private/\n", math.MinInt64)},
			log:    clfAt("a", 0, "/x", 200, bot) + clfAt("a", 1, "/private/x", 200, "Mozilla/5.0 (compatible; TestBot/1.0)") + clfAt("a", 2, "/x", 200, "otherbot"),
			want:   []violationKey{{2, kindDisallowed}, {3, kindDisallowed}},
		},
		{
			name:   "a crawler named after compatible;, whatever follows it",
			robots: []Robots{versionOf("User-agent: *\nDisallow: /private/\n", math.MinInt64)},
			log: clfAt("a", 0, "/private/x", 200, "Mozilla/4.5 (compatible; HTTrack 3.0x; Windows 98)") +
				clfAt("a", 1, "/private/y", 200, "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"),
			want: []violationKey{{1, kindDisallowed}},
		},
		{
			name:   "no group binds",
			robots: []Robots{versionOf("User-agent: otherbot\nDisallow: /\nCrawl-delay: 10\n", math.MinInt64)},
			log:    clfAt("a", 0, "/x", 429, bot) + clfAt("a", 1, "/x", 200, bot),
			want:   []violationKey{{2, kindInPause}},
		},
		{
			name:   "browsers are not judged",
			robots: []Robots{versionOf("User-agent: *\nDisallow: /\nCrawl-delay: 10\n", math.MinInt64)},
			log:    clfAt("a", 0, "/x", 429, firefox) + clfAt("a", 1, "/x", 200, firefox),
		},
		{
			name:   "a line with no User-Agent is judged",
			robots: []Robots{versionOf("User-agent: *\nDisallow: /\n", math.MinInt64)},
			log:    clfAt("a", 0, "/x", 200, "-") + clfAt("a", 1, "/x", 200, ""),
			want:   []violationKey{{1, kindDisallowed}, {2, kindDisallowed}},
		},
		{
			name:   "before the first date, no robots.txt",
			robots: []Robots{versionOf("User-agent: *\nDisallow: /\nCrawl-delay: 10\n", switchAt)},
			log:    clfAt("a", 0, "/x", 200, bot) + clfAt("a", 1, "/x", 200, bot) + clfAt("a", 30, "/x", 200, bot) + clfAt("a", 31, "/x", 200, bot),
			want:   []violationKey{{3, kindDisallowed}, {4, kindDisallowed}, {4, kindTooSoon}},
		},
		{
			name: "files switched by date",
			robots: []Robots{
				versionOf("User-agent: *\nDisallow: /old/\n", math.MinInt64),
				versionOf("User-agent: *\nDisallow: /new/\n", switchAt),
			},
			log:  clfAt("a", 29, "/old/x", 200, bot) + clfAt("a", 29, "/new/x", 200, bot) + clfAt("a", 30, "/old/x", 200, bot) + clfAt("a", 30, "/new/x", 200, bot),
			want: []violationKey{{1, kindDisallowed}, {4, kindDisallowed}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pause := DefaultRetryAfter
			switch {
			case tt.pause < 0:
				pause = 0
			case tt.pause > 0:
				pause = tt.pause
			}
			a := newAuditor(tt.robots, pause, tt.oneHost, nil)
			if got := auditText(t, a, tt.log); !slices.Equal(got, tt.want) {
				t.Errorf("violations %v; want %v", got, tt.want)
			}
		})
	}
}

// TestAuditRobotsFetches checks how often a crawler is said to fetch
// robots.txt: per host, on average.
func TestAuditRobotsFetches(t *testing.T) {
	a := newAuditor([]Robots{versionOf("User-agent: *\nDisallow:\n", math.MinInt64)}, DefaultRetryAfter, false, nil)
	auditText(t, a, clfAt("a", 0, "/robots.txt", 200, "testbot")+clfAt("b", 10, "/robots.txt", 200, "testbot")+
		clfAt("a", 3600, "/robots.txt", 200, "testbot")+clfAt("a", 7200, "/robots.txt", 200, "testbot")+
		clfAt("a", 7300, "/x", 200, "otherbot"))
	tests := []struct {
		name     string
		fetches  int64
		interval time.Duration
	}{
		{"testbot", 4, time.Hour},
		{"otherbot", 0, 0},
	}
	for _, tt := range tests {
		c := a.byName[tt.name]
		if c.robotsFetches != tt.fetches || c.robotsInterval() != tt.interval {
			t.Errorf("%s: %d robots.txt fetches, every %v; want %d, every %v", tt.name, c.robotsFetches, c.robotsInterval(), tt.fetches, tt.interval)
		}
	}
}

// TestAuditOtherAgents checks that the crawlers past maxCrawlers share a
// row, judged for disallowed URLs only: their gaps are between different
// crawlers.
func TestAuditOtherAgents(t *testing.T) {
	a := newAuditor([]Robots{versionOf("User-agent: *\nDisallow: /private/\nCrawl-delay: 10\n", math.MinInt64)}, DefaultRetryAfter, false, nil)
	var log strings.Builder
	for i := range maxCrawlers + 2 {
		log.WriteString(clfAt("a", i*10, "/", 200, fmt.Sprintf("bot%d/1.0", i)))
	}
	log.WriteString(clfAt("a", maxCrawlers*10+30, "/private/x", 200, "late1"))
	log.WriteString(clfAt("a", maxCrawlers*10+30, "/x", 200, "late2"))
	got := auditText(t, a, log.String())
	want := []violationKey{{maxCrawlers + 3, kindDisallowed}}
	if !slices.Equal(got, want) {
		t.Errorf("violations %v; want %v", got, want)
	}
	other := a.byName[otherName]
	if len(a.crawlers) != maxCrawlers+1 || other == nil || other.requests != 4 {
		t.Errorf("%d rows, %v; want %d, of which %s with 4 requests", len(a.crawlers), other, maxCrawlers+1, otherName)
	}
}

// TestAuditSweep checks that the pairs past maxPairs are forgotten, the
// idle ones first.
func TestAuditSweep(t *testing.T) {
	a := newAuditor([]Robots{versionOf("User-agent: *\nCrawl-delay: 10\n", math.MinInt64)}, DefaultRetryAfter, false, nil)
	a.last = int64(time.Hour)
	for i := range maxPairs {
		st := &pairState{last: int64(time.Hour), lastRes: 1}
		if i%4 != 0 {
			st.last = 0 // idle for an hour
		}
		a.pairs[uint64(i)] = st
	}
	a.sweep()
	if len(a.pairs) != maxPairs/4 || a.forgotten != 0 {
		t.Errorf("%d pairs left, %d forgotten; want %d and none", len(a.pairs), a.forgotten, maxPairs/4)
	}
	for i := range maxPairs {
		a.pairs[uint64(i)] = &pairState{last: a.last, lastRes: 1}
	}
	a.sweep()
	if len(a.pairs) >= maxPairs/2 || a.forgotten == 0 {
		t.Errorf("%d pairs left, %d forgotten; want fewer than %d, counted", len(a.pairs), a.forgotten, maxPairs/2)
	}
}
