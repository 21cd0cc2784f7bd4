package main

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/cmd/polite/internal/backoff"
	"github.com/polite-go/polite/pace"
)

// firstPause is the transport's first backoff pause with jitter off
// (5s·2^(level−1) at level 1, as the package documentation says). A
// Retry-After shows in the pause only when it is longer.
const firstPause = 5 * time.Second

// throughTransport sends one request for http://example.com/page through a
// polite transport with jitter off, whose base is a wire recorder over a
// fake server: robots.txt answers 404, the page answers status with the
// header that header returns for the moment of the answer. It returns what
// the recorder saw of the page's request and the transport's stats for the
// host. It must run in a synctest bubble, so that no time passes between
// the answer and the transport's reading of it.
func throughTransport(t *testing.T, status int, header func(now time.Time) http.Header) (wireRequest, polite.HostStats) {
	t.Helper()
	server := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp := &http.Response{StatusCode: status, Header: header(time.Now()), Body: http.NoBody, Request: req}
		if req.URL.Path == "/robots.txt" {
			resp.StatusCode, resp.Header = http.StatusNotFound, http.Header{}
		}
		return resp, nil
	})
	wire := &wireRecorder{base: server}
	tr := polite.New(wire, polite.WithPacing(pace.Policy{Jitter: pace.None}))
	req, err := http.NewRequest(http.MethodGet, "http://example.com/page", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	log := wire.requests()
	stats, err := tr.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[1].URL != req.URL.String() || len(stats) != 1 {
		t.Fatalf("wire saw %+v, stats %+v; want robots.txt and the page, one host", log, stats)
	}
	return log[1], stats[0]
}

// TestRetryAfterAgreesWithTransport holds the recorder's reading of
// Retry-After to the transport's: for each header, the pause the transport
// applied after a 429 is the larger of its first backoff pause and what the
// recorder read.
func TestRetryAfterAgreesWithTransport(t *testing.T) {
	gmt, pst := time.FixedZone("GMT", 0), time.FixedZone("PST", -8*3600)
	seconds := func(v string) func(time.Time) http.Header {
		return func(time.Time) http.Header { return http.Header{"Retry-After": {v}} }
	}
	// date returns a Retry-After at the answer's time plus ahead, in zone
	// z and layout; with a Date header at the answer's time plus skew when
	// withDate.
	date := func(ahead time.Duration, z *time.Location, layout string, withDate bool, skew time.Duration) func(time.Time) http.Header {
		return func(now time.Time) http.Header {
			h := http.Header{"Retry-After": {now.Add(ahead).In(z).Format(layout)}}
			if withDate {
				h.Set("Date", now.Add(skew).Format(http.TimeFormat))
			}
			return h
		}
	}
	tests := []struct {
		name   string
		header func(now time.Time) http.Header
		want   time.Duration // what the recorder reads
	}{
		{"none", func(time.Time) http.Header { return http.Header{} }, 0},
		{"seconds", seconds("7"), 7 * time.Second},
		{"minutes in seconds", seconds("120"), 2 * time.Minute},
		{"leading zeros", seconds("0007"), 7 * time.Second},
		{"spaces", seconds(" 120 "), 2 * time.Minute},
		{"plus sign", seconds("+7"), 0},
		{"negative", seconds("-5"), 0},
		{"small fraction", seconds("1.5"), 0},
		{"fraction", seconds("7.5"), 0},
		{"junk", seconds("abc"), 0},
		{"zero", seconds("0"), 0},
		{"an hour", seconds("3600"), time.Hour},
		{"a day", seconds("86400"), time.Hour},
		{"huge", seconds("9223372036854775807"), time.Hour},
		{"too large for any integer", seconds("99999999999999999999"), time.Hour},
		{"IMF-fixdate", date(30*time.Second, gmt, http.TimeFormat, false, 0), 30 * time.Second},
		{"RFC 850 date", date(2*time.Minute, gmt, time.RFC850, false, 0), 2 * time.Minute},
		{"asctime date", date(30*time.Second, time.UTC, time.ANSIC, false, 0), 30 * time.Second},
		{"RFC 1123 date in UTC", date(2*time.Minute, time.UTC, time.RFC1123, false, 0), 2 * time.Minute},
		{"RFC 1123 date in PST", date(2*time.Minute, pst, time.RFC1123, false, 0), 0},
		{"date in the past", date(-time.Minute, gmt, http.TimeFormat, false, 0), 0},
		{"date beyond the cap", date(2*time.Hour, gmt, http.TimeFormat, false, 0), time.Hour},
		{"date against a Date behind", date(-time.Hour+2*time.Minute, gmt, http.TimeFormat, true, -time.Hour), 2 * time.Minute},
		{"date against a Date ahead", date(time.Hour+30*time.Second, gmt, http.TimeFormat, true, time.Hour), 30 * time.Second},
		{"date past by the Date", date(2*time.Minute, gmt, http.TimeFormat, true, time.Hour), 0},
		{"date against a Date in UTC", func(now time.Time) http.Header {
			return http.Header{
				"Retry-After": {now.Add(-time.Hour + 30*time.Second).Format(http.TimeFormat)},
				"Date":        {now.Add(-time.Hour).UTC().Format(time.RFC1123)},
			}
		}, 30 * time.Second},
		{"date against an unusable Date", func(now time.Time) http.Header {
			return http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}, "Date": {"yesterday"}}
		}, 30 * time.Second},
		{"seconds ignore the Date", func(now time.Time) http.Header {
			return http.Header{"Retry-After": {"7"}, "Date": {now.Add(-time.Hour).Format(http.TimeFormat)}}
		}, 7 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, st := throughTransport(t, http.StatusTooManyRequests, tt.header)
				if r.RetryAfter != tt.want {
					t.Errorf("the recorder read %v; want %v", r.RetryAfter, tt.want)
				}
				if st.Level != 1 {
					t.Errorf("Level = %d; want 1", st.Level)
				}
				if got, want := st.PausedUntil.Sub(r.End), max(firstPause, r.RetryAfter); got != want {
					t.Errorf("the transport paused the host for %v; the recorder's reading asks %v", got, want)
				}
			})
		})
	}
}

