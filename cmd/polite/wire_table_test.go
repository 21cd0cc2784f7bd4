package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/pace"
)

// t0 is the origin of the synthetic wire logs.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at returns t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// wreq makes a wire request to http://host:80/path that started at
// startMs and was answered at endMs with status.
func wreq(host, path string, startMs, endMs, status int) wireRequest {
	return wireRequest{Host: host, URL: "http://" + host + path, Robots: path == "/robots.txt",
		Start: at(startMs), End: at(endMs), Status: status}
}

func withRetryAfter(r wireRequest, d time.Duration) wireRequest {
	r.RetryAfter = d
	return r
}

func TestBuildReport(t *testing.T) {
	wire := []wireRequest{
		wreq("a", "/robots.txt", 0, 1, 200),
		wreq("b", "/robots.txt", 0, 1, 503),
		wreq("a", "/1", 2000, 2001, 200),
		withRetryAfter(wreq("a", "/2", 4000, 4001, 429), 3*time.Second),
		wreq("b", "/robots.txt", 5000, 5001, 200),
		wreq("b", "/1", 5500, 5510, 200),
		wreq("a", "/3", 7500, 7501, 200),
		withRetryAfter(wreq("a", "/4", 9500, 9501, 503), 10*time.Second),
	}
	stats := []polite.HostStats{
		{KeyState: pace.KeyState{Key: "a", Backoffs: 2}, Refused: 2, Robots: []polite.RobotsStats{{URL: "http://a/robots.txt", CrawlDelay: 2 * time.Second}}},
		{KeyState: pace.KeyState{Key: "b"}, Robots: []polite.RobotsStats{{URL: "http://b/robots.txt"}}},
	}
	reports := buildReport(wire, stats, paceFloor{base: 400 * time.Millisecond, maxCrawlDelay: time.Minute})
	if len(reports) != 2 {
		t.Fatalf("%d reports; want 2", len(reports))
	}
	a, b := reports[0], reports[1]
	tests := []struct {
		name      string
		got, want any
	}{
		{"a requests", a.Requests, 5},
		{"a blocked", a.Blocked, uint64(2)},
		{"a robots", a.Robots, "200"},
		{"a crawl-delay", a.CrawlDelay, 2 * time.Second},
		{"a pace", a.Pace, 2 * time.Second},
		{"a gaps", len(a.Gaps), 4},
		{"a min gap", a.MinGap(), 2 * time.Second},
		{"a mean gap", a.MeanGap(), (9500 * time.Millisecond) / 4},
		{"a page floor", a.Gaps[0].Floor, 2 * time.Second},
		{"a retry-afters", len(a.RetryAfters), 2},
		{"a first retry-after waited", a.RetryAfters[0].Waited, 3499 * time.Millisecond},
		{"a first retry-after honoured", a.RetryAfters[0].Honoured(), true},
		{"a last retry-after: nothing followed", a.RetryAfters[1].Waited, time.Duration(-1)},
		{"b robots", b.Robots, "503→200"},
		{"b pace", b.Pace, 400 * time.Millisecond},
		{"b robots refetch floor", b.Gaps[0].Floor, 400 * time.Millisecond},
		{"b min gap", b.MinGap(), 500 * time.Millisecond},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v; want %v", tt.name, tt.got, tt.want)
		}
	}

	var buf bytes.Buffer
	writeTable(&buf, reports)
	want := `host  requests  blocked  robots.txt  crawl-delay  pace   min gap  mean gap  backoffs  retry-after
a     5         2        200         2s           2s     2s       2.375s    2         2/2 waited
b     3         0        503→200     none         400ms  500ms    2.75s     0         -
`
	if buf.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestRetryWaitHonoured(t *testing.T) {
	tests := []struct {
		waited, retryAfter time.Duration
		want               bool
	}{
		{8 * time.Second, 8 * time.Second, true},
		{8*time.Second - 1, 8 * time.Second, false},
		{-1, 8 * time.Second, true}, // nothing followed
	}
	for _, tt := range tests {
		w := retryWait{Req: wireRequest{RetryAfter: tt.retryAfter}, Waited: tt.waited}
		if got := w.Honoured(); got != tt.want {
			t.Errorf("waited %v for %v: Honoured = %v; want %v", tt.waited, tt.retryAfter, got, tt.want)
		}
	}
}

func TestRobotsURLOf(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://Example.com/a?b", "http://example.com/robots.txt"},
		{"https://example.com/", "https://example.com/robots.txt"},
		{"https://example.com:443/", "https://example.com/robots.txt"},
		{"http://example.com:443/", "http://example.com:443/robots.txt"},
		{"http://127.0.0.1:8080/x", "http://127.0.0.1:8080/robots.txt"},
		{"http://[::1]:9/x", "http://[::1]:9/robots.txt"},
	}
	for _, tt := range tests {
		if got := robotsURLOf(tt.in); got != tt.want {
			t.Errorf("robotsURLOf(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestBuildReportWireOnly reports a host the transport does not know: the
// wire is what is judged.
func TestBuildReportWireOnly(t *testing.T) {
	wire := []wireRequest{wreq("c", "/", 0, 1, 200), wreq("c", "/x", 100, 101, 200)}
	reports := buildReport(wire, []polite.HostStats{{KeyState: pace.KeyState{Key: "a"}}}, paceFloor{base: time.Second})
	if len(reports) != 2 || reports[0].Host != "a" || reports[1].Host != "c" {
		t.Fatalf("reports = %+v; want a and c", reports)
	}
	if c := reports[1]; c.Requests != 2 || c.MinGap() != 100*time.Millisecond || c.Pace != time.Second {
		t.Errorf("c: %d requests, min gap %v, pace %v; want 2, 100ms, 1s", c.Requests, c.MinGap(), c.Pace)
	}
}