// TestBackoffStatusAgreesWithTransport holds backoff.On to the statuses the
// transport backs off on, each answered with Retry-After: 120, and
// backoff.Status to those it backs off on without one.
func TestBackoffStatusAgreesWithTransport(t *testing.T) {
	for _, status := range []int{200, 204, 301, 304, 400, 403, 404, 410, 418, 429, 499, 500, 501, 502, 503, 504, 505, 507, 511, 599, 600} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, st := throughTransport(t, status, func(time.Time) http.Header {
					return http.Header{"Retry-After": {"120"}}
				})
				backsOff := st.Level == 1
				if st.Level > 1 {
					t.Errorf("Level = %d; want 0 or 1", st.Level)
				}
				if r.Backoff != backsOff {
					t.Errorf("the recorder's Backoff for %d = %v; the transport's Level is %d", status, r.Backoff, st.Level)
				}
				if got := backoff.Status(status); got && !backsOff {
					t.Errorf("backoff.Status(%d) = true; the transport's Level is %d", status, st.Level)
				}
				wantRetryAfter, wantPause := time.Duration(0), time.Duration(0)
				if backsOff {
					wantRetryAfter, wantPause = 2*time.Minute, 2*time.Minute
				}
				if r.RetryAfter != wantRetryAfter {
					t.Errorf("the recorder read Retry-After %v; want %v", r.RetryAfter, wantRetryAfter)
				}
				if got := max(st.PausedUntil.Sub(r.End), 0); got != wantPause {
					t.Errorf("the transport paused the host for %v; want %v", got, wantPause)
				}
			})
		})
	}
}

// roundTripFunc is a RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestWireRecorder(t *testing.T) {
	site := newTestSite(t, "", map[string]http.HandlerFunc{
		"/busy": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3")
			http.Error(w, "busy", http.StatusTooManyRequests)
		},
		"/gone": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3") // a Retry-After backs off on any 4xx
			http.Error(w, "gone", http.StatusGone)
		},
		"/moved": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3") // not on a 3xx: ignored
			w.WriteHeader(http.StatusNotModified)
		},
	})
	w := &wireRecorder{base: http.DefaultTransport}
	client := &http.Client{Transport: w}
	m := new(waitMeter)
	for _, path := range []string{"/robots.txt", "/busy", "/gone", "/moved"} {
		req, err := http.NewRequestWithContext(withWaitMeter(context.Background(), m), http.MethodGet, site.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := w.requests()
	want := []struct {
		path       string
		robots     bool
		status     int
		retryAfter time.Duration
	}{
		{"/robots.txt", true, 404, 0},
		{"/busy", false, 429, 3 * time.Second},
		{"/gone", false, 410, 3 * time.Second},
		{"/moved", false, 304, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests recorded; want %d", len(got), len(want))
	}
	for i, r := range got {
		w := want[i]
		if pathOf(r.URL) != w.path || r.Robots != w.robots || r.Status != w.status || r.RetryAfter != w.retryAfter || r.Host != "127.0.0.1" {
			t.Errorf("request %d = %+v; want %+v", i, r, w)
		}
		if r.End.Before(r.Start) || i > 0 && r.Start.Before(got[i-1].End) {
			t.Errorf("request %d: start %v, end %v out of order", i, r.Start, r.End)
		}
	}
	if _, _, sent := m.result(); !sent {
		t.Error("the wait meter saw no start")
	}
}
